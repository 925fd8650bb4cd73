package eval

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/puzpuzpuz/xsync/v4"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/hashmap"
	"github.com/cuckoohash/cuckoo/internal/stripedfilter"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// ConcurrencyRow is the throughput of one structure under one mix with a
// number of goroutines.
type ConcurrencyRow struct {
	Kind       string // "filter" or "map"
	Impl       string
	ReadPct    int // lookups per hundred operations; the rest are updates
	Goroutines int
	OpsPerSec  float64
}

// setLike is what the concurrency experiment does to a structure: look a
// key up, and update it (insert or store, then delete).
type setLike interface {
	contains(k uint64) bool
	insert(k uint64) error
	remove(k uint64)
}

type lockfreeSet struct{ f *lockfree.Filter }

func (s lockfreeSet) contains(k uint64) bool { return s.f.ContainsHash(mix(k)) }
func (s lockfreeSet) insert(k uint64) error  { return s.f.InsertHash(mix(k)) }
func (s lockfreeSet) remove(k uint64)        { s.f.DeleteHash(mix(k)) }

type stripedSet struct{ f *stripedfilter.Filter }

func (s stripedSet) contains(k uint64) bool { return s.f.ContainsHash(mix(k)) }
func (s stripedSet) insert(k uint64) error  { return s.f.InsertHash(mix(k)) }
func (s stripedSet) remove(k uint64)        { s.f.DeleteHash(mix(k)) }

type mutexSet struct {
	mu sync.Mutex
	f  *filter.Filter
}

func (s *mutexSet) contains(k uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.ContainsHash(mix(k))
}
func (s *mutexSet) insert(k uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.InsertHash(mix(k))
}
func (s *mutexSet) remove(k uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f.DeleteHash(mix(k))
}

type rwmutexSet struct {
	mu sync.RWMutex
	f  *filter.Filter
}

func (s *rwmutexSet) contains(k uint64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.f.ContainsHash(mix(k))
}
func (s *rwmutexSet) insert(k uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.InsertHash(mix(k))
}
func (s *rwmutexSet) remove(k uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f.DeleteHash(mix(k))
}

type cuckooMapSet struct{ m *hashmap.Map[uint64, uint64] }

func (s cuckooMapSet) contains(k uint64) bool { _, ok := s.m.Load(k); return ok }
func (s cuckooMapSet) insert(k uint64) error  { s.m.Store(k, k); return nil }
func (s cuckooMapSet) remove(k uint64)        { s.m.Delete(k) }

type syncMapSet struct{ m *sync.Map }

func (s syncMapSet) contains(k uint64) bool { _, ok := s.m.Load(k); return ok }
func (s syncMapSet) insert(k uint64) error  { s.m.Store(k, k); return nil }
func (s syncMapSet) remove(k uint64)        { s.m.Delete(k) }

type xsyncSet struct{ m *xsync.Map[uint64, uint64] }

func (s xsyncSet) contains(k uint64) bool { _, ok := s.m.Load(k); return ok }
func (s xsyncSet) insert(k uint64) error  { s.m.Store(k, k); return nil }
func (s xsyncSet) remove(k uint64)        { s.m.Delete(k) }

// newSet returns a structure of the kind and implementation named, holding
// the keys present.
func newSet(kind, impl string, n int, present []uint64) (setLike, error) {
	var s setLike
	switch kind + "/" + impl {
	case "filter/lockfree":
		f, err := lockfree.New(filter.Config{Capacity: uint64(n), FingerprintBits: 12})
		if err != nil {
			return nil, err
		}
		s = lockfreeSet{f}
	case "filter/finelock":
		s = stripedSet{stripedfilter.New(uint64(n), 0)}
	case "filter/mutex", "filter/rwmutex":
		f, err := filter.New(filter.Config{Capacity: uint64(n), FingerprintBits: 12})
		if err != nil {
			return nil, err
		}
		if impl == "mutex" {
			s = &mutexSet{f: f}
		} else {
			s = &rwmutexSet{f: f}
		}
	case "map/hashmap":
		s = cuckooMapSet{hashmap.New[uint64, uint64](hashmap.WithCapacity(n))}
	case "map/sync.Map":
		s = syncMapSet{new(sync.Map)}
	case "map/xsync":
		s = xsyncSet{xsync.NewMap[uint64, uint64](xsync.WithPresize(n))}
	default:
		return nil, fmt.Errorf("no structure %s/%s", kind, impl)
	}
	for _, k := range present {
		if err := s.insert(k); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ConcurrencyImpls are the structures of the concurrency experiment.
var ConcurrencyImpls = map[string][]string{
	"filter": {"lockfree", "finelock", "rwmutex", "mutex"},
	"map":    {"hashmap", "xsync", "sync.Map"},
}

// Concurrency measures throughput with 1, 2, 4 and 8 goroutines on a
// read-mostly (95% lookups) and a write-heavy (50%) mix, each for d. The
// structures hold n keys (filters at 90% of their capacity, so that
// updates displace fingerprints); a lookup is of a present or an absent key
// alternately; an update inserts a goroutine's own fresh key and the next
// update deletes it.
func Concurrency(n int, d time.Duration, seed uint64) ([]ConcurrencyRow, error) {
	present := keys(n*9/10, seed)
	absent := keys(n, seed+800)
	var rows []ConcurrencyRow
	for _, kind := range []string{"filter", "map"} {
		for _, impl := range ConcurrencyImpls[kind] {
			s, err := newSet(kind, impl, n, present)
			if err != nil {
				return nil, err
			}
			for _, reads := range []int{95, 50} {
				for _, g := range []int{1, 2, 4, 8} {
					ops, err := throughput(s, g, reads, d, present, absent, seed)
					if err != nil {
						return nil, fmt.Errorf("%s/%s: %w", kind, impl, err)
					}
					rows = append(rows, ConcurrencyRow{kind, impl, reads, g, ops})
				}
			}
		}
	}
	return rows, nil
}

// throughput runs g goroutines on s for d and returns operations a second.
func throughput(s setLike, g, reads int, d time.Duration, present, absent []uint64, seed uint64) (float64, error) {
	var stop atomic.Bool
	var total atomic.Int64
	var firstErr atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := mix(seed ^ uint64(w)<<32)
			fresh := uint64(w+1)<<56 | 1<<55 // keys no other goroutine or set uses
			pending := false
			ops := 0
			for ; !stop.Load(); ops++ {
				r = mix(r)
				if int(r%100) < reads {
					i := int(r >> 32 % uint64(len(present)))
					if r&(1<<20) == 0 {
						s.contains(present[i])
					} else {
						s.contains(absent[i%len(absent)])
					}
					continue
				}
				if pending {
					s.remove(fresh)
					fresh++
				} else if err := s.insert(fresh); err != nil && !errors.Is(err, filter.ErrFull) {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				pending = !pending
			}
			total.Add(int64(ops))
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return 0, *e
	}
	return float64(total.Load()) / time.Since(start).Seconds(), nil
}
