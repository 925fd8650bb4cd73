package filter_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/hashing"
	"github.com/cuckoohash/cuckoo/internal/modeltest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Offsets of the Filter header fields (format.go).
const (
	offVersion   = 4
	offKind      = 6
	offBucket    = 7
	offBits      = 8
	offFlags     = 9
	offPacking   = 10
	offReserved1 = 11
	offKicks     = 12
	offCapacity  = 16
	offBuckets   = 24
	offSeed      = 32
	offCount     = 40
	offVictimB   = 48
	offVictimFP  = 56
	offReserved2 = 60
	offTableLen  = 64
	headerSize   = 72
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fixCRC rewrites the trailing CRC-32C of an encoding after a change, so that
// the check a test aims at is the one that fails.
func fixCRC(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}

// goldenKeys are the keys of the golden filters.
func goldenKeys(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "key-%d", i)
	}
	return out
}

// target is the method set that Filter and Scalable share.
type target interface {
	modeltest.Target
	MarshalBinary() ([]byte, error)
}

// goldenCases build the golden files deterministically: fixed seeds, fixed
// keys, the default (breadth-first) insertion.
var goldenCases = []struct {
	file  string
	keys  [][]byte
	build func(t *testing.T) marshaler
	read  func(data []byte) (target, error)
}{
	{
		file: "golden-filter-v1.bin",
		keys: goldenKeys(90),
		build: func(t *testing.T) marshaler {
			f := mustNew(t, filter.Config{Capacity: 100, BucketSize: 4, FingerprintBits: 12, Seed: 0x5eed})
			insertAll(t, f, goldenKeys(90))
			if f.VictimUsed() {
				t.Fatal("the plain golden filter uses its victim slot")
			}
			return f
		},
		read: readFilter,
	},
	{
		// Distinct keys inserted until the victim slot is taken.
		file: "golden-filter-victim-v1.bin",
		keys: goldenKeys(victimKeys),
		build: func(t *testing.T) marshaler {
			f := mustNew(t, filter.Config{Capacity: 20, BucketSize: 2, FingerprintBits: 7, Seed: 42})
			insertAll(t, f, goldenKeys(victimKeys))
			if !f.VictimUsed() {
				t.Fatalf("the victim golden filter does not use its victim slot; insert more than %d keys", victimKeys)
			}
			return f
		},
		read: readFilter,
	},
	{
		// The semi-sorted layout at the default rate (the default layout
		// before ranked buckets): 10-bit fingerprints, 36 bits a bucket;
		// half full, with keys inserted twice, so that buckets hold equal
		// nibbles.
		file: "golden-filter-semisorted-v2.bin",
		keys: append(goldenKeys(120), goldenKeys(20)...),
		build: func(t *testing.T) marshaler {
			f := mustNew(t, filter.Config{Capacity: 250, Packing: filter.PackingSemiSorted, Seed: 0x5eed})
			if f.Packing() != filter.PackingSemiSorted || f.FingerprintBits() != 10 {
				t.Fatalf("the default layout is %v with %d bits, want semi-sorted with 10", f.Packing(), f.FingerprintBits())
			}
			insertAll(t, f, append(goldenKeys(120), goldenKeys(20)...))
			return f
		},
		read: readFilter,
	},
	{
		// The default layout at the default rate: ranked buckets of Q = 28,
		// L = 5 (R = 896), 35 bits a bucket; half full, with keys inserted
		// twice, so that buckets hold equal fingerprints.
		file: "golden-filter-ranked-v3.bin",
		keys: append(goldenKeys(120), goldenKeys(20)...),
		build: func(t *testing.T) marshaler {
			f := mustNew(t, filter.Config{Capacity: 250, Seed: 0x5eed})
			if f.Packing() != filter.PackingRanked || f.FingerprintRange() != 28<<5 {
				t.Fatalf("the default layout is %v with R = %d, want ranked with 896", f.Packing(), f.FingerprintRange())
			}
			insertAll(t, f, append(goldenKeys(120), goldenKeys(20)...))
			return f
		},
		read: readFilter,
	},
	{
		// Ranked buckets wider than a word, at 10^-4 for 100 keys: Q = 19,
		// L = 12, 61 bits a bucket, filled until the victim slot is taken.
		file: "golden-filter-ranked-wide-v3.bin",
		keys: goldenKeys(rankedVictimKeys),
		build: func(t *testing.T) marshaler {
			f := mustNew(t, filter.Config{Capacity: 100, FalsePositiveRate: 1e-4, Packing: filter.PackingRanked, Seed: 0x5eed})
			if f.Packing() != filter.PackingRanked || f.FingerprintRange() != 19<<12 {
				t.Fatalf("the layout at 1e-4 is %v with R = %d, want ranked with %d", f.Packing(), f.FingerprintRange(), 19<<12)
			}
			insertAll(t, f, goldenKeys(rankedVictimKeys))
			if !f.VictimUsed() {
				t.Fatalf("the wide ranked golden filter does not use its victim slot; insert more than %d keys", rankedVictimKeys)
			}
			return f
		},
		read: readFilter,
	},
	{
		// Grown from 16 keys to 1000, past three doublings, with every
		// third key deleted: entries of several tail lengths.
		file: "golden-scalable-v2.bin",
		keys: goldenScalableKeys(),
		build: func(t *testing.T) marshaler {
			s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 16, BucketSize: 4, FalsePositiveRate: 0.01, Seed: 0x5eed})
			for _, k := range goldenKeys(1000) {
				if err := s.Insert(k); err != nil {
					t.Fatal(err)
				}
			}
			for i, k := range goldenKeys(1000) {
				if i%3 == 0 && !s.Delete(k) {
					t.Fatalf("delete of %q failed", k)
				}
			}
			if s.Stages() < 4 {
				t.Fatalf("the golden scalable filter has %d stages, want 4 or more", s.Stages())
			}
			return s
		},
		read: func(data []byte) (target, error) { return filter.ReadScalable(bytes.NewReader(data)) },
	},
}

// goldenScalableKeys are the keys the Scalable golden file keeps.
func goldenScalableKeys() [][]byte {
	var kept [][]byte
	for i, k := range goldenKeys(1000) {
		if i%3 != 0 {
			kept = append(kept, k)
		}
	}
	return kept
}

// TestScalableV1Refused reads the last Scalable file of format version 1 (a
// chain of stages): it cannot be converted without its keys, and the error
// says so and how to rebuild it.
func TestScalableV1Refused(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden-scalable-v1.bin"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = filter.ReadScalable(bytes.NewReader(data))
	if !errors.Is(err, filter.ErrOldFormat) || errors.Is(err, filter.ErrCorrupt) {
		t.Fatalf("ReadScalable of a version-1 file: %v, want ErrOldFormat", err)
	}
	for _, want := range []string{"version-1", "rebuild it from the keys", "cuckoo build --scalable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	var s filter.Scalable
	if err := s.UnmarshalBinary(data); !errors.Is(err, filter.ErrOldFormat) {
		t.Fatalf("UnmarshalBinary of a version-1 file: %v, want ErrOldFormat", err)
	}
}

// TestScalableFlatSplitLoads reads a file written when the split load was
// one number for the whole round of splits (0.90 for 4 slots, before
// linhash.SplitLoadAt): its geometry is in the file, so it loads as it was,
// and inserts past it split on the present schedule without losing a key.
func TestScalableFlatSplitLoads(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden-scalable-v2-flat-split.bin"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := filter.ReadScalable(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	kept := goldenScalableKeys()
	for _, k := range kept {
		if !s.Contains(k) {
			t.Fatalf("the file does not contain %q", k)
		}
	}
	stages := s.Stages()
	for _, k := range goldenKeys(5000)[1000:] {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, k)
	}
	if s.Stages() <= stages {
		t.Fatalf("4000 more keys left the table at %d stages", s.Stages())
	}
	for _, k := range kept {
		if !s.Contains(k) {
			t.Fatalf("%q lost after the table grew", k)
		}
	}
	if l := s.LoadFactor(); l > splitLoad[4] {
		t.Fatalf("load %.4f after inserts, above the split load %.2f", l, splitLoad[4])
	}
}

// victimKeys is the number of keys after which the victim golden filter first
// uses its victim slot, and rankedVictimKeys the wide ranked one.
const (
	victimKeys       = 72
	rankedVictimKeys = 160
)

func readFilter(data []byte) (target, error) { return filter.Read(bytes.NewReader(data)) }

func insertAll(t testing.TB, f *filter.Filter, keys [][]byte) {
	t.Helper()
	for i, k := range keys {
		if err := f.Insert(k); err != nil {
			t.Fatalf("insert %d (%q): %v", i, k, err)
		}
	}
	check(t, f)
}

// TestGolden pins the format: a filter built the same way always encodes to
// the committed bytes, and the committed bytes decode to a filter that holds
// the keys, which also pins the hash. If the sizing or the insertion
// algorithm changed on purpose, regenerate with -update; if the format
// changed, bump the format version.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", c.file)
			got := mustMarshal(t, c.build(t))
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encoding differs from %s (%d bytes, want %d) at byte %d",
					path, len(got), len(want), firstDiff(got, want))
			}
			g, err := c.read(want)
			if err != nil {
				t.Fatalf("decoding %s: %v", path, err)
			}
			for _, k := range c.keys {
				if !g.Contains(k) {
					t.Fatalf("%s does not contain %q", path, k)
				}
			}
			if g.Len() != uint64(len(c.keys)) {
				t.Fatalf("%s: Len = %d, want %d", path, g.Len(), len(c.keys))
			}
			if re := mustMarshal(t, g); !bytes.Equal(re, want) {
				t.Fatalf("%s: decoding and re-encoding changed the bytes", path)
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// encodedShapes are filters to round-trip: every bucket size, widths that
// fill bytes and widths that leave bits over, with and without a victim.
func encodedShapes(t *testing.T) map[string]*filter.Filter {
	out := map[string]*filter.Filter{}
	for _, c := range []struct {
		b, f   int
		n      int
		victim bool
	}{
		{2, 4, 10, false}, {2, 5, 33, true}, {4, 12, 1000, false}, {4, 13, 57, true},
		{4, 16, 200, false}, {8, 9, 99, false}, {8, 32, 300, true}, {2, 32, 1, false},
	} {
		f := mustNew(t, filter.Config{Capacity: uint64(c.n), BucketSize: c.b, FingerprintBits: c.f, Seed: uint64(c.n)})
		insertAll(t, f, keys(c.n*9/10, uint64(c.f)))
		if c.victim {
			fillToVictim(t, f, []byte("hot"))
		}
		out[fmt.Sprintf("b=%d/f=%d/n=%d/victim=%v", c.b, c.f, c.n, c.victim)] = f
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	for name, f := range encodedShapes(t) {
		t.Run(name, func(t *testing.T) {
			enc := mustMarshal(t, f)
			if int64(len(enc)) != f.EncodedSize() {
				t.Fatalf("MarshalBinary gave %d bytes, EncodedSize says %d", len(enc), f.EncodedSize())
			}
			var buf bytes.Buffer
			n, err := f.WriteTo(&buf)
			if err != nil || n != int64(len(enc)) {
				t.Fatalf("WriteTo = %d, %v; want %d, nil", n, err, len(enc))
			}
			if !bytes.Equal(buf.Bytes(), enc) {
				t.Fatal("WriteTo and MarshalBinary differ")
			}

			g, err := filter.Read(bytes.NewReader(enc))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			var u filter.Filter // UnmarshalBinary works on a zero Filter
			if err := u.UnmarshalBinary(enc); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			var rf filter.Filter
			if n, err := rf.ReadFrom(bytes.NewReader(enc)); err != nil || n != int64(len(enc)) {
				t.Fatalf("ReadFrom = %d, %v; want %d, nil", n, err, len(enc))
			}
			for _, d := range []*filter.Filter{g, &u, &rf} {
				check(t, d)
				if !bytes.Equal(mustMarshal(t, d), enc) {
					t.Fatal("decoded filter re-encodes differently")
				}
				if d.Len() != f.Len() || d.Capacity() != f.Capacity() || d.Seed() != f.Seed() ||
					d.MaxKicks() != f.MaxKicks() || d.Buckets() != f.Buckets() || d.VictimUsed() != f.VictimUsed() {
					t.Fatalf("decoded parameters differ: %d %d %d %d %d %v",
						d.Len(), d.Capacity(), d.Seed(), d.MaxKicks(), d.Buckets(), d.VictimUsed())
				}
			}
			// The decoded filter behaves like the original.
			probe := keys(2000, 99)
			for _, k := range probe {
				if g.Contains(k) != f.Contains(k) || g.Count(k) != f.Count(k) {
					t.Fatalf("decoded filter answers %q differently", k)
				}
			}
		})
	}
}

// TestReadConsumesExactly decodes filters written one after another to one
// stream.
func TestReadConsumesExactly(t *testing.T) {
	shapes := encodedShapes(t)
	var stream bytes.Buffer
	var order []*filter.Filter
	for _, f := range shapes {
		if _, err := f.WriteTo(&stream); err != nil {
			t.Fatal(err)
		}
		order = append(order, f)
	}
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 8, Seed: 1})
	for _, k := range keys(50, 1) {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.WriteTo(&stream); err != nil {
		t.Fatal(err)
	}
	stream.WriteString("tail")
	r := bytes.NewReader(stream.Bytes())
	for i, f := range order {
		g, err := filter.Read(r)
		if err != nil {
			t.Fatalf("filter %d: %v", i, err)
		}
		if !bytes.Equal(mustMarshal(t, g), mustMarshal(t, f)) {
			t.Fatalf("filter %d decoded differently", i)
		}
	}
	g, err := filter.ReadScalable(r)
	if err != nil {
		t.Fatalf("scalable: %v", err)
	}
	if !bytes.Equal(mustMarshal(t, g), mustMarshal(t, s)) {
		t.Fatal("scalable decoded differently")
	}
	if rest, _ := io.ReadAll(r); string(rest) != "tail" {
		t.Fatalf("after the filters the stream holds %q, want %q", rest, "tail")
	}
}

func TestEncodeZeroFilter(t *testing.T) {
	var f filter.Filter
	if _, err := f.MarshalBinary(); err == nil {
		t.Error("MarshalBinary of a zero Filter succeeded")
	}
	if _, err := f.WriteTo(io.Discard); err == nil {
		t.Error("WriteTo of a zero Filter succeeded")
	}
	var s filter.Scalable
	if _, err := s.MarshalBinary(); err == nil {
		t.Error("MarshalBinary of a zero Scalable succeeded")
	}
	if _, err := s.WriteTo(io.Discard); err == nil {
		t.Error("WriteTo of a zero Scalable succeeded")
	}
}

// failingWriter accepts n bytes, then fails.
type failingWriter struct {
	n   int
	err error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) <= w.n {
		w.n -= len(p)
		return len(p), nil
	}
	n := w.n
	w.n = 0
	return n, w.err
}

// TestWriteToError checks that WriteTo returns the writer's error and the
// bytes it accepted, whatever point the writer fails at.
func TestWriteToError(t *testing.T) {
	boom := errors.New("disk full")
	f := mustNew(t, filter.Config{Capacity: 50, FingerprintBits: 12})
	insertAll(t, f, keys(40, 5))
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 8})
	for _, k := range keys(30, 5) {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	for name, w := range map[string]io.WriterTo{"Filter": f, "Scalable": s} {
		size := len(mustMarshal(t, w.(marshaler)))
		for limit := range size {
			n, err := w.WriteTo(&failingWriter{n: limit, err: boom})
			if !errors.Is(err, boom) || n != int64(limit) {
				t.Fatalf("%s: WriteTo failing after %d bytes = %d, %v", name, limit, n, err)
			}
		}
	}
}

// corruptCase is an encoding broken in one way and a word the error must say.
type corruptCase struct {
	name string
	data []byte
	want string
}

// decodeFilter runs both Filter decoders on data.
func decodeFilter(data []byte) (readErr, unmarshalErr error) {
	_, readErr = filter.Read(bytes.NewReader(data))
	var f filter.Filter
	unmarshalErr = f.UnmarshalBinary(data)
	return readErr, unmarshalErr
}

func wantCorruptMsg(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s succeeded, want an error about %q", what, want)
	case !errors.Is(err, filter.ErrCorrupt):
		t.Errorf("%s: %q does not wrap ErrCorrupt", what, err)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: %q does not say %q", what, err, want)
	}
}

// base returns a valid encoding of a small filter with the given shape and
// the number of keys it holds.
func base(t *testing.T, b, f int, capacity uint64) []byte {
	flt := mustNew(t, filter.Config{Capacity: capacity, BucketSize: b, FingerprintBits: f, Seed: 3})
	insertAll(t, flt, keys(int(capacity), 8))
	return mustMarshal(t, flt)
}

// edit returns a copy of enc changed by fns, its checksum recomputed.
func edit(enc []byte, fns ...func(b []byte)) []byte {
	b := bytes.Clone(enc)
	for _, fn := range fns {
		fn(b)
	}
	return fixCRC(b)
}

func put16(off int, v uint16) func([]byte) {
	return func(b []byte) { binary.LittleEndian.PutUint16(b[off:], v) }
}

func put32(off int, v uint32) func([]byte) {
	return func(b []byte) { binary.LittleEndian.PutUint32(b[off:], v) }
}

func put64(off int, v uint64) func([]byte) {
	return func(b []byte) { binary.LittleEndian.PutUint64(b[off:], v) }
}

func put8(off int, v byte) func([]byte) { return func(b []byte) { b[off] = v } }

func TestDecodeHeaderErrors(t *testing.T) {
	enc := base(t, 4, 12, 40)
	m := binary.LittleEndian.Uint64(enc[offBuckets:])
	slots := m * 4
	count := binary.LittleEndian.Uint64(enc[offCount:])
	tableLen := binary.LittleEndian.Uint64(enc[offTableLen:])
	cases := []corruptCase{
		{"magic", edit(enc, put8(0, 'X')), "magic"},
		{"version=0", edit(enc, put16(offVersion, 0)), "format version 0"},
		{"version=4", edit(enc, put16(offVersion, 4)), "format version 4"},
		{"version=1/packing=1", edit(enc, put8(offPacking, 1)), "packing 1"},
		{"version=2/packing=2", edit(enc, put16(offVersion, 2), put8(offPacking, 2)), "packing 2"},
		{"kind=0", edit(enc, put8(offKind, 0)), "kind 0"},
		{"kind=scalable", edit(enc, put8(offKind, 2)), "kind 2"},
		{"bucket=0", edit(enc, put8(offBucket, 0)), "bucket size 0"},
		{"bucket=3", edit(enc, put8(offBucket, 3)), "bucket size 3"},
		{"bucket=16", edit(enc, put8(offBucket, 16)), "bucket size 16"},
		{"bits=3", edit(enc, put8(offBits, 3)), "fingerprint bits 3"},
		{"bits=33", edit(enc, put8(offBits, 33)), "fingerprint bits 33"},
		{"flags", edit(enc, put8(offFlags, 2)), "reserved"},
		{"reserved11", edit(enc, put8(offReserved1, 0x80)), "reserved"},
		{"reserved60", edit(enc, put32(offReserved2, 1<<31)), "reserved"},
		{"kicks=0", edit(enc, put32(offKicks, 0)), "MaxKicks 0"},
		{"kicks=65537", edit(enc, put32(offKicks, 1<<16+1)), "MaxKicks 65537"},
		{"buckets=0", edit(enc, put64(offBuckets, 0)), "0 buckets"},
		{"buckets=2^32+1", edit(enc, put64(offBuckets, 1<<32+1)), "4294967297 buckets"},
		{"buckets=max", edit(enc, put64(offBuckets, math.MaxUint64)), "buckets"},
		{"capacity=0", edit(enc, put64(offCapacity, 0)), "capacity 0"},
		{"capacity>slots", edit(enc, put64(offCapacity, slots+1)), fmt.Sprintf("capacity %d", slots+1)},
		{"count>slots+1", edit(enc, put64(offCount, slots+2)), "exceeds"},
		{"count=max", edit(enc, put64(offCount, math.MaxUint64)), "exceeds"},
		{"victim fp=0", edit(enc, func(b []byte) { b[offFlags] = 1; put64(offVictimB, 1)(b) }), "victim fingerprint 0x0"},
		{"victim fp too wide", edit(enc, func(b []byte) { b[offFlags] = 1; put32(offVictimFP, 1<<12)(b) }), "victim fingerprint 0x1000"},
		{"victim bucket=m", edit(enc, func(b []byte) { b[offFlags] = 1; put32(offVictimFP, 5)(b); put64(offVictimB, m)(b) }), fmt.Sprintf("in bucket %d", m)},
		{"unused victim bucket", edit(enc, put64(offVictimB, 1)), "unused victim"},
		{"unused victim fp", edit(enc, put32(offVictimFP, 1)), "unused victim"},
		{"table length+1", edit(enc, put64(offTableLen, tableLen+1)), "table length"},
		{"table length-1", edit(enc, put64(offTableLen, tableLen-1)), "table length"},
		{"table length=2^63", edit(enc, put64(offTableLen, 1<<63)), "table length"},
	}
	if count == 0 || count > slots {
		t.Fatalf("base filter holds %d of %d slots", count, slots)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			readErr, unmarshalErr := decodeFilter(c.data)
			wantCorruptMsg(t, "Read", readErr, c.want)
			wantCorruptMsg(t, "UnmarshalBinary", unmarshalErr, c.want)
		})
	}
}

// tailShape returns a filter encoding whose slots end inside a byte, so
// that bits after the last slot exist.
func tailShape(t *testing.T) ([]byte, uint) {
	for capacity := uint64(1); capacity < 100; capacity++ {
		flt := mustNew(t, filter.Config{Capacity: capacity, BucketSize: 2, FingerprintBits: 5, Seed: 1})
		if tail := flt.Slots() * 5 % 8; tail != 0 {
			insertAll(t, flt, keys(int(capacity), 3))
			return mustMarshal(t, flt), uint(tail)
		}
	}
	t.Fatal("no capacity gives a partial last byte")
	return nil, 0
}

func TestDecodeTableErrors(t *testing.T) {
	enc := base(t, 4, 12, 40)
	count := binary.LittleEndian.Uint64(enc[offCount:])
	tail, tailBits := tailShape(t)
	// A table slot that is empty, to fill in; the base filter is not full.
	emptySlot := -1
	for i := headerSize; i+1 < len(enc)-4; i += 3 { // two 12-bit slots per 3 bytes
		if enc[i] == 0 && enc[i+1]&0x0f == 0 {
			emptySlot = i
			break
		}
	}
	if emptySlot < 0 {
		t.Fatal("no empty slot in the base filter")
	}
	cases := []corruptCase{
		{"checksum of table", func() []byte { b := bytes.Clone(enc); b[headerSize] ^= 0x40; return b }(), "checksum"},
		{"checksum itself", func() []byte { b := bytes.Clone(enc); b[len(b)-1] ^= 1; return b }(), "checksum"},
		{"checksum of header", func() []byte { b := bytes.Clone(enc); b[offSeed] ^= 1; return b }(), "checksum"},
		{"count+1", edit(enc, put64(offCount, count+1)), fmt.Sprintf("header counts %d fingerprints, the table holds %d", count+1, count)},
		{"count-1", edit(enc, put64(offCount, count-1)), "header counts"},
		{"extra slot", edit(enc, put8(emptySlot, 0x21)), fmt.Sprintf("the table holds %d", count+1)},
		{"victim not counted", edit(enc, func(b []byte) { b[offFlags] = 1; put32(offVictimFP, 7)(b) }), "header counts"},
		{"bits after last slot", edit(tail, func(b []byte) { b[len(b)-5] |= 0x80 }), "bits after the last slot"},
		{"lowest bit after last slot", edit(tail, func(b []byte) { b[len(b)-5] |= 1 << tailBits }), "bits after the last slot"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			readErr, unmarshalErr := decodeFilter(c.data)
			wantCorruptMsg(t, "Read", readErr, c.want)
			wantCorruptMsg(t, "UnmarshalBinary", unmarshalErr, c.want)
		})
	}
}

// TestDecodeTruncated cuts an encoding at every offset. Read names the part
// the data ends in; UnmarshalBinary says the length is wrong.
func TestDecodeTruncated(t *testing.T) {
	for _, shape := range []struct{ b, f int }{{4, 12}, {2, 5}, {8, 32}} {
		enc := base(t, shape.b, shape.f, 30)
		tableEnd := len(enc) - 4
		for n := range len(enc) {
			readErr, unmarshalErr := decodeFilter(enc[:n])
			part := "header"
			switch {
			case n >= tableEnd:
				part = "checksum"
			case n >= headerSize:
				part = "table"
			}
			wantCorruptMsg(t, fmt.Sprintf("b=%d f=%d: Read of %d of %d bytes", shape.b, shape.f, n, len(enc)),
				readErr, "data ends inside the "+part)
			want := "the header describes"
			if n < headerSize+4 {
				want = "shorter than"
			}
			wantCorruptMsg(t, fmt.Sprintf("b=%d f=%d: UnmarshalBinary of %d of %d bytes", shape.b, shape.f, n, len(enc)),
				unmarshalErr, want)
		}
	}
}

func TestUnmarshalTrailingBytes(t *testing.T) {
	enc := base(t, 4, 12, 30)
	var f filter.Filter
	err := f.UnmarshalBinary(append(bytes.Clone(enc), 0))
	wantCorruptMsg(t, "UnmarshalBinary with a trailing byte", err, fmt.Sprintf("%d bytes, the header describes %d", len(enc)+1, len(enc)))

	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 8})
	senc := mustMarshal(t, s)
	var g filter.Scalable
	wantCorruptMsg(t, "Scalable.UnmarshalBinary with trailing bytes", g.UnmarshalBinary(append(senc, 1, 2, 3)), "3 bytes after the filter")
}

// TestDecodeErrorLeavesFilterUnchanged decodes corrupt data into filters that
// already hold keys.
func TestDecodeErrorLeavesFilterUnchanged(t *testing.T) {
	f := mustNew(t, filter.Config{Capacity: 100, Seed: 9})
	insertAll(t, f, keys(60, 9))
	before := mustMarshal(t, f)
	bad := bytes.Clone(before)
	bad[headerSize] ^= 1 // checksum mismatch
	if err := f.UnmarshalBinary(bad); err == nil {
		t.Fatal("UnmarshalBinary accepted a bad checksum")
	}
	if _, err := f.ReadFrom(bytes.NewReader(bad)); err == nil {
		t.Fatal("ReadFrom accepted a bad checksum")
	}
	if !bytes.Equal(mustMarshal(t, f), before) {
		t.Fatal("a failed decode changed the filter")
	}

	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 8, Seed: 9})
	for _, k := range keys(40, 9) {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	sbefore := mustMarshal(t, s)
	sbad := bytes.Clone(sbefore)
	sbad[len(sbad)-1] ^= 1
	if err := s.UnmarshalBinary(sbad); err == nil {
		t.Fatal("Scalable.UnmarshalBinary accepted a bad checksum")
	}
	if _, err := s.ReadFrom(bytes.NewReader(sbad)); err == nil {
		t.Fatal("Scalable.ReadFrom accepted a bad checksum")
	}
	if !bytes.Equal(mustMarshal(t, s), sbefore) {
		t.Fatal("a failed decode changed the scalable filter")
	}
}

// TestDecodeHugeHeader gives a header that claims a 16 GiB table and then
// only a few bytes: decoding must fail without allocating anything like that.
func TestDecodeHugeHeader(t *testing.T) {
	const buckets = 1 << 29 // 2^29 buckets of 8 32-bit slots: 16 GiB
	hdr := make([]byte, headerSize)
	copy(hdr, "CKOO")
	put16(offVersion, 1)(hdr)
	hdr[offKind], hdr[offBucket], hdr[offBits] = 1, 8, 32
	put32(offKicks, 500)(hdr)
	put64(offCapacity, 1)(hdr)
	put64(offBuckets, buckets)(hdr)
	put64(offTableLen, buckets*8*4)(hdr)
	data := append(hdr, make([]byte, 100)...)

	const limit = 4 << 20
	for name, decode := range map[string]func() error{
		"Read": func() error { _, err := filter.Read(bytes.NewReader(data)); return err },
		"UnmarshalBinary": func() error {
			var f filter.Filter
			return f.UnmarshalBinary(data)
		},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := decode()
		runtime.ReadMemStats(&after)
		want := "data ends inside the table"
		if name == "UnmarshalBinary" {
			want = "the header describes"
		}
		wantCorruptMsg(t, name, err, want)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s of a 16 GiB header: %d bytes allocated", name, allocated)
		if allocated > limit {
			t.Errorf("%s allocated %d bytes for a header claiming 16 GiB, more than %d", name, allocated, limit)
		}
	}
}

// errReader returns its data, then err.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReadReaderError fails the reader at every point of an encoding: the
// reader's error comes back wrapped, and is not reported as corruption.
func TestReadReaderError(t *testing.T) {
	boom := errors.New("connection reset")
	enc := base(t, 2, 7, 20)
	for n := range len(enc) {
		_, err := filter.Read(&errReader{data: enc[:n], err: boom})
		if !errors.Is(err, boom) {
			t.Fatalf("Read failing after %d bytes: %v, want it to wrap %q", n, err, boom)
		}
		if errors.Is(err, filter.ErrCorrupt) {
			t.Fatalf("Read failing after %d bytes: %q claims corruption", n, err)
		}
	}
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 2, BucketSize: 2})
	for _, k := range keys(10, 1) {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	senc := mustMarshal(t, s)
	for n := range len(senc) {
		_, err := filter.ReadScalable(&errReader{data: senc[:n], err: boom})
		if !errors.Is(err, boom) {
			t.Fatalf("ReadScalable failing after %d bytes: %v, want it to wrap %q", n, err, boom)
		}
	}
}

// Offsets of the Scalable header fields, format version 2
// (scalable_format.go).
const (
	soffBucket    = 7
	soffSlotBits  = 8
	soffFPBits    = 9
	soffLevel     = 10
	soffReserved  = 11
	soffKicks     = 12
	soffCapacity  = 16
	soffRate      = 24
	soffSeed      = 32
	soffSplit     = 40
	soffGrowth    = 48
	soffStashed   = 52
	soffItems     = 56
	sheaderSize   = 64
	stashHashSize = 8
)

// scalableLayout is where the parts of a Scalable encoding lie.
type scalableLayout struct {
	b, w, fp uint   // bucket size, slot bits, fingerprint bits
	buckets  uint64 // 2^level + split
	tableEnd int    // the offset after the packed table
	stashEnd int    // the offset after the stashed hashes
	entries  uint64
}

func layoutOf(t *testing.T, s *filter.Scalable, enc []byte) scalableLayout {
	t.Helper()
	l := scalableLayout{
		b: uint(enc[soffBucket]), w: uint(enc[soffSlotBits]), fp: uint(enc[soffFPBits]),
		buckets: 1<<enc[soffLevel] + binary.LittleEndian.Uint64(enc[soffSplit:]),
		entries: s.Entries(),
	}
	if l.buckets != s.Buckets() {
		t.Fatalf("the header describes %d buckets, the filter has %d", l.buckets, s.Buckets())
	}
	l.tableEnd = sheaderSize + int((l.buckets*uint64(l.b*l.w)+7)/8)
	l.stashEnd = l.tableEnd + stashHashSize*s.Stashed()
	if l.stashEnd+4 != len(enc) {
		t.Fatalf("%d bytes, the layout gives %d", len(enc), l.stashEnd+4)
	}
	return l
}

// slot returns slot i of the packed table (bucket i/b, slot i%b).
func (l scalableLayout) slot(enc []byte, i uint64) uint64 {
	var v uint64
	for bit := range uint64(l.w) {
		off := uint64(sheaderSize)*8 + i*uint64(l.w) + bit
		v |= uint64(enc[off/8]>>(off%8)&1) << bit
	}
	return v
}

// setSlot returns a func that sets slot i of the packed table to v.
func (l scalableLayout) setSlot(i, v uint64) func([]byte) {
	return func(enc []byte) {
		for bit := range uint64(l.w) {
			off := uint64(sheaderSize)*8 + i*uint64(l.w) + bit
			enc[off/8] = enc[off/8]&^(1<<(off%8)) | byte(v>>bit&1)<<(off%8)
		}
	}
}

// findSlot returns the first slot for which ok holds.
func (l scalableLayout) findSlot(t *testing.T, enc []byte, ok func(v uint64) bool) uint64 {
	t.Helper()
	for i := range l.buckets * uint64(l.b) {
		if ok(l.slot(enc, i)) {
			return i
		}
	}
	t.Fatal("no slot of the wanted kind")
	return 0
}

// scalableBase returns a Scalable grown from 100 keys to 3000 with every
// third key deleted, and its encoding. At a rate of 0.1 its slots have 4
// tail bits, so the growth has copied old entries; its 28 initial buckets
// are not a power of two, so the header can claim fewer buckets at the
// initial level.
func scalableBase(t *testing.T) (*filter.Scalable, []byte) {
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 100, BucketSize: 4, FalsePositiveRate: 0.1, Seed: 11})
	ks := keys(3000, 11)
	for _, k := range ks {
		mustInsert(t, s, k)
	}
	for i := 0; i < len(ks); i += 3 {
		if !s.Delete(ks[i]) {
			t.Fatalf("delete %d found nothing", i)
		}
	}
	return s, mustMarshal(t, s)
}

// scalableOddBase returns an encoding whose packed table ends inside a
// byte: 2 slots of 13 bits a bucket, a bucket count not a multiple of 4.
func scalableOddBase(t *testing.T) (*filter.Scalable, []byte) {
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 30, BucketSize: 2, Seed: 12})
	for i := 0; i < 100 || s.Slots()*uint64(s.SlotBits())%8 == 0; i++ {
		mustInsert(t, s, fmt.Appendf(nil, "odd-%d", i))
	}
	return s, mustMarshal(t, s)
}

// scalableStashBase returns a small filter with 3 keys stashed, and its
// encoding (the filter of FuzzDecode's seed scalable-v2-b2-stash): keys
// that share a fingerprint and one bucket pair, away from the buckets the
// splits of an insert reach, with tails that differ.
func scalableStashBase(t *testing.T) (*filter.Scalable, []byte) {
	restore := filter.SetHash(func(key []byte, seed uint64) uint64 {
		h := hashing.Key(key, seed)
		if bytes.HasPrefix(key, collide) {
			return 0x12345678<<32 | h&0x7f<<10 | 20
		}
		return h
	})
	defer restore()
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 50, BucketSize: 2, FalsePositiveRate: 0.1, Seed: 1})
	for _, k := range keys(35, 1) {
		mustInsert(t, s, k)
	}
	for i := 0; s.Stashed() < 3; i++ {
		if err := s.Insert(fmt.Appendf(collide[:len(collide):len(collide)], "%d", i)); err != nil && !errors.Is(err, filter.ErrFull) {
			t.Fatal(err)
		}
		if i == 1000 {
			t.Fatalf("1000 colliding keys stashed %d", s.Stashed())
		}
	}
	enc := mustMarshal(t, s)
	if seed, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzDecode", "scalable-v2-b2-stash")); err != nil ||
		!bytes.Contains(seed, []byte(strconv.Quote(string(enc)))) {
		t.Errorf("the seed scalable-v2-b2-stash is not this filter's encoding (%v)", err)
	}
	return s, enc
}

// decodeScalable runs both Scalable decoders on data.
func decodeScalable(data []byte) (readErr, unmarshalErr error) {
	_, readErr = filter.ReadScalable(bytes.NewReader(data))
	var s filter.Scalable
	unmarshalErr = s.UnmarshalBinary(data)
	return readErr, unmarshalErr
}

// TestDecodeScalableErrors corrupts a valid encoding of a grown Scalable one
// field at a time, recomputing the checksum so that the check aimed at is
// the one that fails, and matches the decoders' messages.
func TestDecodeScalableErrors(t *testing.T) {
	s, enc := scalableBase(t)
	l := layoutOf(t, s, enc)
	level := uint(enc[soffLevel])
	split := binary.LittleEndian.Uint64(enc[soffSplit:])
	k := l.w - l.fp // the tail field
	if level < 5 || split == 0 || s.Entries() == s.Len() {
		t.Fatalf("base: level %d, split %d, %d entries for %d keys: want a grown filter with copies", level, split, s.Entries(), s.Len())
	}
	empty := l.findSlot(t, enc, func(v uint64) bool { return v == 0 })
	// A used slot with a tail bit below its stop bit: flipping that bit
	// leaves a valid slot, which only the checksum catches.
	tailed := l.findSlot(t, enc, func(v uint64) bool { return v&(1<<k-1) > 1 })
	oddS, odd := scalableOddBase(t)
	oddL := layoutOf(t, oddS, odd)
	lastBits := oddL.buckets * uint64(oddL.b*oddL.w) % 8
	if lastBits == 0 {
		t.Fatal("the odd base fills its last byte")
	}
	stashS, stash := scalableStashBase(t)
	stashL := layoutOf(t, stashS, stash)
	// shape gives the slot and fingerprint bits a configuration needs.
	shape := func(b int, rate float64) string {
		s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 1, BucketSize: b, FalsePositiveRate: rate})
		return fmt.Sprintf("want %d and %d", s.SlotBits(), s.FingerprintBits())
	}
	slots := func(w, f uint) string { return fmt.Sprintf("%d-bit slots with %d-bit fingerprints, ", w, f) }

	cases := []corruptCase{
		{"magic", edit(enc, put8(0, 'X')), `bad magic "XKOO"`},
		{"version=0", edit(enc, put16(offVersion, 0)), "Scalable format version 0, this package reads 2"},
		{"version=7", edit(enc, put16(offVersion, 7)), "Scalable format version 7, this package reads 2"},
		{"kind=0", edit(enc, put8(offKind, 0)), "kind 0 is not a Scalable (2)"},
		{"kind=filter", edit(enc, put8(offKind, 1)), "kind 1 is not a Scalable (2)"},
		{"bucket=0", edit(enc, put8(soffBucket, 0)), "BucketSize:0 MaxKicks:500 Seed:11} is not in canonical form"},
		{"bucket=3", edit(enc, put8(soffBucket, 3)), "header: filter: ScalableConfig.BucketSize is 3: it must be 2, 4 or 8"},
		{"bucket=2", edit(enc, put8(soffBucket, 2)), slots(l.w, l.fp) + shape(2, 0.1)},
		{"slot bits+1", edit(enc, put8(soffSlotBits, byte(l.w+1))), slots(l.w+1, l.fp) + shape(4, 0.1)},
		{"slot bits=0", edit(enc, put8(soffSlotBits, 0)), slots(0, l.fp) + shape(4, 0.1)},
		{"fingerprint bits+1", edit(enc, put8(soffFPBits, byte(l.fp+1))), slots(l.w, l.fp+1) + shape(4, 0.1)},
		{"fingerprint bits=0", edit(enc, put8(soffFPBits, 0)), slots(l.w, 0) + shape(4, 0.1)},
		{"level below initial", edit(enc, put8(soffLevel, 3)), "level 3 and split"},
		{"level=41", edit(enc, put8(soffLevel, 41)), "level 41 and split"},
		{"level=255", edit(enc, put8(soffLevel, 255)), "level 255 and split"},
		{"split=2^level", edit(enc, put64(soffSplit, 1<<level)), fmt.Sprintf("level %d and split %d, want level 4..40 and split below 2^level", level, 1<<level)},
		{"split=max", edit(enc, put64(soffSplit, math.MaxUint64)), "split 18446744073709551615"},
		{"fewer buckets than initial", edit(enc, func(b []byte) { b[soffLevel] = 4; put64(soffSplit, 11)(b) }), "27 buckets, fewer than the initial 28"},
		{"reserved", edit(enc, put8(soffReserved, 1)), "reserved header byte 1, want 0"},
		{"kicks=0", edit(enc, put32(soffKicks, 0)), "MaxKicks:0 Seed:11} is not in canonical form"},
		{"kicks=65537", edit(enc, put32(soffKicks, 1<<16+1)), "ScalableConfig.MaxKicks is 65537: it must be in 1..65536"},
		{"rate=0", edit(enc, put64(soffRate, 0)), "FalsePositiveRate:0 Growth:2 BucketSize:4 MaxKicks:500 Seed:11} is not in canonical form"},
		{"rate=1", edit(enc, put64(soffRate, math.Float64bits(1))), "ScalableConfig.FalsePositiveRate is 1: it must be in (0, 1)"},
		{"rate=NaN", edit(enc, put64(soffRate, math.Float64bits(math.NaN()))), "ScalableConfig.FalsePositiveRate is NaN"},
		{"rate=-0.01", edit(enc, put64(soffRate, math.Float64bits(-0.01))), "ScalableConfig.FalsePositiveRate is -0.01"},
		{"rate=0.001", edit(enc, put64(soffRate, math.Float64bits(0.001))), slots(l.w, l.fp) + shape(4, 0.001)},
		{"initial capacity=0", edit(enc, put64(soffCapacity, 0)), "ScalableConfig.InitialCapacity is 0"},
		{"initial capacity=10^6", edit(enc, put64(soffCapacity, 1e6)), fmt.Sprintf("level %d and split %d, want level 18..40", level, split)},
		{"initial capacity=max", edit(enc, put64(soffCapacity, math.MaxUint64)), "more than the largest table holds"},
		{"growth=0", edit(enc, put32(soffGrowth, 0)), "Growth:0 BucketSize:4 MaxKicks:500 Seed:11} is not in canonical form"},
		{"growth=1025", edit(enc, put32(soffGrowth, 1025)), "ScalableConfig.Growth is 1025: it must be in 1..1024"},
		{"stashed=65", edit(enc, put32(soffStashed, 65)), "65 stashed keys, at most 64"},
		{"stashed=max", edit(enc, put32(soffStashed, math.MaxUint32)), "4294967295 stashed keys"},
		{"stashed+1", edit(enc, put32(soffStashed, 1)), "data ends inside the stash"},
		{"items>entries", edit(enc, put64(soffItems, l.entries+1)), fmt.Sprintf("%d keys held in %d entries", l.entries+1, l.entries)},
		{"items=max", edit(enc, put64(soffItems, math.MaxUint64)), fmt.Sprintf("18446744073709551615 keys held in %d entries", l.entries)},
		{"slot without fingerprint", edit(enc, l.setSlot(empty, 1<<(k-1))),
			fmt.Sprintf("bucket %d slot %d: %#x has no fingerprint or no tail stop bit", empty/uint64(l.b), empty%uint64(l.b), 1<<(k-1))},
		{"slot without stop bit", edit(enc, l.setSlot(empty, 1<<k)),
			fmt.Sprintf("bucket %d slot %d: %#x has no fingerprint or no tail stop bit", empty/uint64(l.b), empty%uint64(l.b), 1<<k)},
		{"bits after the last bucket", edit(odd, put8(oddL.tableEnd-1, odd[oddL.tableEnd-1]|0x80)), "nonzero bits after the last bucket"},
		{"lowest bit after the last bucket", edit(odd, put8(oddL.tableEnd-1, odd[oddL.tableEnd-1]|1<<lastBits)), "nonzero bits after the last bucket"},
		{"checksum of a slot", func() []byte {
			b := bytes.Clone(enc)
			l.setSlot(tailed, l.slot(enc, tailed)^1)(b)
			return b
		}(), "scalable checksum"},
		{"checksum of the stash", func() []byte { b := bytes.Clone(stash); b[stashL.tableEnd+3] ^= 8; return b }(), "scalable checksum"},
		{"checksum of the header", func() []byte { b := bytes.Clone(enc); b[soffSeed] ^= 1; return b }(), "scalable checksum"},
		{"checksum of the growth", func() []byte { b := bytes.Clone(enc); b[soffGrowth] ^= 1; return b }(), "scalable checksum"},
		{"checksum itself", func() []byte { b := bytes.Clone(enc); b[len(b)-1] ^= 0x80; return b }(), "scalable checksum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			readErr, unmarshalErr := decodeScalable(c.data)
			wantCorruptMsg(t, "ReadScalable", readErr, c.want)
			wantCorruptMsg(t, "UnmarshalBinary", unmarshalErr, c.want)
		})
	}

	// Format version 1 is refused with its own error, not as corruption.
	v1 := edit(enc, put16(offVersion, 1))
	readErr, unmarshalErr := decodeScalable(v1)
	for name, err := range map[string]error{"ReadScalable": readErr, "UnmarshalBinary": unmarshalErr} {
		if !errors.Is(err, filter.ErrOldFormat) || errors.Is(err, filter.ErrCorrupt) {
			t.Errorf("%s of version 1: %v, want ErrOldFormat", name, err)
		}
	}
	// A Filter decoder refuses a Scalable. (It checks the version before
	// the kind, so it says "format version 2, this package reads 1" rather
	// than that the data is not a Filter.)
	readErr, unmarshalErr = decodeFilter(enc)
	wantCorrupt(t, "Read of a Scalable", readErr)
	wantCorrupt(t, "Filter.UnmarshalBinary of a Scalable", unmarshalErr)
	// Trailing bytes: ReadScalable leaves them, UnmarshalBinary refuses.
	var u filter.Scalable
	wantCorruptMsg(t, "UnmarshalBinary with trailing bytes", u.UnmarshalBinary(append(bytes.Clone(enc), 0, 0, 0)), "3 bytes after the filter")
	wantCorruptMsg(t, "UnmarshalBinary with a trailing byte", u.UnmarshalBinary(append(bytes.Clone(stash), 0)), "1 bytes after the filter")
	if _, err := filter.ReadScalable(bytes.NewReader(append(bytes.Clone(enc), 0, 0, 0))); err != nil {
		t.Errorf("ReadScalable with trailing bytes: %v", err)
	}
}

// TestDecodeScalableTruncated cuts encodings at every offset: both decoders
// name the part the data ends in.
func TestDecodeScalableTruncated(t *testing.T) {
	for name, build := range map[string]func(*testing.T) (*filter.Scalable, []byte){
		"grown": scalableBase, "odd": scalableOddBase, "stash": scalableStashBase,
	} {
		s, enc := build(t)
		l := layoutOf(t, s, enc)
		for n := range len(enc) {
			part := "scalable header"
			switch {
			case n >= l.stashEnd:
				part = "scalable checksum"
			case n >= l.tableEnd:
				part = "stash"
			case n >= sheaderSize:
				part = "table"
			}
			readErr, unmarshalErr := decodeScalable(enc[:n])
			what := fmt.Sprintf("%s: %%s of %d of %d bytes", name, n, len(enc))
			wantCorruptMsg(t, fmt.Sprintf(what, "ReadScalable"), readErr, "data ends inside the "+part)
			wantCorruptMsg(t, fmt.Sprintf(what, "UnmarshalBinary"), unmarshalErr, "data ends inside the "+part)
		}
	}
}

// TestDecodeScalableHugeHeader gives a header that claims a table of 2^40
// buckets (16 TiB) and then 100 bytes: decoding must fail having allocated
// no more than a few MiB.
func TestDecodeScalableHugeHeader(t *testing.T) {
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 1, BucketSize: 8, Seed: 1})
	hdr := mustMarshal(t, s)[:sheaderSize]
	hdr[soffLevel] = 40
	data := append(hdr, make([]byte, 100)...)

	const limit = 4 << 20
	for name, decode := range map[string]func() error{
		"ReadScalable": func() error { _, err := filter.ReadScalable(bytes.NewReader(data)); return err },
		"UnmarshalBinary": func() error {
			var s filter.Scalable
			return s.UnmarshalBinary(data)
		},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := decode()
		runtime.ReadMemStats(&after)
		wantCorruptMsg(t, name, err, "data ends inside the table")
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s of a header claiming 2^40 buckets: %d bytes allocated", name, allocated)
		if allocated > limit {
			t.Errorf("%s allocated %d bytes for a header claiming 2^40 buckets, more than %d", name, allocated, limit)
		}
	}
}

// TestDecodeSeedCorpus checks that the Scalable encodings in FuzzDecode's
// seed corpus (testdata/fuzz/FuzzDecode/scalable-v2-*: grown filters of
// every bucket size with deletes, and one with stashed keys) still decode,
// so that the fuzzer starts from valid inputs of the current format.
func TestDecodeSeedCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzDecode", "scalable-v2-*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Scalable seeds for FuzzDecode: %v", err)
	}
	copies, stashed := false, false
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s is not a fuzz corpus file of one []byte", file)
		}
		quoted := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
		enc, err := strconv.Unquote(quoted)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var s filter.Scalable
		if err := s.UnmarshalBinary([]byte(enc)); err != nil {
			t.Fatalf("%s does not decode: %v", file, err)
		}
		checkDecode(t, []byte(enc))
		copies = copies || s.Entries() > s.Len()
		stashed = stashed || s.Stashed() > 0
	}
	if !copies || !stashed {
		t.Fatalf("the seeds lack a filter with copies (%v) or one with stashed keys (%v)", copies, stashed)
	}
}
