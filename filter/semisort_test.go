package filter_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
)

// tableBits returns the bits of the table a layout describes.
func tableBits(l filter.Layout) uint64 { return 8 * l.TableBytes() }

// TestSmallestLayout checks New's choice against every layout it could have
// built: none that meets the rate is smaller, and the choice meets it. At
// rates of 1% and below the choice also takes fewer bits a key than an
// optimal Bloom filter for the same rate, 1.44·log2(1/ε).
func TestSmallestLayout(t *testing.T) {
	for _, capacity := range []uint64{1, 100, 10_000, 1_000_000} {
		for _, rate := range []float64{0.3, 0.03, 0.02, 0.01, 0.005, 0.001, 1e-4, 1e-6} {
			t.Run(fmt.Sprintf("n=%d/rate=%g", capacity, rate), func(t *testing.T) {
				got, err := filter.Config{Capacity: capacity, FalsePositiveRate: rate}.Layout()
				if err != nil {
					t.Fatal(err)
				}
				load := func(l filter.Layout) float64 {
					return float64(l.Capacity) / float64(l.Buckets*uint64(l.BucketSize))
				}
				if r := rateAt(load(got), got); r > rate {
					t.Fatalf("%+v: expected rate %.3g at capacity, above %g", got, r, rate)
				}
				for _, b := range []int{2, 4, 8} {
					for f := 4; f <= 32; f++ {
						for _, packing := range []filter.Packing{filter.PackingPlain, filter.PackingSemiSorted} {
							if packing == filter.PackingSemiSorted && (b != 4 || f < 5 || f > 16) {
								continue
							}
							l, err := filter.Config{Capacity: capacity, BucketSize: b, FingerprintBits: f, Packing: packing}.Layout()
							if err != nil {
								t.Fatal(err)
							}
							meets := filter.ExpectedFalsePositiveRate(filter.DesignLoad(b, f), b, f) <= rate
							if meets && tableBits(l) < tableBits(got) {
								t.Errorf("chose %+v, %d bits; %+v meets the rate in %d", got, tableBits(got), l, tableBits(l))
							}
						}
					}
				}
				if ranked, err := (filter.Config{Capacity: capacity, FalsePositiveRate: rate, Packing: filter.PackingRanked}).Layout(); err == nil && tableBits(ranked) < tableBits(got) {
					t.Errorf("chose %+v, %d bits; %+v meets the rate in %d", got, tableBits(got), ranked, tableBits(ranked))
				}
				perKey := float64(tableBits(got)) / float64(capacity)
				bloom := math.Log2(1/rate) / math.Ln2
				t.Logf("b=%d f=%d %v R=%d: %.2f bits a key, Bloom %.2f", got.BucketSize, got.FingerprintBits, got.Packing, got.FingerprintRange, perKey, bloom)
				if capacity >= 10_000 && rate <= 0.01 && perKey >= bloom {
					t.Errorf("%.2f bits a key, not below Bloom's %.2f", perKey, bloom)
				}
			})
		}
	}
}

// rateAt returns the expected rate of a layout's table at a load.
func rateAt(load float64, l filter.Layout) float64 { return l.ExpectedFalsePositiveRate(load) }

// TestLayoutExpectedFalsePositiveRate: a layout's rate is the rate of the
// filter built from it at every load, for every packing; for plain and
// semi-sorted tables it is ExpectedFalsePositiveRate's, and for a ranked
// one it follows R, not 2^f. The default ranked table (R = 896 = 28·2^5, f
// = 10) full at 95% expects 1 - (1 - 0.95/895)^8, 0.846%, where 2^10 would
// give 0.740%.
func TestLayoutExpectedFalsePositiveRate(t *testing.T) {
	for _, packing := range []filter.Packing{filter.PackingPlain, filter.PackingSemiSorted, filter.PackingRanked} {
		for _, rate := range []float64{0.03, 0.01, 1e-3} {
			cfg := filter.Config{Capacity: 5000, FalsePositiveRate: rate, Packing: packing}
			l, err := cfg.Layout()
			if err != nil {
				t.Fatal(err)
			}
			f := mustNew(t, cfg)
			var buf []byte
			for i := range cfg.Capacity {
				if i%1000 == 0 {
					if got, want := l.ExpectedFalsePositiveRate(f.LoadFactor()), f.FalsePositiveRate(); got != want {
						t.Errorf("%v at %g, %d keys: layout %.6g, filter %.6g", packing, rate, i, got, want)
					}
				}
				buf = tagKey(buf, tagMember, i)
				if err := f.Insert(buf); err != nil {
					t.Fatal(err)
				}
			}
			pow2 := filter.ExpectedFalsePositiveRate(f.LoadFactor(), l.BucketSize, l.FingerprintBits)
			if got := l.ExpectedFalsePositiveRate(f.LoadFactor()); packing != filter.PackingRanked && got != pow2 || packing == filter.PackingRanked && !(got > pow2) {
				t.Errorf("%v at %g (R=%d, f=%d): layout %.6g, ExpectedFalsePositiveRate %.6g", packing, rate, l.FingerprintRange, l.FingerprintBits, got, pow2)
			}
		}
	}
	l, err := filter.Config{Capacity: 1_000_000}.Layout()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.ExpectedFalsePositiveRate(0.95), -math.Expm1(8*math.Log1p(-0.95/895)); l.FingerprintRange != 896 || math.Abs(got-want) > 1e-15 || math.Abs(got-0.00846) > 5e-6 {
		t.Errorf("default layout (R=%d): %.6g at 95%%, want %.6g", l.FingerprintRange, got, want)
	}
	if got := (filter.Layout{BucketSize: 4, FingerprintBits: 12}).ExpectedFalsePositiveRate(0.95); got != filter.ExpectedFalsePositiveRate(0.95, 4, 12) {
		t.Errorf("a layout without a range: %.6g, want 2^f's %.6g", got, filter.ExpectedFalsePositiveRate(0.95, 4, 12))
	}
}

// TestDefaultIsRanked: the default Config gives ranked buckets of Q = 28
// and L = 5 (R = 896), in 35 bits; the semi-sorted table of 10-bit
// fingerprints it replaced took 36 bits a bucket at 95%, and plain buckets
// 40.
func TestDefaultIsRanked(t *testing.T) {
	f := mustNew(t, filter.Config{Capacity: 1_000_000})
	if f.Packing() != filter.PackingRanked || f.BucketSize() != 4 || f.FingerprintRange() != 28<<5 || f.FingerprintBits() != 10 {
		t.Fatalf("default filter: %v, b=%d, f=%d, R=%d", f.Packing(), f.BucketSize(), f.FingerprintBits(), f.FingerprintRange())
	}
	semi := mustNew(t, filter.Config{Capacity: 1_000_000, Packing: filter.PackingSemiSorted})
	if semi.Packing() != filter.PackingSemiSorted || semi.BucketSize() != 4 || semi.FingerprintBits() != 10 {
		t.Fatalf("PackingSemiSorted: %v, b=%d, f=%d", semi.Packing(), semi.BucketSize(), semi.FingerprintBits())
	}
	plain := mustNew(t, filter.Config{Capacity: 1_000_000, Packing: filter.PackingPlain})
	if plain.Packing() != filter.PackingPlain || plain.BucketSize() != 4 || plain.FingerprintBits() != 10 {
		t.Fatalf("PackingPlain: %v, b=%d, f=%d", plain.Packing(), plain.BucketSize(), plain.FingerprintBits())
	}
	if ratio := float64(semi.SizeInBytes()) / float64(plain.SizeInBytes()); math.Abs(ratio-0.9) > 0.001 {
		t.Fatalf("semi-sorted %d bytes, plain %d: want 9/10", semi.SizeInBytes(), plain.SizeInBytes())
	}
	// 35 bits at 96% against 36 at 95%.
	if ratio, want := float64(f.SizeInBytes())/float64(semi.SizeInBytes()), 35/0.96/(36/0.95); math.Abs(ratio-want) > 0.002 {
		t.Fatalf("ranked %d bytes, semi-sorted %d: ratio %.4f, want %.4f", f.SizeInBytes(), semi.SizeInBytes(), ratio, want)
	}
}

func TestPackingConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  filter.Config
		want string
	}{
		{filter.Config{Capacity: 10, Packing: filter.PackingSemiSorted, BucketSize: 8}, "semi-sorted buckets have 4 slots"},
		{filter.Config{Capacity: 10, Packing: filter.PackingSemiSorted, BucketSize: 2}, "semi-sorted buckets have 4 slots"},
		{filter.Config{Capacity: 10, Packing: filter.PackingSemiSorted, FingerprintBits: 17}, "5..16 bits, not 17"},
		{filter.Config{Capacity: 10, Packing: filter.PackingSemiSorted, FalsePositiveRate: 1e-5}, "5..16 bits, too few for Config.FalsePositiveRate 1e-05"},
		{filter.Config{Capacity: 10, Packing: filter.PackingSemiSorted, FingerprintBits: 4}, "5..16 bits, not 4"},
		{filter.Config{Capacity: 10, Packing: filter.PackingRanked, BucketSize: 8}, "ranked buckets have 4 slots"},
		{filter.Config{Capacity: 10, Packing: filter.PackingRanked, FingerprintBits: 12}, "Config.FingerprintBits is 12: ranked buckets are sized by Config.FalsePositiveRate"},
		{filter.Config{Capacity: 10, Packing: filter.PackingRanked, FalsePositiveRate: 1e-6}, "ranked buckets reach false-positive rates down to 3.6e-06, not Config.FalsePositiveRate 1e-06"},
		{filter.Config{Capacity: 10, Packing: 4}, "Config.Packing is 4"},
		{filter.Config{Capacity: 10, FalsePositiveRate: 1.5}, "FalsePositiveRate is 1.5"},
	} {
		_, err := filter.New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error saying %q", c.cfg, err, c.want)
		}
	}
	if s := filter.Packing(9).String(); s != "Packing(9)" {
		t.Errorf("Packing(9).String() = %q", s)
	}
}

// TestSemiSortedDecodeErrors: a semi-sorted file whose header or buckets
// are not what a writer makes is refused, naming what is wrong.
func TestSemiSortedDecodeErrors(t *testing.T) {
	flt := mustNew(t, filter.Config{Capacity: 40, FingerprintBits: 12, Packing: filter.PackingSemiSorted, Seed: 3})
	insertAll(t, flt, keys(40, 8))
	enc := mustMarshal(t, flt)
	if v := binary.LittleEndian.Uint16(enc[offVersion:]); v != 2 || enc[offPacking] != 1 {
		t.Fatalf("semi-sorted filter written as version %d, packing %d", v, enc[offPacking])
	}
	plain17, plain4 := base(t, 4, 17, 40), base(t, 4, 4, 40)
	setBucket0 := func(v uint64) func([]byte) {
		return func(b []byte) {
			// 12-bit fingerprints: bucket 0 is the table's first 44 bits.
			w := binary.LittleEndian.Uint64(b[headerSize:])
			binary.LittleEndian.PutUint64(b[headerSize:], w&^(1<<44-1)|v)
		}
	}
	// Two fingerprints with different nibbles, their low parts swapped: a
	// valid code with low parts out of order.
	code := func(a, b, c, d int) uint64 { return filter.SemiCode(a, b, c, d) }
	swapped := code(0, 0, 1, 2) | 7<<12 | 5<<20 | 1<<28 | 2<<36 // lows 7, 5 under nibbles 0, 0: out of order
	cases := []corruptCase{
		{"slots=8", edit(enc, put8(offBucket, 8)), "semi-sorted buckets of 8 slots"},
		{"bits=17", edit(plain17, put16(offVersion, 2), put8(offPacking, 1)), "semi-sorted buckets of 4 slots of 17 bits"},
		{"bits=4", edit(plain4, put16(offVersion, 2), put8(offPacking, 1)), "semi-sorted buckets of 4 slots of 4 bits"},
		{"code=3876", edit(enc, setBucket0(3876)), "bucket 0 is not a sorted semi-sorted bucket"},
		{"code=4095", edit(enc, setBucket0(4095)), "bucket 0 is not a sorted semi-sorted bucket"},
		{"lows-unsorted", edit(enc, setBucket0(swapped)), "bucket 0 is not a sorted semi-sorted bucket"},
		{"version=1", edit(enc, put16(offVersion, 1)), "packing 1"},
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
	sorted := code(0, 0, 1, 2) | 5<<12 | 7<<20 | 1<<28 | 2<<36
	ok := edit(enc, setBucket0(sorted))
	var g filter.Filter
	if err := g.UnmarshalBinary(ok); err != nil && !strings.Contains(err.Error(), "header counts") {
		t.Fatalf("a sorted bucket 0 was refused: %v", err)
	}
	if _, err := filter.Read(bytes.NewReader(enc)); err != nil {
		t.Fatalf("the unedited encoding: %v", err)
	}
}

// TestTableBytes: Layout.TableBytes is what New allocates for the table,
// the rest of SizeInBytes being the Filter's fixed fields.
func TestTableBytes(t *testing.T) {
	var fixed uint64
	for i, cfg := range []filter.Config{
		{Capacity: 1},
		{Capacity: 1000, FalsePositiveRate: 0.03},
		{Capacity: 100_000},
		{Capacity: 100_000, Packing: filter.PackingPlain},
		{Capacity: 100_000, BucketSize: 2, FingerprintBits: 7},
		{Capacity: 100_000, BucketSize: 8, FingerprintBits: 32},
		{Capacity: 77_777, FalsePositiveRate: 1e-4},
	} {
		l, err := cfg.Layout()
		if err != nil {
			t.Fatal(err)
		}
		f := mustNew(t, cfg)
		if i == 0 {
			fixed = f.SizeInBytes() - l.TableBytes()
		}
		if got := f.SizeInBytes() - l.TableBytes(); got != fixed || fixed > 512 {
			t.Errorf("%+v: SizeInBytes %d, TableBytes %d: %d apart, want %d", cfg, f.SizeInBytes(), l.TableBytes(), got, fixed)
		}
	}
}
