package filter

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/cuckoohash/cuckoo/internal/linhash"
)

// ScalableConfig describes a Scalable filter.
type ScalableConfig struct {
	// InitialCapacity is the number of keys the filter is first sized for;
	// required. It grows past it as keys arrive.
	InitialCapacity uint64
	// FalsePositiveRate bounds the rate of the filter while it grows up to
	// 2^15 times its initial capacity (see doc.go). 0 means 0.01.
	FalsePositiveRate float64
	// Growth was the capacity factor between the stages of the chain that
	// Scalable was before format version 2. The table now grows a bucket at
	// a time and Growth has no effect; it is still checked (1..1024, 0 means
	// 2) and recorded so that existing configurations stay valid.
	Growth int
	// BucketSize is the slots per bucket: 2, 4 or 8. 0 means 4.
	BucketSize int
	// MaxKicks bounds the buckets an insert's path search examines. 0 means
	// 500.
	MaxKicks int
	// Seed seeds the key hash.
	Seed uint64
}

const (
	defaultGrowth = 2
	maxGrowth     = 1024
	// designDoublings is how many doublings of the initial capacity the
	// slot width is chosen for: the rate stays below the configured one
	// that far, and rises by about 1/designDoublings of it per doubling
	// after (doc.go, "Growing filters").
	designDoublings = 15
)

// Scalable is a cuckoo filter that grows as keys arrive, one bucket at a
// time, and never loses a key: a key inserted k times and deleted at most k
// times is reported present whatever else was inserted or deleted (doc.go,
// "Growing filters"). A lookup reads two buckets however far it grew. A
// Scalable has the same concurrency rules as a Filter.
type Scalable struct {
	cfg     ScalableConfig // defaults filled in
	t       *growTable
	buckets uint64 // the initial bucket count
	level0  uint   // the initial level
	items   uint64 // inserts less deletes
}

// NewScalable returns an empty scalable filter sized for InitialCapacity
// keys, or an error that names the ScalableConfig field at fault.
func NewScalable(cfg ScalableConfig) (*Scalable, error) {
	s, width, fpBits, err := scalableLayout(cfg)
	if err != nil {
		return nil, err
	}
	s.t = newGrowTable(s.buckets, linhash.NewShape(uint(s.cfg.BucketSize), width, fpBits))
	return s, nil
}

// scalableLayout checks cfg and fills in its defaults, and returns a
// Scalable without its table and the table's shape: all that NewScalable
// and ReadFrom need, without allocating the table.
func scalableLayout(cfg ScalableConfig) (s *Scalable, width, fpBits uint, err error) {
	fail := func(format string, args ...any) (*Scalable, uint, uint, error) {
		return nil, 0, 0, fmt.Errorf(format, args...)
	}
	if cfg.InitialCapacity == 0 {
		return fail("filter: ScalableConfig.InitialCapacity is 0: it must be at least 1")
	}
	if cfg.FalsePositiveRate == 0 {
		cfg.FalsePositiveRate = defaultFalsePositiveRate
	}
	if !(cfg.FalsePositiveRate > 0 && cfg.FalsePositiveRate < 1) {
		return fail("filter: ScalableConfig.FalsePositiveRate is %v: it must be in (0, 1)", cfg.FalsePositiveRate)
	}
	switch {
	case cfg.Growth == 0:
		cfg.Growth = defaultGrowth
	case cfg.Growth < 1 || cfg.Growth > maxGrowth:
		return fail("filter: ScalableConfig.Growth is %d: it must be in 1..%d", cfg.Growth, maxGrowth)
	}
	switch cfg.BucketSize {
	case 0:
		cfg.BucketSize = defaultBucketSize
	case 2, 4, 8:
	default:
		return fail("filter: ScalableConfig.BucketSize is %d: it must be 2, 4 or 8", cfg.BucketSize)
	}
	switch {
	case cfg.MaxKicks == 0:
		cfg.MaxKicks = defaultMaxKicks
	case cfg.MaxKicks < 0 || cfg.MaxKicks > maxMaxKicks:
		return fail("filter: ScalableConfig.MaxKicks is %d: it must be in 1..%d", cfg.MaxKicks, maxMaxKicks)
	}
	b := uint(cfg.BucketSize)
	if width, fpBits, err = scalableShape(cfg.FalsePositiveRate, b); err != nil {
		return nil, 0, 0, err
	}
	buckets, ok := linhash.InitialBuckets(cfg.InitialCapacity, b)
	if !ok {
		return fail("filter: ScalableConfig.InitialCapacity %d: more than the largest table holds", cfg.InitialCapacity)
	}
	s = &Scalable{cfg: cfg, buckets: buckets, level0: uint(bits.Len64(buckets)) - 1}
	return s, width, fpBits, nil
}

// scalableShape returns the slot width and the fingerprint part of it for
// rate ε and b slots a bucket. A lookup compares 2b slots at load α; an
// entry that has lost a of its w-F-1 tail bits matches a random key with
// probability 2^-(w-1-a). Each doubling adds a generation of entries that
// together contribute about 1.5·2b·α/2^w (half the keys, each having lost
// one bit more than the generation after it, and a generation splitting
// over two levels), so w is the least width whose sum over designDoublings
// generations stays below ε.
func scalableShape(rate float64, b uint) (width, fpBits uint, err error) {
	w := math.Ceil(math.Log2(1.5 * 2 * float64(b) * linhash.SplitLoad(b) * designDoublings / rate))
	if w > 32 {
		return 0, 0, fmt.Errorf("filter: ScalableConfig.FalsePositiveRate %v needs %v-bit slots, more than 32", rate, w)
	}
	width = max(uint(w), linhash.FingerprintBits(b, 0)+4)
	return width, linhash.FingerprintBits(b, width), nil
}

func (s *Scalable) hash(key []byte) uint64       { return hashKey(key, s.cfg.Seed) }
func (s *Scalable) hashString(key string) uint64 { return hashString(key, s.cfg.Seed) }

// Insert adds key, growing the table as its load passes the split load. It
// returns ErrFull, changing nothing, only when no path makes room and the
// key's buckets already hold 2b copies of its fingerprint (a key inserted
// that many times, or colliding keys) or the stash of keys that found no
// place is full.
func (s *Scalable) Insert(key []byte) error { return s.InsertHash(s.hash(key)) }

// InsertString is Insert for a string key.
func (s *Scalable) InsertString(key string) error { return s.InsertHash(s.hashString(key)) }

// InsertHash is Insert for a caller-computed hash.
func (s *Scalable) InsertHash(h uint64) error {
	t := s.t
	k := t.key(h)
	if !t.place(k, s.cfg.MaxKicks) {
		// Refused before anything changes: the key's buckets are full of
		// its own fingerprint, or the stash is full.
		if t.countKey(k) >= 2*int(t.shape.Slots) || len(t.stash) >= linhash.MaxStash {
			return ErrFull
		}
		// No path below the split load: rare. Splitting frees room near
		// the split pointer; the stash takes the key if that is not near.
		placed := false
		for range 8 {
			if !s.splitOne() {
				break
			}
			if placed = t.place(k, s.cfg.MaxKicks); placed {
				break
			}
		}
		if !placed {
			t.stash = append(t.stash, h)
		}
	}
	s.items++
	grew := false
	for t.overloaded() && s.splitOne() {
		grew = true
	}
	if grew && len(t.stash) > 0 {
		t.drainStash()
	}
	return nil
}

// splitOne splits one bucket, unless the table is at its largest.
func (s *Scalable) splitOne() bool {
	if s.t.geom.Level >= linhash.MaxLevel {
		return false
	}
	s.t.splitNext()
	return true
}

// InsertUnique inserts key unless Contains(key) holds, and reports whether
// it inserted.
func (s *Scalable) InsertUnique(key []byte) (bool, error) { return s.InsertUniqueHash(s.hash(key)) }

// InsertUniqueString is InsertUnique for a string key.
func (s *Scalable) InsertUniqueString(key string) (bool, error) {
	return s.InsertUniqueHash(s.hashString(key))
}

// InsertUniqueHash is InsertUnique for a caller-computed hash.
func (s *Scalable) InsertUniqueHash(h uint64) (bool, error) {
	if s.ContainsHash(h) {
		return false, nil
	}
	return true, s.InsertHash(h)
}

// Contains reports whether key may have been inserted: never false for a key
// inserted and not deleted.
func (s *Scalable) Contains(key []byte) bool { return s.ContainsHash(s.hash(key)) }

// ContainsString is Contains for a string key.
func (s *Scalable) ContainsString(key string) bool { return s.ContainsHash(s.hashString(key)) }

// ContainsHash is Contains for a caller-computed hash.
func (s *Scalable) ContainsHash(h uint64) bool { return s.t.containsHash(h) }

// ContainsBatch sets out[i] = Contains(keys[i]). It panics if out is shorter
// than keys.
func (s *Scalable) ContainsBatch(keys [][]byte, out []bool) {
	if len(out) < len(keys) {
		panic("filter: ContainsBatch: out is shorter than keys")
	}
	for i, k := range keys {
		out[i] = s.Contains(k)
	}
}

// Delete removes one copy of key and reports whether there was one. Delete
// only keys known to be present, as with any cuckoo filter: deleting a key
// that was never inserted may remove another key's copy. Deleting a present
// key never does harm: the copy it removes is the one that knows the most
// bits of the key's address, and any other key that copy matched is matched
// by the deleted key's own copy as well (doc.go).
func (s *Scalable) Delete(key []byte) bool { return s.DeleteHash(s.hash(key)) }

// DeleteString is Delete for a string key.
func (s *Scalable) DeleteString(key string) bool { return s.DeleteHash(s.hashString(key)) }

// DeleteHash is Delete for a caller-computed hash.
func (s *Scalable) DeleteHash(h uint64) bool {
	if !s.t.remove(s.t.key(h)) {
		return false
	}
	s.items--
	return true
}

// Count returns the entries that match key: its copies, and any other key's
// that cannot be told from them.
func (s *Scalable) Count(key []byte) int { return s.CountHash(s.hash(key)) }

// CountString is Count for a string key.
func (s *Scalable) CountString(key string) int { return s.CountHash(s.hashString(key)) }

// CountHash is Count for a caller-computed hash.
func (s *Scalable) CountHash(h uint64) int { return s.t.countKey(s.t.key(h)) }

// Len returns the keys inserted and not deleted.
func (s *Scalable) Len() uint64 { return s.items }

// Entries returns the entries stored: Len, plus the copies made when a split
// met an entry with no tail bit left to choose a half by, less the copies
// that deletes removed from the other half.
func (s *Scalable) Entries() uint64 { return s.t.count + uint64(len(s.t.stash)) }

// Capacity returns the entries the table holds before it next grows.
func (s *Scalable) Capacity() uint64 {
	return s.t.capacity()
}

// Slots returns the table's slots: buckets times BucketSize.
func (s *Scalable) Slots() uint64 { return s.t.buckets() * uint64(s.t.shape.Slots) }

// Buckets returns the table's bucket count.
func (s *Scalable) Buckets() uint64 { return s.t.buckets() }

// BucketSize returns the slots a bucket: ScalableConfig.BucketSize, its
// default filled in.
func (s *Scalable) BucketSize() int { return int(s.t.shape.Slots) }

// SlotBits returns the width of a slot: fingerprint and tail.
func (s *Scalable) SlotBits() int { return int(s.t.shape.Bits) }

// FingerprintBits returns the part of a slot that never shrinks.
func (s *Scalable) FingerprintBits() int { return int(s.t.shape.FPBits) }

// Tails returns the entries by the length of their tail: entry n holds the
// entries that have n bits of their address beyond their bucket's level,
// which they match keys on besides the fingerprint.
func (s *Scalable) Tails() []uint64 {
	return append([]uint64(nil), s.t.byTail[:s.t.shape.TailBits]...)
}

// Stashed returns the keys held beside the table.
func (s *Scalable) Stashed() int { return len(s.t.stash) }

// LoadFactor returns the fraction of the slots in use.
func (s *Scalable) LoadFactor() float64 { return float64(s.t.count) / float64(s.Slots()) }

// SizeInBytes returns the memory of the filter.
func (s *Scalable) SizeInBytes() uint64 {
	return uint64(64+8*cap(s.t.stash)+8*cap(s.t.segs)) + uint64(len(s.t.segs))*s.t.segmentBytes()
}

// FalsePositiveRate returns the expected rate at the current load: for each
// tail length, the entries with that tail times the chance that one of them
// matches an absent key.
func (s *Scalable) FalsePositiveRate() float64 {
	var byTail [linhash.MaxTailBits]float64
	for n, c := range s.t.byTail {
		byTail[n] = float64(c)
	}
	return s.t.shape.ExpectedRate(byTail[:], s.t.buckets())
}

// Stages returns the doublings of the table since it was created, plus one:
// the generations of entries it holds, each with one bit of tail less than
// the next.
func (s *Scalable) Stages() int { return int(s.t.geom.Level-s.level0) + 1 }

// Config returns the configuration with its defaults filled in.
func (s *Scalable) Config() ScalableConfig { return s.cfg }

// Reset empties the filter and gives it its initial size.
func (s *Scalable) Reset() {
	s.t.setGeometry(s.buckets)
	s.items = 0
}
