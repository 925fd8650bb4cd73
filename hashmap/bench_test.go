package hashmap_test

// Benchmarks of the map on its own (the comparison with other maps is in
// the bench module):
//
//	Load/keys=N/key=K/hit=H%       one op = one Load, in parallel
//	Store/keys=N/key=int           one op = one Store of a present key
//	Mix/reads=R%/keys=N            R% Loads, the rest Stores and Deletes
//	LoadFactor/slots=S/load=L/hit=H%  Load at an exact load factor
//
// Maps are filled once per size and kept for the run.

import (
	"fmt"
	"math/bits"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/cuckoohash/cuckoo/hashmap"
)

var benchSizes = []int{1e3, 1e6}

func sizeName(n int) string {
	if n == 1e3 {
		return "1e3"
	}
	if n == 1e6 {
		return "1e6"
	}
	return strconv.Itoa(n)
}

var (
	intMaps = map[int]*hashmap.Map[int, int]{}
	strMaps = map[int]*hashmap.Map[string, int]{}
	strKeys []string // "k" + decimal i, for i < 2e6
)

func intMap(n int) *hashmap.Map[int, int] {
	if m := intMaps[n]; m != nil {
		return m
	}
	m := hashmap.New[int, int]()
	for i := range n {
		m.Store(i, i)
	}
	intMaps[n] = m
	return m
}

func stringKeys(n int) []string {
	for i := len(strKeys); i < n; i++ {
		strKeys = append(strKeys, "k"+strconv.Itoa(i))
	}
	return strKeys[:n]
}

func stringMap(n int) *hashmap.Map[string, int] {
	if m := strMaps[n]; m != nil {
		return m
	}
	m := hashmap.New[string, int]()
	for i, k := range stringKeys(n) {
		m.Store(k, i)
	}
	strMaps[n] = m
	return m
}

// parallel runs body(r) b.N times over goroutines, r a fresh 64-bit random
// number each time, and reports ops/s.
func parallel(b *testing.B, body func(r uint64)) {
	var streams atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		x := streams.Add(0x9e3779b97f4a7c15)
		for pb.Next() {
			x += 0x9e3779b97f4a7c15
			z := (x ^ x>>30) * 0xbf58476d1ce4e5b9
			z = (z ^ z>>27) * 0x94d049bb133111eb
			body(z ^ z>>31)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// pick maps the high half of r onto [0, n).
func pick(r uint64, n int) int { return int((r >> 32) * uint64(n) >> 32) }

func BenchmarkLoad(b *testing.B) {
	for _, n := range benchSizes {
		for _, hit := range []int{100, 0} {
			b.Run(fmt.Sprintf("keys=%s/key=int/hit=%d%%", sizeName(n), hit), func(b *testing.B) {
				m := intMap(n)
				off := 0
				if hit == 0 {
					off = n
				}
				parallel(b, func(r uint64) { m.Load(pick(r, n) + off) })
			})
			b.Run(fmt.Sprintf("keys=%s/key=string/hit=%d%%", sizeName(n), hit), func(b *testing.B) {
				m := stringMap(n)
				keys := stringKeys(2 * n)
				off := 0
				if hit == 0 {
					off = n
				}
				parallel(b, func(r uint64) { m.Load(keys[pick(r, n)+off]) })
			})
		}
	}
}

func BenchmarkStore(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("keys=%s/key=int", sizeName(n)), func(b *testing.B) {
			m := intMap(n)
			parallel(b, func(r uint64) { k := pick(r, n); m.Store(k, k) })
		})
	}
}

func BenchmarkMix(b *testing.B) {
	for _, reads := range []int{99, 90, 75} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("reads=%d%%/keys=%s", reads, sizeName(n)), func(b *testing.B) {
				m := intMap(n)
				readCut := uint64(reads) << 32 / 100
				storeCut := readCut + (1<<32-readCut)/2
				parallel(b, func(r uint64) {
					k := pick(r, n)
					switch op := r & (1<<32 - 1); {
					case op < readCut:
						m.Load(k)
					case op < storeCut:
						m.Store(k, k)
					default:
						m.Delete(k)
					}
				})
			})
		}
	}
}

// BenchmarkLoadFactor measures Loads at exact load factors, in a table of
// 2^14 slots' capacity (inside the caches, as cuckoo eval's in-cache rates)
// and of 2^20 (mostly beyond them): the "lookup rate vs load factor"
// figure, which for cuckoo hashing should stay flat. hit=100% looks up
// present keys, hit=0% absent ones. Each line reports the buckets and keys
// a lookup inspects (LoadProbe, over a sample).
//
//	LoadFactor/slots=S/load=L/hit=H%
func BenchmarkLoadFactor(b *testing.B) {
	for _, capacity := range []int{1 << 14, 1 << 20} {
		for _, load := range []float64{0.50, 0.60, 0.70, 0.80, 0.90, 0.95} {
			for _, hit := range []int{100, 0} {
				name := fmt.Sprintf("slots=2^%d/load=%.2f/hit=%d%%", bits.Len(uint(capacity))-1, load, hit)
				b.Run(name, func(b *testing.B) {
					m, n := loadFactorMap(capacity, load)
					off := 0
					if hit == 0 {
						off = n
					}
					var buckets, keys, lookups int
					for i := 0; i < n; i += 1 + n/4096 {
						_, _, p := m.LoadProbe(i + off)
						buckets += p.Buckets
						keys += p.Keys
						lookups++
					}
					parallel(b, func(r uint64) { m.Load(pick(r, n) + off) })
					b.ReportMetric(m.Stats().Load, "load")
					b.ReportMetric(float64(buckets)/float64(lookups), "buckets/lookup")
					b.ReportMetric(float64(keys)/float64(lookups), "keys/lookup")
				})
			}
		}
	}
}

var loadFactorMaps = map[[2]int]*hashmap.Map[int, int]{}

// loadFactorMap returns a map of the given capacity holding keys 0..n-1 at
// the given load factor, made once per run.
func loadFactorMap(capacity int, load float64) (*hashmap.Map[int, int], int) {
	key := [2]int{capacity, int(load * 100)}
	m := loadFactorMaps[key]
	if m == nil {
		clear(loadFactorMaps) // one large map alive at a time
		m = hashmap.New[int, int](hashmap.WithCapacity(capacity), hashmap.WithMaxLoad(1))
		n := int(load * float64(m.Stats().Slots))
		for i := range n {
			m.Store(i, i)
		}
		loadFactorMaps[key] = m
	}
	return m, m.Len()
}
