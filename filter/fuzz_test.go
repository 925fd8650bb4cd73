package filter_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/modeltest"
)

// fuzzConfig is modeltest.FuzzConfig with any fingerprint width up to 32;
// bit 7 of byte 0 selects the random-walk strategy.
func fuzzConfig(data []byte) (cfg filter.Config, walk bool, rest []byte) {
	cfg, flags, rest := modeltest.FuzzConfig(data, func(int) int { return 32 })
	if flags&3 == 3 { // the second of FuzzConfig's two choices of 8 slots
		cfg.BucketSize, cfg.Packing = 4, filter.PackingSemiSorted
		cfg.FingerprintBits = 5 + (cfg.FingerprintBits-4)%12
	}
	return cfg, flags&0x80 != 0, rest
}

// fuzzFilter builds the filter of a fuzz input's header: fuzzConfig's, or
// with bits 2 and 3 of byte 0 both set, a ranked one of 1..16 buckets with
// Q and L from byte 1 (every Q, L 3..16) and the seed from byte 3.
func fuzzFilter(t *testing.T, data []byte) (flt *filter.Filter, walk bool, rest []byte) {
	cfg, walk, rest := fuzzConfig(data)
	if len(data) >= 4 && data[0]&0x0c == 0x0c {
		q := filter.RankQs[data[1]&3]
		low := 3 + uint(data[1]>>2)%14
		return filter.NewRanked(1+uint64(data[2])%16, q, low, uint64(data[3])), walk, rest
	}
	flt, err := filter.New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return flt, walk, rest
}

func FuzzModel(f *testing.F) {
	f.Add([]byte{0x01, 8, 20, 1, 0, 1, 0, 1, 3, 1, 2, 1, 4, 1})
	f.Add([]byte{0x00, 0, 0, 0, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 3, 7, 3, 7})
	f.Add([]byte{0x82, 28, 63, 9, 0, 1, 0, 2, 0, 3, 1, 1, 3, 2, 4, 3})
	f.Add([]byte{0xc1, 0, 3, 5, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8, 3, 1, 3, 2})
	f.Add(modeltest.FillAndDrain([4]byte{0x01, 0, 10, 2}, 200))
	f.Add(modeltest.FillAndDrain([4]byte{0x03, 1, 10, 2}, 200))  // semi-sorted, 6 bits
	f.Add(modeltest.FillAndDrain([4]byte{0x83, 10, 30, 7}, 300)) // semi-sorted, 15 bits, random walk
	f.Add(modeltest.FillAndDrain([4]byte{0x03, 11, 40, 9}, 300)) // semi-sorted, 16 bits
	f.Add([]byte{0x03, 0, 1, 3, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 3, 1, 3, 1})
	f.Add(modeltest.FillAndDrain([4]byte{0x0c, 0, 5, 2}, 200))                               // ranked, Q = 19, L = 3
	f.Add(modeltest.FillAndDrain([4]byte{0x8c, 4*2 + 2, 10, 5}, 300))                        // ranked, Q = 28, L = 5, random walk
	f.Add(modeltest.FillAndDrain([4]byte{0x0d, 4*8 + 3, 15, 7}, 300))                        // ranked, Q = 33, L = 11: wide buckets
	f.Add(modeltest.FillAndDrain([4]byte{0x0c, 4*13 + 1, 3, 9}, 100))                        // ranked, Q = 23, L = 16: 80-bit buckets
	f.Add([]byte{0x0c, 1, 0, 3, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 3, 1, 3, 1}) // one bucket, copies of one key
	f.Fuzz(func(t *testing.T, data []byte) {
		flt, walk, ops := fuzzFilter(t, data)
		if walk {
			flt.UseRandomWalk()
		}
		m := newFilterModel(t, flt)
		m.Run(ops[:min(len(ops), 2*modeltest.MaxFuzzOps)], 256)
	})
}

func FuzzScalableModel(f *testing.F) {
	f.Add([]byte{0x00, 1, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 3, 1, 3, 5})
	f.Add([]byte{0x01, 0, 2, 7, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 4, 9, 3, 9})
	long := []byte{0x02, 3, 1, 5}
	for i := range 250 {
		long = append(long, modeltest.OpInsert, byte(i))
	}
	for i := range 250 {
		long = append(long, modeltest.OpDelete, byte(i))
	}
	f.Add(long)
	f.Fuzz(func(t *testing.T, data []byte) {
		var h [4]byte
		copy(h[:], data)
		cfg := filter.ScalableConfig{
			BucketSize:        [4]int{2, 4, 8, 8}[h[0]&3],
			InitialCapacity:   1 + uint64(h[1])%8,
			Growth:            1 + int(h[2])%4,
			FalsePositiveRate: [4]float64{0.5, 0.1, 0.01, 1e-4}[h[3]&3],
			Seed:              uint64(h[3]),
		}
		s, err := filter.NewScalable(cfg)
		if err != nil {
			t.Fatalf("NewScalable(%+v): %v", cfg, err)
		}
		m := newScalableModel(t, s)
		ops := data[min(len(data), 4):]
		// A key's two buckets hold 2b copies of it, and a Scalable returns
		// ErrFull rather than grow for more (TestScalableDuplicateGrowth);
		// capping the copies of a key at 4 keeps most inputs on the growth
		// paths.
		const maxCopies = 4
		for n := 0; len(ops) >= 2 && n < modeltest.MaxFuzzOps; ops, n = ops[2:], n+1 {
			op, key := int(ops[0])%modeltest.NumOps, []byte{ops[1]}
			if (op == modeltest.OpInsert || op == modeltest.OpInsertUnique) && m.Counts[string(key)] >= maxCopies {
				op = modeltest.OpCount
			}
			m.Apply(op, key)
		}
		enc := mustMarshal(t, s)
		var g filter.Scalable
		if err := g.UnmarshalBinary(enc); err != nil {
			t.Fatalf("decoding a %d-stage filter: %v", s.Stages(), err)
		}
		checkDecodedScalable(t, "UnmarshalBinary", &g, enc)
		// The decoded filter still holds every key the model holds.
		if err := g.CheckMatching(m.Counts); err != nil {
			t.Fatalf("after a round trip: %v", err)
		}
	})
}

// FuzzDecode feeds arbitrary bytes to every decoder. None may panic; every
// error must wrap ErrCorrupt; whatever decodes must re-encode to the same
// bytes and satisfy the invariants.
func FuzzDecode(f *testing.F) {
	for _, enc := range decodeSeeds(f) {
		f.Add(enc)
		for _, mutated := range mutations(enc) {
			f.Add(mutated)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
	})
}

// checkDecode runs the four decoders on data.
func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	if g, err := filter.Read(bytes.NewReader(data)); err != nil {
		wantCorrupt(t, "Read", err)
	} else {
		checkDecoded(t, "Read", g, data[:g.EncodedSize()])
	}
	var g filter.Filter
	if err := g.UnmarshalBinary(data); err != nil {
		wantCorrupt(t, "Filter.UnmarshalBinary", err)
	} else {
		checkDecoded(t, "Filter.UnmarshalBinary", &g, data)
	}
	r := bytes.NewReader(data)
	if s, err := filter.ReadScalable(r); err != nil {
		wantCorruptOrOld(t, "ReadScalable", err)
	} else {
		checkDecodedScalable(t, "ReadScalable", s, data[:len(data)-r.Len()])
	}
	var s filter.Scalable
	if err := s.UnmarshalBinary(data); err != nil {
		wantCorruptOrOld(t, "Scalable.UnmarshalBinary", err)
	} else {
		checkDecodedScalable(t, "Scalable.UnmarshalBinary", &s, data)
	}
}

func wantCorrupt(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, filter.ErrCorrupt) {
		t.Fatalf("%s: error %q does not wrap ErrCorrupt", what, err)
	}
}

func checkDecoded(t *testing.T, what string, g *filter.Filter, data []byte) {
	t.Helper()
	if err := g.CheckInvariants(); err != nil {
		t.Fatalf("%s: decoded filter breaks an invariant: %v", what, err)
	}
	enc, err := g.MarshalBinary()
	if err != nil {
		t.Fatalf("%s: MarshalBinary of the decoded filter: %v", what, err)
	}
	if !bytes.Equal(enc, data) {
		t.Fatalf("%s: re-encoding differs from the %d bytes decoded", what, len(data))
	}
	// The decoded filter must work: an insert either succeeds and is found,
	// or is refused.
	if err := g.Insert([]byte("after decode")); err == nil {
		if !g.Contains([]byte("after decode")) {
			t.Fatalf("%s: key inserted into the decoded filter is not found", what)
		}
	} else if !errors.Is(err, filter.ErrFull) {
		t.Fatalf("%s: insert into the decoded filter: %v", what, err)
	}
	if err := g.CheckInvariants(); err != nil {
		t.Fatalf("%s: after an insert into the decoded filter: %v", what, err)
	}
}

func checkDecodedScalable(t *testing.T, what string, s *filter.Scalable, data []byte) {
	t.Helper()
	if err := scalableInvariants(s, nil); err != nil {
		t.Fatalf("%s: decoded filter breaks an invariant: %v", what, err)
	}
	enc, err := s.MarshalBinary()
	if err != nil {
		t.Fatalf("%s: MarshalBinary of the decoded filter: %v", what, err)
	}
	if !bytes.Equal(enc, data) {
		t.Fatalf("%s: re-encoding differs from the %d bytes decoded", what, len(data))
	}
}

// decodeSeeds returns valid encodings of filters of several shapes, with and
// without a victim, and of scalable filters of one and three stages.
func decodeSeeds(tb testing.TB) [][]byte {
	var out [][]byte
	for _, c := range []struct {
		b, f   int
		n      uint64
		victim bool
	}{
		{2, 4, 3, false}, {2, 5, 7, true}, {4, 12, 10, false}, {4, 13, 20, true},
		{8, 7, 9, false}, {8, 32, 5, true}, {4, 32, 1, false},
		{-4, 5, 6, false}, {-4, 10, 20, true}, {-4, 15, 9, false}, {-4, 16, 12, true},
		{-19, 3, 10, true}, {-28, 5, 20, false}, {-33, 10, 9, true}, {-23, 16, 12, true},
	} {
		cfg := filter.Config{Capacity: c.n, BucketSize: c.b, FingerprintBits: c.f, Seed: uint64(c.b * c.f)}
		var flt *filter.Filter
		switch {
		case c.b < -4: // ranked, Q = -b, L = f
			flt = filter.NewRanked(c.n/3+1, uint(-c.b), uint(c.f), uint64(c.n))
		case c.b < 0: // semi-sorted
			cfg.BucketSize, cfg.Packing = -c.b, filter.PackingSemiSorted
			flt = mustNew(tb, cfg)
		default:
			flt = mustNew(tb, cfg)
		}
		for i := range c.n / 2 {
			if err := flt.Insert(fmt.Appendf(nil, "seed-%d", i)); err != nil {
				tb.Fatal(err)
			}
		}
		if c.victim {
			fillToVictim(tb, flt, []byte("hot"))
		}
		out = append(out, mustMarshal(tb, flt))
	}
	for _, stages := range []int{1, 3} {
		s := mustScalable(tb, filter.ScalableConfig{InitialCapacity: 4, BucketSize: 2, FalsePositiveRate: 0.1, Seed: 5})
		for i := 0; s.Stages() < stages; i++ {
			if err := s.Insert(fmt.Appendf(nil, "s-%d", i)); err != nil {
				tb.Fatal(err)
			}
		}
		out = append(out, mustMarshal(tb, s))
	}
	return out
}

// mutations returns copies of enc with one change each: a flipped bit in
// every field of the header, a truncation and an extension.
func mutations(enc []byte) [][]byte {
	var out [][]byte
	for _, off := range []int{0, 4, 6, 7, 8, 9, 10, 12, 16, 24, 40, 44, 48, 56, 60, 64, 72, len(enc) - 1} {
		if off < len(enc) {
			m := bytes.Clone(enc)
			m[off] ^= 1
			out = append(out, m)
		}
	}
	out = append(out, enc[:len(enc)/2], append(bytes.Clone(enc), 0))
	return out
}

// fillToVictim inserts copies of key until the victim slot is used.
func fillToVictim(tb testing.TB, f *filter.Filter, key []byte) {
	tb.Helper()
	for !f.VictimUsed() {
		if err := f.Insert(key); err != nil {
			tb.Fatalf("filling to the victim: %v", err)
		}
	}
}

type marshaler interface{ MarshalBinary() ([]byte, error) }

func mustMarshal(tb testing.TB, m marshaler) []byte {
	tb.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		tb.Fatalf("MarshalBinary: %v", err)
	}
	return b
}

func mustScalable(tb testing.TB, cfg filter.ScalableConfig) *filter.Scalable {
	tb.Helper()
	s, err := filter.NewScalable(cfg)
	if err != nil {
		tb.Fatalf("NewScalable(%+v): %v", cfg, err)
	}
	return s
}

// wantCorruptOrOld is wantCorrupt for the Scalable decoders, which refuse a
// version-1 file with ErrOldFormat: it is not damaged, only older.
func wantCorruptOrOld(t *testing.T, what string, err error) {
	t.Helper()
	if errors.Is(err, filter.ErrOldFormat) {
		return
	}
	wantCorrupt(t, what, err)
}
