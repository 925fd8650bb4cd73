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
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
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
	offReserved1 = 10
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

// victimKeys is the number of keys after which the victim golden filter first
// uses its victim slot.
const victimKeys = 72

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

// edit returns a copy of enc changed by fn, its checksum recomputed.
func edit(enc []byte, fn func(b []byte)) []byte {
	b := bytes.Clone(enc)
	fn(b)
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
		{"version=2", edit(enc, put16(offVersion, 2)), "format version 2"},
		{"kind=0", edit(enc, put8(offKind, 0)), "kind 0"},
		{"kind=scalable", edit(enc, put8(offKind, 2)), "kind 2"},
		{"bucket=0", edit(enc, put8(offBucket, 0)), "bucket size 0"},
		{"bucket=3", edit(enc, put8(offBucket, 3)), "bucket size 3"},
		{"bucket=16", edit(enc, put8(offBucket, 16)), "bucket size 16"},
		{"bits=3", edit(enc, put8(offBits, 3)), "fingerprint bits 3"},
		{"bits=33", edit(enc, put8(offBits, 33)), "fingerprint bits 33"},
		{"flags", edit(enc, put8(offFlags, 2)), "reserved"},
		{"reserved10", edit(enc, put8(offReserved1, 1)), "reserved"},
		{"reserved11", edit(enc, put8(offReserved1+1, 0x80)), "reserved"},
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
