package filter_test

import (
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
)

// TestLoadExperiment logs the load at which the victim slot is first needed.
func TestLoadExperiment(t *testing.T) {
	if os.Getenv("CUCKOO_EXPERIMENT") == "" {
		t.Skip("set CUCKOO_EXPERIMENT")
	}
	n, _ := strconv.Atoi(os.Getenv("CUCKOO_EXPERIMENT"))
	for _, b := range []int{2, 4, 8} {
		for _, fb := range []int{4, 5, 6, 7, 8, 9, 10} {
			for seed := range uint64(2) {
				f, _ := filter.New(filter.Config{Capacity: uint64(n), BucketSize: b, FingerprintBits: fb, Seed: seed})
				ks := keys(n*11/10, seed+100)
				i := 0
				for ; i < len(ks); i++ {
					if err := f.Insert(ks[i]); err != nil {
						if !errors.Is(err, filter.ErrFull) {
							t.Fatal(err)
						}
						break
					}
					if f.VictimUsed() {
						break
					}
				}
				t.Logf("n=%d b=%d f=%d seed=%d first victim at load %.4f (%d keys, capacity %d)", n, b, fb, seed, f.LoadFactor(), i, f.Capacity())
			}
		}
	}
}
