package redisbloom_test

import (
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
)

// BenchmarkFilter measures RedisBloom's default shape (bucket size 2,
// expansion 1) filled to 90% of a million items' reservation: inserts,
// and lookups of present and absent items.
func BenchmarkFilter(b *testing.B) {
	const n = 1 << 20
	items := make([][]byte, 2*n)
	for i := range items {
		items[i] = fmt.Appendf(nil, "item:%d", i)
	}
	p := redisbloom.Params{Capacity: n, BucketSize: 2, MaxIterations: 20, Expansion: 1}
	b.Run("add", func(b *testing.B) {
		var f *redisbloom.Filter
		i := 0
		for b.Loop() {
			if i%(n*9/10) == 0 {
				f, _ = redisbloom.New(p)
			}
			_ = f.Add(items[i%n])
			i++
		}
	})
	f, _ := redisbloom.New(p)
	for _, it := range items[:n*9/10] {
		_ = f.Add(it)
	}
	for _, c := range []struct {
		name string
		base int
	}{{"contains/present", 0}, {"contains/absent", n}} {
		b.Run(c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				f.Contains(items[c.base+i&(n-1)])
				i++
			}
		})
	}
}
