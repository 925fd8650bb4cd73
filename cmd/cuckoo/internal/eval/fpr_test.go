package eval

import (
	"math"
	"testing"
)

func TestFPR(t *testing.T) {
	n, absent := uint64(50000), 400000
	if testing.Short() {
		n, absent = 20000, 200000
	}
	rows, err := FPR(n, absent, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3*17 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		t.Logf("b=%d f=%2d load %.3f bits/item %5.2f measured %.6f expected %.6f bound %.6f",
			r.BucketSize, r.FingerprintBits, r.Load, r.BitsPerItem, r.Measured, r.Expected, r.Bound)
		if r.Measured > r.Bound*1.3+5/float64(r.Absent) {
			t.Errorf("b=%d f=%d: measured %.6f above 1.3x the bound %.6f", r.BucketSize, r.FingerprintBits, r.Measured, r.Bound)
		}
		// Where the expected count of false positives is large enough to
		// judge, the measurement is within 4 standard deviations or 5% of
		// it. Expected treats every slot as full with probability load;
		// real buckets are fuller or emptier than that, and the rate is
		// concave in a bucket pair's occupancy, so narrow fingerprints
		// (high rates) measure a little below it.
		want := r.Expected * float64(r.Absent)
		if want >= 50 {
			got := r.Measured * float64(r.Absent)
			if math.Abs(got-want) > max(4*math.Sqrt(want), 0.05*want) {
				t.Errorf("b=%d f=%d: %v false positives, expected %.1f", r.BucketSize, r.FingerprintBits, got, want)
			}
		}
	}
}

func TestCrossoverRate(t *testing.T) {
	// A plain cuckoo filter (b=4, 95.5% load) needs (log2(1/eps)+3)/0.955
	// bits a key, an optimal Bloom filter 1.44·log2(1/eps): they cross at
	// eps of about 0.4%. (The paper's "below 3%" is for its semi-sorted
	// variant, which saves a bit a key.)
	eps := CrossoverRate(4, 0.955)
	t.Logf("crossover at %.4f", eps)
	if eps < 0.003 || eps > 0.006 {
		t.Errorf("crossover %.4f", eps)
	}
	// At the crossover both take the same space.
	x := -math.Log2(eps)
	if c := (x + 3) / 0.955; math.Abs(c-BloomBitsPerItem(eps)) > 1e-9 {
		t.Errorf("cuckoo %.4f bits, Bloom %.4f bits at the crossover", c, BloomBitsPerItem(eps))
	}
}
