package lockfree_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/lockfree"
)

// keyWithBuckets returns a key whose primary bucket is below its alternate
// one in f, with the two buckets and its fingerprint.
func keyWithBuckets(t *testing.T, f *lockfree.Filter) (key []byte, i1, i2 uint64, fp uint32) {
	t.Helper()
	for _, k := range keys(1000, 77) {
		i1, fp := f.Locate(k)
		if i2 := f.Alt(i1, fp); i1 < i2 {
			return k, i1, i2, fp
		}
	}
	t.Fatal("no key with primary bucket < alternate bucket")
	return nil, 0, 0, 0
}

// shuttle moves fp back and forth between buckets a and b with Move until
// stop is set, and returns the number of moves.
func shuttle(f *lockfree.Filter, a, b uint64, fp uint32, stop *atomic.Bool) int {
	moves := 0
	for !stop.Load() {
		from, to := a, b
		s := slotOf(f.BucketSlots(a), fp)
		if s < 0 {
			from, to = b, a
			s = slotOf(f.BucketSlots(b), fp)
		}
		if s >= 0 && f.Move(from, s, fp, to) {
			moves++
		}
	}
	return moves
}

func slotOf(slots []uint32, fp uint32) int {
	for j, x := range slots {
		if x == fp {
			return j
		}
	}
	return -1
}

// TestContainsDuringMigration moves one key's fingerprint between its two
// buckets as fast as a goroutine can, with the K-CAS of a displacement
// step, while another looks the key up: every lookup must find it.
func TestContainsDuringMigration(t *testing.T) { forShapes(t, containsDuringMigration) }

func containsDuringMigration(t *testing.T, s shape) {
	f := mustNew(t, s.config(64, 3))
	key, i1, i2, fp := keyWithBuckets(t, f)
	if err := f.Insert(key); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var moves int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		moves = shuttle(f, i1, i2, fp, &stop)
	}()
	d := 1500 * time.Millisecond
	if testing.Short() {
		d = 300 * time.Millisecond
	}
	misses, lookups := 0, 0
	for deadline := time.Now().Add(d); time.Now().Before(deadline) && misses == 0; {
		for range 1000 {
			lookups++
			if !f.Contains(key) {
				misses++
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d lookups during %d moves, %d misses", lookups, moves, misses)
	if misses > 0 {
		t.Errorf("Contains missed a present key %d times in %d lookups", misses, lookups)
	}
	if err := f.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
