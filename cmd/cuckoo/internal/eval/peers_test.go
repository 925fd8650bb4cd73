package eval

import (
	"math"
	"testing"
)

func TestPeerFPR(t *testing.T) {
	n, absent := 50000, 400000
	rows, err := PeerFPR(n, absent, []float64{8, 12.64}, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range rows {
		seen[r.Filter]++
		t.Logf("%-45s %.2f bits/item, rate %.5f%%", r.Filter, r.BitsPerItem, 100*r.Measured)
		var want float64
		switch r.Filter {
		case PeerBloom:
			// (1 - e^(-k/bits))^k with k = round(ln2·bits).
			k := math.Round(math.Ln2 * r.BitsPerItem)
			want = math.Pow(1-math.Exp(-k/r.BitsPerItem), k)
		case PeerFuse8:
			want = 1.0 / 256
		case PeerFuse16:
			want = 1.0 / 65536
		case PeerCountingBloom:
			if !r.Computed || r.BitsPerItem < 4*BloomBitsPerItem(r.Measured)-1e-9 {
				t.Errorf("counting Bloom row %+v", r)
			}
			continue
		}
		// Within 5 standard deviations of the expected count, or of 5.
		exp := want * float64(absent)
		if got := r.Measured * float64(absent); math.Abs(got-exp) > max(5*math.Sqrt(exp), 5) {
			t.Errorf("%s: %v false positives in %d, expected %.1f", r.Filter, got, absent, exp)
		}
	}
	if seen[PeerBloom] != 2 || seen[PeerCountingBloom] != 2 || seen[PeerFuse8] != 1 || seen[PeerFuse16] != 1 {
		t.Errorf("rows: %v", seen)
	}
}

func TestBloomAfterDeletes(t *testing.T) {
	deleted, absent := BloomAfterDeletes(20000, 100000, 12.64, 2)
	if deleted != 1 {
		t.Errorf("a Bloom filter forgot %.4f of the keys it cannot delete", 1-deleted)
	}
	if absent <= 0 || absent > 0.01 {
		t.Errorf("absent keys found at rate %.5f", absent)
	}
}
