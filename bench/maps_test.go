package bench_test

// The concurrent-map benchmarks compare every map of bench.MapImpls side by
// side:
//
//	Map/key=K/keys=N/impl=X/reads=R%   one op = one Load, Store or Delete
//
// K is int or string; N keys (1e3, 1e6) are stored before the first
// sub-benchmark of a key count; a goroutine's ops pick a key uniformly from
// the N and are R% Loads, the rest half Stores (of a key chosen the same
// way) and half Deletes, all through b.RunParallel, so -cpu 1,2 gives the
// figures at GOMAXPROCS 1 and 2. Each line reports ops/s and B/entry, the
// live heap per key of the map after filling it with N keys (every map is
// created without a size hint, so this includes where each stands in its
// growth cycle; the keys' own bytes are not counted).
//
// Each map is filled once, on its first sub-benchmark, and shared by its
// reads=R% sub-benchmarks, which run from 100% down, so the mixes with
// writes run on a map that earlier mixes have churned (their Stores and
// Deletes keep the number of keys between N/2 and N), the same for every
// impl. Only one map is alive at a time: the testing package collects
// garbage before every run, and with all six 1e6-key maps alive those
// collections alone took over a minute at -benchtime=100x; it also keeps
// the collector's work on other maps out of each measurement.

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/bench"
)

var (
	mapSizes     = []int{1e3, 1e6}
	readPercents = []int{100, 99, 90, 75, 50}
)

func BenchmarkMap(b *testing.B) {
	b.Run("key=int", benchMaps[int])
	b.Run("key=string", benchMaps[string])
}

func sizeName(n int) string {
	switch n {
	case 1e3:
		return "1e3"
	case 1e6:
		return "1e6"
	}
	return fmt.Sprint(n)
}

func benchMaps[K bench.MapKey](b *testing.B) {
	for _, n := range mapSizes {
		b.Run("keys="+sizeName(n), func(b *testing.B) {
			keys := bench.MapKeys[K](n)
			for _, impl := range bench.MapImpls {
				b.Run("impl="+impl.Name, func(b *testing.B) {
					// Filled on first use, so that -bench filters skip
					// the fill, and dropped when this impl is done.
					var m bench.Map[K]
					var perEntry float64
					for _, reads := range readPercents {
						b.Run(fmt.Sprintf("reads=%d%%", reads), func(b *testing.B) {
							if m == nil {
								m, perEntry = bench.FillMap(impl.Name, keys)
							}
							runMix(b, m, keys, reads)
							b.ReportMetric(perEntry, "B/entry")
						})
					}
				})
			}
		})
	}
}

// runMix runs b.N operations of the mix with reads% Loads on m, in
// parallel.
func runMix[K bench.MapKey](b *testing.B, m bench.Map[K], keys []K, reads int) {
	mix := newOpMix(keys, reads)
	var streams atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		x := streams.Add(0x9e3779b97f4a7c15)
		for pb.Next() {
			x += 0x9e3779b97f4a7c15
			mix.do(m, splitmix(x))
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// TestMaps checks every compared map's adapter on a few keys.
func TestMaps(t *testing.T) {
	for _, impl := range bench.MapImpls {
		t.Run(impl.Name, func(t *testing.T) {
			testMap(t, impl.Name, bench.MapKeys[int](100))
			testMap(t, impl.Name, bench.MapKeys[string](100))
		})
	}
}

func testMap[K bench.MapKey](t *testing.T, impl string, keys []K) {
	m, perEntry := bench.FillMap(impl, keys)
	if perEntry <= 0 {
		t.Logf("%s: %v bytes per entry (a collection freed more than the fill took)", impl, perEntry)
	}
	for i, k := range keys {
		if v, ok := m.Load(k); !ok || v != i {
			t.Fatalf("%s: Load(%v) = %d, %v; want %d", impl, k, v, ok, i)
		}
	}
	for _, k := range keys[:50] {
		m.Delete(k)
	}
	for i, k := range keys {
		if _, ok := m.Load(k); ok != (i >= 50) {
			t.Fatalf("%s: Load(%v) found %v after deleting the first 50", impl, k, ok)
		}
	}
}

// BenchmarkMapVsXsync times this project's map and xsync.Map on the same
// mixes as BenchmarkMap, interleaved inside each sub-benchmark so that a
// noisy machine slows both alike:
//
//	MapVsXsync/key=K/keys=N/reads=R%
//
// Each run gives each map b.N operations in 32 rounds, alternating the
// maps round by round (cuckoo first in even rounds, xsync first in odd
// ones). It reports each map's ns per operation and "speedup", the median
// over rounds of xsync's time over cuckoo's (above 1, cuckoo is faster):
// a burst of load from other processes spoils a round or two, not the
// figure. Both
// maps are filled once per key type and size, and every mix runs on both,
// so they are churned alike.
func BenchmarkMapVsXsync(b *testing.B) {
	b.Run("key=int", benchVsXsync[int])
	b.Run("key=string", benchVsXsync[string])
}

func benchVsXsync[K bench.MapKey](b *testing.B) {
	for _, n := range mapSizes {
		b.Run("keys="+sizeName(n), func(b *testing.B) {
			keys := bench.MapKeys[K](n)
			var ours, theirs bench.Map[K]
			for _, reads := range readPercents {
				b.Run(fmt.Sprintf("reads=%d%%", reads), func(b *testing.B) {
					if ours == nil {
						ours, _ = bench.FillMap("cuckoo", keys)
						theirs, _ = bench.FillMap("xsync", keys)
					}
					const rounds = 32
					var oursTime, theirsTime time.Duration
					ratios := make([]float64, rounds)
					b.ResetTimer()
					for r := range rounds {
						ops := max(b.N/rounds, 1)
						var o, x time.Duration
						if r%2 == 0 {
							o = timeMix(ours, keys, reads, ops, uint64(r))
							x = timeMix(theirs, keys, reads, ops, uint64(r))
						} else {
							x = timeMix(theirs, keys, reads, ops, uint64(r))
							o = timeMix(ours, keys, reads, ops, uint64(r))
						}
						oursTime += o
						theirsTime += x
						ratios[r] = float64(x) / float64(o)
					}
					slices.Sort(ratios)
					perMap := float64(rounds * max(b.N/rounds, 1))
					b.ReportMetric(float64(oursTime.Nanoseconds())/perMap, "cuckoo-ns/op")
					b.ReportMetric(float64(theirsTime.Nanoseconds())/perMap, "xsync-ns/op")
					b.ReportMetric((ratios[rounds/2-1]+ratios[rounds/2])/2, "speedup")
				})
			}
		})
	}
}

// timeMix runs ops operations of the mix with reads% Loads on m, split
// over GOMAXPROCS goroutines in batches, and returns the wall time. The
// operations are those of runMix: stream seeds differ by round.
func timeMix[K bench.MapKey](m bench.Map[K], keys []K, reads, ops int, round uint64) time.Duration {
	mix := newOpMix(keys, reads)
	const batch = 256
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := (round*64 + uint64(g) + 1) * 0x9e3779b97f4a7c15
			for {
				left := min(int64(ops)-next.Add(batch)+batch, batch)
				if left <= 0 {
					return
				}
				for range left {
					x += 0x9e3779b97f4a7c15
					mix.do(m, splitmix(x))
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// opMix is a mix of operations on keys: reads% Loads, the rest Stores and
// Deletes in equal shares.
type opMix[K bench.MapKey] struct {
	keys              []K
	n                 uint64
	readCut, storeCut uint64 // of the low 32 bits of an op's random value
}

func newOpMix[K bench.MapKey](keys []K, reads int) opMix[K] {
	readCut := uint64(reads) << 32 / 100
	return opMix[K]{keys: keys, n: uint64(len(keys)), readCut: readCut, storeCut: readCut + (1<<32-readCut)/2}
}

// do runs on m the operation of the random value z: its high half picks
// the key, its low half the operation.
func (o *opMix[K]) do(m bench.Map[K], z uint64) {
	k := o.keys[(z>>32)*o.n>>32]
	switch r := z & (1<<32 - 1); {
	case r < o.readCut:
		m.Load(k)
	case r < o.storeCut:
		m.Store(k, int(r))
	default:
		m.Delete(k)
	}
}

// splitmix is splitmix64's output function: the benchmarks' stream of ops
// steps x by the golden ratio and takes splitmix(x), whose high half picks
// the key and low half the op.
func splitmix(x uint64) uint64 {
	z := (x ^ x>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
