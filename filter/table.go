package filter

import (
	"encoding/binary"
	"unsafe"

	"github.com/cuckoohash/cuckoo/internal/hashing"
	"github.com/cuckoohash/cuckoo/internal/swar"
)

// slack is the number of bytes kept after the packed slots so that any slot
// or one-word bucket can be read with a single unaligned 64-bit load.
const slack = 8

// shape is what a table's buckets hold.
type shape struct {
	slots uint // b
	// bits is f: the bits of a fingerprint, or of a decoded lane of a
	// ranked bucket, ceil(log2 R).
	bits uint
	semi bool // semi-sorted buckets: Q = 16, B = 12
	// q is the Q of ranked buckets (rank.go), 0 for the other tables.
	// Ranked tables take the alternate bucket from hashing.AltMixed.
	q uint
}

// lowBits returns L, the bits of a coded bucket's low parts.
func (s shape) lowBits() uint {
	switch {
	case s.q != 0:
		return s.bits - qBits(s.q)
	case s.semi:
		return s.bits - qBits(semiQ)
	}
	return 0
}

// fpMax returns the largest fingerprint, R-1: fingerprints take the values
// 1..R-1, R = 2^f, or Q·2^L ranked.
func (s shape) fpMax() uint64 {
	if s.q != 0 {
		return uint64(s.q)<<s.lowBits() - 1
	}
	return 1<<s.bits - 1
}

// bucketBits returns the bits a stored bucket takes: b·f plain, 4f-4
// semi-sorted, B + 4L ranked.
func (s shape) bucketBits() uint {
	switch {
	case s.q != 0:
		return rankCodeBitsFor(s.q) + rankSlots*s.lowBits()
	case s.semi:
		return s.slots*s.bits - semiSavedBits
	}
	return s.slots * s.bits
}

// designLoad returns the load the shape's tables are sized for.
func (s shape) designLoad() float64 {
	if s.q != 0 {
		return rankedDesignLoad
	}
	return designLoad(s.slots, s.bits)
}

// table is m buckets of b slots of f bits, packed with no padding: slot j of
// bucket i occupies bits [(i*b+j)*f, (i*b+j+1)*f) of data, little-endian.
// A slot holding 0 is empty. A semi-sorted or ranked table (coded) packs
// its buckets of four slots in B + 4L bits instead (semisort.go, rank.go);
// its slots are those of the decoded bucket, whose order a write may
// change.
type table struct {
	data       []byte     // ceil(m*bucketBits/8) bytes of buckets, then slack
	buckets    uint64     // m
	slots      uint       // b
	bits       uint       // f
	bucketBits uint       // the bits a stored bucket takes: b*f, or B + 4L coded
	fpMask     uint64     // 2^f - 1, a lane's bits
	fpMax      uint64     // R-1, the largest fingerprint
	coded      bool       // semi-sorted or ranked
	ranked     bool       // ranked: the alternate bucket is hashing.AltMixed
	codec      *rankCodec // coded: the code table of Q
	codeBits   uint       // coded: B
	codeMask   uint64     // coded: 1<<B - 1
	lowBits    uint       // coded: L, the bits of a fingerprint below its q
	lowMask    uint64     // coded: 1<<L - 1
	lowLanes   swar.Lanes // coded: the stored low parts, 4 lanes of L bits
	gather     slotGather // coded: hasCoded's slot match
	// oneWord is set when every bucket can be read with one 64-bit load at
	// its byte offset (its bits plus the offset within the byte fit), and
	// decoded, four lanes of f bits, fits a word too.
	oneWord bool
	// is4x12 marks the default benchmark shape, 4 slots of 12 bits (6-byte,
	// byte-aligned buckets), whose lookup has its constants folded in.
	is4x12     bool
	bucketMask uint64
	lanes      swar.Lanes
}

func newTable(buckets uint64, s shape) table {
	t := tableLayout(buckets, s)
	t.data = make([]byte, packedBytes(buckets, t.bucketBits)+slack)
	return t
}

// tableLayout returns a table without its slot storage. A semi-sorted table
// requires 4 slots of minSemiBits..maxSemiBits bits, a ranked one 4 slots,
// a Q of rankQs and L in minRankedLow..maxRankedLow.
func tableLayout(buckets uint64, s shape) table {
	t := table{
		buckets:    buckets,
		slots:      s.slots,
		bits:       s.bits,
		bucketBits: s.bucketBits(),
		fpMask:     1<<s.bits - 1,
		fpMax:      s.fpMax(),
	}
	if s.semi || s.q != 0 {
		t.codedLayout(s)
	}
	// Bucket i starts i·B mod 8 bits into a byte, a multiple of gcd(B, 8):
	// at most 8 - gcd(B, 8) bits, after which B bits must fit in 64.
	t.oneWord = t.bucketBits+8-gcd8(t.bucketBits) <= 64 && s.slots*s.bits <= 64
	t.is4x12 = s.slots == 4 && s.bits == 12 && !t.coded
	if t.oneWord {
		t.bucketMask = 1<<t.bucketBits - 1 // 1<<64 - 1 wraps to all ones
		t.lanes = swar.New(s.slots, s.bits)
	}
	return t
}

// alt returns the other bucket of fingerprint fp in bucket i.
func (t *table) alt(i uint64, fp uint32) uint64 {
	if t.ranked {
		return t.altRanked(i, fp)
	}
	return hashing.Alt(i, fp, t.buckets)
}

// altRanked is alt for a ranked table, small enough to inline in a loop
// that knows the table is ranked.
func (t *table) altRanked(i uint64, fp uint32) uint64 { return hashing.AltMixed(i, fp, t.buckets) }

// gcd8 returns gcd(b, 8) for b > 0: the largest power of two, up to 8, that
// divides b.
func gcd8(b uint) uint { return min(b&-b, 8) }

// packedBytes returns the bytes that m buckets of bucketBits bits occupy.
func packedBytes(buckets uint64, bucketBits uint) uint64 {
	return (buckets*uint64(bucketBits) + 7) / 8
}

// word returns bucket i's slots, slot 0 in the low bits, decoded if the
// table is coded. Requires oneWord and i < buckets.
func (t *table) word(i uint64) uint64 {
	s := t.stored(i)
	if t.coded {
		return t.decode(s)
	}
	return s
}

// stored returns bucket i as stored, in the low bucketBits bits. Requires
// oneWord and i < buckets.
func (t *table) stored(i uint64) uint64 {
	off := i * uint64(t.bucketBits)
	// Safety: i < buckets, so the bucket starts at byte off/8 and ends within
	// the packed buckets; the slack bytes after them keep all 8 bytes read
	// inside data. Every bucket index comes from hashing.Index or
	// hashing.Alt, which return values below buckets.
	p := (*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.data)), off>>3))
	return binary.LittleEndian.Uint64(p[:]) >> (off & 7) & t.bucketMask
}

// has4x12 reports whether bucket i1 or i2 of a 4x12 table holds fp. It is
// the one-word lookup with the shape's constants folded in.
func (t *table) has4x12(i1, i2 uint64, fp uint32) bool {
	base := unsafe.Pointer(unsafe.SliceData(t.data))
	// Safety: as in word; a 4x12 bucket is the 6 bytes at 6i. The two bytes
	// of the next bucket that each load also reads are ignored by Has2x4x12.
	w1 := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(base, i1*6))[:])
	w2 := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(base, i2*6))[:])
	return swar.Has2x4x12(w1, w2, fp)
}

// slot returns the fingerprint in slot j of bucket i.
func (t *table) slot(i uint64, j uint) uint32 {
	if t.coded {
		if !t.oneWord {
			return t.lanesOf(i)[j]
		}
		return uint32(t.word(i) >> (j * t.bits) & t.fpMask)
	}
	off := (i*uint64(t.slots) + uint64(j)) * uint64(t.bits)
	return uint32(binary.LittleEndian.Uint64(t.data[off>>3:]) >> (off & 7) & t.fpMask)
}

// setSlot stores fp in slot j of bucket i. In a coded table it sorts the
// bucket again, so the other slots' indexes may change too.
func (t *table) setSlot(i uint64, j uint, fp uint32) {
	if t.coded {
		if !t.oneWord {
			l := t.lanesOf(i)
			l[j] = fp
			t.setLanes(i, l)
			return
		}
		t.setLane(i, t.word(i), j, fp)
		return
	}
	off := (i*uint64(t.slots) + uint64(j)) * uint64(t.bits)
	p := t.data[off>>3:]
	shift := off & 7
	w := binary.LittleEndian.Uint64(p)
	w = w&^(t.fpMask<<shift) | uint64(fp)<<shift
	binary.LittleEndian.PutUint64(p, w)
}

// contains reports whether bucket i holds fp.
func (t *table) contains(i uint64, fp uint32) bool {
	if t.oneWord {
		return t.lanes.Has(t.word(i), fp)
	}
	return t.find(i, fp) >= 0
}

// count returns the number of copies of fp in bucket i.
func (t *table) count(i uint64, fp uint32) int {
	if t.oneWord {
		return t.lanes.Count(t.word(i), fp)
	}
	n := 0
	if t.coded {
		for _, v := range t.lanesOf(i) { // decoded once
			if v == fp {
				n++
			}
		}
		return n
	}
	for j := range t.slots {
		if t.slot(i, j) == fp {
			n++
		}
	}
	return n
}

// find returns the first slot of bucket i holding fp, or -1. With fp 0 it
// finds an empty slot.
func (t *table) find(i uint64, fp uint32) int {
	if t.oneWord {
		return t.lanes.First(t.word(i), fp)
	}
	if t.coded {
		for j, v := range t.lanesOf(i) { // decoded once
			if v == fp {
				return j
			}
		}
		return -1
	}
	for j := range t.slots {
		if t.slot(i, j) == fp {
			return int(j)
		}
	}
	return -1
}

// hasEmpty reports whether bucket i has a free slot.
func (t *table) hasEmpty(i uint64) bool {
	if t.coded {
		return t.codedHasEmpty(i)
	}
	if t.oneWord {
		return t.lanes.HasZero(t.word(i))
	}
	return t.find(i, 0) >= 0
}

// add stores fp in a free slot of bucket i and reports whether there was one.
func (t *table) add(i uint64, fp uint32) bool { return t.replace(i, 0, fp) }

// replace stores fp in a slot of bucket i that holds old and reports
// whether there was one. A one-word bucket is read (and decoded) once.
func (t *table) replace(i uint64, old, fp uint32) bool {
	if t.oneWord {
		w := t.word(i)
		j := t.lanes.First(w, old)
		if j < 0 {
			return false
		}
		t.setLane(i, w, uint(j), fp)
		return true
	}
	j := t.find(i, old)
	if j < 0 {
		return false
	}
	t.setSlot(i, uint(j), fp)
	return true
}

// add2 stores fp in a free slot of bucket i1, or else of bucket i2, and
// reports whether either had one. One-word buckets are both read before
// either is tested, so that the two cache misses overlap.
func (t *table) add2(i1, i2 uint64, fp uint32) bool {
	if !t.oneWord {
		return t.add(i1, fp) || t.add(i2, fp)
	}
	if t.coded {
		return t.add2Coded(i1, i2, fp)
	}
	w1, w2 := t.word(i1), t.word(i2)
	if j := t.lanes.First(w1, 0); j >= 0 {
		t.setLane(i1, w1, uint(j), fp)
		return true
	}
	if j := t.lanes.First(w2, 0); j >= 0 {
		t.setLane(i2, w2, uint(j), fp)
		return true
	}
	return false
}

// setLane stores fp in slot j of bucket i, whose slots are w (word(i)),
// sparing a coded table a second decoding. Requires oneWord.
func (t *table) setLane(i, w uint64, j uint, fp uint32) {
	if t.coded {
		t.store(i, t.encode(w&^(t.fpMask<<(j*t.bits))|uint64(fp)<<(j*t.bits)))
		return
	}
	t.setSlot(i, j, fp)
}

// remove clears one slot of bucket i holding fp and reports whether there was
// one.
func (t *table) remove(i uint64, fp uint32) bool { return t.replace(i, fp, 0) }

// reset empties every slot.
func (t *table) reset() { clear(t.data) }

// packed returns the bucket bytes without the slack.
func (t *table) packed() []byte { return t.data[:len(t.data)-slack] }
