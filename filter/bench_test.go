package filter_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/filter"
)

// keyAt writes the i-th benchmark key, 16 pseudo-random bytes, into k.
// Keys i < n are the members of a filter of n keys; keys i >= 1<<40 are
// never inserted.
func keyAt(k []byte, i uint64) {
	binary.LittleEndian.PutUint64(k, mix(i))
	binary.LittleEndian.PutUint64(k[8:], mix(i^0x6a09e667f3bcc908))
}

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

const absentBase = 1 << 40

var benchFilters = map[string]*filter.Filter{}

// benchFilter returns a filter of capacity n with 12-bit fingerprints and 4
// slots a bucket, holding keys 0..n-1: at the design load of 95%.
func benchFilter(b *testing.B, n uint64) *filter.Filter {
	return benchFilterPacked(b, n, filter.PackingPlain)
}

// benchFilterPacked is benchFilter with the given packing.
func benchFilterPacked(b *testing.B, n uint64, packing filter.Packing) *filter.Filter {
	name := fmt.Sprint(n, packing)
	if f, ok := benchFilters[name]; ok {
		return f
	}
	f, err := filter.New(packingConfig(n, packing, 0))
	if err != nil {
		b.Fatal(err)
	}
	k := make([]byte, 16)
	for i := range n {
		keyAt(k, i)
		if err := f.Insert(k); err != nil {
			b.Fatalf("insert %d: %v", i, err)
		}
	}
	benchFilters[name] = f
	return f
}

// packingConfig is the Config of the packing benchmarks: 4 slots of 12
// bits, or for ranked buckets the rate 0.0075, which gives Q = 33 and L =
// 5 (R = 1056, 36-bit buckets, near 1%).
func packingConfig(n uint64, packing filter.Packing, seed uint64) filter.Config {
	if packing == filter.PackingRanked {
		return filter.Config{Capacity: n, FalsePositiveRate: 0.0075, Packing: packing, Seed: seed}
	}
	return filter.Config{Capacity: n, FingerprintBits: 12, BucketSize: 4, Packing: packing, Seed: seed}
}

// packings are the packings the packing benchmarks compare.
var packings = []filter.Packing{filter.PackingPlain, filter.PackingSemiSorted, filter.PackingRanked}

// lookupKeys returns count keys, the given percentage of them members of a
// filter of n keys, in random order.
func lookupKeys(n uint64, hitPercent, count int) [][]byte {
	out := make([][]byte, count)
	backing := make([]byte, 16*count)
	for j := range out {
		k := backing[16*j : 16*j+16 : 16*j+16]
		r := mix(uint64(j) ^ 0xabcdef)
		if int(r%100) < hitPercent {
			keyAt(k, mix(r)%n)
		} else {
			keyAt(k, absentBase+uint64(j))
		}
		out[j] = k
	}
	return out
}

func sizeName(n uint64) string {
	switch n {
	case 1e5:
		return "1e5"
	case 1e6:
		return "1e6"
	case 1e7:
		return "1e7"
	case 1e8:
		return "1e8"
	}
	return fmt.Sprint(n)
}

func benchSizes() []uint64 {
	if os.Getenv("CUCKOO_BENCH_LARGE") != "" {
		return []uint64{1e6, 1e7}
	}
	return []uint64{1e5, 1e6}
}

func BenchmarkContains(b *testing.B) {
	for _, n := range benchSizes() {
		for _, hit := range []int{50, 100, 0} {
			b.Run(fmt.Sprintf("n=%s/load=0.95/hit=%d%%", sizeName(n), hit), func(b *testing.B) {
				f := benchFilter(b, n)
				ks := lookupKeys(n, hit, 1<<20)
				found := 0
				b.ResetTimer() // which also drops metrics reported before it
				b.ReportMetric(float64(f.SizeInBytes())*8/float64(n), "bits/item")
				b.ReportMetric(f.LoadFactor(), "load")
				for i := 0; i < b.N; i++ {
					if f.Contains(ks[i&(len(ks)-1)]) {
						found++
					}
				}
				sinkInt = found
			})
		}
	}
}

func BenchmarkContainsBatch(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%s/load=0.95/hit=50%%", sizeName(n)), func(b *testing.B) {
			f := benchFilter(b, n)
			ks := lookupKeys(n, 50, 1<<20)
			out := make([]bool, 256)
			b.ResetTimer()
			b.ReportMetric(float64(f.SizeInBytes())*8/float64(n), "bits/item")
			for i := 0; i < b.N; i += len(out) {
				j := i & (len(ks) - 1)
				f.ContainsBatch(ks[j:j+len(out)], out)
			}
		})
	}
}

var sinkInt int

// BenchmarkContainsPacking compares lookups in plain and semi-sorted tables
// of the same keys and fingerprints (4 slots of 12 bits, 95% load), and a
// ranked one near 1% (Q = 33, L = 5, 96%), one key a call and in batches.
// Run it with -count to interleave them.
func BenchmarkContainsPacking(b *testing.B) {
	for _, n := range benchSizes() {
		for _, batch := range []bool{false, true} {
			for _, packing := range packings {
				b.Run(fmt.Sprintf("n=%s/batch=%v/packing=%v", sizeName(n), batch, packing), func(b *testing.B) {
					f := benchFilterPacked(b, n, packing)
					ks := lookupKeys(n, 50, 1<<20)
					out := make([]bool, 256)
					b.ResetTimer()
					b.ReportMetric(float64(f.SizeInBytes())*8/float64(n), "bits/item")
					if batch {
						for i := 0; i < b.N; i += len(out) {
							j := i & (len(ks) - 1)
							f.ContainsBatch(ks[j:j+len(out)], out)
						}
						return
					}
					found := 0
					for i := 0; i < b.N; i++ {
						if f.Contains(ks[i&(len(ks)-1)]) {
							found++
						}
					}
					sinkInt = found
				})
			}
		}
	}
}

// BenchmarkContainsPackingLatency is BenchmarkContainsPacking's one key a
// call with each lookup waiting for the one before it: the next key is one
// or two further on, by the last answer. It measures a lookup's latency,
// where BenchmarkContainsPacking lets the processor overlap lookups; the
// two together tell whether a layout is slower by its chain of dependent
// reads or by its work.
func BenchmarkContainsPackingLatency(b *testing.B) {
	for _, n := range benchSizes() {
		for _, packing := range packings {
			b.Run(fmt.Sprintf("n=%s/packing=%v", sizeName(n), packing), func(b *testing.B) {
				f := benchFilterPacked(b, n, packing)
				ks := lookupKeys(n, 50, 1<<20)
				j := 0
				b.ResetTimer()
				for range b.N {
					hit := 0
					if f.Contains(ks[j]) {
						hit = 1 // a conditional move, not a predicted branch
					}
					j = (j + 1 + hit) & (len(ks) - 1)
				}
			})
		}
	}
}

// BenchmarkInsert fills filters from empty to their capacity (95% load),
// reporting the mean time per insert, for both displacement strategies.
func BenchmarkInsert(b *testing.B) {
	for _, n := range benchSizes() {
		for _, walk := range []bool{false, true} {
			strategy := "bfs"
			if walk {
				strategy = "walk"
			}
			b.Run(fmt.Sprintf("strategy=%s/n=%s/load=0.95", strategy, sizeName(n)), func(b *testing.B) {
				benchFill(b, n, walk, 0)
			})
		}
	}
}

// BenchmarkInsertHighLoad times only the inserts from 90% to 95% load,
// where most of the displacement work happens.
func BenchmarkInsertHighLoad(b *testing.B) {
	for _, n := range benchSizes() {
		for _, walk := range []bool{false, true} {
			strategy := "bfs"
			if walk {
				strategy = "walk"
			}
			b.Run(fmt.Sprintf("strategy=%s/n=%s/load=0.90-0.95", strategy, sizeName(n)), func(b *testing.B) {
				benchFill(b, n, walk, n*90/95)
			})
		}
	}
}

// benchFill inserts b.N keys into filters of capacity n, starting each
// filter with `from` untimed inserts and replacing it when it holds n keys.
func benchFill(b *testing.B, n uint64, walk bool, from uint64) {
	benchFillPacked(b, n, walk, from, filter.PackingPlain)
}

// benchFillPacked is benchFill with the given packing.
func benchFillPacked(b *testing.B, n uint64, walk bool, from uint64, packing filter.Packing) {
	k := make([]byte, 16)
	var f *filter.Filter
	next := n
	fresh := func() {
		b.StopTimer()
		var err error
		cfg := packingConfig(n, packing, next)
		if packing == filter.PackingRanked {
			// Sized for 96%: a capacity 96/95 of n fills it to the 95%
			// of the others, the load the comparison is made at.
			cfg.Capacity = n * 96 / 95
		}
		f, err = filter.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if walk {
			f.UseRandomWalk()
		}
		for i := range from {
			keyAt(k, i)
			if err := f.Insert(k); err != nil {
				b.Fatal(err)
			}
		}
		next = from
		b.StartTimer()
	}
	fresh()
	for i := 0; i < b.N; i++ {
		if next == n {
			fresh()
		}
		keyAt(k, next)
		if err := f.Insert(k); err != nil {
			b.Fatalf("insert at load %.4f: %v", f.LoadFactor(), err)
		}
		next++
	}
}

// BenchmarkInsertPacking compares inserts into plain and semi-sorted tables
// of 4 slots of 12 bits and a ranked one (Q = 33, L = 5), each from empty
// to 95% load and from 90% to 95% (the ranked table, sized for 96%, is
// built a little larger for it). Run it with -count to interleave them.
func BenchmarkInsertPacking(b *testing.B) {
	for _, n := range benchSizes() {
		for _, from := range []uint64{0, n * 90 / 100} {
			for _, packing := range packings {
				b.Run(fmt.Sprintf("n=%s/from=%d%%/packing=%v", sizeName(n), from*100/n, packing), func(b *testing.B) {
					benchFillPacked(b, n, false, from, packing)
				})
			}
		}
	}
}

// BenchmarkDelete deletes and re-inserts members of a full filter.
func BenchmarkDelete(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%s/load=0.95", sizeName(n)), func(b *testing.B) {
			f := benchFilter(b, n)
			k := make([]byte, 16)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				keyAt(k, uint64(i)%n)
				if !f.Delete(k) {
					b.Fatal("member not found")
				}
				if err := f.Insert(k); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHuge compares ContainsBatch with a loop of Contains on a filter
// of about 1 GiB, far larger than the caches, where a lookup costs up to two
// cache misses. Building it takes a minute or more, so it runs only with
// CUCKOO_BENCH_HUGE=1. Compare its Mlookups/s with the machine's random-read
// limit: (independent reads per second) / 2, from ../shared/tools/randread.c.
func BenchmarkHuge(b *testing.B) {
	if os.Getenv("CUCKOO_BENCH_HUGE") == "" {
		b.Skip("set CUCKOO_BENCH_HUGE=1 to build a 1 GiB filter")
	}
	const slots = 1 << 30 * 8 / 12 // a GiB of 12-bit slots
	n := uint64(slots) * 95 / 100
	f := benchFilter(b, n)
	b.Logf("filter: %d keys, %.2f GiB, load %.4f", n, float64(f.SizeInBytes())/(1<<30), f.LoadFactor())
	ks := lookupKeys(n, 50, 1<<22)
	out := make([]bool, 1024)
	b.Run("ContainsBatch/hit=50%", func(b *testing.B) {
		for i := 0; i < b.N; i += len(out) {
			j := i & (len(ks) - 1)
			f.ContainsBatch(ks[j:j+len(out)], out)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mlookups/s")
	})
	b.Run("Contains/hit=50%", func(b *testing.B) {
		found := 0
		for i := 0; i < b.N; i++ {
			if f.Contains(ks[i&(len(ks)-1)]) {
				found++
			}
		}
		sinkInt = found
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mlookups/s")
	})
}

var benchHashFilters = map[uint64]*filter.Filter{}

// benchHashFilter is benchFilter for keys given as 64-bit hashes mix(i).
func benchHashFilter(b *testing.B, n uint64) *filter.Filter {
	if f, ok := benchHashFilters[n]; ok {
		return f
	}
	f, err := filter.New(filter.Config{Capacity: n, FingerprintBits: 12, BucketSize: 4})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := f.InsertHash(mix(i)); err != nil {
			b.Fatalf("insert %d: %v", i, err)
		}
	}
	benchHashFilters[n] = f
	return f
}

// benchScalable returns a Scalable grown from 1000 keys to n, holding keys
// 0..n-1, at a rate of 1%.
func benchScalable(b *testing.B, n uint64) *filter.Scalable {
	s, err := filter.NewScalable(filter.ScalableConfig{InitialCapacity: 1000, FalsePositiveRate: 0.01})
	if err != nil {
		b.Fatal(err)
	}
	k := make([]byte, 16)
	for i := range n {
		keyAt(k, i)
		if err := s.Insert(k); err != nil {
			b.Fatalf("insert %d: %v", i, err)
		}
	}
	return s
}

// BenchmarkScalableLookup compares, in one run, lookups of absent keys in a
// Scalable grown from 1000 keys to 10^6 and in a Filter sized for 10^6 at
// the same rate of 1%: by precomputed hash (the table alone), and by key
// (hashing included). Both report their memory in bits a key.
func BenchmarkScalableLookup(b *testing.B) {
	const n = 1_000_000
	s := benchScalable(b, n)
	f, err := filter.New(filter.Config{Capacity: n, FalsePositiveRate: 0.01})
	if err != nil {
		b.Fatal(err)
	}
	k := make([]byte, 16)
	for i := range uint64(n) {
		keyAt(k, i)
		if err := f.Insert(k); err != nil {
			b.Fatalf("insert %d: %v", i, err)
		}
	}
	ks := lookupKeys(n, 0, 1<<20)
	hs := make([]uint64, 1<<20)
	for j := range hs {
		hs[j] = mix(absentBase + uint64(j))
	}
	mask := len(ks) - 1
	sBits := float64(s.SizeInBytes()) * 8 / n
	fBits := float64(f.SizeInBytes()) * 8 / n

	b.Run("filter=scalable/grown=1e3-1e6/hit=0%/op=ContainsHash", func(b *testing.B) {
		found, i := 0, 0
		for b.Loop() {
			if s.ContainsHash(hs[i&mask]) {
				found++
			}
			i++
		}
		sinkInt = found
		b.ReportMetric(sBits, "bits/key") // after b.Loop, whose reset clears metrics
	})
	b.Run("filter=static/n=1e6/hit=0%/op=ContainsHash", func(b *testing.B) {
		found, i := 0, 0
		for b.Loop() {
			if f.ContainsHash(hs[i&mask]) {
				found++
			}
			i++
		}
		sinkInt = found
		b.ReportMetric(fBits, "bits/key") // after b.Loop, whose reset clears metrics
	})
	b.Run("filter=scalable/grown=1e3-1e6/hit=0%/op=Contains", func(b *testing.B) {
		found, i := 0, 0
		for b.Loop() {
			if s.Contains(ks[i&mask]) {
				found++
			}
			i++
		}
		sinkInt = found
		b.ReportMetric(sBits, "bits/key") // after b.Loop, whose reset clears metrics
	})
	b.Run("filter=static/n=1e6/hit=0%/op=Contains", func(b *testing.B) {
		found, i := 0, 0
		for b.Loop() {
			if f.Contains(ks[i&mask]) {
				found++
			}
			i++
		}
		sinkInt = found
		b.ReportMetric(fBits, "bits/key") // after b.Loop, whose reset clears metrics
	})
}

// BenchmarkScalableInsert grows a Scalable from 1000 keys to 10^6, one
// whole growth an iteration, and reports the mean time of an insert: the
// splits and path searches included, the keys precomputed. Beside it, in
// the same run, a Filter sized for 10^6 at the same rate of 1% is filled
// with the same keys, so that the two compare side by side.
func BenchmarkScalableInsert(b *testing.B) {
	const n = 1_000_000
	ks := make([][]byte, n)
	backing := make([]byte, 16*n)
	for i := range ks {
		ks[i] = backing[16*i : 16*i+16 : 16*i+16]
		keyAt(ks[i], uint64(i))
	}
	b.Run("filter=scalable/grown=1e3-1e6", func(b *testing.B) {
		b.ReportAllocs()
		growths := 0
		var s *filter.Scalable
		for b.Loop() {
			var err error
			s, err = filter.NewScalable(filter.ScalableConfig{InitialCapacity: 1000, FalsePositiveRate: 0.01})
			if err != nil {
				b.Fatal(err)
			}
			for i, k := range ks {
				if err := s.Insert(k); err != nil {
					b.Fatalf("insert %d: %v", i, err)
				}
			}
			growths++
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(growths*n), "ns/insert")
		b.ReportMetric(float64(s.SizeInBytes())*8/n, "bits/key")
	})
	b.Run("filter=static/n=1e6", func(b *testing.B) {
		b.ReportAllocs()
		fills := 0
		var f *filter.Filter
		for b.Loop() {
			var err error
			f, err = filter.New(filter.Config{Capacity: n, FalsePositiveRate: 0.01})
			if err != nil {
				b.Fatal(err)
			}
			for i, k := range ks {
				if err := f.Insert(k); err != nil {
					b.Fatalf("insert %d: %v", i, err)
				}
			}
			fills++
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(fills*n), "ns/insert")
		b.ReportMetric(float64(f.SizeInBytes())*8/n, "bits/key")
	})
}

// BenchmarkScalableVsStatic times a Scalable and a Filter sized for its
// final n, at 1%, in alternation within one benchmark, so that whatever else
// the machine does slows both alike, and reports each one's ns and their
// ratio (Scalable's time over the static filter's):
//   - op=insert: one iteration grows a Scalable from 1000 keys to 10^6 and
//     fills a Filter of capacity 10^6 with the same keys, both at the rate
//     fpr: at 1% a growing bucket is one 64-bit word, at 0.1% two;
//   - op=ContainsHash, op=Contains: one iteration looks up 2^16 absent keys
//     in each, grown to 10^6 keys at 1%, by hash and by key.
func BenchmarkScalableVsStatic(b *testing.B) {
	const n = 1_000_000
	ks := make([][]byte, n)
	backing := make([]byte, 16*n)
	for i := range ks {
		ks[i] = backing[16*i : 16*i+16 : 16*i+16]
		keyAt(ks[i], uint64(i))
	}
	newStatic := func(b *testing.B, fpr float64) *filter.Filter {
		f, err := filter.New(filter.Config{Capacity: n, FalsePositiveRate: fpr})
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	report := func(b *testing.B, scalable, static time.Duration, ops int) {
		b.ReportMetric(float64(scalable.Nanoseconds())/float64(ops), "scalable-ns/op")
		b.ReportMetric(float64(static.Nanoseconds())/float64(ops), "static-ns/op")
		b.ReportMetric(float64(scalable)/float64(static), "scalable/static")
	}
	for _, fpr := range []float64{0.01, 0.001} {
		b.Run(fmt.Sprintf("op=insert/grown=1e3-1e6/fpr=%g%%", 100*fpr), func(b *testing.B) {
			var ts, tf time.Duration
			ops := 0
			for b.Loop() {
				start := time.Now()
				s, err := filter.NewScalable(filter.ScalableConfig{InitialCapacity: 1000, FalsePositiveRate: fpr})
				if err != nil {
					b.Fatal(err)
				}
				for i, k := range ks {
					if err := s.Insert(k); err != nil {
						b.Fatalf("insert %d: %v", i, err)
					}
				}
				ts += time.Since(start)
				start = time.Now()
				f := newStatic(b, fpr)
				for i, k := range ks {
					if err := f.Insert(k); err != nil {
						b.Fatalf("insert %d: %v", i, err)
					}
				}
				tf += time.Since(start)
				ops += n
			}
			report(b, ts, tf, ops)
		})
	}
	s := benchScalable(b, n)
	f := newStatic(b, 0.01)
	for _, k := range ks {
		if err := f.Insert(k); err != nil {
			b.Fatal(err)
		}
	}
	const block = 1 << 16
	absent := lookupKeys(n, 0, block)
	hs := make([]uint64, block)
	for j := range hs {
		hs[j] = mix(absentBase + uint64(j))
	}
	b.Run("op=ContainsHash/n=1e6/hit=0%", func(b *testing.B) {
		var ts, tf time.Duration
		ops, found := 0, 0
		for b.Loop() {
			start := time.Now()
			for _, h := range hs {
				if s.ContainsHash(h) {
					found++
				}
			}
			ts += time.Since(start)
			start = time.Now()
			for _, h := range hs {
				if f.ContainsHash(h) {
					found++
				}
			}
			tf += time.Since(start)
			ops += block
		}
		sinkInt = found
		report(b, ts, tf, ops)
	})
	b.Run("op=Contains/n=1e6/hit=0%", func(b *testing.B) {
		var ts, tf time.Duration
		ops, found := 0, 0
		for b.Loop() {
			start := time.Now()
			for _, k := range absent {
				if s.Contains(k) {
					found++
				}
			}
			ts += time.Since(start)
			start = time.Now()
			for _, k := range absent {
				if f.Contains(k) {
					found++
				}
			}
			tf += time.Since(start)
			ops += block
		}
		sinkInt = found
		report(b, ts, tf, ops)
	})
}
