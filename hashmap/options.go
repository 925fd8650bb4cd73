package hashmap

import (
	"fmt"
	"reflect"
)

// An Option configures a Map in New.
type Option func(*config)

type config struct {
	capacity int
	hasher   any // func(K, uint64) uint64 for the Map's K
	maxLoad  float64
}

// Default settings.
const (
	// defaultMaxLoad is the fraction of slots in use at which the table
	// doubles. With six-slot buckets, a displacement path is almost always
	// found well above it; growing here keeps the searches short.
	defaultMaxLoad = 0.93
	// minGrowLoad is the load below which a failed displacement search
	// puts the key in the stash rather than growing the table: if half the
	// slots are free and still no path exists, the hash is degenerate and
	// a bigger table would not help (each doubling at least halves the
	// load, so the map cannot grow forever either).
	minGrowLoad = 0.5
)

// WithCapacity sizes the first table to hold n entries without growing.
// The table has a power-of-two number of buckets, the fewest whose slots at
// the maximum load (default 93%) hold n.
func WithCapacity(n int) Option {
	return func(c *config) { c.capacity = n }
}

// WithHasher replaces the built-in hash with h, which must be a function of
// the key and the seed, and equal for equal keys. The seed changes each time
// the table grows; a hasher that ignores it works, but a set of keys whose
// displacement paths fail then stays in the map's stash (slow, linear) until
// deleted. New panics if K is not the Map's key type.
func WithHasher[K comparable](h func(key K, seed uint64) uint64) Option {
	return func(c *config) { c.hasher = h }
}

// WithMaxLoad sets the fraction of slots in use at which the table doubles,
// in (0, 1]; the default is 0.93. With load 1 the table grows only when a
// displacement search fails. For measurements at an exact load factor,
// together with WithCapacity and Stats.
func WithMaxLoad(load float64) Option {
	return func(c *config) { c.maxLoad = load }
}

func (c *config) validate(keyType reflect.Type) {
	if c.capacity < 0 {
		panic(fmt.Sprintf("hashmap: WithCapacity(%d): capacity is negative", c.capacity))
	}
	if !(c.maxLoad > 0 && c.maxLoad <= 1) {
		panic(fmt.Sprintf("hashmap: WithMaxLoad(%v): load is not in (0, 1]", c.maxLoad))
	}
	if c.hasher != nil {
		want := reflect.FuncOf([]reflect.Type{keyType, reflect.TypeFor[uint64]()}, []reflect.Type{reflect.TypeFor[uint64]()}, false)
		if got := reflect.TypeOf(c.hasher); got != want {
			panic(fmt.Sprintf("hashmap: WithHasher: hasher is a %v, want %v", got, want))
		}
	}
}

// bucketsFor returns the number of buckets for n entries at load maxLoad.
func bucketsFor(n int, maxLoad float64) int {
	b := minBuckets
	for float64(b*slotsPerBucket)*maxLoad < float64(n) {
		b *= 2
	}
	return b
}

func reflectKeyType[K comparable]() reflect.Type { return reflect.TypeFor[K]() }
