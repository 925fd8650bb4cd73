package filter

import (
	"github.com/cuckoohash/cuckoo/internal/swar"
	"math/rand/v2"
	"slices"
	"testing"
)

// codedQs are the Q of every coded table: semi-sorted and ranked.
var codedQs = append([]uint{semiQ}, rankQs[:]...)

// TestRankCodes checks each code table against its definition, exhaustively:
// every sorted multiset of four values below Q has one code below
// C(Q+3, 4), every code decodes to the multiset it names, and the invalid
// codes up to 2^B decode to 0.
func TestRankCodes(t *testing.T) {
	for _, q := range codedQs {
		c := codecFor(q)
		seen := make([]bool, c.codes)
		n := 0
		for a := range uint32(q) {
			for b := a; b < uint32(q); b++ {
				for d3 := b; d3 < uint32(q); d3++ {
					for d4 := d3; d4 < uint32(q); d4++ {
						code := c.rank(a, b, d3, d4)
						if code >= c.codes || seen[code] {
							t.Fatalf("Q=%d: code %d of %d,%d,%d,%d: out of range or taken", q, code, a, b, d3, d4)
						}
						seen[code] = true
						n++
						if got, want := c.lanes[code], a|b<<8|d3<<16|d4<<24; got != want {
							t.Fatalf("Q=%d: code %d decodes to %#08x, want %#08x", q, code, got, want)
						}
					}
				}
			}
		}
		if uint64(n) != binomial(q+3, 4) || len(c.lanes) != 1<<c.codeBits {
			t.Fatalf("Q=%d: %d codes, want C(%d, 4) = %d; a table of %d, want 2^%d", q, n, q+3, binomial(q+3, 4), len(c.lanes), c.codeBits)
		}
		for code := c.codes; code < uint32(len(c.lanes)); code++ {
			if c.lanes[code] != 0 {
				t.Fatalf("Q=%d: invalid code %d decodes to %#08x", q, code, c.lanes[code])
			}
		}
		t.Logf("Q=%d: %d codes in %d bits (%.4f of the code space)", q, n, c.codeBits, float64(n)/float64(len(c.lanes)))
	}
	// The Q are the largest that fit their B, which is the least for them.
	for k, q := range rankQs {
		b := rankCodeBits[k]
		if binomial(q+3, 4) > 1<<b || binomial(q+4, 4) <= 1<<b || binomial(q+3, 4) <= 1<<(b-1) {
			t.Errorf("Q=%d does not fill B=%d: C(Q+3, 4) = %d", q, b, binomial(q+3, 4))
		}
	}
}

// TestZeroBytes checks zeroBytes on every pattern of zero and nonzero
// bytes, the nonzero ones drawn from values that defeat inexact tests.
func TestZeroBytes(t *testing.T) {
	vals := []uint32{1, 0x7f, 0x80, 0x81, 0xff, 0x01}
	r := rand.New(rand.NewPCG(1, 2))
	for m := range uint64(16) {
		for range 200 {
			var x uint32
			for j := range 4 {
				if m>>j&1 == 0 {
					x |= vals[r.IntN(len(vals))] << (8 * j)
				}
			}
			var want uint64
			for j := range 4 {
				want |= m >> j & 1 << (8*j + 7)
			}
			if got := zeroBytes(x); got != want {
				t.Fatalf("zeroBytes(%#08x) = %#x, want %#x", x, got, want)
			}
		}
	}
}

// TestSlotGather checks, for every width of low lanes a one-word coded
// table has, that the gathered matches of random buckets are the slots
// whose high and low parts both match, against a slot-by-slot comparison.
func TestSlotGather(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for lowBits := uint(1); lowBits <= maxSemiBits-4; lowBits++ {
		g := newSlotGather(lowBits)
		lanes := swar.New(rankSlots, lowBits)
		for range 20000 {
			// Few distinct values, so that slots often match.
			var highs uint32
			var lows uint64
			qs, rs := [rankSlots]uint32{}, [rankSlots]uint64{}
			for j := range rankSlots {
				qs[j], rs[j] = uint32(r.IntN(3)), uint64(r.IntN(3))&(1<<lowBits-1)
				highs |= qs[j] << (8 * j)
				lows |= rs[j] << (uint(j) * lowBits)
			}
			q, low := uint32(r.IntN(3)), uint64(r.IntN(3))&(1<<lowBits-1)
			want := false
			for j := range rankSlots {
				want = want || qs[j] == q && rs[j] == low
			}
			got := zeroBytes(highs^q*0x01010101)*g.bytes&(lanes.Zeros(lows^lanes.Broadcast(uint32(low)))*g.lows)&g.mask != 0
			if got != want {
				t.Fatalf("L=%d: high parts %#08x, low parts %#x, query (%d, %d): gathered %v, want %v", lowBits, highs, lows, q, low, got, want)
			}
		}
	}
}

// codedShapes are a semi-sorted table of every width and a ranked one of
// every Q and L.
func codedShapes() []shape {
	var out []shape
	for bits := uint(minSemiBits); bits <= maxSemiBits; bits++ {
		out = append(out, shape{slots: rankSlots, bits: bits, semi: true})
	}
	for _, q := range rankQs {
		for low := uint(minRankedLow); low <= maxRankedLow; low++ {
			out = append(out, shape{slots: rankSlots, bits: low + qBits(q), q: q})
		}
	}
	return out
}

// TestCodedRoundTrip stores random buckets, with empty slots and repeated
// fingerprints, in coded tables of every shape, between two random
// neighbours: each bucket takes its B + 4L bits and leaves its neighbours
// alone, is canonical, and decodes to its fingerprints in ascending order,
// by every path (lanesOf, slot, and for one-word buckets decode); inserting
// into a one-word bucket with room (withAdded) agrees with decoding; and the
// lookups that do not decode (hasCoded, hasWide) agree with the decoded
// bucket.
func TestCodedRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range codedShapes() {
		tb := newTable(3, s)
		if tb.bucketBits != s.bucketBits() || s.semi && tb.bucketBits != 4*s.bits-4 {
			t.Fatalf("%+v: bucket of %d bits", s, tb.bucketBits)
		}
		if s.semi && !tb.oneWord {
			t.Fatalf("%+v: a semi-sorted bucket is not one word", s)
		}
		random := func() [rankSlots]uint32 {
			var fp [rankSlots]uint32
			for j := range fp {
				switch r.IntN(4) {
				case 0: // empty
				case 1:
					fp[j] = fp[r.IntN(rankSlots)] // a repeat, or empty
				default:
					fp[j] = uint32(1 + r.Uint64N(tb.fpMax))
				}
			}
			return fp
		}
		for range 3000 {
			fp, before, after := random(), random(), random()
			tb.setLanes(0, before)
			tb.setLanes(2, after)
			if tb.oneWord {
				var w uint64
				for j, v := range fp {
					w |= uint64(v) << (uint(j) * s.bits)
				}
				tb.store(1, tb.encode(w))
			} else {
				tb.setLanes(1, fp)
			}
			want := fp
			slices.Sort(want[:])
			for i, b := range [][rankSlots]uint32{before, want, after} {
				slices.Sort(b[:])
				if got := tb.lanesOf(uint64(i)); got != b || !tb.canonical(uint64(i)) {
					t.Fatalf("%+v: bucket %d holds %v (canonical %v), want %v", s, i, got, tb.canonical(uint64(i)), b)
				}
				for j := range uint(rankSlots) {
					if got := tb.slot(uint64(i), j); got != b[j] {
						t.Fatalf("%+v: bucket %d slot %d = %#x, want %#x", s, i, j, got, b[j])
					}
				}
			}
			if tail := tb.data[packedBytes(3, tb.bucketBits):]; slices.ContainsFunc(tail, func(b byte) bool { return b != 0 }) {
				t.Fatalf("%+v: slack written", s)
			}
			// withAdded, an insert into slot 0 of a bucket with room, stores
			// what a full decode, change and encode stores.
			if tb.oneWord && want[0] == 0 {
				add := uint32(1 + r.Uint64N(tb.fpMax))
				if r.IntN(2) == 0 && want[3] != 0 {
					add = want[3] // a repeat, at the top of the order
				}
				s1 := tb.stored(1)
				if got, wantAdded := tb.withAdded(s1|^tb.bucketMask, add)&tb.bucketMask, tb.encode(tb.decode(s1)|uint64(add)); got != wantAdded {
					t.Fatalf("%+v: bucket %v plus %#x stored as %#x, want %#x", s, want, add, got, wantAdded)
				}
			}
			queries := []uint32{1, uint32(tb.fpMax), uint32(1 + r.Uint64N(tb.fpMax)), uint32(1 + r.Uint64N(tb.fpMax))}
			for _, v := range fp {
				if v != 0 {
					queries = append(queries, v, v^1, v^uint32(1<<tb.lowBits))
				}
			}
			for _, q := range queries {
				if q == 0 || uint64(q) > tb.fpMax {
					continue
				}
				want := slices.Contains(fp[:], q) || slices.Contains(after[:], q)
				var got bool
				if tb.oneWord {
					got = tb.hasCoded(1, 2, q)
				} else {
					got = tb.hasWide(1, 2, q)
				}
				if got != want {
					t.Fatalf("%+v: buckets %v %v, fingerprint %#x: found %v", s, fp, after, q, got)
				}
			}
		}
	}
}

// TestRankedShapes pins which ranked tables take one word: the one-word
// lookup covers every L up to 10 for every Q.
func TestRankedShapes(t *testing.T) {
	for _, s := range codedShapes() {
		if s.q == 0 {
			continue
		}
		tb := tableLayout(1, s)
		if s.lowBits() <= 10 && !tb.oneWord {
			t.Errorf("Q=%d L=%d: %d-bit buckets are not one word", s.q, s.lowBits(), tb.bucketBits)
		}
		if s.fpMax()+1 > 1<<s.bits || s.fpMax()+1 <= 1<<(s.bits-1) {
			t.Errorf("Q=%d L=%d: range %d does not need %d bits", s.q, s.lowBits(), s.fpMax()+1, s.bits)
		}
	}
}

// BenchmarkSemiDecode measures decoding one stored bucket.
func BenchmarkSemiDecode(b *testing.B) {
	tb := tableLayout(1, shape{slots: rankSlots, bits: 12, semi: true})
	var s [1024]uint64
	r := rand.New(rand.NewPCG(1, 2))
	for i := range s {
		s[i] = tb.encode(r.Uint64() & (1<<48 - 1))
	}
	var sink uint64
	i := 0
	for b.Loop() {
		sink ^= tb.decode(s[i&1023])
		i++
	}
	_ = sink
}
