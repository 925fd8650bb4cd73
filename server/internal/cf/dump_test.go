package cf_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// dumpShapes are the filters dumps move: every shape Init makes, and a
// chain of two stages.
func dumpShapes(t *testing.T) []struct {
	name string
	f    *cf.Filter
	n    int // items [0, n) in it
} {
	var out []struct {
		name string
		f    *cf.Filter
		n    int
	}
	for _, s := range shapes {
		f := newFilter(t, s.p)
		addItems(t, f, 0, 1000)
		out = append(out, struct {
			name string
			f    *cf.Filter
			n    int
		}{s.name, f, 1000})
	}
	p := cf.Params{Capacity: 300, BucketSize: 2, MaxIter: 20, Expansion: 2, Seed: 9}
	p.SetRecordedSlots(0)
	out = append(out, struct {
		name string
		f    *cf.Filter
		n    int
	}{"chain", newChain(t, p, 300, true), 600})
	return out
}

// sameFigures fails the test unless a and b report the same CF.INFO, the
// same CF.DEBUG line and the same parameters; a RedisBloom filter loaded
// has the capacity its first sub-filter's slots give (RedisBloom rounds
// the buckets up to a power of 2 and keeps no capacity).
func sameFigures(t *testing.T, a, b *cf.Filter) {
	t.Helper()
	pa := a.Params()
	if pa.Layout == cf.LayoutRedisBloom {
		pa.Capacity = a.FirstBuckets() * uint64(pa.BucketSize)
	}
	if a.Info() != b.Info() || a.Debug() != b.Debug() || pa != b.Params() || a.Encoding() != b.Encoding() {
		t.Errorf("the copy differs:\n%v %q %+v %s\nwas\n%v %q %+v %s", b.Info(), b.Debug(), b.Params(), b.Encoding(),
			a.Info(), a.Debug(), a.Params(), a.Encoding())
	}
}

// TestScanDumpRoundTrip: CF.SCANDUMP's chunks loaded with CF.LOADCHUNK
// into a new key give the same filter: every item found, the same
// figures, the memory charged its size, and the load pending until the
// last chunk, with each chunk within ChunkBound.
func TestScanDumpRoundTrip(t *testing.T) {
	smallChunks(t, 64)
	for _, d := range dumpShapes(t) {
		t.Run(d.name, func(t *testing.T) {
			chunks, iters := scanDump(d.f)
			if iters[0] != 1 || len(chunks) < 2 {
				t.Fatalf("%d chunks, the header answered with iterator %d", len(chunks), iters[0])
			}
			for i := 1; i < len(chunks); i++ {
				if b := d.f.ChunkBound(iters[i-1]); uint64(len(chunks[i])) > b {
					t.Errorf("chunk %d: %d bytes, ChunkBound %d", i, len(chunks[i]), b)
				}
			}
			m := newMeter(1 << 30)
			g := new(cf.Filter)
			if err := g.BeginLoad(chunks[0], m.charge, m.release); err != nil {
				t.Fatal(err)
			}
			if m.mem != int64(g.SizeBytes()) {
				t.Errorf("charged %d for a filter of %d bytes", m.mem, g.SizeBytes())
			}
			rb := d.f.Params().Layout == cf.LayoutRedisBloom
			for i := 1; i < len(chunks); i++ {
				if g.Loading() == rb {
					t.Fatalf("before chunk %d: Loading() = %v", i, g.Loading())
				}
				if err := g.LoadChunk(iters[i], chunks[i]); err != nil {
					t.Fatalf("chunk %d: %v", i, err)
				}
			}
			if g.Loading() {
				t.Fatal("the load is pending after the last chunk")
			}
			checkFound(t, g, 0, d.n)
			sameFigures(t, d.f, g)
			if next, chunk := g.ScanDump(iters[len(iters)-1]); next != 0 || chunk != nil {
				t.Errorf("past the end: %d, %d bytes; want 0, none", next, len(chunk))
			}
			// The copy takes writes and deletes as the original did.
			addItems(t, g, d.n, d.n+100)
			checkFound(t, g, 0, d.n+100)
		})
	}
}

// TestLoadChunkOrder: a data chunk before the header, out of order, at a
// wrong iterator, or repeated is refused with "Couldn't load chunk!" and a
// detail for the log, and changes nothing: the right chunks still load
// into a filter equal to the original.
func TestLoadChunkOrder(t *testing.T) {
	smallChunks(t, 16)
	src := newFilter(t, shapes[1].p)
	addItems(t, src, 0, 500)
	chunks, iters := scanDump(src)
	if len(chunks) < 4 {
		t.Fatalf("%d chunks; the test needs 3 data chunks at least", len(chunks))
	}
	var le *cf.LoadError
	if err := new(cf.Filter).LoadChunk(iters[1], chunks[1]); !errors.As(err, &le) || err.Error() != "Couldn't load chunk!" ||
		!strings.Contains(le.Detail, "no CF.LOADCHUNK header") {
		t.Errorf("a chunk with no header: %v", err)
	}
	m := newMeter(1 << 30)
	g := new(cf.Filter)
	if err := g.BeginLoad(chunks[0], m.charge, m.release); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		iter   int64
		chunk  []byte
		detail string
	}{
		{"second first", iters[2], chunks[2], "it starts at bucket"},
		{"wrong iterator", iters[1] + 1, chunks[1], "buckets at 0 with iterator"},
		{"header as data", 2, chunks[0], "bad magic or checksum"},
		{"empty", iters[1], nil, "bad magic or checksum"},
	} {
		err := g.LoadChunk(tc.iter, tc.chunk)
		if !errors.As(err, &le) || err.Error() != "Couldn't load chunk!" || !strings.Contains(le.Detail, tc.detail) {
			t.Errorf("%s: %v (detail %q), want a detail with %q", tc.name, err, le.Detail, tc.detail)
		}
		if !g.Loading() {
			t.Fatalf("%s: the load ended", tc.name)
		}
	}
	if err := g.LoadChunk(iters[1], chunks[1]); err != nil {
		t.Fatal(err)
	}
	if err := g.LoadChunk(iters[1], chunks[1]); err == nil {
		t.Error("the first chunk twice: accepted")
	}
	for i := 2; i < len(chunks); i++ {
		if err := g.LoadChunk(iters[i], chunks[i]); err != nil {
			t.Fatalf("chunk %d after the refused ones: %v", i, err)
		}
	}
	checkFound(t, g, 0, 500)
	sameFigures(t, src, g)
}

// TestLoadCorrupt: every header and data chunk with one byte flipped, and
// every prefix of them, is refused (the CRC-32C catches them), never
// panics, charges nothing for a refused header, and changes nothing for a
// refused chunk: the real chunks then load into a filter equal to the
// original.
func TestLoadCorrupt(t *testing.T) {
	smallChunks(t, 8)
	for _, s := range []shape{shapes[1], shapes[2], shapes[5]} {
		t.Run(s.name, func(t *testing.T) {
			src := newFilter(t, s.p)
			addItems(t, src, 0, 300)
			chunks, iters := scanDump(src)
			header := chunks[0]
			for _, bad := range corruptions(header) {
				m := newMeter(1 << 30)
				err := new(cf.Filter).BeginLoad(bad, m.charge, m.release)
				if err == nil || err.Error() != "Couldn't create filter!" || m.mem != 0 {
					t.Fatalf("header %x: %v, %d bytes left charged", bad, err, m.mem)
				}
			}
			m := newMeter(1 << 30)
			g := new(cf.Filter)
			if err := g.BeginLoad(header, m.charge, m.release); err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(chunks); i++ {
				for _, bad := range corruptions(chunks[i]) {
					if err := g.LoadChunk(iters[i], bad); err == nil || err.Error() != "Couldn't load chunk!" {
						t.Fatalf("chunk %d as %x: %v", i, bad, err)
					}
				}
				if err := g.LoadChunk(iters[i], chunks[i]); err != nil {
					t.Fatalf("chunk %d after its corruptions: %v", i, err)
				}
			}
			checkFound(t, g, 0, 300)
			sameFigures(t, src, g)
		})
	}
}

// corruptions returns b with each byte flipped in turn (its low bit, then
// all of it), and each proper prefix of b.
func corruptions(b []byte) [][]byte {
	var out [][]byte
	for i := range b {
		for _, x := range []byte{1, 0xff} {
			c := append([]byte(nil), b...)
			c[i] ^= x
			out = append(out, c)
		}
	}
	for n := range len(b) {
		out = append(out, b[:n])
	}
	return out
}

// withCRC returns "CKCH" and body closed by its CRC-32C, as a header is.
func withCRC(body []byte) []byte {
	b := append([]byte("CKCH"), body...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// TestHeaderFields: headers with a right checksum and a wrong field are
// refused, saying why in the detail; a version this server does not read
// says so.
func TestHeaderFields(t *testing.T) {
	uv := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		body   []byte
		detail string
	}{
		{"version 9", uv(9), "dump format version 9, this server reads 4"},
		{"version 1", uv(1), "dump format version 1, this server reads 4"},
		{"no version", nil, "invalid header chunk"},
		{"truncated", uv(3, 1000, 4), "invalid header chunk"},
		// capacity 0: Validate refuses it.
		{"capacity 0", uv(3, 0, 4, 20, 1, 0, 0, 0, 1, 0, 0, 0), "invalid header chunk"},
		// A growing table of level 1 for a capacity of 1000: fewer buckets
		// than it starts with.
		{"shrunk", uv(3, 1000, 4, 20, 1, 0, 0, 0, 0, 1, 0, 0, 0), "invalid header chunk"},
		// A stage of 2^33 capacity.
		{"stage capacity", uv(3, 1000, 4, 20, 0, 0, 0, 0, 1, 1<<33, 12, 0), "invalid header chunk"},
		// More fingerprints than a stage has slots.
		{"stage fingerprints", uv(3, 1000, 4, 20, 0, 0, 0, 0, 1, 1000, 12, 1<<20), "invalid header chunk"},
		{"trailing", append(uv(3, 1000, 4, 20, 0, 0, 0, 0, 1, 1000, 12, 0), 0), "invalid header chunk"},
	} {
		m := newMeter(1 << 30)
		err := new(cf.Filter).BeginLoad(withCRC(tc.body), m.charge, m.release)
		var le *cf.LoadError
		if !errors.As(err, &le) || err.Error() != "Couldn't create filter!" || !strings.Contains(le.Detail, tc.detail) || m.mem != 0 {
			t.Errorf("%s: %v (detail %q), %d bytes charged; want a detail with %q", tc.name, err, le.Detail, m.mem, tc.detail)
		}
	}
	// The same fields, right: a chain of one stage of EXPANSION 0 loads.
	m := newMeter(1 << 30)
	f := new(cf.Filter)
	if err := f.BeginLoad(withCRC(uv(3, 1000, 4, 20, 0, 0, 0, 0, 1, 1000, 12, 0)), m.charge, m.release); err != nil {
		t.Fatalf("a valid header of one empty stage: %v", err)
	}
	if f.Encoding() != "fixed" || f.Filters() != 1 || m.mem != int64(f.SizeBytes()) {
		t.Errorf("loaded %s of %d filters, %d charged for %d bytes", f.Encoding(), f.Filters(), m.mem, f.SizeBytes())
	}
}

// TestBeginLoadRefused: a header whose filter the memory limit refuses
// returns the refusal, and leaves nothing charged.
func TestBeginLoadRefused(t *testing.T) {
	for _, d := range dumpShapes(t) {
		chunks, _ := scanDump(d.f)
		m := newMeter(int64(d.f.SizeBytes()) - 1)
		err := new(cf.Filter).BeginLoad(chunks[0], m.charge, m.release)
		if !errors.Is(err, errRefused) || m.mem != 0 {
			t.Errorf("%s: %v, %d bytes charged; want the refusal, nothing charged", d.name, err, m.mem)
		}
		if d.f.Params().Layout == cf.LayoutRedisBloom && err.Error() != "Couldn't create filter!" {
			t.Errorf("%s: %q, want RedisBloom's Couldn't create filter!", d.name, err)
		}
	}
}

// TestRedisBloomHeader: RedisBloom's headers are told from this server's
// by their length, and give their bucket size; a flipped byte of one is
// refused or loads, never panics, and leaves charged what it loaded.
func TestRedisBloomHeader(t *testing.T) {
	p := shapes[6].p
	p.BucketSize = 3
	rb := newFilter(t, p)
	addItems(t, rb, 0, 500)
	chunks, iters := scanDump(rb)
	h := chunks[0]
	if cf.InvalidHeaderRB(h) || cf.HeaderBucketRB(h) != 3 {
		t.Errorf("RedisBloom's header: invalid %v, bucket %d; want valid, 3", cf.InvalidHeaderRB(h), cf.HeaderBucketRB(h))
	}
	own, _ := scanDump(newFilter(t, shapes[1].p))
	if cf.InvalidHeaderRB(own[0]) || cf.HeaderBucketRB(own[0]) != 0 {
		t.Errorf("this server's header: invalid %v, bucket %d; want valid, 0", cf.InvalidHeaderRB(own[0]), cf.HeaderBucketRB(own[0]))
	}
	if !cf.InvalidHeaderRB(h[:len(h)-1]) || cf.HeaderBucketRB(h[:len(h)-1]) != 0 {
		t.Error("a header a byte short is taken for RedisBloom's")
	}
	for _, bad := range corruptions(h) {
		m := newMeter(1 << 30)
		f := new(cf.Filter)
		if err := f.BeginLoad(bad, m.charge, m.release); err != nil {
			if err.Error() != "Couldn't create filter!" && !strings.HasPrefix(err.Error(), "ERR") && err.Error() != "Invalid header" || m.mem != 0 {
				t.Errorf("header %x: %q, %d bytes left charged", bad, err, m.mem)
			}
			continue
		}
		if m.mem != int64(f.SizeBytes()) {
			t.Errorf("header %x loaded: %d charged for %d bytes", bad, m.mem, f.SizeBytes())
		}
	}
	// Data chunks of RedisBloom's go straight in; one that fits no
	// sub-filter is refused.
	g := loadDump(t, chunks, iters, newMeter(1<<30))
	checkFound(t, g, 0, 500)
	sameFigures(t, rb, g)
	var le *cf.LoadError
	if err := g.LoadChunk(1<<40, []byte("x")); !errors.As(err, &le) || err.Error() != "Couldn't load chunk!" {
		t.Errorf("a chunk past the filter: %v", err)
	}
}

// TestLoadChunkCounts: chunks must bring each table to the fingerprint
// count its header announced. Another filter's chunks, of the same
// geometry but other items, under this filter's header are refused once
// they pass the count, or at the chunk that completes the table, and the
// refused chunk changes nothing: sent again, it is refused with the same
// count.
func TestLoadChunkCounts(t *testing.T) {
	smallChunks(t, 64)
	for _, tc := range []struct {
		name  string
		extra int // items the chunks' filter holds beyond the header's
	}{{"fewer", -1}, {"more", 1}, {"many more", 400}} {
		t.Run(tc.name, func(t *testing.T) {
			p := shapes[5].p // one fixed stage: the same geometry whatever it holds
			a, b := newFilter(t, p), newFilter(t, p)
			addItems(t, a, 0, 500)
			addItems(t, b, 0, 500+tc.extra)
			ha, _ := scanDump(a)
			chunks, iters := scanDump(b)
			g := new(cf.Filter)
			if err := g.BeginLoad(ha[0], free, func(uint64) {}); err != nil {
				t.Fatal(err)
			}
			var le *cf.LoadError
			for i := 1; i < len(chunks); i++ {
				err := g.LoadChunk(iters[i], chunks[i])
				if err == nil {
					continue
				}
				if !errors.As(err, &le) || !strings.Contains(le.Detail, "fingerprints, the header says 500") {
					t.Fatalf("chunk %d: %v (%q)", i, err, le.Detail)
				}
				if !g.Loading() {
					t.Fatal("a refused chunk ended the load")
				}
				detail := le.Detail
				if err := g.LoadChunk(iters[i], chunks[i]); !errors.As(err, &le) || le.Detail != detail {
					t.Fatalf("chunk %d again: %v (%q), was %q", i, err, le.Detail, detail)
				}
				return
			}
			t.Fatal("every chunk of a filter of other counts was taken")
		})
	}
}
