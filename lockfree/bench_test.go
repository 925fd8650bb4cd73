package lockfree_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/stripedfilter"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// The benchmarks compare the lock-free filter with three baselines in one
// run: filter.Filter behind a sync.Mutex, behind a sync.RWMutex, and the
// fine-grained-lock filter of package internal/stripedfilter. Names are
// impl=/mix=/goroutines= (and n= for the table size); each reports ops/s.
//
// goroutines counts RunParallel's goroutines, GOMAXPROCS × parallelism:
// with -cpu 1 every count runs, with -cpu 2 the even ones.
//
//	go test -run '^$' -bench 'Mix|Fill' -cpu 1,2 -benchtime 2s -count 3 ./lockfree

type benchTarget interface {
	Insert(key []byte) error
	Contains(key []byte) bool
	Delete(key []byte) bool
}

type mutexFilter struct {
	mu sync.Mutex
	f  *filter.Filter
}

func (m *mutexFilter) Insert(k []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.f.Insert(k)
}

func (m *mutexFilter) Contains(k []byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.f.Contains(k)
}

func (m *mutexFilter) Delete(k []byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.f.Delete(k)
}

type rwmutexFilter struct {
	mu sync.RWMutex
	f  *filter.Filter
}

func (m *rwmutexFilter) Insert(k []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.f.Insert(k)
}

func (m *rwmutexFilter) Contains(k []byte) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.f.Contains(k)
}

func (m *rwmutexFilter) Delete(k []byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.f.Delete(k)
}

var implNames = []string{"lockfree", "finelock", "rwmutex", "mutex"}

// newTarget returns an empty filter of the named kind for capacity keys.
func newTarget(impl string, capacity uint64) benchTarget {
	cfg := filter.Config{Capacity: capacity, FingerprintBits: 12, Seed: 1}
	switch impl {
	case "lockfree":
		f, err := lockfree.New(cfg)
		if err != nil {
			panic(err)
		}
		return f
	case "finelock":
		return stripedfilter.New(capacity, 1)
	}
	f, err := filter.New(cfg)
	if err != nil {
		panic(err)
	}
	if impl == "mutex" {
		return &mutexFilter{f: f}
	}
	return &rwmutexFilter{f: f}
}

// flatKeys returns n 16-byte keys from a seeded PCG, in one allocation.
func flatKeys(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0xbe7c))
	buf := make([]byte, 16*n)
	out := make([][]byte, n)
	for i := range out {
		k := buf[16*i : 16*i+16 : 16*i+16]
		binary.LittleEndian.PutUint64(k, r.Uint64())
		binary.LittleEndian.PutUint64(k[8:], r.Uint64())
		out[i] = k
	}
	return out
}

// benchSet is one table size's filled filters, built once per process.
type benchSet struct {
	once    sync.Once
	n       uint64
	present [][]byte
	absent  [][]byte
	// lookups is lookupCount keys back to back, half of them present, in
	// random order: goroutines walk it sequentially, each from its own
	// offset, so fetching a key costs a streamed read, not the two cache
	// misses of a random index into present or absent, and the benchmark
	// measures the filters rather than the key array.
	lookups []byte
	targets map[string]benchTarget
}

// lookupCount is the number of keys in a benchSet's lookup sequence: 16 MiB.
const lookupCount = 1 << 20

var benchSets = map[string]*benchSet{"1e5": {n: 1e5}, "1e6": {n: 1e6}}

// get fills one filter of each kind to 95% of its slots with the same keys.
func (s *benchSet) get(b *testing.B) *benchSet {
	s.once.Do(func() {
		lay, err := filter.Config{Capacity: s.n, FingerprintBits: 12}.Layout()
		if err != nil {
			panic(err)
		}
		fill := int(0.95 * float64(lay.Buckets*uint64(lay.BucketSize)))
		s.present = flatKeys(fill, 1)
		s.absent = flatKeys(fill, 2)
		r := rand.New(rand.NewPCG(3, 0x100c))
		s.lookups = make([]byte, 0, 16*lookupCount)
		for range lookupCount {
			from := s.present
			if r.IntN(2) == 1 {
				from = s.absent
			}
			s.lookups = append(s.lookups, from[r.IntN(len(from))]...)
		}
		s.targets = map[string]benchTarget{}
		var shared *filter.Filter
		for _, impl := range implNames {
			t := newTarget(impl, s.n)
			switch w := t.(type) {
			case *mutexFilter:
				if shared != nil {
					w.f = shared
					s.targets[impl] = t
					continue
				}
				shared = w.f
			case *rwmutexFilter:
				if shared != nil {
					w.f = shared
					s.targets[impl] = t
					continue
				}
				shared = w.f
			}
			for _, k := range s.present {
				if err := t.Insert(k); err != nil {
					panic(fmt.Sprintf("%s: filling to 95%%: %v", impl, err))
				}
			}
			s.targets[impl] = t
		}
	})
	return s
}

// goroutineCounts are the RunParallel goroutine counts benchmarked.
var goroutineCounts = []int{1, 2, 4, 8}

// forGoroutines runs body as a sub-benchmark goroutines=g for each count g,
// with SetParallelism(g / GOMAXPROCS), skipping the counts GOMAXPROCS does
// not divide. GOMAXPROCS is read in the leaf: -cpu sets it for each of the
// leaf's measured runs.
func forGoroutines(b *testing.B, body func(b *testing.B)) {
	for _, g := range goroutineCounts {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			procs := runtime.GOMAXPROCS(0)
			if g%procs != 0 {
				// The first run (b.N = 1) only discovers the leaves,
				// under the default GOMAXPROCS; skipping there would drop
				// the leaf for every -cpu value.
				if b.N > 1 {
					b.Skipf("%d goroutines cannot run with GOMAXPROCS=%d", g, procs)
				}
				procs = g
			}
			b.SetParallelism(g / procs)
			body(b)
		})
	}
}

func reportOps(b *testing.B, ops int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(ops)/s, "ops/s")
	}
}

// BenchmarkMix runs lookups mixed with updates on filters at 95% load.
// Lookups walk the set's lookup sequence (half present keys, half absent);
// an update inserts a fresh key of the goroutine's own, and the next update
// deletes it, so the load stays at 95%.
func BenchmarkMix(b *testing.B) {
	mixes := []struct {
		name  string
		reads int // per cent
	}{{"reads=100%", 100}, {"reads=95%", 95}, {"reads=50%", 50}}
	for _, n := range []string{"1e6", "1e5"} {
		b.Run("n="+n, func(b *testing.B) {
			set := benchSets[n].get(b)
			for _, impl := range implNames {
				b.Run("impl="+impl, func(b *testing.B) {
					t := set.targets[impl]
					for _, mix := range mixes {
						b.Run("mix="+mix.name, func(b *testing.B) {
							forGoroutines(b, func(b *testing.B) { runMix(b, t, set, mix.reads) })
						})
					}
				})
			}
		})
	}
}

var streams atomic.Uint64

func runMix(b *testing.B, t benchTarget, set *benchSet, reads int) {
	b.ReportAllocs()
	var misses atomic.Int64 // deletes of a goroutine's own fresh key that found nothing: must stay 0
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		stream := streams.Add(1)
		r := rand.New(rand.NewPCG(stream, 0x5eed))
		var fresh [16]byte
		binary.LittleEndian.PutUint64(fresh[8:], stream|1<<63) // unlike any pre-generated key
		pending := false
		var counter uint64
		next := int(r.Uint64N(lookupCount)) // this goroutine's place in the sequence
		for pb.Next() {
			if int(r.Uint64N(100)) < reads {
				t.Contains(set.lookups[16*next : 16*next+16])
				if next++; next == lookupCount {
					next = 0
				}
				continue
			}
			if pending {
				if !t.Delete(fresh[:]) {
					misses.Add(1)
				}
				pending = false
				continue
			}
			counter++
			binary.LittleEndian.PutUint64(fresh[:8], counter)
			if err := t.Insert(fresh[:]); err == nil {
				pending = true
			} else if !errors.Is(err, filter.ErrFull) {
				panic(err)
			}
		}
		if pending {
			t.Delete(fresh[:])
		}
	})
	b.StopTimer()
	reportOps(b, b.N)
	if m := misses.Load(); m > 0 {
		b.ReportMetric(float64(m)/float64(b.N), "misses/op")
	}
}

// BenchmarkFill inserts keys into empty filters of n=1e5 until they reach
// 95% load, over and over; an op is one insert.
func BenchmarkFill(b *testing.B) {
	const capacity = 1e5
	lay, err := filter.Config{Capacity: capacity, FingerprintBits: 12}.Layout()
	if err != nil {
		b.Fatal(err)
	}
	fill := int(0.95 * float64(lay.Buckets*uint64(lay.BucketSize)))
	ks := flatKeys(fill, 3)
	for _, impl := range implNames {
		b.Run("impl="+impl+"/mix=insert-to-95%", func(b *testing.B) {
			for _, g := range goroutineCounts {
				b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
					b.ReportAllocs()
					refused := 0
					b.StopTimer()
					for done := 0; done < b.N; {
						round := min(fill, b.N-done)
						t := newTarget(impl, capacity)
						b.StartTimer()
						refused += fillParallel(t, ks[:round], g)
						b.StopTimer()
						done += round
					}
					reportOps(b, b.N)
					b.ReportMetric(float64(refused)/float64(b.N), "refused/op")
				})
			}
		})
	}
}

// fillParallel inserts ks into t from g goroutines, each taking every g-th
// key, and returns the number refused.
func fillParallel(t benchTarget, ks [][]byte, g int) int {
	var wg sync.WaitGroup
	var refused atomic.Int64
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for i := w; i < len(ks); i += g {
				if t.Insert(ks[i]) != nil {
					n++
				}
			}
			refused.Add(int64(n))
		}()
	}
	wg.Wait()
	return int(refused.Load())
}

// BenchmarkContainsSingle compares one goroutine's lookups in the lock-free
// filter with filter.Filter's, unwrapped, on the same keys at 95% load
// (half present, half absent).
func BenchmarkContainsSingle(b *testing.B) {
	for _, n := range []string{"1e5", "1e6"} {
		set := benchSets[n].get(b)
		plain := set.targets["mutex"].(*mutexFilter).f
		for _, c := range []struct {
			impl     string
			contains func([]byte) bool
		}{
			{"lockfree", set.targets["lockfree"].(*lockfree.Filter).Contains},
			{"filter", plain.Contains},
		} {
			b.Run("n="+n+"/impl="+c.impl, func(b *testing.B) {
				b.ReportAllocs()
				hits, next := 0, 0
				for b.Loop() {
					if c.contains(set.lookups[16*next : 16*next+16]) {
						hits++
					}
					if next++; next == lookupCount {
						next = 0
					}
				}
				reportOps(b, b.N)
				if hits == 0 {
					b.Fatal("no hits")
				}
			})
		}
	}
}
