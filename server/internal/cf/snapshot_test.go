package cf_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	fld "github.com/cuckoohash/cuckoo/server/internal/fields"
)

// snapshotOf returns f's part of a snapshot entry.
func snapshotOf(t testing.TB, f *cf.Filter) []byte {
	t.Helper()
	var w bytes.Buffer
	if _, err := f.WriteSnapshot(&w, nil); err != nil {
		t.Fatal(err)
	}
	return w.Bytes()
}

// readSnapshot reads b as the key space does, into f or, with f nil, only
// checking it; rb says the entry is RedisBloom's, slots that it records
// its slots. It returns the bytes left unread and the error.
func readSnapshot(b []byte, f *cf.Filter, rb, slots bool) (int, error) {
	r := &fld.Stream{R: bufio.NewReader(bytes.NewReader(b))}
	var err error
	if rb {
		err = cf.ReadSnapshotRB(r, f)
	} else {
		err = cf.ReadSnapshot(r, f, slots)
	}
	rest, _ := io.Copy(io.Discard, r.R)
	return int(rest), err
}

// TestSnapshotRoundTrip: a filter read back from its snapshot entry is the
// same filter, the entry read whole; checking the entry alone (f nil)
// accepts it too.
func TestSnapshotRoundTrip(t *testing.T) {
	for _, d := range dumpShapes(t) {
		t.Run(d.name, func(t *testing.T) {
			p := d.f.Params()
			b := snapshotOf(t, d.f)
			rb, slots := p.Layout == cf.LayoutRedisBloom, p.RecordedSlots() != 0
			if rest, err := readSnapshot(b, nil, rb, slots); err != nil || rest != 0 {
				t.Fatalf("checking the entry: %v, %d bytes left", err, rest)
			}
			g := new(cf.Filter)
			if rest, err := readSnapshot(b, g, rb, slots); err != nil || rest != 0 {
				t.Fatalf("reading the entry: %v, %d bytes left", err, rest)
			}
			checkFound(t, g, 0, d.n)
			sameFigures(t, d.f, g)
			if !bytes.Equal(snapshotOf(t, g), b) {
				t.Error("the copy's snapshot entry differs from the original's")
			}
			addItems(t, g, d.n, d.n+100)
			checkFound(t, g, 0, d.n+100)
		})
	}
}

// TestSnapshotBuffer: WriteSnapshot streams a large table in pieces
// through the buffer it is given and returns it for reuse; a writer's
// error is returned.
func TestSnapshotBuffer(t *testing.T) {
	f := newFilter(t, cf.Params{Capacity: 1 << 20, BucketSize: 4, MaxIter: 20, Expansion: 0, Seed: 1, Slots: 4})
	addItems(t, f, 0, 60_000)
	var w bytes.Buffer
	buf, err := f.WriteSnapshot(&w, make([]byte, 0, 16))
	if err != nil || cap(buf) < 1<<16 || w.Len() < 100_000 {
		t.Fatalf("%v; a buffer of %d bytes for %d written", err, cap(buf), w.Len())
	}
	g := new(cf.Filter)
	if rest, err := readSnapshot(w.Bytes(), g, false, false); err != nil || rest != 0 {
		t.Fatal(err, rest)
	}
	checkFound(t, g, 0, 60_000)
	broken := errors.New("disk full")
	for _, s := range shapes {
		h := newFilter(t, s.p)
		addItems(t, h, 0, 100)
		if _, err := h.WriteSnapshot(failWriter{broken}, nil); !errors.Is(err, broken) {
			t.Errorf("%s: a failing writer: %v", s.name, err)
		}
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// TestSnapshotLoading: a key saved while its CF.LOADCHUNK is pending is
// read back pending, at the chunk it had reached: the rest of the chunks
// complete it.
func TestSnapshotLoading(t *testing.T) {
	smallChunks(t, 16)
	src := newFilter(t, shapes[1].p)
	addItems(t, src, 0, 500)
	chunks, iters := scanDump(src)
	g := new(cf.Filter)
	if err := g.BeginLoad(chunks[0], free, func(uint64) {}); err != nil {
		t.Fatal(err)
	}
	half := len(chunks) / 2
	for i := 1; i < half; i++ {
		if err := g.LoadChunk(iters[i], chunks[i]); err != nil {
			t.Fatal(err)
		}
	}
	b := snapshotOf(t, g)
	if _, err := readSnapshot(b, nil, false, false); err != nil {
		t.Fatalf("checking a pending load's entry: %v", err)
	}
	h := new(cf.Filter)
	if _, err := readSnapshot(b, h, false, false); err != nil {
		t.Fatal(err)
	}
	if !h.Loading() {
		t.Fatal("a pending load read back complete")
	}
	if err := h.LoadChunk(iters[half-1], chunks[half-1]); err == nil {
		t.Error("a chunk loaded before the snapshot was taken again")
	}
	for i := half; i < len(chunks); i++ {
		if err := h.LoadChunk(iters[i], chunks[i]); err != nil {
			t.Fatalf("chunk %d after the snapshot: %v", i, err)
		}
	}
	if h.Loading() {
		t.Fatal("pending after the last chunk")
	}
	checkFound(t, h, 0, 500)
	sameFigures(t, src, h)
}

// TestSnapshotCorrupt: every prefix of an entry is refused, by the check
// and by the read; an entry with a byte flipped never panics, and the
// check and the read agree on it, so that a snapshot that verifies loads.
// (A RedisBloom entry the check refuses is not read: redisbloom.ReadFrom
// allocates a sub-filter of the size the entry gives before reading its
// bytes, so a damaged size can ask for terabytes. The server reads only
// snapshots whose CRC-32C is right.)
func TestSnapshotCorrupt(t *testing.T) {
	for _, d := range dumpShapes(t) {
		if d.name == "fixed/b=2" || d.name == "fixed/b=5" || d.name == "growing/b=2" {
			continue // the same code as their kin, with long entries
		}
		t.Run(d.name, func(t *testing.T) {
			p := d.f.Params()
			rb, slots := p.Layout == cf.LayoutRedisBloom, p.RecordedSlots() != 0
			b := snapshotOf(t, d.f)
			// Every byte of the description and the first runs, then every
			// stride-th: a flip in a bucket word mostly makes another valid
			// word, and each costs a read of the whole entry.
			stride := 5
			if testing.Short() {
				stride = 11
			}
			next := func(i int) int {
				if i < 64 {
					return i + 1
				}
				return i + stride
			}
			for n := 0; n < len(b); n = next(n) {
				if _, err := readSnapshot(b[:n], nil, rb, slots); err == nil {
					t.Fatalf("%d bytes of %d: the check took them", n, len(b))
				}
				if !rb {
					if _, err := readSnapshot(b[:n], new(cf.Filter), rb, slots); err == nil {
						t.Fatalf("%d bytes of %d: the read took them", n, len(b))
					}
				}
			}
			refused, flips := 0, 0
			for i := 0; i < len(b); i = next(i) {
				flips++
				c := append([]byte(nil), b...)
				c[i] ^= 0x41
				_, verr := readSnapshot(c, nil, rb, slots)
				if verr != nil {
					refused++
					if rb {
						continue
					}
				}
				_, lerr := readSnapshot(c, new(cf.Filter), rb, slots)
				if (verr == nil) != (lerr == nil) {
					t.Fatalf("byte %d flipped: the check says %v, the read %v", i, verr, lerr)
				}
			}
			// Most flips land in bucket words, which hold other valid
			// fingerprints; the description's and the runs' are refused.
			t.Logf("%d of %d flips refused", refused, flips)
			if refused == 0 {
				t.Error("no flip refused")
			}
		})
	}
}

// TestSnapshotFields: entries whose fields contradict each other are
// refused with what is wrong.
func TestSnapshotFields(t *testing.T) {
	f := newFilter(t, shapes[1].p)
	addItems(t, f, 0, 100)
	b := snapshotOf(t, f)
	// The entry ends with the load flag 0.
	if b[len(b)-1] != 0 {
		t.Fatalf("the entry ends with %d, not the load flag 0", b[len(b)-1])
	}
	for _, tc := range []struct {
		name, err string
		entry     []byte
	}{
		{"load flag 2", "bad load flag", append(append([]byte(nil), b[:len(b)-1]...), 2)},
		// A load pending at bucket 2^20 of a smaller table.
		{"load past the end", "a load at bucket", append(append([]byte(nil), b[:len(b)-1]...), 1, 0x80, 0x80, 0x40, 100)},
	} {
		if _, err := readSnapshot(tc.entry, new(cf.Filter), false, false); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	// Another filter's runs under this description: the counts disagree.
	other := newFilter(t, shapes[1].p)
	addItems(t, other, 1000, 1050)
	ob := snapshotOf(t, other)
	hl := headerLen(t, b)
	if hl != headerLen(t, ob) {
		t.Fatalf("descriptions of %d and %d bytes", hl, headerLen(t, ob))
	}
	mixed := append(append([]byte(nil), b[:hl]...), ob[hl:]...)
	if _, err := readSnapshot(mixed, new(cf.Filter), false, false); err == nil || !strings.Contains(err.Error(), "fingerprints, its description") {
		t.Errorf("another filter's runs: %v", err)
	}
}

// headerLen returns the length of the description at the start of a
// growing table's snapshot entry (appendDesc's uvarints: 5 parameters, 2
// counts, 0 stages, level, split, entries, and the stash's count and
// hashes).
func headerLen(t *testing.T, b []byte) int {
	t.Helper()
	r := &fld.Reader{B: b}
	for range 8 {
		r.Uvarint()
	}
	r.Uvarint() // level
	r.Uvarint() // split
	r.Uvarint() // entries
	for range r.Uvarint() {
		r.Uvarint()
	}
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	return len(b) - len(r.B)
}

// TestReadV1: a version 1 snapshot's chain of stages reads into a chain
// that finds its items; a pending load, no stages, bad parameters, a
// truncated record or damaged stages are refused.
func TestReadV1(t *testing.T) {
	p := cf.Params{Capacity: 500, BucketSize: 2, MaxIter: 20, Expansion: 2, Seed: 5}
	p.SetRecordedSlots(0)
	stages := [][]int{{0, 1, 2, 3}, {4, 5, 6}}
	good := v1Record(t, p, 7, 2, stages, 0)
	f := new(cf.Filter)
	r := &fld.Reader{B: good}
	if err := f.ReadV1(r); err != nil || len(r.B) != 0 {
		t.Fatalf("ReadV1: %v, %d bytes left", err, len(r.B))
	}
	checkFound(t, f, 0, 7)
	if f.Filters() != 2 || f.Inserted() != 7 || f.Deleted() != 2 || f.Params() != p || f.Encoding() != "chain" {
		t.Errorf("read %d filters, %d inserted, %d deleted, %+v, %s", f.Filters(), f.Inserted(), f.Deleted(), f.Params(), f.Encoding())
	}
	if err := new(cf.Filter).ReadV1(&fld.Reader{B: v1Record(t, p, 7, 0, stages, 1)}); err != cf.ErrV1Load {
		t.Errorf("a pending load: %v, want ErrV1Load", err)
	}
	if err := new(cf.Filter).ReadV1(&fld.Reader{B: v1Record(t, p, 0, 0, nil, 0)}); err == nil || err.Error() != "no stages" {
		t.Errorf("no stages: %v", err)
	}
	bad := p
	bad.MaxIter = 0
	if err := new(cf.Filter).ReadV1(&fld.Reader{B: v1Record(t, bad, 0, 0, stages, 0)}); err == nil || err.Error() != "ERR Bad maxIterations" {
		t.Errorf("MAXITERATIONS 0: %v", err)
	}
	for n := range len(good) {
		r := &fld.Reader{B: good[:n]}
		if err := new(cf.Filter).ReadV1(r); err == nil {
			t.Fatalf("%d bytes of %d: accepted", n, len(good))
		}
	}
	// A stage's bytes damaged: package filter's checksum refuses them.
	for _, at := range []int{len(good) / 2, len(good) - 10} {
		c := append([]byte(nil), good...)
		c[at] ^= 1
		if err := new(cf.Filter).ReadV1(&fld.Reader{B: c}); err == nil || !strings.HasPrefix(err.Error(), "stage ") {
			t.Errorf("byte %d flipped: %v, want a stage's error", at, err)
		}
	}
}
