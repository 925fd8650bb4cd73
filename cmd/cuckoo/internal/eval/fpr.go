package eval

import (
	"math"

	"github.com/cuckoohash/cuckoo/filter"
)

// FPRRow is a cuckoo filter's false-positive rate at full load for one
// shape, measured and in theory.
type FPRRow struct {
	BucketSize, FingerprintBits int
	Load                        float64 // the filter's load at Capacity keys
	BitsPerItem                 float64 // SizeInBytes·8 / keys
	Measured                    float64 // share of absent keys reported present
	Bound                       float64 // 2b / 2^f, the paper's upper bound
	Expected                    float64 // 1 - (1 - 1/(2^f-1))^(2b·load): the rate at this load
	Absent                      int     // absent keys looked up
}

// FPR fills a filter of each shape (b = 2, 4, 8; f = 4..20) to its
// capacity of n keys and looks up `absent` keys never inserted.
func FPR(n uint64, absent int, seed uint64) ([]FPRRow, error) {
	var rows []FPRRow
	probe := keys(absent, seed+500)
	for _, b := range []int{2, 4, 8} {
		for f := 4; f <= 20; f++ {
			flt, err := filter.New(filter.Config{Capacity: n, BucketSize: b, FingerprintBits: f, Seed: seed})
			if err != nil {
				return nil, err
			}
			for i := range n {
				if err := flt.InsertHash(mix(seed<<40 | i)); err != nil {
					return nil, err
				}
			}
			hits := 0
			for _, k := range probe {
				if flt.ContainsHash(k) {
					hits++
				}
			}
			rows = append(rows, FPRRow{
				BucketSize: b, FingerprintBits: f,
				Load:        flt.LoadFactor(),
				BitsPerItem: float64(flt.SizeInBytes()*8) / float64(n),
				Measured:    float64(hits) / float64(absent),
				Bound:       float64(2*b) / math.Exp2(float64(f)),
				Expected:    filter.ExpectedFalsePositiveRate(flt.LoadFactor(), b, f),
				Absent:      absent,
			})
		}
	}
	return rows, nil
}

// BloomBitsPerItem is an optimal Bloom filter's space for rate eps:
// log2(1/eps)/ln 2 bits a key.
func BloomBitsPerItem(eps float64) float64 { return -math.Log2(eps) / math.Ln2 }

// CountingBloomBitsPerItem is a counting Bloom filter's space for rate
// eps with 4-bit counters: four times a Bloom filter's. Computed, not
// measured.
func CountingBloomBitsPerItem(eps float64) float64 { return 4 * BloomBitsPerItem(eps) }

// CrossoverRate returns the false-positive rate below which a cuckoo filter
// of bucket size b at load `load` takes less space than an optimal Bloom
// filter: the eps where (log2(1/eps) + log2(2b)) / load equals
// log2(1/eps) / ln 2, treating the fingerprint width as continuous.
func CrossoverRate(b int, load float64) float64 {
	// (x + c)/load = x/ln2 with x = log2(1/eps), c = log2(2b):
	// x = c / (load/ln2 - 1).
	c := math.Log2(float64(2 * b))
	x := c / (load/math.Ln2 - 1)
	return math.Exp2(-x)
}
