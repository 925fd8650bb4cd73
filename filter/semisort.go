package filter

import (
	"encoding/binary"
	"unsafe"

	"github.com/cuckoohash/cuckoo/internal/swar"
)

// Semi-sorted buckets (Fan et al., section 5.2) store a bucket of four f-bit
// fingerprints in 4f-4 bits. The order of a bucket's slots carries no
// information, so a bucket is kept sorted, and the top 4 bits of its four
// fingerprints (their nibbles) are then a multiset of four values out of
// 16: C(19, 4) = 3876 of them, which one 12-bit code names instead of 16
// bits of nibbles. The f-4 low bits of each fingerprint are stored as they
// are, in sorted order. That is a ranked bucket (rank.go) with Q = 16 and
// L = f-4, and the two share all the code of this file; they differ in
// their Q, their code's width and their alternate bucket.
//
// A stored bucket is the code in its low B bits, then the four low parts,
// lane j at bit B + jL. Lookups of one-word buckets match without decoding
// (hasCoded); testing a bucket for room reads only its code and slot 0's
// low part. Everything else decodes: the plain bucket of four lanes of f
// bits (f = L + ceil(log2 Q)) that decode gives back lets every one-word
// operation (the path search, counting, deletion) work unchanged, and a
// write decodes, changes a lane and encodes again. Ranked buckets wider
// than a word (lanesOf, setLanes) are decoded into four fingerprints and
// read slot by slot, as plain wide buckets are.

const (
	semiQ         = 16
	semiCodeBits  = 12
	minSemiBits   = 5  // with 4, a slot would be its nibble alone: a 50% rate
	maxSemiBits   = 16 // four decoded lanes fill a 64-bit word; a stored bucket of 60 bits starts at most 4 bits into a byte
	semiSavedBits = 4*rankSlots - semiCodeBits
)

// codedLayout fills in the fields of a semi-sorted or ranked table.
func (t *table) codedLayout(s shape) {
	t.coded, t.ranked = true, s.q != 0
	q := uint(semiQ)
	if t.ranked {
		q = s.q
	}
	t.codec = codecFor(q)
	t.codeBits = t.codec.codeBits
	t.codeMask = 1<<t.codeBits - 1
	t.lowBits = t.bits - qBits(q)
	t.lowMask = 1<<t.lowBits - 1
	if 4*t.lowBits > 64 {
		return // a wide bucket, never matched in lanes
	}
	t.lowLanes = swar.New(rankSlots, t.lowBits)
	t.gather = newSlotGather(t.lowBits)
}

// decode returns the plain bucket, four lanes of f bits, that the stored
// one-word bucket s (in its low bits; higher bits are ignored) encodes.
func (t *table) decode(s uint64) uint64 {
	q := uint64(t.codec.lanes[s&t.codeMask])
	low, lb, m := s>>t.codeBits, t.lowBits, t.lowMask
	// Lane j takes low part j from bit jL and q_j from byte j, each moved
	// up to lane j's place, j·f and j·f + L.
	return low&m | (low>>lb&m)<<t.bits | (low>>(2*lb)&m)<<(2*t.bits) | (low>>(3*lb)&m)<<(3*t.bits) |
		(q&0xff)<<lb | (q>>8&0xff)<<(t.bits+lb) | (q>>16&0xff)<<(2*t.bits+lb) | (q>>24)<<(3*t.bits+lb)
}

// encode returns the stored bucket of the plain bucket w, four lanes of f
// bits. Requires oneWord.
func (t *table) encode(w uint64) uint64 {
	var fp [rankSlots]uint32
	for j := range fp {
		fp[j] = uint32(w >> (uint(j) * t.bits) & t.fpMask)
	}
	sort4(&fp)
	lb := t.lowBits
	s := uint64(t.codec.rank(fp[0]>>lb, fp[1]>>lb, fp[2]>>lb, fp[3]>>lb))
	for j := range fp {
		s |= (uint64(fp[j]) & t.lowMask) << (t.codeBits + uint(j)*lb)
	}
	return s
}

// store replaces the stored one-word bucket i with s, which fits in
// bucketBits bits.
func (t *table) store(i uint64, s uint64) {
	t.writeBits(i*uint64(t.bucketBits), t.bucketMask, s)
}

// readBits returns the n <= 57 bits at bit off of the table.
func (t *table) readBits(off uint64, n uint) uint64 {
	return binary.LittleEndian.Uint64(t.data[off>>3:]) >> (off & 7) & (1<<n - 1)
}

// writeBits replaces the bits under mask << (off mod 8), the mask at most
// 57 bits wide, at bit off with v, which fits in mask.
func (t *table) writeBits(off, mask, v uint64) {
	p := t.data[off>>3:]
	shift := off & 7
	w := binary.LittleEndian.Uint64(p)
	binary.LittleEndian.PutUint64(p, w&^(mask<<shift)|v<<shift)
}

// head returns at least the first 57 bits of bucket i, unmasked: a whole
// one-word bucket, or a wide one's code and the low part of slot 0 (B + L
// <= 32 bits). Requires i < buckets.
func (t *table) head(i uint64) uint64 {
	off := i * uint64(t.bucketBits)
	// Safety: as in stored.
	p := (*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.data)), off>>3))
	return binary.LittleEndian.Uint64(p[:]) >> (off & 7)
}

// lanesOf returns the four fingerprints of coded bucket i, ascending.
func (t *table) lanesOf(i uint64) [rankSlots]uint32 {
	off := i * uint64(t.bucketBits)
	q := t.codec.lanes[t.readBits(off, t.codeBits)]
	off += uint64(t.codeBits)
	var fp [rankSlots]uint32
	for j := range fp {
		fp[j] = q>>(8*j)&0xff<<t.lowBits | uint32(t.readBits(off+uint64(j)*uint64(t.lowBits), t.lowBits))
	}
	return fp
}

// setLanes stores the four fingerprints fp, in any order, as coded bucket
// i.
func (t *table) setLanes(i uint64, fp [rankSlots]uint32) {
	sort4(&fp)
	lb := t.lowBits
	off := i * uint64(t.bucketBits)
	t.writeBits(off, uint64(t.codeMask), uint64(t.codec.rank(fp[0]>>lb, fp[1]>>lb, fp[2]>>lb, fp[3]>>lb)))
	off += uint64(t.codeBits)
	for j := range fp {
		t.writeBits(off+uint64(j)*uint64(lb), t.lowMask, uint64(fp[j])&t.lowMask)
	}
}

// hasCoded reports whether one-word bucket i1 or i2 of a coded table holds
// fp. It decodes neither bucket. The high part q of fp is matched against
// the four values of each bucket's code (its entry in the code table, one
// value a byte) in byte lanes, and its low bits against the stored low
// parts in their own lanes; the two words of matches are gathered to
// common bits (slotGather), where a slot matches when both parts do. Both
// buckets are loaded before either is examined, so that their cache misses
// overlap.
func (t *table) hasCoded(i1, i2 uint64, fp uint32) bool {
	s1, s2 := t.head(i1), t.head(i2)
	q, low := t.query(fp)
	return (t.slotMatches(t.codeEntry(s1), s1, q, low)|t.slotMatches(t.codeEntry(s2), s2, q, low))&t.gather.mask != 0
}

// codeEntry returns the code table's entry for stored bucket s: its four
// high parts, q_j in byte j.
func (t *table) codeEntry(s uint64) uint32 { return t.codec.lanes[s&t.codeMask] }

// query returns fp's high part in four byte lanes and its low part in the
// four low lanes, to match against buckets (slotMatches). Here and there,
// shift counts are masked to the word (lowBits ≤ 12, codeBits < 64): it
// spares the three instructions Go adds to a shift that may reach the
// width.
func (t *table) query(fp uint32) (uint32, uint64) {
	return fp >> (t.lowBits & 31) * 0x01010101, t.lowLanes.Broadcast(fp & uint32(t.lowMask))
}

// slotMatches returns the gathered bits of the slots of stored bucket s,
// whose code table entry is e, that hold the fingerprint query returned q
// and low for; only the bits of gather.mask are meaningful. Bits of s above
// the bucket are ignored.
func (t *table) slotMatches(e uint32, s uint64, q uint32, low uint64) uint64 {
	return zeroBytes(e^q) * t.gather.bytes & (t.lowLanes.Zeros(s>>(t.codeBits&63)^low) * t.gather.lows)
}

// hasWide reports whether wide coded bucket i1 or i2 holds fp.
func (t *table) hasWide(i1, i2 uint64, fp uint32) bool {
	l1, l2 := t.lanesOf(i1), t.lanesOf(i2)
	hit := false
	for j := range l1 {
		hit = hit || l1[j] == fp || l2[j] == fp
	}
	return hit
}

// codedHasEmpty reports whether coded bucket i has an empty slot.
func (t *table) codedHasEmpty(i uint64) bool { return t.headEmpty(t.head(i)) }

// headEmpty reports whether the coded bucket whose head (or whole stored
// one-word bucket) is h has an empty slot: the smallest fingerprint, slot
// 0 of a sorted bucket, is 0, so its q (the code's first) and its low part
// are.
func (t *table) headEmpty(h uint64) bool {
	return t.codeEntry(h)&0xff == 0 && h>>t.codeBits&t.lowMask == 0
}

// add2Coded is add2 for a one-word coded table: it writes slot 0, which is
// empty in a sorted bucket that has an empty slot, of the first bucket
// with room. Both buckets are read before either is tested.
func (t *table) add2Coded(i1, i2 uint64, fp uint32) bool {
	s1, s2 := t.stored(i1), t.stored(i2)
	i, s := i1, s1
	switch {
	case t.headEmpty(s1):
	case t.headEmpty(s2):
		i, s = i2, s2
	default:
		return false
	}
	t.store(i, t.withAdded(s, fp))
	return true
}

// withAdded returns stored one-word bucket s, whose slot 0 is empty, with
// fp in place of that slot. It inserts fp among slots 1-3, which are
// sorted, with conditional moves, and codes the result; no decode to
// plain lanes or full sort is needed.
func (t *table) withAdded(s uint64, fp uint32) uint64 {
	e, lb, m := t.codeEntry(s), t.lowBits, uint32(t.lowMask)
	low := s >> t.codeBits >> lb // slots 1-3's low parts, up to 33 bits
	f1 := e>>8&0xff<<lb | uint32(low)&m
	f2 := e>>16&0xff<<lb | uint32(low>>lb)&m
	f3 := e>>24<<lb | uint32(low>>(2*lb))&m
	a, b, c, d := min(fp, f1), min(max(fp, f1), f2), min(max(fp, f2), f3), max(fp, f3)
	out := uint64(a&m) | uint64(b&m)<<lb | uint64(c&m)<<(2*lb) | uint64(d&m)<<(3*lb)
	return out<<t.codeBits | uint64(t.codec.rank(a>>lb, b>>lb, c>>lb, d>>lb))
}

// canonical reports whether coded bucket i is what a write stores: a valid
// code, and fingerprints in ascending order. Reading a filter checks every
// bucket with it.
func (t *table) canonical(i uint64) bool {
	if uint32(t.readBits(i*uint64(t.bucketBits), t.codeBits)) >= t.codec.codes {
		return false
	}
	fp := t.lanesOf(i)
	return fp[0] <= fp[1] && fp[1] <= fp[2] && fp[2] <= fp[3]
}
