package filter

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/cuckoohash/cuckoo/internal/swar"
)

// growTable is the table of a Scalable: a cuckoo filter whose bucket count
// grows one bucket at a time by linear hashing, with quotiented entries that
// give up one bit of their tail each time their bucket splits. doc.go
// ("Growing filters") states its invariants and the proof that deletes keep
// every kept key.
//
// A key's hash gives a fingerprint fp (fpBits bits, never 0), an address a
// (64 bits) and, from fp alone, an offset g. Its two virtual addresses are a
// and a^g. With level L and split pointer p the table has 2^L + p buckets;
// virtual address v lives in bucket v mod 2^L, or v mod 2^(L+1) when that is
// below p: buckets below p and from 2^L on have level L+1, the rest level L.
//
// An entry in a bucket of level l holds fp and a tail: the bits of its
// virtual address from bit l on, as many as it still has (at most
// tailBits-1), stored above a stop bit. Its known prefix is then l + t bits
// of the virtual address; the prefix stays the same when the entry moves to
// its other bucket (v^g on every known bit) and when its bucket splits (the
// lowest tail bit picks the half).
type growTable struct {
	slots      uint // b
	bits       uint // w, fpBits + tailBits
	fpBits     uint // F
	tailBits   uint // k: a tail of 0..k-1 bits and its stop bit
	bucketBits uint // b·w
	oneWord    bool // a bucket is read with one unaligned 64-bit load
	slotMask   uint64
	bucketMask uint64
	fpMask     uint64 // 2^F - 1, for hashing.FingerprintMasked
	lanes      swar.Lanes
	fpLanes    uint64    // the fingerprint bits of every slot of a bucket
	tailLanes  uint64    // the tail bits of every slot of a bucket
	smear      [4]uint64 // for a shift by 2^i, the tail bits that stay in their lane
	offsets    []uint64  // offset(fp) for every fingerprint

	level   uint   // L
	split   uint64 // p < 2^L
	lowMask uint64 // 2^L - 1

	// The buckets live in segments of 2^segShift buckets each, so that the
	// memory grows with the table instead of doubling with it.
	segShift uint
	segs     []unsafe.Pointer // each segment's first byte; see segment

	count  uint64              // entries in the table, copies included
	byTail [maxTailBits]uint64 // entries by tail length, for the rate estimate
	stash  []uint64            // hashes of keys the table could not place
	path   []node              // path-search scratch
}

const (
	maxTailBits = 16
	// minSegShift makes a segment at least 16 buckets, so that a small
	// table's directory costs little beside it.
	minSegShift = 4
)

func newGrowTable(buckets uint64, slots, width, fpBits uint) *growTable {
	t := newGrowTableShape(slots, width, fpBits)
	t.setGeometry(buckets)
	return t
}

// newGrowTableShape returns a table of the given shape without buckets.
func newGrowTableShape(slots, width, fpBits uint) *growTable {
	t := &growTable{
		slots:      slots,
		bits:       width,
		fpBits:     fpBits,
		tailBits:   width - fpBits,
		bucketBits: slots * width,
		slotMask:   1<<width - 1,
		fpMask:     1<<fpBits - 1,
	}
	t.oneWord = t.bucketBits <= 57
	t.bucketMask = 1<<t.bucketBits - 1
	if t.oneWord {
		t.lanes = swar.New(slots, width)
		t.fpLanes = t.lanes.Broadcast(uint32(t.fpMask << t.tailBits))
		t.tailLanes = t.lanes.Broadcast(uint32(1<<t.tailBits - 1))
		for i := range t.smear {
			if shift := uint(1) << i; shift < t.tailBits {
				t.smear[i] = t.lanes.Broadcast(uint32(1<<(t.tailBits-shift) - 1))
			}
		}
	}
	return t
}

// setGeometry empties the table and gives it the given number of buckets.
func (t *growTable) setGeometry(buckets uint64) {
	buckets = max(buckets, 1)
	t.setLevel(uint(bits.Len64(buckets))-1, buckets-1<<(bits.Len64(buckets)-1))
	t.segShift = segShiftFor(t.level)
	n := (buckets + 1<<t.segShift - 1) >> t.segShift
	t.segs = nil
	for range n {
		t.appendSegment(make([]byte, t.segmentBytes()))
	}
	t.count = 0
	t.byTail = [maxTailBits]uint64{}
	t.stash = nil
}

func (t *growTable) appendSegment(seg []byte) {
	t.segs = append(t.segs, unsafe.Pointer(unsafe.SliceData(seg)))
}

// segment returns segment i's bytes. The directory keeps only each
// segment's first byte, which keeps the segment alive, so that it costs 8
// bytes a segment.
func (t *growTable) segment(i int) []byte {
	return unsafe.Slice((*byte)(t.segs[i]), t.segmentBytes())
}

// segShiftFor returns the segment size for a table of level l: about
// 2·sqrt(2^l) buckets, which balances the directory and the slack of each
// segment (growing with the segment count) against the unused part of the
// newest segment (growing with the segment size).
func segShiftFor(l uint) uint { return max(minSegShift, (l+3)/2) }

func (t *growTable) segmentBytes() uint64 {
	return uint64(1)<<t.segShift*uint64(t.bucketBits)/8 + slack
}

func (t *growTable) buckets() uint64 { return 1<<t.level + t.split }

func (t *growTable) setLevel(level uint, split uint64) {
	t.level, t.split, t.lowMask = level, split, 1<<level-1
}

// addr returns the bucket of virtual address v and its level.
func (t *growTable) addr(v uint64) (uint64, uint) {
	j := v & t.lowMask
	if j < t.split {
		return v & (t.lowMask<<1 | 1), t.level + 1
	}
	return j, t.level
}

// bucket returns the bucket of virtual address v without a branch: whether
// v's bucket has split yet is a coin toss, which a branch would mispredict.
func (t *growTable) bucket(v uint64) (uint64, uint) {
	split := (v&t.lowMask - t.split) >> 63 // 1 if v's bucket has split
	return v & (t.lowMask | -split&(t.lowMask+1)), t.level + uint(split)
}

// levelOf returns the level of bucket j.
func (t *growTable) levelOf(j uint64) uint {
	if j < t.split || j >= 1<<t.level {
		return t.level + 1
	}
	return t.level
}

// word returns bucket j's slots, slot 0 in the low bits. Requires oneWord
// and j < buckets().
func (t *growTable) word(j uint64) uint64 {
	// Safety: j < buckets(), so segs has segment j>>segShift, and the
	// bucket's bytes lie within it; the slack after each segment's buckets
	// keeps the 8 bytes read inside it.
	base := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.segs)), uintptr(j>>t.segShift)*unsafe.Sizeof(t.segs[0])))
	off := (j & (1<<t.segShift - 1)) * uint64(t.bucketBits)
	p := (*[8]byte)(unsafe.Add(base, off>>3))
	return binary.LittleEndian.Uint64(p[:]) >> (off & 7) & t.bucketMask
}

func (t *growTable) slot(j uint64, i uint) uint64 {
	if t.oneWord {
		return t.word(j) >> (i * t.bits) & t.slotMask
	}
	p, shift := t.slotAt(j, i)
	return binary.LittleEndian.Uint64(p[:]) >> shift & t.slotMask
}

// slotAt returns the 8 bytes that hold slot i of bucket j, j < buckets(),
// and the slot's bit offset in them.
func (t *growTable) slotAt(j uint64, i uint) (*[8]byte, uint) {
	// Safety: as in word; a slot of at most 32 bits at a bit offset below 8
	// lies within the 8 bytes read, which the segment's slack keeps inside
	// it.
	base := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.segs)), uintptr(j>>t.segShift)*unsafe.Sizeof(t.segs[0])))
	off := (j&(1<<t.segShift-1))*uint64(t.bucketBits) + uint64(i*t.bits)
	return (*[8]byte)(unsafe.Add(base, off>>3)), uint(off & 7)
}

// setSlot writes slot i of bucket j and keeps the counts.
func (t *growTable) setSlot(j uint64, i uint, s uint64) {
	p, shift := t.slotAt(j, i)
	w := binary.LittleEndian.Uint64(p[:])
	old := w >> shift & t.slotMask
	w = w&^(t.slotMask<<shift) | s<<shift
	binary.LittleEndian.PutUint64(p[:], w)
	if old != 0 {
		t.count--
		t.byTail[t.tailLen(old)]--
	}
	if s != 0 {
		t.count++
		t.byTail[t.tailLen(s)]++
	}
}

// free returns a free slot of bucket j, or -1.
func (t *growTable) free(j uint64) int {
	if t.oneWord {
		z := t.lanes.Zeros(t.word(j))
		if z == 0 {
			return -1
		}
		return bits.TrailingZeros64(z) / int(t.bits)
	}
	for i := range t.slots {
		if t.slot(j, i) == 0 {
			return int(i)
		}
	}
	return -1
}

// Entries. A slot holds fp<<k | 1<<t | tail, t <= k-1; 0 is empty.

func (t *growTable) tailLen(s uint64) uint {
	return uint(bits.Len64(s&(1<<t.tailBits-1))) - 1
}

// entry returns the slot value of a key with fingerprint fp and virtual
// address v in a bucket of level l: the longest tail there is room for.
func (t *growTable) entry(fp, v uint64, l uint) uint64 {
	n := t.tailBits - 1
	return fp<<t.tailBits | 1<<n | v>>l&(1<<n-1)
}

// matches reports whether slot s, in a bucket of level l, matches the key
// with fingerprint fp and virtual address v: same fingerprint, and the tail
// equals v's bits from l on.
func (t *growTable) matches(s, fp, v uint64, l uint) bool {
	return s>>t.tailBits == fp && t.tailMatches(s, v, l)
}

// tailMatches reports whether slot s's tail equals v's bits from l on.
func (t *growTable) tailMatches(s, v uint64, l uint) bool {
	tail := s & (1<<t.tailBits - 1)
	n := uint(bits.Len64(tail)) - 1
	return (tail^v>>l)&(1<<n-1) == 0
}

// prefix returns the bits of its virtual address that slot s in bucket j of
// level l knows.
func (t *growTable) prefix(s uint64, l uint) uint { return l + t.tailLen(s) }

// offset returns g, the xor between a key's two virtual addresses, from its
// fingerprint alone.
func offset(fp uint64) uint64 { return fp * 0x5bd1e9955bd1e995 }

// other returns where the entry s in bucket j goes in the key's other
// bucket: the bucket and the slot value there. ok is false when the other
// bucket is one level deeper than the entry knows (a tail-less entry whose
// other bucket has split), which pins the entry in place.
func (t *growTable) other(j uint64, s uint64) (uint64, uint64, bool) {
	return t.otherAt(j, t.levelOf(j), s)
}

// otherAt is other for bucket j of level l.
func (t *growTable) otherAt(j uint64, l uint, s uint64) (uint64, uint64, bool) {
	fp := s >> t.tailBits
	tail := s & (1<<t.tailBits - 1)
	n := uint(bits.Len64(tail)) - 1
	known := l + n
	v := (j | (tail^1<<n)<<l) ^ offset(fp)&(1<<known-1)
	j2, l2 := t.addr(v)
	if l2 > known {
		return 0, 0, false
	}
	n2 := min(known-l2, t.tailBits-1)
	return j2, fp<<t.tailBits | 1<<n2 | v>>l2&(1<<n2-1), true
}
