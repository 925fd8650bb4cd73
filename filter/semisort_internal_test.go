package filter

import (
	"math/rand/v2"
	"testing"
)

// TestSemiCodes checks the code table against its definition: every sorted
// multiset of four nibbles has one code below semiCodes, and every code
// decodes to the multiset it names.
func TestSemiCodes(t *testing.T) {
	seen := make(map[uint64]bool)
	for a := range 16 {
		for b := a; b < 16; b++ {
			for c := b; c < 16; c++ {
				for d := c; d < 16; d++ {
					code := semiCode(a, b, c, d)
					if code >= semiCodes || seen[code] {
						t.Fatalf("code %d of %d,%d,%d,%d: out of range or taken", code, a, b, c, d)
					}
					seen[code] = true
					if got, want := semiNibbles[code], uint16(a|b<<4|c<<8|d<<12); got != want {
						t.Fatalf("code %d decodes to %#04x, want %#04x", code, got, want)
					}
				}
			}
		}
	}
	if len(seen) != semiCodes {
		t.Fatalf("%d codes, want %d", len(seen), semiCodes)
	}
	for code := semiCodes; code < len(semiNibbles); code++ {
		if semiNibbles[code] != 0 {
			t.Fatalf("invalid code %d decodes to %#04x", code, semiNibbles[code])
		}
	}
}

// TestSemiRoundTrip encodes random buckets, with empty slots and repeated
// fingerprints, at every width: the stored bucket fits its bits, is
// canonical, and decodes to the bucket's fingerprints in ascending order.
func TestSemiRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for bits := uint(minSemiBits); bits <= maxSemiBits; bits++ {
		tb := tableLayout(1, semiSlots, bits, true)
		if tb.bucketBits != 4*bits-4 || !tb.oneWord {
			t.Fatalf("%d bits: bucket of %d bits, one word %v", bits, tb.bucketBits, tb.oneWord)
		}
		for range 20000 {
			var fp [semiSlots]uint64
			for j := range fp {
				switch r.IntN(4) {
				case 0: // empty
				case 1:
					fp[j] = fp[r.IntN(semiSlots)] // a repeat, or empty
				default:
					fp[j] = r.Uint64() & tb.fpMask
				}
			}
			var w uint64
			for j, v := range fp {
				w |= v << (uint(j) * bits)
			}
			s := tb.encode(w)
			if s>>tb.bucketBits != 0 {
				t.Fatalf("%d bits: %v encodes to %#x, wider than %d bits", bits, fp, s, tb.bucketBits)
			}
			if !tb.canonical(s) {
				t.Fatalf("%d bits: %v encodes to %#x, which is not canonical", bits, fp, s)
			}
			checkHasSemi(t, bits, s, r)
			d := tb.decode(s)
			prev := uint64(0)
			count := map[uint64]int{}
			for j := range semiSlots {
				v := d >> (uint(j) * bits) & tb.fpMask
				if v < prev {
					t.Fatalf("%d bits: %v decodes to %#x, not ascending", bits, fp, d)
				}
				prev = v
				count[v]++
			}
			for _, v := range fp {
				count[v]--
			}
			for v, n := range count {
				if n != 0 {
					t.Fatalf("%d bits: %v decodes to %#x: fingerprint %#x off by %d", bits, fp, d, v, n)
				}
			}
		}
	}
}

// checkHasSemi stores s as bucket 0 of a table, a random bucket after it,
// and checks that the lookup without decoding, hasSemi, agrees with a
// match against the decoded bucket, for the bucket's own fingerprints and
// random ones.
func checkHasSemi(t *testing.T, bits uint, s uint64, r *rand.Rand) {
	t.Helper()
	tb := newTable(2, semiSlots, bits, true)
	tb.store(0, s)
	tb.store(1, tb.encode(r.Uint64()&(1<<(4*bits)-1)))
	d := tb.decode(tb.stored(0))
	queries := []uint32{1, uint32(tb.fpMask)}
	for j := range uint(semiSlots) {
		queries = append(queries, uint32(d>>(j*bits)&tb.fpMask))
	}
	for range 4 {
		queries = append(queries, uint32(r.Uint64()&tb.fpMask))
	}
	for _, q := range queries {
		if q == 0 {
			continue
		}
		if got, want := tb.hasSemi(0, 0, q), tb.lanes.Has(d, q); got != want {
			t.Fatalf("%d bits: bucket %#x (decoded %#x), fingerprint %#x: hasSemi %v, decoded %v", bits, s, d, q, got, want)
		}
	}
}

// BenchmarkSemiDecode measures decoding one stored bucket.
func BenchmarkSemiDecode(b *testing.B) {
	tb := tableLayout(1, semiSlots, 12, true)
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
