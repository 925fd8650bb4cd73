package redisbloom_test

import (
	"encoding/binary"
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

// BenchmarkTouch compares adding batches of 10 items (a CF.INSERT) to a
// filter far larger than the caches, CF.RESERVE 20000000, with and without
// Touch first; and looking them up.
func BenchmarkTouch(b *testing.B) {
	const batch = 10
	for _, touch := range []bool{false, true} {
		f, err := redisbloom.New(redisbloom.Params{Capacity: 20_000_000, BucketSize: 2, MaxIterations: 20, Expansion: 1,
			Reserve: func(uint64) error { return nil }})
		if err != nil {
			b.Fatal(err)
		}
		items := make([][]byte, batch)
		next := uint64(0)
		fill := func() {
			for i := range items {
				next++
				items[i] = binary.LittleEndian.AppendUint64(items[i][:0], next*0x9E3779B97F4A7C15)
			}
		}
		for range 3_000_000 / batch {
			fill()
			for _, it := range items {
				f.Add(it)
			}
		}
		b.Run(fmt.Sprintf("add/touch=%v", touch), func(b *testing.B) {
			for b.Loop() {
				fill()
				if touch {
					f.Touch(items)
				}
				for _, it := range items {
					f.Add(it)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/item")
		})
		b.Run(fmt.Sprintf("contains/touch=%v", touch), func(b *testing.B) {
			for b.Loop() {
				fill()
				if touch {
					f.Touch(items)
				}
				for _, it := range items {
					f.Contains(it)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/item")
		})
	}
}

// BenchmarkManySubFilters adds one item over and over to RedisBloom's
// smallest shape (CF.RESERVE k 2 BUCKETSIZE 1 EXPANSION 1), which grows a
// two-slot sub-filter every second add: every sub-filter but the newest
// is full, and neither an add nor growing may visit them all. One op is
// 8,192 adds, which make about 4,096 sub-filters; ns/add is its time an
// add.
func BenchmarkManySubFilters(b *testing.B) {
	const n = 8192
	p := redisbloom.Params{Capacity: 2, BucketSize: 1, MaxIterations: 20, Expansion: 1}
	adds := 0
	for b.Loop() {
		f, err := redisbloom.New(p)
		if err != nil {
			b.Fatal(err)
		}
		for range n {
			if err := f.Add([]byte("1 ")); err != nil {
				b.Fatal(err)
			}
		}
		adds += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(adds), "ns/add")
}
