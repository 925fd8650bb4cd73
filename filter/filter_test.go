package filter_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
)

// keys returns n distinct random 16-byte keys.
func keys(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([][]byte, n)
	for i := range out {
		k := make([]byte, 16)
		binary.LittleEndian.PutUint64(k, r.Uint64())
		binary.LittleEndian.PutUint64(k[8:], uint64(i)) // distinct
		out[i] = k
	}
	return out
}

func mustNew(t testing.TB, cfg filter.Config) *filter.Filter {
	t.Helper()
	f, err := filter.New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return f
}

func check(t testing.TB, f *filter.Filter) {
	t.Helper()
	if err := f.CheckInvariants(); err != nil {
		t.Fatalf("invariant broken: %v", err)
	}
}

// shapes are the bucket sizes and fingerprint widths the suite runs on: the
// one-word fast paths and the slot-by-slot path of every bucket size.
var shapes = []struct{ b, f int }{
	{2, 4}, {2, 7}, {2, 16}, {2, 29}, {2, 32},
	{4, 4}, {4, 8}, {4, 12}, {4, 13}, {4, 15}, {4, 16}, {4, 17}, {4, 32},
	{8, 4}, {8, 7}, {8, 8}, {8, 9}, {8, 12}, {8, 32},
}

func TestInsertContainsDelete(t *testing.T) {
	for _, s := range shapes {
		t.Run(fmt.Sprintf("b=%d/f=%d", s.b, s.f), func(t *testing.T) {
			const n = 3000
			f := mustNew(t, filter.Config{Capacity: n, BucketSize: s.b, FingerprintBits: s.f, Seed: 7})
			ks := keys(n, 1)
			for i, k := range ks {
				if err := f.Insert(k); err != nil {
					t.Fatalf("insert %d of %d (load %.3f): %v", i, n, f.LoadFactor(), err)
				}
				if i%97 == 0 {
					check(t, f)
				}
			}
			check(t, f)
			if f.Len() != n {
				t.Fatalf("Len = %d, want %d", f.Len(), n)
			}
			out := make([]bool, n)
			f.ContainsBatch(ks, out)
			for i, k := range ks {
				if !f.Contains(k) || !out[i] {
					t.Fatalf("key %d: Contains=%v batch=%v after insert", i, f.Contains(k), out[i])
				}
				if f.Count(k) < 1 {
					t.Fatalf("key %d: Count = %d", i, f.Count(k))
				}
			}
			for i, k := range ks[:n/2] {
				if !f.Delete(k) {
					t.Fatalf("Delete(key %d) = false", i)
				}
				if i%97 == 0 {
					check(t, f)
				}
			}
			check(t, f)
			for i, k := range ks[n/2:] {
				if !f.Contains(k) {
					t.Fatalf("key %d lost after deleting others", n/2+i)
				}
			}
			if f.Len() != n-n/2 {
				t.Fatalf("Len = %d after deletes, want %d", f.Len(), n-n/2)
			}
		})
	}
}

func TestStringAndHashVariantsAgree(t *testing.T) {
	f := mustNew(t, filter.Config{Capacity: 100, Seed: 3})
	if err := f.InsertString("alpha"); err != nil {
		t.Fatal(err)
	}
	if !f.Contains([]byte("alpha")) || !f.ContainsString("alpha") || f.CountString("alpha") != 1 {
		t.Fatal("string and byte variants disagree")
	}
	if ok, err := f.InsertUniqueString("alpha"); ok || err != nil {
		t.Fatalf("InsertUniqueString of a present key = %v, %v", ok, err)
	}
	if ok, err := f.InsertUnique([]byte("beta")); !ok || err != nil {
		t.Fatalf("InsertUnique of a new key = %v, %v", ok, err)
	}
	if !f.DeleteString("beta") || f.ContainsString("beta") && f.Count([]byte("beta")) != 0 {
		t.Fatal("DeleteString")
	}
	g := mustNew(t, filter.Config{Capacity: 100})
	for h := range uint64(50) {
		h *= 0x9e3779b97f4a7c15
		if err := g.InsertHash(h); err != nil {
			t.Fatal(err)
		}
		if !g.ContainsHash(h) || g.CountHash(h) < 1 {
			t.Fatalf("hash %#x not found", h)
		}
		if ok, _ := g.InsertUniqueHash(h); ok {
			t.Fatalf("InsertUniqueHash(%#x) inserted a present hash", h)
		}
	}
	out := make([]bool, 1)
	g.ContainsHashBatch([]uint64{0x9e3779b97f4a7c15}, out)
	if !out[0] {
		t.Fatal("ContainsHashBatch missed a present hash")
	}
	if !g.DeleteHash(0) || g.Len() != 49 {
		t.Fatalf("DeleteHash(0): Len = %d", g.Len())
	}
}

func TestDuplicatesNeedAsManyDeletes(t *testing.T) {
	f := mustNew(t, filter.Config{Capacity: 1000, FingerprintBits: 16})
	k := []byte("dup")
	for i := range 5 {
		if err := f.Insert(k); err != nil {
			t.Fatal(err)
		}
		if got := f.Count(k); got != i+1 {
			t.Fatalf("Count after %d inserts = %d", i+1, got)
		}
	}
	for i := 5; i > 0; i-- {
		if !f.Contains(k) || !f.Delete(k) {
			t.Fatalf("copy %d missing", i)
		}
	}
	if f.Contains(k) || f.Delete(k) || f.Count(k) != 0 {
		t.Fatal("a copy survived five deletes")
	}
	check(t, f)
}

// TestFullLeavesFilterUnchanged fills a filter with copies of one key: 2b fit
// in its buckets and one in the victim slot; the next insert is ErrFull and
// changes nothing.
func TestFullLeavesFilterUnchanged(t *testing.T) {
	for _, b := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("b=%d", b), func(t *testing.T) {
			f := mustNew(t, filter.Config{Capacity: 1000, BucketSize: b, FingerprintBits: 16})
			k := []byte("hot")
			i1, fp := f.Locate(k)
			_ = fp
			n := 0
			for ; n < 4*b; n++ {
				if err := f.Insert(k); err != nil {
					if !errors.Is(err, filter.ErrFull) {
						t.Fatal(err)
					}
					break
				}
			}
			want := 2*b + 1
			if _, fp := f.Locate(k); i1 == altOf(f, i1, fp) {
				want = b + 1 // both buckets are one
			}
			if n != want {
				t.Fatalf("%d copies fit, want %d", n, want)
			}
			before, _ := f.MarshalBinary()
			if err := f.Insert(k); !errors.Is(err, filter.ErrFull) {
				t.Fatalf("insert into full buckets: %v, want ErrFull", err)
			}
			after, _ := f.MarshalBinary()
			if string(before) != string(after) {
				t.Fatal("a refused insert changed the filter")
			}
			if f.Count(k) != want {
				t.Fatalf("Count = %d, want %d", f.Count(k), want)
			}
			// Deleting one copy frees a slot; the victim moves in.
			if !f.Delete(k) || f.VictimUsed() {
				t.Fatalf("victim not rehomed after a delete")
			}
			check(t, f)
			if err := f.Insert(k); err != nil {
				t.Fatalf("insert after delete: %v", err)
			}
		})
	}
}

func altOf(f *filter.Filter, i uint64, fp uint32) uint64 { return filter.Alt(f, i, fp) }

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  filter.Config
		want string
	}{
		{filter.Config{}, "Capacity is 0"},
		{filter.Config{Capacity: 1, FingerprintBits: 3}, "FingerprintBits is 3"},
		{filter.Config{Capacity: 1, FingerprintBits: 33}, "FingerprintBits is 33"},
		{filter.Config{Capacity: 1, FingerprintBits: -1}, "FingerprintBits is -1"},
		{filter.Config{Capacity: 1, BucketSize: 3}, "BucketSize is 3"},
		{filter.Config{Capacity: 1, BucketSize: 16}, "BucketSize is 16"},
		{filter.Config{Capacity: 1, FalsePositiveRate: 1}, "FalsePositiveRate is 1"},
		{filter.Config{Capacity: 1, FalsePositiveRate: -0.5}, "FalsePositiveRate is -0.5"},
		{filter.Config{Capacity: 1, FalsePositiveRate: 1e-12}, "needs 43-bit fingerprints"},
		{filter.Config{Capacity: 1, MaxKicks: -1}, "MaxKicks is -1"},
		{filter.Config{Capacity: 1 << 40}, "more than the 2^32 supported"},
		{filter.Config{Capacity: ^uint64(0)}, "more than the 2^32 supported"},
	}
	for _, c := range cases {
		f, err := filter.New(c.cfg)
		if err == nil || f != nil {
			t.Errorf("New(%+v) = %v, %v; want an error", c.cfg, f, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v): %q does not say %q", c.cfg, err, c.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	f := mustNew(t, filter.Config{Capacity: 1000})
	if f.BucketSize() != 4 || f.FingerprintBits() != 10 || f.MaxKicks() != 500 {
		t.Fatalf("defaults: b=%d f=%d kicks=%d, want 4, 10, 500", f.BucketSize(), f.FingerprintBits(), f.MaxKicks())
	}
	// f = ceil(log2(2b/ε))
	for _, c := range []struct {
		rate float64
		b, f int
	}{{0.03, 4, 9}, {0.001, 4, 13}, {0.5, 2, 4}, {1e-8, 2, 29}} {
		g := mustNew(t, filter.Config{Capacity: 10, FalsePositiveRate: c.rate, BucketSize: c.b})
		if g.FingerprintBits() != c.f {
			t.Errorf("rate %v b=%d: f = %d, want %d", c.rate, c.b, g.FingerprintBits(), c.f)
		}
	}
}

func TestResetEmpties(t *testing.T) {
	f := mustNew(t, filter.Config{Capacity: 500})
	ks := keys(500, 2)
	for _, k := range ks {
		if err := f.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	f.Reset()
	check(t, f)
	if f.Len() != 0 || f.LoadFactor() != 0 {
		t.Fatalf("after Reset: Len %d load %v", f.Len(), f.LoadFactor())
	}
	for _, k := range ks {
		if err := f.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
}

func TestZeroAllocations(t *testing.T) {
	f := mustNew(t, filter.Config{Capacity: 10000, FingerprintBits: 12})
	ks := keys(10000, 3)
	for _, k := range ks[:9000] {
		if err := f.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	next := func() []byte { i++; return ks[i%len(ks)] }
	out := make([]bool, 64)
	for name, fn := range map[string]func(){
		"Contains":       func() { f.Contains(next()) },
		"ContainsString": func() { f.ContainsString("some key") },
		"ContainsBatch":  func() { f.ContainsBatch(ks[:64], out) },
		"Count":          func() { f.Count(next()) },
		"Insert+Delete": func() {
			k := next()
			if f.Insert(k) == nil {
				f.Delete(k)
			}
		},
	} {
		if a := testing.AllocsPerRun(1000, fn); a != 0 {
			t.Errorf("%s allocates %v times per call", name, a)
		}
	}
}
