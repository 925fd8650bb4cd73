package filter

import (
	"errors"
	"unsafe"

	"github.com/cuckoohash/cuckoo/internal/hashing"
)

var (
	// ErrFull is returned by Insert when neither of the key's buckets has
	// room, no displacement path was found and the victim slot is taken. The
	// filter is then unchanged.
	ErrFull = errors.New("filter: full")
	// ErrCorrupt is wrapped by every error that decoding a filter returns.
	ErrCorrupt = errors.New("filter: corrupt data")
)

// Hooks that tests replace to run the suite with degenerate hashes.
var (
	hashKey    = hashing.Key
	hashString = hashing.String
)

// Filter is a cuckoo filter. See the package documentation.
//
// A Filter is not safe for concurrent use, except that any number of
// goroutines may call its read-only methods (Contains, ContainsBatch, Count
// and the accessors) at once while none modifies it. The lockfree package
// has a filter that is safe for concurrent writers.
type Filter struct {
	t        table
	capacity uint64
	count    uint64 // fingerprints stored, the victim included
	seed     uint64
	maxKicks int
	victim   victim
	// fast is t.is4x12 && !victim.used, and fastCoded t.coded &&
	// t.oneWord && !victim.used: a lookup needs neither the general table
	// path nor the victim slot. Only setVictim changes victim, so they stay
	// in step.
	fast      bool
	fastCoded bool
	strategy  strategy
	rng       uint64 // state of the random walk's generator
	path      []node // breadth-first search scratch, allocated on first use
}

// victim holds the one fingerprint that a failed displacement left homeless.
type victim struct {
	used   bool
	fp     uint32
	bucket uint64 // one of the fingerprint's two buckets
}

// New returns an empty filter, or a nil filter and an error that names the
// Config field at fault.
func New(cfg Config) (*Filter, error) {
	p, err := cfg.params()
	if err != nil {
		return nil, err
	}
	return newFilter(p), nil
}

func newFilter(p params) *Filter {
	f := &Filter{
		t:        newTable(p.buckets, p.shape),
		capacity: p.capacity,
		seed:     p.seed,
		maxKicks: p.maxKicks,
		rng:      p.seed ^ 0x853c49e6748fea9b,
	}
	f.setVictim(victim{})
	return f
}

// setVictim sets the victim slot and the lookup's fast flag that depends on
// it. Every change of f.victim goes through here.
func (f *Filter) setVictim(v victim) {
	f.victim = v
	f.fast = f.t.is4x12 && !v.used
	f.fastCoded = f.t.coded && f.t.oneWord && !v.used
}

// locate returns the primary bucket and fingerprint of hash h.
func (f *Filter) locate(h uint64) (uint64, uint32) {
	return hashing.Index(h, f.t.buckets), hashing.FingerprintMasked(h, f.t.fpMax)
}

func (f *Filter) alt(i uint64, fp uint32) uint64 { return f.t.alt(i, fp) }

// Insert adds key. It returns ErrFull, leaving the filter unchanged, when the
// key cannot be stored. A key is stored as its fingerprint, so inserting a
// key twice stores two copies; at most 2b copies (plus the victim slot) fit.
func (f *Filter) Insert(key []byte) error { return f.InsertHash(hashKey(key, f.seed)) }

// InsertString is Insert for a string key.
func (f *Filter) InsertString(key string) error { return f.InsertHash(hashString(key, f.seed)) }

// InsertHash is Insert for a caller-computed 64-bit hash of the key. The
// filter's seed is not applied; all 64 bits must be well mixed.
func (f *Filter) InsertHash(h uint64) error {
	i1, fp := f.locate(h)
	return f.insert(i1, fp)
}

// InsertUnique inserts key unless Contains(key) already holds, and reports
// whether it inserted. A false positive makes it skip a key that was never
// inserted.
func (f *Filter) InsertUnique(key []byte) (bool, error) {
	return f.InsertUniqueHash(hashKey(key, f.seed))
}

// InsertUniqueString is InsertUnique for a string key.
func (f *Filter) InsertUniqueString(key string) (bool, error) {
	return f.InsertUniqueHash(hashString(key, f.seed))
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

// Contains reports whether key may have been inserted. It is never false for
// a key that was inserted and not deleted; it is true for other keys at about
// the rate FalsePositiveRate returns.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(hashKey(key, f.seed)) }

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool { return f.ContainsHash(hashString(key, f.seed)) }

// ContainsHash is Contains for a caller-computed hash.
func (f *Filter) ContainsHash(h uint64) bool {
	t := &f.t
	i1, fp := hashing.Index(h, t.buckets), hashing.FingerprintMasked(h, t.fpMax)
	i2 := t.alt(i1, fp)
	// The default shape's path, all in this one call: reading both buckets
	// before testing either, with no branch between, lets the loads of
	// consecutive lookups overlap.
	if f.fast {
		return t.has4x12(i1, i2, fp)
	}
	if f.fastCoded {
		return t.hasCoded(i1, i2, fp)
	}
	return f.lookupSlow(i1, i2, fp)
}

// lookup reports whether fp is in bucket i1, its alternate or the victim
// slot.
func (f *Filter) lookup(i1 uint64, fp uint32) bool {
	i2 := f.alt(i1, fp)
	if f.fast {
		return f.t.has4x12(i1, i2, fp)
	}
	return f.lookupSlow(i1, i2, fp)
}

func (f *Filter) lookupSlow(i1, i2 uint64, fp uint32) bool {
	var hit bool
	if f.t.coded && f.t.oneWord {
		hit = f.t.hasCoded(i1, i2, fp)
	} else if f.t.coded {
		hit = f.t.hasWide(i1, i2, fp)
	} else if f.t.oneWord {
		hit = f.t.lanes.Has2(f.t.word(i1), f.t.word(i2), fp)
	} else {
		hit = f.t.contains(i1, fp) || f.t.contains(i2, fp)
	}
	return hit || f.victim.holds(i1, i2, fp)
}

func (v *victim) holds(i1, i2 uint64, fp uint32) bool {
	return v.used && v.fp == fp && (v.bucket == i1 || v.bucket == i2)
}

// Delete removes one copy of key's fingerprint and reports whether there was
// one. Deleting a key that was never inserted can remove the fingerprint of
// another key that shares its bucket and fingerprint, which then is no longer
// found: delete only keys known to be present (see Count and InsertUnique).
func (f *Filter) Delete(key []byte) bool { return f.DeleteHash(hashKey(key, f.seed)) }

// DeleteString is Delete for a string key.
func (f *Filter) DeleteString(key string) bool { return f.DeleteHash(hashString(key, f.seed)) }

// DeleteHash is Delete for a caller-computed hash.
func (f *Filter) DeleteHash(h uint64) bool {
	i1, fp := f.locate(h)
	i2 := f.alt(i1, fp)
	switch {
	case f.t.remove(i1, fp), f.t.remove(i2, fp):
		f.count--
		f.rehomeVictim()
		return true
	case f.victim.holds(i1, i2, fp):
		f.setVictim(victim{})
		f.count--
		return true
	}
	return false
}

// rehomeVictim moves the victim into the table if a slot has become free
// for it, so that the next insert that runs out of room can use the slot.
func (f *Filter) rehomeVictim() {
	if !f.victim.used {
		return
	}
	v := f.victim
	f.setVictim(victim{})
	f.count--
	if f.insert(v.bucket, v.fp) != nil {
		panic("filter: victim lost") // insert with a free victim slot cannot fail
	}
}

// Count returns the number of copies of key's fingerprint: at least the
// number of times key was inserted and not deleted, more after a collision.
func (f *Filter) Count(key []byte) int { return f.CountHash(hashKey(key, f.seed)) }

// CountString is Count for a string key.
func (f *Filter) CountString(key string) int { return f.CountHash(hashString(key, f.seed)) }

// CountHash is Count for a caller-computed hash.
func (f *Filter) CountHash(h uint64) int {
	i1, fp := f.locate(h)
	i2 := f.alt(i1, fp)
	n := f.t.count(i1, fp)
	if i2 != i1 {
		n += f.t.count(i2, fp)
	}
	if f.victim.holds(i1, i2, fp) {
		n++
	}
	return n
}

// Len returns the number of fingerprints stored.
func (f *Filter) Len() uint64 { return f.count }

// Capacity returns the number of distinct keys the filter was sized for.
func (f *Filter) Capacity() uint64 { return f.capacity }

// Slots returns the number of fingerprint slots, m*b.
func (f *Filter) Slots() uint64 { return f.t.buckets * uint64(f.t.slots) }

// Buckets returns the number of buckets m.
func (f *Filter) Buckets() uint64 { return f.t.buckets }

// BucketSize returns the number of slots per bucket b.
func (f *Filter) BucketSize() int { return int(f.t.slots) }

// Packing returns how the filter's buckets are stored: PackingPlain,
// PackingSemiSorted or PackingRanked.
func (f *Filter) Packing() Packing { return f.shape().packing() }

// FingerprintBits returns the fingerprint width f: for ranked buckets, the
// bits the fingerprint's range needs, ceil(log2 R) (FingerprintRange).
func (f *Filter) FingerprintBits() int { return int(f.t.bits) }

// FingerprintRange returns R: fingerprints take the values 1..R-1. It is
// 2^f, but for ranked buckets Q·2^L, between powers of two.
func (f *Filter) FingerprintRange() uint64 { return f.t.fpMax + 1 }

// shape returns the shape of f's table.
func (f *Filter) shape() shape {
	s := shape{slots: f.t.slots, bits: f.t.bits, semi: f.t.coded && !f.t.ranked}
	if f.t.ranked {
		s.q = f.t.codec.q
	}
	return s
}

// MaxKicks returns the bound on an insert's displacement search.
func (f *Filter) MaxKicks() int { return f.maxKicks }

// VictimUsed reports whether the victim slot holds a fingerprint: the filter
// is then at its limit, and the next insert that finds both its buckets full
// and no displacement path returns ErrFull.
func (f *Filter) VictimUsed() bool { return f.victim.used }

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.seed }

// LoadFactor returns the fraction of slots in use.
func (f *Filter) LoadFactor() float64 {
	if f.t.buckets == 0 {
		return 0
	}
	return float64(f.count) / float64(f.Slots())
}

// SizeInBytes returns the memory the filter occupies: the packed table of
// m*b*f bits, a few bytes of slack and the fixed header.
func (f *Filter) SizeInBytes() uint64 {
	return uint64(len(f.t.data)) + uint64(unsafe.Sizeof(*f))
}

// FalsePositiveRate returns the expected rate at the current load: a lookup
// compares its fingerprint with the 2b slots of two buckets, each occupied
// with probability LoadFactor and equal with probability 1/(R-1), R =
// FingerprintRange.
func (f *Filter) FalsePositiveRate() float64 {
	return expectedRate(f.LoadFactor(), f.shape())
}

// ExpectedFalsePositiveRate is the false-positive rate of a filter with b
// slots a bucket, f-bit fingerprints and the given load factor:
// 1 - (1 - load/(2^f-1))^(2b), about 2b·load/2^f. It holds for plain and
// semi-sorted tables, whose fingerprints range over 2^f values; for a ranked
// table use Layout.ExpectedFalsePositiveRate, which reads the range.
func ExpectedFalsePositiveRate(load float64, bucketSize, fingerprintBits int) float64 {
	return expectedRate(load, shape{slots: uint(bucketSize), bits: uint(fingerprintBits)})
}

// Reset empties the filter, keeping its size and seed.
func (f *Filter) Reset() {
	f.t.reset()
	f.count = 0
	f.setVictim(victim{})
}
