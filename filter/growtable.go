package filter

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/cuckoohash/cuckoo/internal/linhash"
	"github.com/cuckoohash/cuckoo/internal/swar"
)

// growTable is the table of a Scalable: a cuckoo filter whose bucket count
// grows one bucket at a time by linear hashing, with quotiented entries that
// give up one bit of their tail each time their bucket splits. doc.go
// ("Growing filters") states its invariants and the proof that deletes keep
// every kept key; internal/linhash is the addressing and the entry codec,
// shared with package growing. This file is the storage: buckets of b
// slots of w bits packed with no padding into segments.
type growTable struct {
	shape      linhash.Shape
	geom       linhash.Geometry
	bucketBits uint // b·w
	oneWord    bool // a bucket is read with one unaligned 64-bit load
	is4x14     bool // 4 slots of 14 bits, 6 of them fingerprint: see contains4x14
	twoWord    bool // a bucket is read with two 64-bit loads: see pair
	bucketMask uint64
	lanes      linhash.Lanes // when oneWord
	wideLanes  swar.Lanes2   // when twoWord: the slots of a bucket read by pair

	// The buckets live in segments of 2^segShift buckets each, so that the
	// memory grows with the table instead of doubling with it.
	segShift uint
	segs     []unsafe.Pointer // each segment's first byte; see segment

	// The table splits while count exceeds limit, the split load times the
	// slots of limitFor buckets; limit is recomputed when the bucket count
	// is no longer limitFor.
	limit, limitFor uint64

	count  uint64                      // entries in the table, copies included
	byTail [linhash.MaxTailBits]uint64 // entries by tail length, for the rate estimate
	stash  []uint64                    // hashes of keys the table could not place
	path   []linhash.Node              // path-search scratch
}

func newGrowTable(buckets uint64, shape linhash.Shape) *growTable {
	t := newGrowTableShape(shape)
	t.setGeometry(buckets)
	return t
}

// newGrowTableShape returns a table of the given shape without buckets.
func newGrowTableShape(shape linhash.Shape) *growTable {
	t := &growTable{shape: shape, bucketBits: shape.Slots * shape.Bits}
	t.oneWord = t.bucketBits <= 57
	t.bucketMask = 1<<t.bucketBits - 1
	if t.oneWord {
		t.lanes = shape.Lanes()
	}
	t.is4x14 = shape.Slots == 4 && shape.Bits == 14 && shape.FPBits == 6
	// A bucket of more than 56 bits ends at least 8 bytes after its first
	// byte, so 16 bytes read from there stay within the segment's slack.
	t.twoWord = !t.oneWord && t.bucketBits <= 121
	if t.twoWord {
		t.wideLanes = swar.New2(shape.Slots, shape.Bits)
	}
	return t
}

// setGeometry empties the table and gives it the given number of buckets.
func (t *growTable) setGeometry(buckets uint64) {
	t.geom = linhash.NewGeometry(buckets)
	t.segShift = segShiftFor(t.geom.Level)
	n := (t.geom.Buckets() + 1<<t.segShift - 1) >> t.segShift
	t.segs = nil
	for range n {
		t.appendSegment(make([]byte, t.segmentBytes()))
	}
	t.count = 0
	t.byTail = [linhash.MaxTailBits]uint64{}
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

// segShiftFor returns the segment size for a table of level l
// (linhash.SegShift). Segments are uniform, so that a lookup finds its
// bucket with a shift; they merge in pairs as the table grows.
func segShiftFor(l uint) uint { return linhash.SegShift(l) }

func (t *growTable) segmentBytes() uint64 {
	return uint64(1)<<t.segShift*uint64(t.bucketBits)/8 + slack
}

func (t *growTable) buckets() uint64 { return t.geom.Buckets() }

// overloaded reports whether the entries exceed the split load, as
// count > capacity() does, with the capacity kept between splits.
func (t *growTable) overloaded() bool {
	if n := t.buckets(); n != t.limitFor {
		t.limit, t.limitFor = t.capacity(), n
	}
	return t.count > t.limit
}

// capacity returns the entries the table holds before it splits its next
// bucket.
func (t *growTable) capacity() uint64 {
	return uint64(linhash.SplitLoadAt(t.shape.Slots, t.geom) * float64(t.buckets()*uint64(t.shape.Slots)))
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

// setWord writes bucket j's slots, slot 0 in the low bits, without
// keeping the counts. Requires oneWord and j < buckets().
func (t *growTable) setWord(j uint64, v uint64) {
	// Safety: as in word.
	base := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.segs)), uintptr(j>>t.segShift)*unsafe.Sizeof(t.segs[0])))
	off := (j & (1<<t.segShift - 1)) * uint64(t.bucketBits)
	p := (*[8]byte)(unsafe.Add(base, off>>3))
	shift := off & 7
	x := binary.LittleEndian.Uint64(p[:])
	binary.LittleEndian.PutUint64(p[:], x&^(t.bucketMask<<shift)|v<<shift)
}

// pair returns bucket j's slots as the 128-bit value lo + hi·2^64, slot 0
// in the low bits; the bits after the bucket's are the next bucket's, which
// slotOf and swar.Lanes2 ignore. Requires twoWord and j < buckets().
func (t *growTable) pair(j uint64) (lo, hi uint64) {
	// Safety: as in word; the bucket ends at least 8 bytes after its first
	// byte (twoWord), so the 16 bytes read end within the slack.
	base := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.segs)), uintptr(j>>t.segShift)*unsafe.Sizeof(t.segs[0])))
	off := (j & (1<<t.segShift - 1)) * uint64(t.bucketBits)
	p := unsafe.Add(base, off>>3)
	a, b := binary.LittleEndian.Uint64((*[8]byte)(p)[:]), binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, 8))[:])
	shift := off & 7
	// b<<(63-shift)<<1 is b<<(64-shift), 0 when shift is 0, with no test
	// for a shift of 64.
	return a>>shift | b<<(63-shift)<<1, b >> shift
}

// slotOf returns slot i of a bucket read by pair.
func (t *growTable) slotOf(lo, hi uint64, i uint) uint64 {
	at := i * t.shape.Bits
	if at >= 64 {
		return hi >> (at - 64) & t.shape.SlotMask
	}
	return (lo>>at | hi<<(64-at)) & t.shape.SlotMask // hi<<64 is 0
}

// entries returns bucket j's slots, the bucket read once: with one load
// for one-word buckets, two for two-word ones, slot by slot otherwise.
func (t *growTable) entries(j uint64) (e [8]uint64) {
	switch {
	case t.oneWord:
		w := t.word(j)
		for i := range t.shape.Slots {
			e[i&7] = w >> (i * t.shape.Bits) & t.shape.SlotMask
		}
	case t.twoWord:
		lo, hi := t.pair(j)
		for i := range t.shape.Slots {
			e[i&7] = t.slotOf(lo, hi, i)
		}
	default:
		for i := range t.shape.Slots {
			e[i&7] = t.slot(j, i)
		}
	}
	return e
}

// setEntries writes bucket j's slots, e[i] into slot i, without keeping
// the counts: one store for a one-word bucket.
func (t *growTable) setEntries(j uint64, e *[8]uint64) {
	if t.oneWord {
		var w uint64
		for i := range t.shape.Slots {
			w |= e[i&7] << (i * t.shape.Bits)
		}
		t.setWord(j, w)
		return
	}
	for i := range t.shape.Slots {
		p, shift := t.slotAt(j, i)
		x := binary.LittleEndian.Uint64(p[:])
		binary.LittleEndian.PutUint64(p[:], x&^(t.shape.SlotMask<<shift)|e[i&7]<<shift)
	}
}

func (t *growTable) slot(j uint64, i uint) uint64 {
	if t.oneWord {
		return t.word(j) >> (i * t.shape.Bits) & t.shape.SlotMask
	}
	p, shift := t.slotAt(j, i)
	return binary.LittleEndian.Uint64(p[:]) >> shift & t.shape.SlotMask
}

// slotAt returns the 8 bytes that hold slot i of bucket j, j < buckets(),
// and the slot's bit offset in them.
func (t *growTable) slotAt(j uint64, i uint) (*[8]byte, uint) {
	// Safety: as in word; a slot of at most 32 bits at a bit offset below 8
	// lies within the 8 bytes read, which the segment's slack keeps inside
	// it.
	base := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.segs)), uintptr(j>>t.segShift)*unsafe.Sizeof(t.segs[0])))
	off := (j&(1<<t.segShift-1))*uint64(t.bucketBits) + uint64(i*t.shape.Bits)
	return (*[8]byte)(unsafe.Add(base, off>>3)), uint(off & 7)
}

// setSlot writes slot i of bucket j and keeps the counts.
func (t *growTable) setSlot(j uint64, i uint, s uint64) {
	p, shift := t.slotAt(j, i)
	w := binary.LittleEndian.Uint64(p[:])
	old := w >> shift & t.shape.SlotMask
	w = w&^(t.shape.SlotMask<<shift) | s<<shift
	binary.LittleEndian.PutUint64(p[:], w)
	if old != 0 {
		t.count--
		t.byTail[t.shape.TailLen(old)]--
	}
	if s != 0 {
		t.count++
		t.byTail[t.shape.TailLen(s)]++
	}
}

// free returns a free slot of bucket j, or -1.
func (t *growTable) free(j uint64) int {
	_, first := t.freeSlots(j)
	return first
}

// freeSlots returns how many slots of bucket j are free and the first of
// them, or -1, from one read of the bucket.
func (t *growTable) freeSlots(j uint64) (n, first int) {
	switch {
	case t.oneWord:
		z := t.lanes.Empty(t.word(j))
		if z == 0 {
			return 0, -1
		}
		return bits.OnesCount64(z), bits.TrailingZeros64(z) / int(t.shape.Bits)
	case t.twoWord:
		zlo, zhi := t.wideLanes.Zeros(t.pair(j))
		return t.wideLanes.Count(zlo, zhi), t.wideLanes.First(zlo, zhi)
	}
	first = -1
	e := t.entries(j)
	for i := range t.shape.Slots {
		if e[i&7] == 0 {
			if n == 0 {
				first = int(i)
			}
			n++
		}
	}
	return n, first
}
