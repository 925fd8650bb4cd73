package filter_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/modeltest"
)

// rankedLows are the L the ranked tests take for every Q: the least, one
// of the default rate's, the widest one-word bucket (10), the narrowest
// wide one (11) and the widest (16, 80-bit buckets).
var rankedLows = []uint{3, 5, 10, 11, 16}

// TestRankedModel runs random operations on small ranked filters of every
// Q and several L against a multiset model (modeltest): inserts outnumber
// deletes and the keys are few, so the filters fill until they refuse,
// keys have copies up to the 2b their buckets hold, and every refusal must
// leave the encoding unchanged. It runs again under the degenerate hashes,
// where keys share buckets and fingerprints.
func TestRankedModel(t *testing.T) {
	ops := scaled(3000, 3)
	hashes := append([]struct {
		name string
		fn   func(key []byte, seed uint64) uint64
	}{{"xxh3", nil}}, degenerateHashes...)
	for _, h := range hashes {
		for _, q := range filter.RankQs {
			for _, low := range rankedLows {
				for _, walk := range []bool{false, true} {
					name := fmt.Sprintf("hash=%s/Q=%d/L=%d/walk=%v", h.name, q, low, walk)
					t.Run(name, func(t *testing.T) {
						if h.fn != nil {
							defer filter.SetHash(h.fn)()
						}
						f := filter.NewRanked(16, q, low, uint64(q)<<8|uint64(low))
						if walk {
							f.UseRandomWalk()
						}
						m := newFilterModel(t, f)
						r := rand.New(rand.NewPCG(uint64(q), uint64(low)))
						keys := 40 + r.IntN(100)
						for range ops {
							op := []int{modeltest.OpInsert, modeltest.OpInsert, modeltest.OpInsertUnique, modeltest.OpContains, modeltest.OpDelete, modeltest.OpCount}[r.IntN(6)]
							m.Apply(op, []byte{byte(r.IntN(keys))})
						}
						m.CheckAll()
						if m.Total == 0 || h.fn == nil && m.Refused == 0 {
							t.Fatalf("%d keys held, %d inserts refused: the filter never filled", m.Total, m.Refused)
						}
					})
				}
			}
		}
	}
}

// TestRankedFillAndDrain fills ranked filters of every Q and L with
// distinct keys to their first refusal, checks the load they reached
// against the design load, every key after a round trip through the
// encoding, and then deletes them all.
func TestRankedFillAndDrain(t *testing.T) {
	for _, q := range filter.RankQs {
		for _, low := range rankedLows {
			t.Run(fmt.Sprintf("Q=%d/L=%d", q, low), func(t *testing.T) {
				f := filter.NewRanked(500, q, low, 7)
				ks := keys(2100, uint64(q*100+low))
				n := 0
				for ; n < len(ks); n++ {
					if err := f.Insert(ks[n]); err != nil {
						if !errors.Is(err, filter.ErrFull) {
							t.Fatal(err)
						}
						break
					}
				}
				if f.LoadFactor() < 0.96 {
					t.Errorf("full at load %.4f, below the design load 0.96", f.LoadFactor())
				}
				g := roundTrip(t, f)
				for _, k := range ks[:n] {
					if !g.Contains(k) {
						t.Fatalf("%q lost", k)
					}
				}
				for _, k := range ks[:n] {
					if !g.Delete(k) {
						t.Fatalf("delete of %q failed", k)
					}
				}
				if g.Len() != 0 {
					t.Fatalf("%d fingerprints left", g.Len())
				}
				check(t, g)
			})
		}
	}
}

// roundTrip returns f encoded and decoded.
func roundTrip(t *testing.T, f *filter.Filter) *filter.Filter {
	t.Helper()
	var g filter.Filter
	if err := g.UnmarshalBinary(mustMarshal(t, f)); err != nil {
		t.Fatal(err)
	}
	check(t, &g)
	return &g
}

// TestRankedFalsePositiveRate fills ranked filters built for several rates
// to their capacity and counts false positives among absent keys. The rate
// must be within 5σ + 3% of the expected 1 - (1 - load/(R-1))^8 (the
// tolerance of TestFalsePositiveRate) and at most the rate asked for.
func TestRankedFalsePositiveRate(t *testing.T) {
	capacity := uint64(scaled(1<<16, 4))
	for _, c := range []struct {
		rate    float64
		lookups int
	}{{0.03, 400_000}, {0.01, 1_000_000}, {0.002, 4_000_000}, {3e-4, 10_000_000}} {
		t.Run(fmt.Sprintf("rate=%g", c.rate), func(t *testing.T) {
			f := mustNew(t, filter.Config{Capacity: capacity, FalsePositiveRate: c.rate, Packing: filter.PackingRanked, Seed: 5})
			lookups := scaled(c.lookups, 4)
			fp := fillAndProbe(t, f, capacity, lookups)
			measured := float64(fp) / float64(lookups)
			expected := f.FalsePositiveRate()
			sigma := math.Sqrt(expected * (1 - expected) / float64(lookups))
			tol := 5*sigma + 0.03*expected
			t.Logf("R=%d load=%.4f: %d false positives in %d lookups: rate %.4g, expected %.4g (±%.2g), asked %g (%.3f x measured)",
				f.FingerprintRange(), f.LoadFactor(), fp, lookups, measured, expected, tol, c.rate, c.rate/measured)
			if math.Abs(measured-expected) > tol {
				t.Errorf("rate %.4g differs from the expected %.4g by more than %.2g", measured, expected, tol)
			}
			if measured > c.rate {
				t.Errorf("rate %.4g above the %g asked for", measured, c.rate)
			}
		})
	}
}

// TestRankedCapacityPromise is TestCapacityPromise for ranked tables: a new
// filter accepts Capacity distinct keys, for capacities from 1 to 2000 and
// a sample up to 200000, several seeds, and rates that pick every Q and
// ranges from the least (L = 3) up.
func TestRankedCapacityPromise(t *testing.T) {
	seeds := 3
	var caps []uint64
	for c := uint64(1); c <= 2000; c++ {
		if !quick() || c <= 300 || c%17 == 0 {
			caps = append(caps, c)
		}
	}
	caps = append(caps, 4096, 10007)
	if !quick() {
		caps = append(caps, 2048, 3001, 50000, 65536, 100003, 200000)
	} else {
		seeds = 1
	}
	rates := []float64{0.03, 0.025, 0.02, 0.017, 0.01, 0.004, 1e-4}
	runs, victims := 0, 0
	for seed := range seeds {
		ks := keys(200000, uint64(2000+seed))
		for _, rate := range rates {
			for _, c := range caps {
				runs++
				f := mustNew(t, filter.Config{Capacity: c, FalsePositiveRate: rate, Packing: filter.PackingRanked, Seed: uint64(seed)<<32 | c})
				for i, k := range ks[:c] {
					if err := f.Insert(k); err != nil {
						t.Errorf("rate=%g Capacity=%d seed=%d (R=%d, m=%d): insert %d refused at load %.3f: %v",
							rate, c, seed, f.FingerprintRange(), f.Buckets(), i, float64(i)/float64(f.Slots()), err)
						break
					}
				}
				if f.VictimUsed() {
					victims++
				}
			}
		}
	}
	t.Logf("%d filters: %d needed the victim slot", runs, victims)
}

// TestRankedDecodeErrors: a ranked file whose header or buckets are not
// what a writer makes is refused with an error that names what is wrong,
// never a panic.
func TestRankedDecodeErrors(t *testing.T) {
	flt := mustNew(t, filter.Config{Capacity: 40, Packing: filter.PackingRanked, Seed: 3}) // Q = 28, L = 5
	insertAll(t, flt, keys(40, 8))
	enc := mustMarshal(t, flt)
	if v := binary.LittleEndian.Uint16(enc[offVersion:]); v != 3 || enc[offPacking] != 2 || enc[offReserved1] != 28 || enc[offBits] != 10 {
		t.Fatalf("ranked filter written as version %d, packing %d, Q %d, f %d", v, enc[offPacking], enc[offReserved1], enc[offBits])
	}
	semi := mustMarshal(t, mustNew(t, filter.Config{Capacity: 40, FingerprintBits: 10, Packing: filter.PackingSemiSorted}))
	setBucket0 := func(v uint64) func([]byte) {
		return func(b []byte) {
			// Bucket 0 is the table's first 15 + 4·5 = 35 bits.
			w := binary.LittleEndian.Uint64(b[headerSize:])
			binary.LittleEndian.PutUint64(b[headerSize:], w&^(1<<35-1)|v)
		}
	}
	code := func(a, b, c, d uint32) uint64 { return filter.RankCode(28, a, b, c, d) }
	// q's 3, 3, 9, 20 with the low parts of the two 3s out of order.
	swapped := code(3, 3, 9, 20) | 7<<15 | 5<<20 | 1<<25 | 2<<30
	sorted := code(3, 3, 9, 20) | 5<<15 | 7<<20 | 1<<25 | 2<<30
	cases := []corruptCase{
		{"Q=0", edit(enc, put8(offReserved1, 0)), "ranked buckets of Q = 0, want one of [19 23 28 33]"},
		{"Q=16", edit(enc, put8(offReserved1, 16)), "ranked buckets of Q = 16"},
		{"Q=255", edit(enc, put8(offReserved1, 255)), "ranked buckets of Q = 255"},
		{"slots=8", edit(enc, put8(offBucket, 8)), "ranked buckets of 8 slots of 10 bits at Q = 28, want 4 slots of 8..21 bits"},
		{"bits=7", edit(enc, put8(offBits, 7)), "ranked buckets of 4 slots of 7 bits at Q = 28"},
		{"bits=22", edit(enc, put8(offBits, 22)), "ranked buckets of 4 slots of 22 bits at Q = 28"},
		{"bits=11", edit(enc, put8(offBits, 11)), "table length"},
		{"Q=33", edit(enc, put8(offReserved1, 33)), "table length"},
		{"version=2", edit(enc, put16(offVersion, 2)), "packing 2, version 2 reads 0..1"},
		{"semi with Q", edit(semi, put8(offReserved1, 28)), "reserved"},
		{"code=31465", edit(enc, setBucket0(31465)), "bucket 0 is not a sorted ranked bucket"},
		{"code=32767", edit(enc, setBucket0(32767)), "bucket 0 is not a sorted ranked bucket"},
		{"lows-unsorted", edit(enc, setBucket0(swapped)), "bucket 0 is not a sorted ranked bucket"},
		{"victim fp=R", edit(enc, func(b []byte) { b[offFlags] = 1; put32(offVictimFP, 28<<5)(b) }), "victim fingerprint 0x380"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			readErr, unmarshalErr := decodeFilter(c.data)
			wantCorruptMsg(t, "Read", readErr, c.want)
			wantCorruptMsg(t, "UnmarshalBinary", unmarshalErr, c.want)
		})
	}
	// The same bucket in order is accepted, so the refusals above are the
	// order's and the code's, not the edit's.
	var g filter.Filter
	if err := g.UnmarshalBinary(edit(enc, setBucket0(sorted))); err != nil && !strings.Contains(err.Error(), "header counts") {
		t.Fatalf("a sorted bucket 0 was refused: %v", err)
	}
	if _, err := filter.Read(bytes.NewReader(enc)); err != nil {
		t.Fatalf("the unedited encoding: %v", err)
	}
}
