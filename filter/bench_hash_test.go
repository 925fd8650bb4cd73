package filter_test

import (
	"fmt"
	"testing"
)

// BenchmarkContainsHash measures lookups of caller-computed hashes, the
// workload of the C++ reference's benchmarks (64-bit keys, a multiply-shift
// hash), without the cost of hashing 16-byte keys.
func BenchmarkContainsHash(b *testing.B) {
	for _, n := range benchSizes() {
		for _, hit := range []int{50, 100, 0} {
			b.Run(fmt.Sprintf("n=%s/load=0.95/hit=%d%%", sizeName(n), hit), func(b *testing.B) {
				f := benchHashFilter(b, n)
				hs := make([]uint64, 1<<20)
				for j := range hs {
					r := mix(uint64(j) ^ 0xabcdef)
					if int(r%100) < hit {
						hs[j] = mix(mix(r) % n)
					} else {
						hs[j] = mix(absentBase + uint64(j))
					}
				}
				found := 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if f.ContainsHash(hs[i&(len(hs)-1)]) {
						found++
					}
				}
				sinkInt = found
			})
		}
	}
}
