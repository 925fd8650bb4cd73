package bench

// The concurrent-map comparison: this project's hashmap.Map against
// sync.Map, a builtin map behind a sync.RWMutex, xsync.Map,
// concurrent-map and haxmap, on the workloads of maps_test.go.

import (
	"math/bits"
	"runtime"
	"strconv"
	"sync"

	"github.com/alphadose/haxmap"
	"github.com/cuckoohash/cuckoo/hashmap"
	cmap "github.com/orcaman/concurrent-map/v2"
	"github.com/puzpuzpuz/xsync/v4"
)

// MapKey is a key type of the map benchmarks.
type MapKey interface{ int | string }

// Map is what every compared map offers, with int values. The benchmarks
// call it through this interface, so the dispatch costs the same for all.
type Map[K MapKey] interface {
	Load(key K) (int, bool)
	Store(key K, value int)
	Delete(key K)
}

// MapImpl is one compared map library.
type MapImpl struct {
	Name  string // as in benchmark names: impl=Name
	About string
}

// MapImpls are the compared maps, ours first. Each is created empty with
// its library's defaults (no size hint), as a program that does not know
// its size would.
var MapImpls = []MapImpl{
	{"cuckoo", "this project's hashmap.Map: cuckoo hashing, 2 buckets of 6 slots, lock-free reads"},
	{"xsync", "github.com/puzpuzpuz/xsync/v4 Map: CLHT-like buckets of 5 entries, lock-free reads"},
	{"syncmap", "sync.Map (the runtime's HashTrieMap since Go 1.24); keys and values boxed in interfaces"},
	{"rwmutex", "a builtin map behind one sync.RWMutex"},
	{"cmap", "github.com/orcaman/concurrent-map/v2: 32 shards of map+RWMutex (int keys sharded by a multiply-shift hash)"},
	{"haxmap", "github.com/alphadose/haxmap: lock-free Harris list with a hash index"},
}

// NewMap returns an empty map of the named library.
func NewMap[K MapKey](impl string) Map[K] {
	switch impl {
	case "cuckoo":
		return hashmap.New[K, int]()
	case "xsync":
		return xsync.NewMap[K, int]()
	case "syncmap":
		return &syncMap[K]{}
	case "rwmutex":
		return &rwMap[K]{m: map[K]int{}}
	case "cmap":
		var zero K
		switch any(zero).(type) {
		case int:
			return any(cmapMap[int]{cmap.NewWithCustomShardingFunction[int, int](shardInt)}).(Map[K])
		case string:
			return any(cmapMap[string]{cmap.New[int]()}).(Map[K])
		}
	case "haxmap":
		return haxMap[K]{haxmap.New[K, int]()}
	}
	panic("bench: unknown map " + impl)
}

type syncMap[K MapKey] struct{ m sync.Map }

func (s *syncMap[K]) Load(key K) (int, bool) {
	v, ok := s.m.Load(key)
	if !ok {
		return 0, false
	}
	return v.(int), true
}
func (s *syncMap[K]) Store(key K, value int) { s.m.Store(key, value) }
func (s *syncMap[K]) Delete(key K)           { s.m.Delete(key) }

type rwMap[K MapKey] struct {
	mu sync.RWMutex
	m  map[K]int
}

func (r *rwMap[K]) Load(key K) (int, bool) {
	r.mu.RLock()
	v, ok := r.m[key]
	r.mu.RUnlock()
	return v, ok
}

func (r *rwMap[K]) Store(key K, value int) {
	r.mu.Lock()
	r.m[key] = value
	r.mu.Unlock()
}

func (r *rwMap[K]) Delete(key K) {
	r.mu.Lock()
	delete(r.m, key)
	r.mu.Unlock()
}

type cmapMap[K comparable] struct{ m cmap.ConcurrentMap[K, int] }

func (c cmapMap[K]) Load(key K) (int, bool) { return c.m.Get(key) }
func (c cmapMap[K]) Store(key K, value int) { c.m.Set(key, value) }
func (c cmapMap[K]) Delete(key K)           { c.m.Remove(key) }

// shardInt spreads int keys over concurrent-map's shards (it has a
// sharding function only for strings).
func shardInt(k int) uint32 {
	hi, lo := bits.Mul64(uint64(k), 0x9e3779b97f4a7c15)
	return uint32(hi ^ lo)
}

type haxMap[K MapKey] struct{ m *haxmap.Map[K, int] }

func (h haxMap[K]) Load(key K) (int, bool) { return h.m.Get(key) }
func (h haxMap[K]) Store(key K, value int) { h.m.Set(key, value) }
func (h haxMap[K]) Delete(key K)           { h.m.Del(key) }

// MapKeys returns the keys 0..n-1 of a benchmark: the ints themselves, or
// "key-" and the decimal number as strings (allocated here, so that their
// bytes are not counted in any map's memory).
func MapKeys[K MapKey](n int) []K {
	keys := make([]K, n)
	for i := range keys {
		switch k := any(&keys[i]).(type) {
		case *int:
			*k = i
		case *string:
			*k = "key-" + strconv.Itoa(i)
		}
	}
	return keys
}

// FillMap returns a map of impl holding keys[i] -> i for every key, and
// its memory per entry: the growth of the live heap over the fill, divided
// by the number of keys, after a full collection on either side.
func FillMap[K MapKey](impl string, keys []K) (Map[K], float64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := NewMap[K](impl)
	for i, k := range keys {
		m.Store(k, i)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(m)
	return m, (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(len(keys))
}
