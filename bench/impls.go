package bench

import (
	"fmt"
	"sync"

	"github.com/FastFilter/xorfilter"
	"github.com/bits-and-blooms/bloom/v3"
	"github.com/cuckoohash/cuckoo/filter"
	seiflotfy "github.com/seiflotfy/cuckoofilter"
	"github.com/zeebo/xxh3"
)

// The cuckoo filter's parameters in every comparison.
const (
	FingerprintBits = 12
	BucketSize      = 4
)

// Filter is what every compared filter offers once it holds its keys. The
// methods take many keys at a time so that the loop over keys calls the
// library directly, not through an interface, and the dispatch costs the
// same for every filter.
type Filter interface {
	// CountHits returns how many of keys the filter reports present.
	CountHits(keys [][]byte) int
	// SizeBits returns the memory of the filter's table in bits.
	SizeBits() uint64
	// Load returns the filter's fill figure; see the package documentation.
	Load() float64
}

// Dynamic is a filter that is filled by inserting keys one by one.
type Dynamic interface {
	Filter
	// InsertRange inserts keys.At(lo) ... keys.At(hi-1) and returns how
	// many of the inserts failed.
	InsertRange(keys Keys, lo, hi int) (failed int)
	// Reset empties the filter, keeping its size. It writes the whole
	// table, so a filter that was Reset has all its memory mapped.
	Reset()
}

// Batcher is a filter with a batch lookup (only ours).
type Batcher interface {
	// BatchHits returns how many of keys the filter reports present,
	// looking them up len(out) at a time with out as scratch space.
	BatchHits(keys [][]byte, out []bool) int
}

// Impl is one compared filter library.
type Impl struct {
	Name  string // as in benchmark names: impl=Name
	About string // one line for the table's notes
	// New returns an empty filter sized for n keys, for a dynamic filter;
	// nil for a static one.
	New func(n int) Dynamic
	// Build returns a filter holding keys, for a static filter; nil for a
	// dynamic one.
	Build func(keys Keys) (Filter, error)
}

// Static reports whether the filter is built from all its keys at once.
func (impl Impl) Static() bool { return impl.New == nil }

// Impls are the compared filters, ours first.
var Impls = []Impl{
	{
		Name:  "cuckoo",
		About: fmt.Sprintf("this project's filter.Filter, %d-bit fingerprints, %d slots a bucket, Capacity = n", FingerprintBits, BucketSize),
		New:   newCuckoo,
	},
	{
		Name:  "seiflotfy",
		About: "github.com/seiflotfy/cuckoofilter NewFilter(n): 8-bit fingerprints, 4 slots, power-of-two buckets",
		New:   newSeiflotfy,
	},
	{
		Name: "cuckoo-eqrate",
		About: "this project's filter.New(Config{Capacity: n, FalsePositiveRate: r}), r = seiflotfy's false-positive rate measured at n " +
			"(SeiflotfyRate): the two at equal rates, the layout New's choice",
		New: newCuckooEqualRate,
	},
	{
		Name:  "bloom",
		About: "github.com/bits-and-blooms/bloom/v3 NewWithEstimates(n, p), p = the cuckoo filter's expected rate at its load",
		New:   newBloom,
	},
	{
		Name:  "fuse8",
		About: "github.com/FastFilter/xorfilter BinaryFuse[uint8] (static), keys hashed with xxh3.Hash",
		Build: func(keys Keys) (Filter, error) { return buildFuse[uint8](keys, 8) },
	},
	{
		Name:  "fuse16",
		About: "github.com/FastFilter/xorfilter BinaryFuse[uint16] (static), keys hashed with xxh3.Hash",
		Build: func(keys Keys) (Filter, error) { return buildFuse[uint16](keys, 16) },
	},
}

// ImplByName returns the Impl called name.
func ImplByName(name string) (Impl, bool) {
	for _, impl := range Impls {
		if impl.Name == name {
			return impl, true
		}
	}
	return Impl{}, false
}

// CuckooConfig is the configuration of our filter for n keys.
func CuckooConfig(n int) filter.Config {
	return filter.Config{Capacity: uint64(n), FingerprintBits: FingerprintBits, BucketSize: BucketSize}
}

// TargetRate is the expected false-positive rate of our filter holding n
// keys: the rate the Bloom filter is sized for.
func TargetRate(n int) float64 {
	l, err := CuckooConfig(n).Layout()
	if err != nil {
		panic(err)
	}
	return l.ExpectedFalsePositiveRate(float64(n) / float64(l.Buckets*uint64(l.BucketSize)))
}

// EqualRateConfig is the configuration of our filter for n keys at
// seiflotfy's rate: New chooses the layout, as it does for a caller who
// gives only Capacity and FalsePositiveRate.
func EqualRateConfig(n int) filter.Config {
	return filter.Config{Capacity: uint64(n), FalsePositiveRate: SeiflotfyRate(n)}
}

// seiflotfyRates caches SeiflotfyRate, which fills a filter of n keys.
var seiflotfyRates struct {
	sync.Mutex
	at map[int]float64
}

// SeiflotfyRate returns the false-positive rate of seiflotfy/cuckoofilter
// holding PresentKeys(n), measured on RateKeys: 8·load/255 in theory, so
// about 3% at n = 1e6 (95% full) and 1.9% at n = 1e7 (60%). It is
// measured once for each n.
func SeiflotfyRate(n int) float64 {
	seiflotfyRates.Lock()
	defer seiflotfyRates.Unlock()
	if r, ok := seiflotfyRates.at[n]; ok {
		return r
	}
	f := newSeiflotfy(n)
	f.InsertRange(PresentKeys(n), 0, n)
	// A rate too small to see counts as one false positive: 0 would ask
	// New for its default rate.
	r := float64(max(CountKeys(f, RateKeys()), 1)) / AbsentKeysForRate
	if seiflotfyRates.at == nil {
		seiflotfyRates.at = map[int]float64{}
	}
	seiflotfyRates.at[n] = r
	return r
}

// cuckooFilter adapts this project's filter.
type cuckooFilter struct{ f *filter.Filter }

func newCuckoo(n int) Dynamic {
	f, err := filter.New(CuckooConfig(n))
	if err != nil {
		panic(err) // every n the benchmarks use is a valid capacity
	}
	return &cuckooFilter{f}
}

func newCuckooEqualRate(n int) Dynamic {
	f, err := filter.New(EqualRateConfig(n))
	if err != nil {
		panic(err) // seiflotfy's rates, 1-4%, are within New's range
	}
	return &cuckooFilter{f}
}

func (c *cuckooFilter) InsertRange(keys Keys, lo, hi int) (failed int) {
	for i := lo; i < hi; i++ {
		if c.f.Insert(keys.At(i)) != nil {
			failed++
		}
	}
	return failed
}

func (c *cuckooFilter) CountHits(keys [][]byte) (hits int) {
	for _, k := range keys {
		if c.f.Contains(k) {
			hits++
		}
	}
	return hits
}

func (c *cuckooFilter) BatchHits(keys [][]byte, out []bool) (hits int) {
	for len(keys) > 0 {
		m := min(len(keys), len(out))
		c.f.ContainsBatch(keys[:m], out[:m])
		for _, ok := range out[:m] {
			if ok {
				hits++
			}
		}
		keys = keys[m:]
	}
	return hits
}

func (c *cuckooFilter) SizeBits() uint64 { return c.f.SizeInBytes() * 8 }
func (c *cuckooFilter) Load() float64    { return c.f.LoadFactor() }
func (c *cuckooFilter) Reset()           { c.f.Reset() }

// seiflotfyFilter adapts github.com/seiflotfy/cuckoofilter.
type seiflotfyFilter struct {
	f     *seiflotfy.Filter
	slots uint64 // one byte each
}

func newSeiflotfy(n int) Dynamic {
	f := seiflotfy.NewFilter(uint(n))
	// Encode returns the bucket array, 4 one-byte slots a bucket: the
	// filter's memory, measured rather than recomputed from its sizing rule.
	return &seiflotfyFilter{f: f, slots: uint64(len(f.Encode()))}
}

func (s *seiflotfyFilter) InsertRange(keys Keys, lo, hi int) (failed int) {
	for i := lo; i < hi; i++ {
		if !s.f.Insert(keys.At(i)) {
			failed++
		}
	}
	return failed
}

func (s *seiflotfyFilter) CountHits(keys [][]byte) (hits int) {
	for _, k := range keys {
		if s.f.Lookup(k) {
			hits++
		}
	}
	return hits
}

func (s *seiflotfyFilter) SizeBits() uint64 { return s.slots * 8 }
func (s *seiflotfyFilter) Load() float64    { return float64(s.f.Count()) / float64(s.slots) }
func (s *seiflotfyFilter) Reset()           { s.f.Reset() }

// bloomFilter adapts github.com/bits-and-blooms/bloom/v3.
type bloomFilter struct{ f *bloom.BloomFilter }

func newBloom(n int) Dynamic {
	return &bloomFilter{bloom.NewWithEstimates(uint(n), TargetRate(n))}
}

func (b *bloomFilter) InsertRange(keys Keys, lo, hi int) (failed int) {
	for i := lo; i < hi; i++ {
		b.f.Add(keys.At(i))
	}
	return 0
}

func (b *bloomFilter) CountHits(keys [][]byte) (hits int) {
	for _, k := range keys {
		if b.f.Test(k) {
			hits++
		}
	}
	return hits
}

func (b *bloomFilter) SizeBits() uint64 { return uint64(b.f.Cap()) }
func (b *bloomFilter) Load() float64    { return float64(b.f.BitSet().Count()) / float64(b.f.Cap()) }
func (b *bloomFilter) Reset()           { b.f.ClearAll() }

// fuseFilter adapts github.com/FastFilter/xorfilter's binary fuse filters.
type fuseFilter[T uint8 | uint16] struct {
	f    *xorfilter.BinaryFuse[T]
	n    int
	bits uint64 // of a fingerprint
}

// buildFuse hashes every key with xxh3, since the fuse filters take uint64
// keys, and builds the filter. The hashing is part of the build's cost.
func buildFuse[T uint8 | uint16](keys Keys, bits uint64) (Filter, error) {
	hashes := make([]uint64, keys.Len())
	for i := range hashes {
		hashes[i] = xxh3.Hash(keys.At(i))
	}
	f, err := xorfilter.NewBinaryFuse[T](hashes)
	if err != nil {
		return nil, err
	}
	return &fuseFilter[T]{f: f, n: keys.Len(), bits: bits}, nil
}

func (x *fuseFilter[T]) CountHits(keys [][]byte) (hits int) {
	for _, k := range keys {
		if x.f.Contains(xxh3.Hash(k)) {
			hits++
		}
	}
	return hits
}

func (x *fuseFilter[T]) SizeBits() uint64 { return uint64(len(x.f.Fingerprints)) * x.bits }
func (x *fuseFilter[T]) Load() float64    { return float64(x.n) / float64(len(x.f.Fingerprints)) }
