package cf_test

import (
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// BenchmarkInfo measures CF.INFO's figures (Info, and the Filters and
// SizeBytes that MEMORY USAGE, INFO and cf-max-expansions' check read) of
// filters of 1, about 1,000 and 65,535 sub-filters: RedisBloom's smallest
// shape, CF.RESERVE k 2 BUCKETSIZE 1 EXPANSION 1, fed one item until it has
// that many, and this server's growing table grown from 64 items. The time
// must stay flat however many sub-filters there are.
func BenchmarkInfo(b *testing.B) {
	one := []byte("1 ")
	for _, c := range []struct {
		name   string
		p      cf.Params
		items  int
		repeat bool // the same item every add
	}{
		{"redisbloom", cf.Params{Capacity: 2, BucketSize: 1, MaxIter: 20, Expansion: 1, Layout: cf.LayoutRedisBloom}, 1, true},
		{"redisbloom", cf.Params{Capacity: 2, BucketSize: 1, MaxIter: 20, Expansion: 1, Layout: cf.LayoutRedisBloom}, 2 * 1000, true},
		{"redisbloom", cf.Params{Capacity: 2, BucketSize: 1, MaxIter: 20, Expansion: 1, Layout: cf.LayoutRedisBloom}, 2 * 65535, true},
		{"cuckoo", cf.Params{Capacity: 64, BucketSize: 4, MaxIter: 20, Expansion: 1, Slots: 4}, 1, false},
		{"cuckoo", cf.Params{Capacity: 64, BucketSize: 4, MaxIter: 20, Expansion: 1, Slots: 4}, 64 << 10, false},
	} {
		f := newFilter(b, c.p)
		for i := range c.items {
			x := one
			if !c.repeat {
				x = item(i)
			}
			if _, err := f.Add(x, false, false, free); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("layout=%s/filters=%d", c.name, f.Filters()), func(b *testing.B) {
			var sink int64
			for b.Loop() {
				in := f.Info()
				sink += in[0].Value + int64(f.Filters()) + int64(f.SizeBytes())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/info")
			b.ReportMetric(float64(f.Filters()), "filters")
			if sink == 0 {
				b.Fatal("no figures")
			}
		})
	}
}
