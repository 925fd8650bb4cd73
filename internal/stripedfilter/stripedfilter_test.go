package stripedfilter_test

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/stripedfilter"
)

// keys returns n random 16-byte keys of stream seed.
func keys(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([][]byte, n)
	for i := range out {
		k := make([]byte, 16)
		binary.LittleEndian.PutUint64(k, r.Uint64())
		binary.LittleEndian.PutUint64(k[8:], r.Uint64())
		out[i] = k
	}
	return out
}

func TestStriped(t *testing.T) {
	s := stripedfilter.New(20000, 1)
	n := int(0.95 * float64(s.Buckets()*4))
	ks := keys(n, 71)
	for i, k := range ks {
		if err := s.Insert(k); err != nil {
			t.Fatalf("insert %d of %d: %v", i, n, err)
		}
	}
	for _, k := range ks {
		if !s.Contains(k) {
			t.Fatal("key lost")
		}
	}
	for _, k := range ks {
		if !s.Delete(k) {
			t.Fatal("delete of a present key failed")
		}
	}
	const workers = 4
	refused := make([]bool, n) // element i written by its inserter only
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if err := s.Insert(ks[i]); err != nil {
					if errors.Is(err, filter.ErrFull) {
						refused[i] = true
						continue
					}
					t.Error(err)
					return
				}
				if i%2 == 0 && !s.Delete(ks[i]) {
					t.Error("delete of a present key failed")
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := 1; i < n; i += 2 {
		if !refused[i] && !s.Contains(ks[i]) {
			t.Fatalf("key %d lost", i)
		}
	}
}
