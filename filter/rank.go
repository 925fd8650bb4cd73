package filter

import (
	"math/bits"
	"sync"
)

// Ranked buckets spend a fractional number of bits on each fingerprint.
// A fingerprint is a value in [1, R), R = Q·2^L, written fp = q·2^L + r
// with q < Q and r < 2^L. The four fingerprints of a bucket are kept sorted,
// so their q's are a multiset of four values out of Q, one of C(Q+3, 4),
// which a code of B = ceil(log2 C(Q+3, 4)) bits names (its rank in the
// combinatorial number system); the four r's follow in order, L bits each.
// A bucket takes B + 4L bits, (B/4 + L) bits a fingerprint against
// log2(Q) + L for the fingerprint itself: Q = 33 spends 4 bits a
// fingerprint on 5.04 bits of range.
//
// Semi-sorted buckets (semisort.go) are this with Q = 16 and B = 12. The
// ranked tables use the Q that fill B bits best, the largest with
// C(Q+3, 4) <= 2^B: 19, 23, 28 and 33 for B = 13..16. Between them they
// give ranges R a factor of 1.2 apart, which the rate follows.
//
// The rank of the sorted q1 <= q2 <= q3 <= q4 shifts them to the distinct
// values b_i = q_i + i - 1 below Q+3 and sums C(b1,1) + C(b2,2) + C(b3,3) +
// C(b4,4): every value below C(Q+3, 4) once, in the order of the sorted
// multisets read from the largest q down. Decoding is a table of 2^B
// entries of four bytes, q_j in byte j, so that a lookup matches the key's
// q against all four at once (zeroBytes); codes from C(Q+3, 4) on are
// invalid and decode to four 0s, and every bucket is checked when a filter
// is read. Q = 33 takes 256 KiB of table, built on first use.

// rankSlots is the bucket size of a ranked (or semi-sorted) table.
const rankSlots = 4

// rankQs are the Q of the ranked tables, and rankCodeBits their B.
var (
	rankQs       = [...]uint{19, 23, 28, 33}
	rankCodeBits = [...]uint{13, 14, 15, 16}
)

const (
	// minRankedLow is the least L of a ranked table: with it every Q gives
	// R >= 152. The reachable load was measured for R of 128 and more; a
	// smaller range gives a bucket fewer distinct alternates and a lower
	// load, and such rates (above 3.5%) are better served by plain buckets.
	minRankedLow = 3
	// maxRankedLow is the largest L: a bucket of 16 + 4·16 = 80 bits, a
	// rate of about 3.6e-6 at Q = 33. Plain buckets serve lower rates.
	maxRankedLow = 16
	// rankedDesignLoad is the load ranked tables are sized for: the first
	// insert that needed the victim slot came at 0.970-0.973 over seeds,
	// ranges 128..300 and tables of 10^6 and 8·10^6 keys (with
	// hashing.AltMixed; TestLoadExperimentRanked), and the margin is that
	// of the plain tables, whose 95% is a point below their 96%.
	rankedDesignLoad = 0.96
)

// rankCodec ranks and unranks sorted multisets of four values below q.
type rankCodec struct {
	q        uint
	codeBits uint
	codes    uint32 // C(q+3, 4), the valid codes
	// lanes[code] is the multiset a code names, sorted ascending, value j
	// in byte j; invalid codes give 0.
	lanes []uint32
	// binomials[k][n] = C(n, k+1) for n < q+3.
	binomials [rankSlots][]uint32
}

// rank returns the code of the sorted values a <= b <= c <= d < q.
func (c *rankCodec) rank(a, b, d3, d4 uint32) uint32 {
	return c.binomials[0][a] + c.binomials[1][b+1] + c.binomials[2][d3+2] + c.binomials[3][d4+3]
}

func newRankCodec(q, codeBits uint) *rankCodec {
	c := &rankCodec{q: q, codeBits: codeBits}
	for k := range rankSlots {
		c.binomials[k] = make([]uint32, q+3)
		for n := range q + 3 {
			c.binomials[k][n] = uint32(binomial(n, uint(k)+1))
		}
	}
	c.codes = uint32(binomial(q+3, rankSlots))
	if c.codes > 1<<codeBits {
		panic("filter: rank codes do not fit their bits")
	}
	c.lanes = make([]uint32, 1<<codeBits)
	for a := range uint32(q) {
		for b := a; b < uint32(q); b++ {
			for d3 := b; d3 < uint32(q); d3++ {
				for d4 := d3; d4 < uint32(q); d4++ {
					c.lanes[c.rank(a, b, d3, d4)] = a | b<<8 | d3<<16 | d4<<24
				}
			}
		}
	}
	return c
}

// binomial returns C(n, k).
func binomial(n, k uint) uint64 {
	if k > n {
		return 0
	}
	c := uint64(1)
	for i := range k {
		c = c * uint64(n-i) / uint64(i+1)
	}
	return c
}

// codecs holds the codec of each Q, built on first use: semi-sorted
// tables' Q = 16 and the ranked ones.
var codecs = func() map[uint]*lazyCodec {
	m := map[uint]*lazyCodec{semiQ: {q: semiQ, codeBits: semiCodeBits}}
	for k, q := range rankQs {
		m[q] = &lazyCodec{q: q, codeBits: rankCodeBits[k]}
	}
	return m
}()

type lazyCodec struct {
	once     sync.Once
	q        uint
	codeBits uint
	c        *rankCodec
}

// codecFor returns the codec of q, one of semiQ and rankQs.
func codecFor(q uint) *rankCodec {
	l := codecs[q]
	l.once.Do(func() { l.c = newRankCodec(l.q, l.codeBits) })
	return l.c
}

// rankCodeBitsFor returns B for q, 0 if q is not a ranked table's Q.
func rankCodeBitsFor(q uint) uint {
	for k, rq := range rankQs {
		if rq == q {
			return rankCodeBits[k]
		}
	}
	return 0
}

// qBits returns the bits a value below q takes, ceil(log2 q).
func qBits(q uint) uint { return uint(bits.Len(q - 1)) }

// zeroBytes returns bit 8j+7 set for each zero byte j of x, every other
// bit clear. It is exact: the sums x&0x7f7f7f7f + 0x7f7f7f7f never carry
// out of a byte.
func zeroBytes(x uint32) uint64 {
	return uint64(^((x&0x7f7f7f7f + 0x7f7f7f7f) | x) & 0x80808080)
}

// slotGather moves the match bit of each slot of a coded bucket, found at
// bit 8j+7 by zeroBytes for the high parts and at the top of low lane j by
// Zeros for the low parts, to one bit P_j, by multiplying each by its own
// constant; ANDing the two products under mask then leaves the slots where
// both parts match. Each constant shifts bit j's copy to P_j, and its other
// copies land off every P_k and never on one another, so nothing carries
// (newSlotGather checks every pattern). This replaces decoding with two
// independent multiplications.
type slotGather struct {
	bytes, lows uint64 // the multipliers of zeroBytes' and Zeros' words
	mask        uint64 // the bits P_j
}

// newSlotGather returns the gather for low lanes of lowBits bits, with the
// P_j evenly spaced: consecutive bits, on which stray copies never land
// when lanes are at least 4 bits wide, or for narrower lanes the closest
// spacing that works.
func newSlotGather(lowBits uint) slotGather {
	for spacing := uint(1); spacing <= 16; spacing++ {
		// P_0 is the least that lets every P_j lie at or above both of
		// slot j's match bits, since a product only shifts up.
		var p0 uint
		for j := range uint(rankSlots) {
			p0 = max(p0, 8*j+7-min(8*j+7, spacing*j), j*lowBits+lowBits-1-min(j*lowBits+lowBits-1, spacing*j))
		}
		if p0+spacing*(rankSlots-1) >= 64 {
			continue
		}
		var g slotGather
		var at [rankSlots]uint64 // bit P_j
		for j := range uint(rankSlots) {
			p := p0 + spacing*j
			at[j] = 1 << p
			g.bytes |= 1 << (p - 8*j - 7)
			g.lows |= 1 << (p - j*lowBits - lowBits + 1)
			g.mask |= 1 << p
		}
		ok := true
		for m := range uint64(1) << rankSlots {
			var b, l, want uint64
			for j := range uint(rankSlots) {
				if m>>j&1 != 0 {
					b |= 1 << (8*j + 7)
					l |= 1 << (j*lowBits + lowBits - 1)
					want |= at[j]
				}
			}
			ok = ok && b*g.bytes&g.mask == want && l*g.lows&g.mask == want
		}
		if ok {
			return g
		}
	}
	panic("filter: no slot gather for low lanes of this width")
}

// sort4 sorts four fingerprints with a sorting network: five
// compare-exchanges order any four. min and max compile to conditional
// moves; branches on random fingerprints would be mispredicted half the
// time.
func sort4(fp *[rankSlots]uint32) {
	fp[0], fp[1] = min(fp[0], fp[1]), max(fp[0], fp[1])
	fp[2], fp[3] = min(fp[2], fp[3]), max(fp[2], fp[3])
	fp[0], fp[2] = min(fp[0], fp[2]), max(fp[0], fp[2])
	fp[1], fp[3] = min(fp[1], fp[3]), max(fp[1], fp[3])
	fp[1], fp[2] = min(fp[1], fp[2]), max(fp[1], fp[2])
}
