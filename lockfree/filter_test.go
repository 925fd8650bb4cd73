package lockfree_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/lockfree"
)

func keys(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0x10cf))
	out := make([][]byte, n)
	for i := range out {
		k := make([]byte, 16)
		binary.LittleEndian.PutUint64(k, r.Uint64())
		binary.LittleEndian.PutUint64(k[8:], uint64(i))
		out[i] = k
	}
	return out
}

func mustNew(t testing.TB, cfg filter.Config) *lockfree.Filter {
	t.Helper()
	f, err := lockfree.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSingleGoroutineCapacity(t *testing.T) {
	for _, s := range []struct{ b, f int }{{4, 12}, {4, 8}, {2, 16}, {2, 24}, {8, 6}, {4, 4}} {
		t.Run(fmt.Sprintf("b=%d/f=%d", s.b, s.f), func(t *testing.T) {
			const n = 20000
			f := mustNew(t, filter.Config{Capacity: n, BucketSize: s.b, FingerprintBits: s.f, Seed: 9})
			ks := keys(n, 1)
			for i, k := range ks {
				if err := f.Insert(k); err != nil {
					t.Fatalf("insert %d of %d (load %.4f): %v", i, n, f.LoadFactor(), err)
				}
			}
			if f.Len() != n {
				t.Fatalf("Len = %d", f.Len())
			}
			for i, k := range ks {
				if !f.Contains(k) || f.Count(k) < 1 {
					t.Fatalf("key %d missing", i)
				}
			}
			for _, k := range ks[:n/2] {
				if !f.Delete(k) {
					t.Fatal("delete of a present key failed")
				}
			}
			for i, k := range ks[n/2:] {
				if !f.Contains(k) {
					t.Fatalf("key %d lost after deletes", n/2+i)
				}
			}
			if f.Len() != n-n/2 {
				t.Fatalf("Len = %d after deletes", f.Len())
			}
		})
	}
}

func TestNewRejectsWideShapes(t *testing.T) {
	for _, s := range []struct{ b, f int }{{4, 13}, {4, 32}, {8, 7}, {2, 25}} {
		_, err := lockfree.New(filter.Config{Capacity: 100, BucketSize: s.b, FingerprintBits: s.f})
		if err == nil || !strings.Contains(err.Error(), "migration counter") {
			t.Errorf("b=%d f=%d: err = %v", s.b, s.f, err)
		}
	}
	if _, err := lockfree.New(filter.Config{}); err == nil || !strings.Contains(err.Error(), "Capacity") {
		t.Errorf("zero config: err = %v", err)
	}
}

func TestFullReturnsErrFull(t *testing.T) { forShapes(t, fullReturnsErrFull) }

func fullReturnsErrFull(t *testing.T, s shape) {
	f := mustNew(t, s.config(1000, 0))
	k := []byte("same")
	n := 0
	for ; n < 100; n++ {
		if err := f.Insert(k); err != nil {
			if !errors.Is(err, lockfree.ErrFull) || !errors.Is(err, filter.ErrFull) {
				t.Fatal(err)
			}
			break
		}
	}
	if n != 2*s.b && n != s.b {
		t.Fatalf("%d copies fit, want 2b = %d (or b = %d if both buckets coincide)", n, 2*s.b, s.b)
	}
	if f.Count(k) != n {
		t.Fatalf("Count = %d, want %d", f.Count(k), n)
	}
}

// TestRoundTripThroughFilter moves a filter.Filter, plain and semi-sorted,
// into a lock-free filter and back.
func TestRoundTripThroughFilter(t *testing.T) {
	for _, packing := range []filter.Packing{filter.PackingPlain, filter.PackingSemiSorted} {
		t.Run(packing.String(), func(t *testing.T) { roundTripThroughFilter(t, packing) })
	}
}

func roundTripThroughFilter(t *testing.T, packing filter.Packing) {
	cfg := filter.Config{Capacity: 5000, FingerprintBits: 12, Packing: packing, Seed: 4}
	g, err := filter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ks := keys(5000, 2)
	for _, k := range ks {
		if err := g.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	f, err := lockfree.FromFilter(g)
	if err != nil {
		t.Fatal(err)
	}
	if f.Len() != g.Len() {
		t.Fatalf("Len %d, filter has %d", f.Len(), g.Len())
	}
	for _, k := range ks {
		if !f.Contains(k) {
			t.Fatal("key lost by FromFilter")
		}
	}
	back := f.Snapshot()
	for _, k := range ks {
		if !back.Contains(k) {
			t.Fatal("key lost by Snapshot")
		}
	}
	if back.Len() != g.Len() {
		t.Fatalf("Snapshot Len %d, want %d", back.Len(), g.Len())
	}
	var sb strings.Builder
	if _, err := f.WriteTo(&sb); err != nil {
		t.Fatal(err)
	}
	h, err := filter.Read(strings.NewReader(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	if h.Len() != g.Len() {
		t.Fatal("WriteTo lost fingerprints")
	}
}

// TestConcurrentReadersNeverMiss fills a filter to Capacity from several
// writers (heavy migration) while readers check that every key whose
// Insert has returned is found.
func TestConcurrentReadersNeverMiss(t *testing.T) { forShapes(t, concurrentReadersNeverMiss) }

func concurrentReadersNeverMiss(t *testing.T, s shape) {
	n := 40000
	if testing.Short() {
		n = 10000
	}
	f := mustNew(t, s.config(uint64(n), 5))
	ks := keys(n, 3)
	const writers = 4
	var inserted [writers][]int // indexes, appended by each writer
	var progress [writers]struct {
		sync.Mutex
		done int
	}
	var wg sync.WaitGroup
	var failed [writers]int
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += writers {
				if err := f.Insert(ks[i]); err != nil {
					failed[w]++
					continue
				}
				progress[w].Lock()
				inserted[w] = append(inserted[w], i)
				progress[w].done = len(inserted[w])
				progress[w].Unlock()
			}
		}()
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 7))
			for {
				select {
				case <-stop:
					return
				default:
				}
				w := rng.IntN(writers)
				progress[w].Lock()
				done := progress[w].done
				var i int
				if done > 0 {
					i = inserted[w][rng.IntN(done)]
				}
				progress[w].Unlock()
				if done > 0 && !f.Contains(ks[i]) {
					t.Errorf("key %d, inserted, not found", i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	total := 0
	for w := range writers {
		total += failed[w]
	}
	t.Logf("load %.4f, %d of %d inserts refused under contention", f.LoadFactor(), total, n)
	if float64(total) > 0.01*float64(n) {
		t.Errorf("%d inserts refused, more than 1%%", total)
	}
	for w := range writers {
		for _, i := range inserted[w] {
			if !f.Contains(ks[i]) {
				t.Fatalf("key %d lost", i)
			}
		}
	}
}
