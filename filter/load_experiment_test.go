package filter_test

import (
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
)

// TestLoadExperiment logs the load at which the victim slot is first needed,
// for bucket sizes 2, 4 and 8 and fingerprints of 4 to 10 bits, and checks
// it against the loads the cuckoo filter paper reports reachable with
// enough fingerprint bits (8 or more here): 84%, 95% and 98%. Keys:
// 20,000, or CUCKOO_EXPERIMENT's count.
func TestLoadExperiment(t *testing.T) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("CUCKOO_EXPERIMENT")); err == nil && v > 0 {
		n = v
	}
	reachable := map[int]float64{2: 0.84, 4: 0.95, 8: 0.98}
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
				if fb >= 8 && f.LoadFactor() < reachable[b] {
					t.Errorf("b=%d f=%d seed=%d: the victim slot was first needed at load %.4f, below the paper's %.2f", b, fb, seed, f.LoadFactor(), reachable[b])
				}
			}
		}
	}
}
