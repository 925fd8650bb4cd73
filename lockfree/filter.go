package lockfree

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/hashing"
	"github.com/cuckoohash/cuckoo/internal/kcas"
	"github.com/cuckoohash/cuckoo/internal/written"
)

// ErrFull is the error Insert returns when it cannot store a key; it is
// filter.ErrFull, so errors.Is works across both packages.
var ErrFull = filter.ErrFull

// Hooks that tests replace to run the suite with degenerate hashes.
var (
	hashKey    = hashing.Key
	hashString = hashing.String
)

// Filter is a cuckoo filter that any number of goroutines may use at once,
// with no lock: see the package documentation. Its zero value is not usable;
// call New or FromFilter.
type Filter struct {
	words []atomic.Uint64 // one per bucket
	// marks are the buckets' ever-written marks (package internal/written):
	// a bucket holds a fingerprint only in a marked block. A writer marks a
	// bucket it read empty before the CAS or K-CAS that fills it (addTo,
	// shift, raw.SetBucketBits, FromFilter), so a raw reader that finds a
	// block unmarked (nextWritten) missed no fingerprint stored before it
	// looked.
	marks  written.Marks
	m      uint64
	l      layout
	cfg    filter.Config // as New built it (BucketSize filled in if New chose it), for snapshots
	layout filter.Layout
	count  lenCount
	paths  sync.Pool // *[]node, path-search scratch
}

// New returns an empty filter with the sizing filter.New(cfg) gives, for
// every Config filter.New takes down to a false-positive rate of 2^-22
// (about 2.4e-7). A bucket and its migration counter share one 64-bit word,
// which holds 4 fingerprints of at most 12 bits: when cfg leaves BucketSize
// 0 and its rate (below 2^-9, about 0.002) or FingerprintBits needs wider
// fingerprints, New takes buckets of 2 slots, as filter.New(cfg) with
// BucketSize 2 would (BucketSize then reports 2; see doc.go, "Bucket
// sizes"). It returns an error for a Config that filter.New refuses, for a
// lower rate or fingerprints wider than 24 bits, and for an explicit
// BucketSize whose fingerprints leave fewer than 15 bits of the word to the
// counter (with b = 4: f <= 12; b = 2: f <= 24; b = 8: f <= 6).
func New(cfg filter.Config) (*Filter, error) {
	cfg, lay, err := layoutOf(cfg)
	if err != nil {
		return nil, err
	}
	f := &Filter{
		words:  make([]atomic.Uint64, lay.Buckets),
		marks:  make(written.Marks, written.Words(lay.Buckets)),
		m:      lay.Buckets,
		l:      newLayout(uint(lay.BucketSize), uint(lay.FingerprintBits)),
		cfg:    cfg,
		layout: lay,
	}
	f.paths.New = func() any {
		buf := make([]node, 0, lay.MaxKicks+2)
		return &buf
	}
	return f, nil
}

// FromFilter returns a lock-free filter holding the fingerprints of g, for
// example one built offline with `cuckoo build`. g is not modified. It
// returns an error wrapping ErrFull in the rare case that g's victim slot is
// used and no room can be made for that fingerprint.
func FromFilter(g *filter.Filter) (*Filter, error) {
	if err := fromFilterFits(g); err != nil {
		return nil, err
	}
	f, err := New(configOf(g))
	if err != nil {
		return nil, err
	}
	if f.m != g.Buckets() {
		return nil, fmt.Errorf("lockfree: FromFilter: the filter has %d buckets, its configuration gives %d", g.Buckets(), f.m)
	}
	for i := range f.m {
		var v uint64
		n := 0
		for j := range f.l.slots {
			if fp := g.Fingerprint(i, int(j)); fp != 0 {
				v = f.l.setSlot(v, j, fp)
				n++
			}
		}
		if v != 0 {
			// Only the buckets that hold something are written: the
			// others' pages stay untouched, as New left them.
			f.marks.Mark(i)
			f.words[i].Store(v)
			f.count.add(int64(n))
		}
	}
	if bucket, fp, ok := g.Victim(); ok {
		if err := f.insert(bucket, fp); err != nil {
			return nil, fmt.Errorf("lockfree: FromFilter: no room for the victim fingerprint: %w", err)
		}
	}
	return f, nil
}

func (f *Filter) locate(h uint64) (uint64, uint32) {
	return hashing.Index(h, f.m), hashing.Fingerprint(h, f.l.bits)
}

func (f *Filter) alt(i uint64, fp uint32) uint64 { return hashing.Alt(i, fp, f.m) }

// load returns bucket i's logical word, reading through any K-CAS in flight.
func (f *Filter) load(i uint64) uint64 { return kcas.Load(&f.words[i]) }

// settle returns bucket i's raw word after completing any K-CAS in flight
// on it: the expected value for a single-word CompareAndSwap.
func (f *Filter) settle(i uint64) uint64 { return kcas.Settle(&f.words[i]) }

func (f *Filter) added(n int64) { f.count.add(n) }

// Contains reports whether key may have been inserted. It never returns
// false for a key whose Insert returned before Contains was called and that
// no Delete has removed.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(hashKey(key, f.layout.Seed)) }

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(hashString(key, f.layout.Seed))
}

// ContainsHash is Contains for a caller-computed hash (see
// filter.Filter.ContainsHash).
func (f *Filter) ContainsHash(h uint64) bool {
	i1, fp := f.locate(h)
	return f.lookup(i1, fp)
}

// lookup is the two-stage lookup of doc.go: read i1, i2, then i1 again; a
// miss stands only if i1's counter did not move meanwhile. Linearization
// point of a miss: the read of i2.
func (f *Filter) lookup(i1 uint64, fp uint32) bool {
	i2 := f.alt(i1, fp)
	for {
		v1 := f.load(i1)
		v2 := f.load(i2)
		if f.l.has2(v1, v2, fp) {
			return true
		}
		again := f.load(i1)
		if f.l.counter(again) == f.l.counter(v1) {
			return false
		}
	}
}

// Count returns the number of copies of key's fingerprint, read from one
// consistent cut of its two buckets.
func (f *Filter) Count(key []byte) int { return f.CountHash(hashKey(key, f.layout.Seed)) }

// CountString is Count for a string key.
func (f *Filter) CountString(key string) int { return f.CountHash(hashString(key, f.layout.Seed)) }

// CountHash is Count for a caller-computed hash.
func (f *Filter) CountHash(h uint64) int {
	i1, fp := f.locate(h)
	i2 := f.alt(i1, fp)
	for {
		v1 := f.load(i1)
		v2 := f.load(i2)
		if again := f.load(i1); f.l.counter(again) != f.l.counter(v1) {
			continue
		}
		n := f.l.count(v1, fp)
		if i2 != i1 {
			n += f.l.count(v2, fp)
		}
		return n
	}
}

// Insert adds key. It returns ErrFull, with the filter logically unchanged,
// when no room can be made. Up to Capacity distinct keys always fit when one
// goroutine inserts; with several inserting near full load, an Insert that
// keeps losing races for the slots it frees gives up after a few attempts
// and returns ErrFull (see doc.go).
func (f *Filter) Insert(key []byte) error { return f.InsertHash(hashKey(key, f.layout.Seed)) }

// InsertString is Insert for a string key.
func (f *Filter) InsertString(key string) error {
	return f.InsertHash(hashString(key, f.layout.Seed))
}

// InsertHash is Insert for a caller-computed hash.
func (f *Filter) InsertHash(h uint64) error {
	i1, fp := f.locate(h)
	return f.insert(i1, fp)
}

// InsertUnique inserts key unless Contains(key) holds, and reports whether
// it inserted. The check and the insert are two steps: two goroutines
// inserting the same new key at once may both insert it.
func (f *Filter) InsertUnique(key []byte) (bool, error) {
	return f.InsertUniqueHash(hashKey(key, f.layout.Seed))
}

// InsertUniqueString is InsertUnique for a string key.
func (f *Filter) InsertUniqueString(key string) (bool, error) {
	return f.InsertUniqueHash(hashString(key, f.layout.Seed))
}

// InsertUniqueHash is InsertUnique for a caller-computed hash.
func (f *Filter) InsertUniqueHash(h uint64) (bool, error) {
	i1, fp := f.locate(h)
	if f.lookup(i1, fp) {
		return false, nil
	}
	if err := f.insert(i1, fp); err != nil {
		return false, err
	}
	return true, nil
}

// Delete removes one copy of key's fingerprint and reports whether there was
// one. As with filter.Filter, delete only keys known to be present.
func (f *Filter) Delete(key []byte) bool { return f.DeleteHash(hashKey(key, f.layout.Seed)) }

// DeleteString is Delete for a string key.
func (f *Filter) DeleteString(key string) bool { return f.DeleteHash(hashString(key, f.layout.Seed)) }

// DeleteHash is Delete for a caller-computed hash. Linearization point: the
// CAS that clears the slot, or for a miss, as in lookup, the read of the
// second bucket.
func (f *Filter) DeleteHash(h uint64) bool {
	i1, fp := f.locate(h)
	i2 := f.alt(i1, fp)
	for {
		v1 := f.settle(i1)
		if j := f.l.find(v1, fp); j >= 0 {
			if f.words[i1].CompareAndSwap(v1, f.l.bump(f.l.setSlot(v1, uint(j), 0))) {
				f.added(-1)
				return true
			}
			continue
		}
		v2 := f.settle(i2)
		if j := f.l.find(v2, fp); j >= 0 {
			if f.words[i2].CompareAndSwap(v2, f.l.bump(f.l.setSlot(v2, uint(j), 0))) {
				f.added(-1)
				return true
			}
			continue
		}
		if again := f.load(i1); f.l.counter(again) == f.l.counter(v1) {
			return false
		}
	}
}

// Len returns the number of fingerprints stored. Under concurrent writers
// it is exact only at quiescence.
func (f *Filter) Len() uint64 {
	return uint64(max(f.count.load(), 0))
}

// Capacity returns the number of distinct keys the filter was sized for.
func (f *Filter) Capacity() uint64 { return f.layout.Capacity }

// Buckets returns the number of buckets m.
func (f *Filter) Buckets() uint64 { return f.m }

// BucketSize returns the slots per bucket b.
func (f *Filter) BucketSize() int { return f.layout.BucketSize }

// Slots returns the number of fingerprint slots, m·b.
func (f *Filter) Slots() uint64 { return f.m * uint64(f.l.slots) }

// FingerprintBits returns the fingerprint width f.
func (f *Filter) FingerprintBits() int { return f.layout.FingerprintBits }

// Config returns the configuration the filter was built with, as New
// completed it (BucketSize and Packing filled in), or for FromFilter one
// that builds the filter's layout: New(f.Config()) returns an empty filter
// of the same buckets, hashing keys alike.
func (f *Filter) Config() filter.Config { return f.cfg }

// LoadFactor returns the fraction of slots in use.
func (f *Filter) LoadFactor() float64 {
	return float64(f.Len()) / float64(f.Slots())
}

// SizeInBytes returns the memory the filter occupies: 8 bytes a bucket,
// the ever-written marks (8 bytes a 2^15 buckets) and the fixed header.
func (f *Filter) SizeInBytes() uint64 {
	return 8*(f.m+uint64(len(f.marks))) + uint64(unsafe.Sizeof(*f))
}

// FalsePositiveRate returns the expected rate at the current load.
func (f *Filter) FalsePositiveRate() float64 {
	return filter.ExpectedFalsePositiveRate(f.LoadFactor(), f.layout.BucketSize, f.layout.FingerprintBits)
}

// Reset empties the filter. It must not run concurrently with other methods.
// It clears the blocks ever written only, touching none of the pages a
// sparse filter never used.
func (f *Filter) Reset() {
	for lo, hi := f.nextWritten(0, f.m); lo < f.m; lo, hi = f.nextWritten(hi, f.m) {
		for i := lo; i < hi; i++ {
			f.words[i].Store(0)
		}
	}
	f.marks.Clear()
	f.count.reset()
}

// snapshotRounds bounds the collections Snapshot makes while writers keep
// changing the filter.
const snapshotRounds = 4

// Snapshot returns a filter.Filter holding the same fingerprints, to save or
// inspect; it is safe to call at any time.
//
// Consistency: Snapshot reads every bucket (of the blocks ever written; the
// others are empty), then reads them all again, until two successive
// collections agree word for word. Every change to a bucket
// changes its counter, so agreement means no bucket changed between its two
// reads, and the copy is the filter's exact state at the instant between the
// two collections: linearizable, as if all writers had paused. With no
// concurrent writer that takes two passes over the table. If writers keep
// changing it through 4 collections, Snapshot returns the last one, a fuzzy
// copy: keys inserted or deleted during the call may or may not be in it,
// and a key whose fingerprint migrated between its two buckets while the
// copy was taken may be missing. Pause writers (or retry) when the copy must
// be exact under load.
func (f *Filter) Snapshot() *filter.Filter {
	g, _ := f.snapshot()
	return g
}

// snapshot is Snapshot that also reports whether the copy is exact. A
// collection reads only the blocks marked written (nextWritten): the words
// of the others are 0 and stay 0 until their block is marked, so a block
// first marked between two collections reads 0 in the first, as its words
// were, and the comparison sees any word that changed. The copy's buckets
// outside those blocks are left as New made them, untouched.
func (f *Filter) snapshot() (*filter.Filter, bool) {
	cur := make([]uint64, f.m)
	f.collect(cur)
	exact := false
	for range snapshotRounds - 1 {
		if exact = f.collect(cur); exact {
			break
		}
	}
	g, err := filter.New(f.cfg)
	if err != nil {
		panic("lockfree: the configuration that built the filter no longer builds one: " + err.Error())
	}
	for lo, hi := f.nextWritten(0, f.m); lo < f.m; lo, hi = f.nextWritten(hi, f.m) {
		for i := lo; i < hi; i++ {
			for j := range f.l.slots {
				if fp := f.l.slot(cur[i], j); fp != 0 {
					// Bucket i holds at most b fingerprints and is
					// filled first, so each lands in its own bucket.
					if err := g.InsertFingerprint(i, fp); err != nil {
						panic(fmt.Sprintf("lockfree: Snapshot: bucket %d: %v", i, err))
					}
				}
			}
		}
	}
	return g, exact
}

// collect reads the words of the blocks marked written into cur, and
// reports whether every one was already there.
func (f *Filter) collect(cur []uint64) bool {
	same := true
	for lo, hi := f.nextWritten(0, f.m); lo < f.m; lo, hi = f.nextWritten(hi, f.m) {
		for i := lo; i < hi; i++ {
			if v := f.load(i); v != cur[i] {
				cur[i] = v
				same = false
			}
		}
	}
	return same
}

// WriteTo writes the filter in the filter package's binary format, which
// filter.Read and `cuckoo info` read, from a Snapshot (whose consistency
// rules apply).
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	return f.Snapshot().WriteTo(w)
}
