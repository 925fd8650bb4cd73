package eval

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRedisBloomSizes(t *testing.T) {
	// capacity/2 buckets rounded up to a power of two, at least one.
	for _, c := range []struct{ capacity, buckets uint64 }{{1, 1}, {4, 2}, {1000, 512}, {1024, 512}, {1025, 512}, {1026, 1024}} {
		if got := newRedisBloom(c.capacity).subs[0].mask + 1; got != c.buckets {
			t.Errorf("capacity %d: %d buckets, want %d", c.capacity, got, c.buckets)
		}
	}
	r := newRedisBloom(1000)
	for _, k := range keys(20000, 3) {
		if err := r.InsertHash(k); err != nil {
			t.Fatal(err)
		}
	}
	// Each sub-filter doubles the one before, so every size divides the next.
	for k, s := range r.subs {
		if want := uint64(512) << k; s.mask+1 != want {
			t.Errorf("sub-filter %d: %d buckets, want %d", k, s.mask+1, want)
		}
	}
	if r.SizeInBytes() != uint64(len(r.subs[0].slots))*(1<<len(r.subs)-1) {
		t.Errorf("%d bytes in %d sub-filters", r.SizeInBytes(), len(r.subs))
	}
}

// TestRedisBloomFailedKickIsUndone fills one sub-filter until a kick
// sequence fails and checks that it left every slot as it found it.
func TestRedisBloomFailedKickIsUndone(t *testing.T) {
	r := newRedisBloom(64)
	s := &r.subs[0]
	failures := 0
	for _, h := range keys(1000, 4) {
		if s.used == len(s.slots) {
			break
		}
		fp := rbFingerprint(h)
		if s.place(h, rbAlt(h, fp), fp) {
			continue
		}
		before, used := slices.Clone(s.slots), s.used
		if s.kick(h, fp) {
			continue
		}
		failures++
		if !slices.Equal(s.slots, before) || s.used != used {
			t.Fatalf("failed kick of %#x changed the table", h)
		}
	}
	if failures == 0 {
		t.Fatal("no kick failed")
	}
	t.Logf("%d failed kicks, load %.3f", failures, float64(s.used)/float64(len(s.slots)))
}

// TestRedisBloomNoFalseNegatives runs random inserts (with duplicates) and
// deletes of present keys on a model whose first sub-filter holds 16
// fingerprints, so that it grows and compacts often, and checks after each
// operation that every present key is found and every delete finds a copy.
func TestRedisBloomNoFalseNegatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	r := newRedisBloom(16)
	pool := keys(3000, 5)
	count := map[uint64]int{}
	var present []uint64 // a key once a copy
	maxStages := 0
	ops := 40000
	if testing.Short() {
		ops = 10000
	}
	for op := range ops {
		// Grow to about 2000 copies, then shrink to none.
		insert := len(present) == 0 || (op < ops/2 && rng.IntN(3) > 0) || (op >= ops/2 && rng.IntN(3) == 0)
		if insert {
			k := pool[rng.IntN(len(pool))]
			if count[k] == 3 {
				continue // at most 3 copies, as few keys collide in a 2-slot bucket pair
			}
			if err := r.InsertHash(k); err != nil {
				t.Fatal(err)
			}
			count[k]++
			present = append(present, k)
		} else {
			i := rng.IntN(len(present))
			k := present[i]
			present[i] = present[len(present)-1]
			present = present[:len(present)-1]
			if !r.DeleteHash(k) {
				t.Fatalf("op %d: delete of a present key found nothing", op)
			}
			count[k]--
		}
		maxStages = max(maxStages, r.Stages())
		if op%97 == 0 || op == ops-1 {
			for k, n := range count {
				if n > 0 && !r.ContainsHash(k) {
					t.Fatalf("op %d: key %#x with %d copies not found", op, k, n)
				}
			}
			used := 0
			for _, s := range r.subs {
				used += s.used
			}
			if uint64(used) != r.items || r.items != uint64(len(present)) {
				t.Fatalf("op %d: %d slots used, %d items, %d copies", op, used, r.items, len(present))
			}
		}
	}
	// With every key deleted, compaction has freed every sub-filter but
	// the first.
	for _, k := range present {
		r.DeleteHash(k)
	}
	t.Logf("up to %d sub-filters; %d after deleting everything", maxStages, r.Stages())
	if maxStages < 5 || r.Stages() != 1 || r.items != 0 {
		t.Errorf("up to %d sub-filters, %d at the end with %d items", maxStages, r.Stages(), r.items)
	}
}
