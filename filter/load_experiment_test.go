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

// TestLoadExperimentRanked is TestLoadExperiment for ranked tables: the
// load at which the victim slot is first needed, for every Q at the least
// L (ranges 152..264) and at L = 5 and 10, in tables at the design load
// for 20,000 keys (or CUCKOO_EXPERIMENT's count) and in one of other
// buckets count, so that a dependence on m shows. It must not fall below
// the design load of 96%.
func TestLoadExperimentRanked(t *testing.T) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("CUCKOO_EXPERIMENT")); err == nil && v > 0 {
		n = v
	}
	for _, q := range filter.RankQs {
		for _, low := range []uint{3, 5, 10} {
			for _, m := range []uint64{uint64(n) * 100 / 384, uint64(n) * 100 / 380} {
				for seed := range uint64(2) {
					f := filter.NewRanked(m, q, low, seed)
					ks := keys(int(m)*4, seed+100)
					i := 0
					for ; i < len(ks); i++ {
						if err := f.Insert(ks[i]); err != nil || f.VictimUsed() {
							break
						}
					}
					t.Logf("n=%d Q=%d L=%d R=%d m=%d seed=%d first victim at load %.4f", n, q, low, f.FingerprintRange(), m, seed, f.LoadFactor())
					if f.LoadFactor() < 0.96 {
						t.Errorf("Q=%d L=%d m=%d seed=%d: the victim slot was first needed at load %.4f, below the design load 0.96", q, low, m, seed, f.LoadFactor())
					}
				}
			}
		}
	}
}
