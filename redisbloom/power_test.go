package redisbloom

import (
	"math/bits"
	"testing"
)

// TestPowerMatchesMultiplying: power's shortcuts give what multiplying
// exp times gives, overflow included.
func TestPowerMatchesMultiplying(t *testing.T) {
	for base := uint64(0); base <= 70; base++ {
		for exp := 0; exp <= 70; exp++ {
			want, wantOK := uint64(1), true
			for range exp {
				hi, lo := bits.Mul64(want, base)
				if hi != 0 {
					wantOK = false
					break
				}
				want = lo
			}
			got, ok := power(base, exp)
			if ok != wantOK || (ok && got != want) {
				t.Fatalf("power(%d, %d) = %d, %v; want %d, %v", base, exp, got, ok, want, wantOK)
			}
		}
	}
	if got, ok := power(1<<15, 65534); ok {
		t.Fatalf("power(2^15, 65534) = %d, fits", got)
	}
}
