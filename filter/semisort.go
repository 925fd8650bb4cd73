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
// are, in sorted order.
//
// A stored bucket is the code in its low 12 bits, then the four low parts,
// lane j at bit 12 + j(f-4). Lookups match without decoding (hasSemi);
// testing a bucket for room reads only its code and slot 0's low part.
// Everything else decodes: the plain one-word bucket of four f-bit lanes
// that decode gives back lets every one-word operation (the path search,
// counting, deletion) work unchanged, and a write decodes, changes a lane
// and encodes again. The code table has 3876 two-byte entries, 7.6 KiB,
// which stays in the first-level cache.

const (
	semiSlots     = 4
	nibbleBits    = 4
	semiCodeBits  = 12
	semiCodeMask  = 1<<semiCodeBits - 1
	semiCodes     = 3876 // multisets of 4 nibbles: C(16+4-1, 4)
	minSemiBits   = 5    // with 4, a slot would be its nibble alone: a 50% rate
	maxSemiBits   = 16   // four decoded lanes fill a 64-bit word; a stored bucket of 60 bits starts at most 4 bits into a byte
	semiSavedBits = nibbleBits*semiSlots - semiCodeBits
)

// semiNibbles[code] is the multiset a code names, its four nibbles sorted
// ascending from bit 0, 4 bits each. Codes from semiCodes on are invalid and
// decode to 0; every stored bucket is checked when a filter is read.
var semiNibbles [1 << semiCodeBits]uint16

// binomials[k][n] = C(n, k+1) for n < 19: the combinatorial number system
// that ranks a sorted multiset of nibbles.
var binomials [semiSlots][19]uint16

func init() {
	for n := range 19 {
		c := 1
		for k := range semiSlots {
			c = c * (n - k) / (k + 1) // C(n, k+1), 0 once k+1 > n
			binomials[k][n] = uint16(max(c, 0))
		}
	}
	for a := range 16 {
		for b := a; b < 16; b++ {
			for c := b; c < 16; c++ {
				for d := c; d < 16; d++ {
					semiNibbles[semiCode(a, b, c, d)] = uint16(a | b<<4 | c<<8 | d<<12)
				}
			}
		}
	}
}

// semiCode ranks the sorted nibbles a <= b <= c <= d: shifting them to the
// distinct values a < b+1 < c+2 < d+3 below 19, the rank is
// C(a,1) + C(b+1,2) + C(c+2,3) + C(d+3,4), which takes every value below
// semiCodes once.
func semiCode(a, b, c, d int) uint64 {
	return uint64(binomials[0][a]) + uint64(binomials[1][b+1]) + uint64(binomials[2][c+2]) + uint64(binomials[3][d+3])
}

// semiLayout fills in the fields of a semi-sorted table.
func (t *table) semiLayout() {
	t.semi = true
	t.lowBits = t.bits - nibbleBits
	t.lowMask = 1<<t.lowBits - 1
	t.lowLanes = swar.New(semiSlots, t.lowBits)
	for m := range t.spread {
		for j := range uint(semiSlots) {
			if m>>j&1 != 0 {
				// The lane's highest bit, where Zeros marks a match.
				t.spread[m] |= 1 << (j*t.lowBits + t.lowBits - 1)
			}
		}
	}
}

// decode returns the plain bucket, four lanes of f bits, that the stored
// bucket s (in its low bits; higher bits are ignored) encodes.
func (t *table) decode(s uint64) uint64 {
	nib := uint64(semiNibbles[s&semiCodeMask])
	low, lb, m := s>>semiCodeBits, t.lowBits, t.lowMask
	// Lane j takes low part j from bit j(f-4) and nibble j from bit 4j,
	// each moved up to lane j's place, j·f and j·f + f-4.
	return low&m | (low>>lb&m)<<t.bits | (low>>(2*lb)&m)<<(2*t.bits) | (low>>(3*lb)&m)<<(3*t.bits) |
		(nib&0xf)<<lb | (nib>>4&0xf)<<(t.bits+lb) | (nib>>8&0xf)<<(2*t.bits+lb) | (nib>>12)<<(3*t.bits+lb)
}

// encode returns the stored bucket of the plain bucket w, four lanes of f
// bits.
func (t *table) encode(w uint64) uint64 {
	var fp [semiSlots]uint64
	for j := range fp {
		fp[j] = w >> (uint(j) * t.bits) & t.fpMask
	}
	// A sorting network: five compare-exchanges order any four. min and
	// max compile to conditional moves; branches on random fingerprints
	// would be mispredicted half the time.
	fp[0], fp[1] = min(fp[0], fp[1]), max(fp[0], fp[1])
	fp[2], fp[3] = min(fp[2], fp[3]), max(fp[2], fp[3])
	fp[0], fp[2] = min(fp[0], fp[2]), max(fp[0], fp[2])
	fp[1], fp[3] = min(fp[1], fp[3]), max(fp[1], fp[3])
	fp[1], fp[2] = min(fp[1], fp[2]), max(fp[1], fp[2])
	lb := t.lowBits
	s := semiCode(int(fp[0]>>lb), int(fp[1]>>lb), int(fp[2]>>lb), int(fp[3]>>lb))
	for j := range fp {
		s |= (fp[j] & t.lowMask) << (semiCodeBits + uint(j)*lb)
	}
	return s
}

// store replaces the stored bucket i with s, which fits in bucketBits bits.
func (t *table) store(i uint64, s uint64) {
	off := i * uint64(t.bucketBits)
	p := t.data[off>>3:]
	shift := off & 7
	w := binary.LittleEndian.Uint64(p)
	w = w&^(t.bucketMask<<shift) | s<<shift
	binary.LittleEndian.PutUint64(p, w)
}

// hasSemi reports whether bucket i1 or i2 of a semi-sorted table holds fp.
// It decodes neither bucket. The nibble of fp is matched against the four
// nibbles of each bucket's code, in 4-bit lanes, and its low bits against the
// stored low parts in their own lanes; a slot matches when both do. The
// nibble matches are gathered into a 4-bit mask by one multiplication and
// moved to the low parts' lanes by a table of 16 words (spread). Both
// buckets are loaded before either is examined, so that their cache misses
// overlap.
func (t *table) hasSemi(i1, i2 uint64, fp uint32) bool {
	base := unsafe.Pointer(unsafe.SliceData(t.data))
	bb := uint64(t.bucketBits)
	o1, o2 := i1*bb, i2*bb
	// Safety: as in stored; bits above the bucket are ignored below.
	s1 := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(base, o1>>3))[:]) >> (o1 & 7)
	s2 := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(base, o2>>3))[:]) >> (o2 & 7)
	nib := uint64(fp>>t.lowBits) * 0x1111
	low := t.lowLanes.Broadcast(fp & uint32(t.lowMask))
	m1 := t.spread[nibbleMatches(uint64(semiNibbles[s1&semiCodeMask])^nib)]
	m2 := t.spread[nibbleMatches(uint64(semiNibbles[s2&semiCodeMask])^nib)]
	return t.lowLanes.Zeros(s1>>semiCodeBits^low)&m1|t.lowLanes.Zeros(s2>>semiCodeBits^low)&m2 != 0
}

// semiHasEmpty reports whether the stored bucket s has an empty slot: the
// smallest fingerprint, slot 0 of a sorted bucket, is 0, so its nibble (the
// code's first) and its low part are. lowMask is the table's.
func semiHasEmpty(s, lowMask uint64) bool {
	return semiNibbles[s&semiCodeMask]&0xf == 0 && s>>semiCodeBits&lowMask == 0
}

// add2Semi is add2 for a semi-sorted table: it decodes only the bucket it
// writes, and writes slot 0, which is empty in a sorted bucket that has an
// empty slot. Both buckets are read before either is tested.
func (t *table) add2Semi(i1, i2 uint64, fp uint32) bool {
	s1, s2 := t.stored(i1), t.stored(i2)
	i, s := i1, s1
	switch {
	case semiHasEmpty(s1, t.lowMask):
	case semiHasEmpty(s2, t.lowMask):
		i, s = i2, s2
	default:
		return false
	}
	t.store(i, t.encode(t.decode(s)|uint64(fp)))
	return true
}

// nibbleMatches returns the 4-bit mask of the zero nibbles of x, whose
// higher bits must be 0: bit j for nibble j. The exact zero test leaves bit
// 3 of each zero nibble; the multiplication by 2^3+2^6+2^9+2^12 moves bit
// 4j+3 to bit 15+j, and its other products fall at distinct bits below 15
// or above 18, so nothing carries into bits 15..18.
func nibbleMatches(x uint64) uint64 {
	z := ^((x&0x7777 + 0x7777) | x) & 0x8888
	return z * 0x1248 >> 15 & 0xf
}

// canonical reports whether the stored bucket s is what encode writes: a
// valid code, and low parts in the order of their fingerprints. Reading a
// filter checks every bucket with it.
func (t *table) canonical(s uint64) bool {
	return s&semiCodeMask < semiCodes && t.encode(t.decode(s)) == s
}
