// Package linhash is the addressing and the entry codec of the growing
// cuckoo filters, filter.Scalable and package growing: linear hashing over
// virtual addresses, and quotiented entries that keep the bits of their
// address beyond their bucket's level as a tail. filter/doc.go ("Growing
// filters") explains the design and proves the invariant that no kept key
// is lost; this package is the arithmetic both filters share.
//
// A key's hash h gives a fingerprint fp of F bits (never 0) and two virtual
// addresses, a = h and b = a ^ Offset(fp). With level L and split pointer p
// a table has 2^L + p buckets; address v lives in bucket v mod 2^L, or
// v mod 2^(L+1) when that is below p.
//
// An entry is w bits: fp<<k | 1<<t | tail, where k = w - F and the tail is
// t <= k-1 bits of the entry's address from its bucket's level l on, above
// a stop bit. It knows l+t bits of its address. 0 is an empty slot.
package linhash

import (
	"math"
	"math/bits"

	"github.com/cuckoohash/cuckoo/internal/hashing"
)

// MaxTailBits bounds the tail field k: a tail of up to k-1 bits outlasts
// any growth a table reaches.
const MaxTailBits = 16

// Shape is the width of an entry and how it divides.
type Shape struct {
	Slots    uint // b, slots a bucket
	Bits     uint // w
	FPBits   uint // F
	TailBits uint // k = w - F: a tail of 0..k-1 bits and its stop bit
	SlotMask uint64
	FPMask   uint64 // 2^F - 1
}

// NewShape returns the shape of b slots of w bits with F fingerprint bits.
// It requires F >= 1 and 2 <= w-F <= MaxTailBits.
func NewShape(slots, width, fpBits uint) Shape {
	return Shape{
		Slots:    slots,
		Bits:     width,
		FPBits:   fpBits,
		TailBits: width - fpBits,
		SlotMask: 1<<width - 1,
		FPMask:   1<<fpBits - 1,
	}
}

// defaultFPBits is the fingerprint part of an entry by bucket size: it
// picks the key's other bucket among 2^F-1, so it is kept at the width
// below which the load a path search reaches falls; wider, it would only
// make copies of old entries sooner (filter/doc.go).
var defaultFPBits = map[uint]uint{2: 8, 4: 6, 5: 6, 8: 7}

// FingerprintBits returns F for entries of w bits in buckets of b slots:
// the default for b, or more when the tail would outgrow MaxTailBits.
func FingerprintBits(slots, width uint) uint {
	f := defaultFPBits[slots]
	if width > f+MaxTailBits {
		f = width - MaxTailBits
	}
	return f
}

// splitLoads is the load past which a table splits buckets, by bucket
// size: a margin below the load at which path searches start to fail,
// since buckets not yet split in a round carry twice the keys of split
// ones. The load is most at the start and end of a round of splits, where
// every bucket has the same level, and least at fraction leastAt of the
// round, a third of the way through it, where inserts search
// longest for a path (measured for 4 slots: 6.1 buckets a search there
// at a flat 0.90, 1.2-1.8 at the ends). Bucket sizes with one load have
// not been measured that way. A table is sized for its capacity at the
// load tables have always been sized at: a saved table's first geometry
// follows from its capacity (see InitialBuckets), so that load is fixed.
var splitLoads = map[uint]struct{ most, least, sized float64 }{
	2: {0.80, 0.80, 0.80},
	4: {0.91, 0.885, 0.90},
	5: {0.92, 0.92, 0.92},
	8: {0.95, 0.95, 0.95},
}

// leastAt is the fraction of a round of splits where the split load is
// least.
const leastAt = 0.35

// SplitLoad returns the most a table of b-slot buckets is loaded before
// it grows: the load that bounds its false-positive rate.
func SplitLoad(slots uint) float64 { return splitLoads[slots].most }

// SplitLoadAt returns the load past which a table of b-slot buckets and
// geometry g splits its next bucket: SplitLoad at the start and end of a
// round, falling quadratically to the least at leastAt.
func SplitLoadAt(slots uint, g Geometry) float64 {
	l := splitLoads[slots]
	x := float64(g.Split) / float64(uint64(1)<<g.Level)
	d := (x - leastAt) / (1 - leastAt)
	if x < leastAt {
		d = (leastAt - x) / leastAt
	}
	return l.least + (l.most-l.least)*d*d
}

// Offset returns the xor between a key's two addresses, from its
// fingerprint alone, so that an entry's other address follows from what it
// stores.
func Offset(fp uint64) uint64 { return fp * 0x5bd1e9955bd1e995 }

// Key splits hash h into a fingerprint, from its high 32 bits (in effect
// its top F), and two addresses: h itself, of which a table uses the low
// level+tail bits, far below the fingerprint's, and h ^ Offset(fp).
func (s *Shape) Key(h uint64) (fp, a, b uint64) {
	fp = uint64(hashing.FingerprintMasked(h>>32, s.FPMask))
	return fp, h, h ^ Offset(fp)
}

// Entry returns the entry of a key with fingerprint fp and address v in a
// bucket of level l: the longest tail there is room for.
func (s *Shape) Entry(fp, v uint64, l uint) uint64 {
	n := s.TailBits - 1
	return fp<<s.TailBits | 1<<n | v>>l&(1<<n-1)
}

// TailLen returns the length of entry e's tail.
func (s *Shape) TailLen(e uint64) uint {
	return uint(bits.Len64(e&(1<<s.TailBits-1))) - 1
}

// Known returns how many bits of its address entry e, in a bucket of level
// l, knows.
func (s *Shape) Known(e uint64, l uint) uint { return l + s.TailLen(e) }

// Valid reports whether a nonzero slot value is an entry: a fingerprint and
// a stop bit.
func (s *Shape) Valid(e uint64) bool {
	return e>>s.TailBits != 0 && e&(1<<s.TailBits-1) != 0 && e <= s.SlotMask
}

// Matches reports whether entry e, in a bucket of level l, matches the key
// with fingerprint fp at address v: same fingerprint, and the tail equals
// v's bits from l on.
func (s *Shape) Matches(e, fp, v uint64, l uint) bool {
	return e>>s.TailBits == fp && s.TailMatches(e, v, l)
}

// TailMatches reports whether entry e's tail equals v's bits from l on.
func (s *Shape) TailMatches(e, v uint64, l uint) bool {
	tail := e & (1<<s.TailBits - 1)
	n := uint(bits.Len64(tail)) - 1
	return (tail^v>>l)&(1<<n-1) == 0
}

// Split returns what becomes of entry e when its bucket splits: its value
// in the half its lowest tail bit names (high: the new bucket), that bit
// dropped; or, with no tail left, both: it is copied unchanged into both
// halves, since its key may be in either.
func (s *Shape) Split(e uint64) (next uint64, high, both bool) {
	tail := e & (1<<s.TailBits - 1)
	n := uint(bits.Len64(tail)) - 1
	if n == 0 {
		return e, false, true
	}
	fp := e >> s.TailBits
	return fp<<s.TailBits | 1<<(n-1) | (tail^1<<n)>>1, tail&1 == 1, false
}

// Other returns where entry e of bucket j (level l) goes in its key's other
// bucket under geometry g: the bucket and the entry there. Its known bits
// stay the same, less the highest tail bit if the slot cannot hold one more
// (a move to a shallower bucket). ok is false when the other bucket is
// deeper than the entry knows, which pins the entry in place.
func (s *Shape) Other(g Geometry, j uint64, l uint, e uint64) (uint64, uint64, bool) {
	fp := e >> s.TailBits
	v, known := s.otherAddr(j, l, e)
	j2, l2 := g.Bucket(v)
	if l2 > known {
		return 0, 0, false
	}
	n2 := min(known-l2, s.TailBits-1)
	return j2, fp<<s.TailBits | 1<<n2 | v>>l2&(1<<n2-1), true
}

// otherAddr returns the known bits of the other address of entry e (not
// 0) in bucket j (level l), and how many they are: the bucket's own bits
// and the tail, the fingerprint's offset applied to them.
func (s *Shape) otherAddr(j uint64, l uint, e uint64) (v uint64, known uint) {
	// Every shift is below 64 for an entry (e != 0): the masks say so to the
	// compiler, which then emits no test for larger ones.
	tail := e & (1<<(s.TailBits&63) - 1)
	n := uint(bits.Len64(tail)) - 1
	known = l + n
	return (j | (tail^1<<(n&63))<<(l&63)) ^ Offset(e>>(s.TailBits&63))&(1<<(known&63)-1), known
}

// OtherBucket is the bucket of Other alone, without a branch on whether
// it has split: what a path search needs of each entry it examines. ok is
// false where Other's is.
func (s *Shape) OtherBucket(g Geometry, j uint64, l uint, e uint64) (uint64, bool) {
	v, known := s.otherAddr(j, l, e)
	j2, l2 := g.Bucket(v)
	return j2, l2 <= known
}

// OtherBuckets is OtherBucket for every slot of a bucket read as one word,
// slot 0 in the low bits: ys[i] is slot i's other bucket, and bit i of
// moves is set when its entry can move there, to a bucket other than j.
// An empty slot's bits are left clear. A path search calls it once a
// bucket, with OtherBucket's steps inlined into one loop, and ys filled in
// place rather than copied back.
func (s *Shape) OtherBuckets(g Geometry, j uint64, l uint, word uint64, ys *[8]uint64) (moves uint) {
	for i := range s.Slots {
		e := word >> (i * s.Bits & 63) & s.SlotMask
		v, known := s.otherAddr(j, l, e)
		y, ly := g.Bucket(v)
		ys[i&7] = y
		if e != 0 && ly <= known && y != j {
			moves |= 1 << (i & 63)
		}
	}
	return moves
}

// Geometry is a table's level and split pointer.
type Geometry struct {
	Level   uint   // L
	Split   uint64 // p < 2^L
	lowMask uint64 // 2^L - 1
}

// NewGeometry returns the geometry of a table of the given buckets, at
// least 1.
func NewGeometry(buckets uint64) Geometry {
	buckets = max(buckets, 1)
	level := uint(bits.Len64(buckets)) - 1
	return At(level, buckets-1<<level)
}

// At returns the geometry of level L and split pointer p < 2^L.
func At(level uint, split uint64) Geometry {
	return Geometry{Level: level, Split: split, lowMask: 1<<level - 1}
}

// Buckets returns 2^L + p.
func (g Geometry) Buckets() uint64 { return 1<<g.Level + g.Split }

// Next returns the geometry after bucket Split has split.
func (g Geometry) Next() Geometry {
	if g.Split+1 == 1<<g.Level {
		return At(g.Level+1, 0)
	}
	return At(g.Level, g.Split+1)
}

// Addr returns the bucket of address v and its level.
func (g Geometry) Addr(v uint64) (uint64, uint) {
	j := v & g.lowMask
	if j < g.Split {
		return v & (g.lowMask<<1 | 1), g.Level + 1
	}
	return j, g.Level
}

// Bucket is Addr without a branch: whether v's bucket has split yet is a
// coin toss, which a branch would mispredict.
func (g Geometry) Bucket(v uint64) (uint64, uint) {
	split := (v&g.lowMask - g.Split) >> 63 // 1 if v's bucket has split
	return v & (g.lowMask | -split&(g.lowMask+1)), g.Level + uint(split)
}

// LevelOf returns the level of bucket j < Buckets().
func (g Geometry) LevelOf(j uint64) uint {
	if j < g.Split || j > g.lowMask {
		return g.Level + 1
	}
	return g.Level
}

// Node is one bucket reached by a breadth-first path search: the entry in
// slot Slot of the parent node's bucket has this bucket as its other
// bucket. Parent is -1 for the key's own buckets.
type Node struct {
	Bucket uint64
	Parent int32
	Slot   uint8
}

// OnPath reports whether bucket y is on the chain from node n to its root:
// a chain that visited a bucket twice would move an entry it no longer
// holds.
func OnPath(q []Node, n int, y uint64) bool {
	for ; n >= 0; n = int(q[n].Parent) {
		if q[n].Bucket == y {
			return true
		}
	}
	return false
}

// Match is an entry that matches a key: where it is and how many bits of
// its address it knows.
type Match struct {
	Bucket uint64
	Slot   uint
	Known  uint
}

// Longest returns the match that knows the most bits, the one a delete
// takes: any other key it matches, the deleted key's own entry matches too
// (filter/doc.go, "Growing filters"). ms must not be empty.
func Longest(ms []Match) Match {
	best := ms[0]
	for _, m := range ms[1:] {
		if m.Known > best.Known {
			best = m
		}
	}
	return best
}

// Segments places a table's buckets in segments that are never moved or
// copied, so that memory grows in steps of about 2·2^(L/2) buckets and a
// table's growth never needs twice its memory at once. The buckets below
// 2^(L0+1), L0 the initial level, are in segments of SegShift(L0); those of
// [2^l, 2^(l+1)) for each l > L0 in segments of SegShift(l); a segment is
// at least 8 buckets and never more than its range. Splits create buckets
// in increasing order, so segments are only ever appended.
type Segments struct {
	low   uint // the first range is [0, 2^low)
	shift [64]uint8
	base  [64]uint64 // the first segment of range [2^l, 2^(l+1)), l >= low
}

// SegShift returns the segment size, as a power of two, for a range of
// level l: about 2·sqrt(2^l) buckets, which balances the directory (a
// pointer a segment) against the unused part of the newest segment.
func SegShift(l uint) uint { return max(4, (l+3)/2) }

// NewSegments returns the placement for a table of initial level level0.
func NewSegments(level0 uint) Segments {
	// The first range is at least 8 buckets, so that every segment is whole
	// bytes whatever the bucket's width: packed tables concatenate them.
	s := Segments{low: max(level0+1, 3)}
	// A segment never exceeds its range, so each range is whole segments.
	s.shift[0] = uint8(min(SegShift(level0), s.low))
	next := uint64(1) << s.low >> s.shift[0]
	for l := s.low; l < 64; l++ {
		sh := SegShift(l)
		if sh > l {
			sh = l
		}
		s.shift[l], s.base[l] = uint8(sh), next
		next += uint64(1) << l >> sh
	}
	return s
}

// Locate returns the segment of bucket j and j's index in it.
func (s *Segments) Locate(j uint64) (seg uint64, off uint64) {
	if j < 1<<s.low {
		sh := s.shift[0] & 63
		return j >> sh, j & (1<<sh - 1)
	}
	l := uint(bits.Len64(j)) - 1
	sh := s.shift[l] & 63
	o := j - 1<<l
	return s.base[l] + o>>sh, o & (1<<sh - 1)
}

// Size returns the buckets of the segment that holds bucket j.
func (s *Segments) Size(j uint64) uint64 {
	if j < 1<<s.low {
		return 1 << s.shift[0]
	}
	return 1 << s.shift[bits.Len64(j)-1]
}

// Count returns the segments that hold buckets [0, n), n >= 1.
func (s *Segments) Count(n uint64) uint64 {
	seg, _ := s.Locate(n - 1)
	return seg + 1
}

// First returns the first bucket of segment seg.
func (s *Segments) First(seg uint64) uint64 {
	if first := seg << s.shift[0]; first < 1<<s.low {
		return first
	}
	l := s.low
	for l+1 < 64 && s.base[l+1] <= seg {
		l++
	}
	return 1<<l + (seg-s.base[l])<<s.shift[l]
}

// Limits both growing tables share.
const (
	// MaxLevel bounds a table at 2^(MaxLevel+1) buckets, beyond any
	// memory.
	MaxLevel = 40
	// MaxStash bounds the keys kept beside a table when no path is found
	// even after splitting; past it an insert is refused.
	MaxStash = 64
)

// InitialBuckets returns the buckets a table of b-slot buckets starts with
// for capacity keys: enough at the load tables are sized at, which is
// within a percent or two of the split load. Saved tables depend on it:
// a file's geometry is checked against the one its capacity gives, and a
// fixed table's must equal it. ok is false past MaxLevel.
func InitialBuckets(capacity uint64, slots uint) (buckets uint64, ok bool) {
	n := math.Ceil(float64(capacity) / (float64(slots) * splitLoads[slots].sized))
	return uint64(n), n < 1<<MaxLevel
}

// ExpectedRate returns the false-positive rate of a table of the given
// buckets holding byTail[n] entries with an n-bit tail: an absent key
// reads two buckets, and an entry there matches it with probability
// 2^-n/(2^F-1).
func (s *Shape) ExpectedRate(byTail []float64, buckets uint64) float64 {
	var matches float64
	for n, c := range byTail {
		matches += c * math.Ldexp(1, -n)
	}
	matches *= 2 / float64(buckets) / float64(s.FPMask)
	return -math.Expm1(-matches)
}
