package growing_test

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/internal/tables"
)

// rawOf is f's raw access, as the server's persistence reaches it.
func rawOf(f *growing.Filter) tables.Growing { return tables.OfGrowing(f) }

// TestRestoreRoundTrip copies a grown filter word by word into a fresh one
// with Restore and SetBucketBits (package internal/tables), as the server's snapshots and chunked loads do:
// the copy answers alike, holds the same entries, and keeps growing.
func TestRestoreRoundTrip(t *testing.T) {
	cfg := growing.Config{InitialCapacity: 50, Seed: 5}
	src := mustNew(t, cfg)
	for i := range 20_000 {
		if err := src.Insert(key(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20_000; i += 3 {
		src.Delete(key(i))
	}
	var charged uint64
	cfg.Reserve = func(n uint64) error { charged += n; return nil }
	dst := mustNew(t, cfg) // New's own allocation is Size's, not Reserve's
	level, split := rawOf(src).Geometry()
	if err := rawOf(dst).Restore(level, split, rawOf(src).Stash(), src.Len()); err != nil {
		t.Fatal(err)
	}
	for j := range src.Buckets() {
		if err := rawOf(dst).SetBucketBits(j, rawOf(src).BucketBits(j)); err != nil {
			t.Fatal(err)
		}
	}
	if err := dst.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	size, _ := growing.Size(cfg)
	if dst.Len() != src.Len() || dst.Entries() != src.Entries() || dst.Buckets() != src.Buckets() ||
		dst.SizeInBytes() != size+charged {
		t.Fatalf("copy: Len %d/%d, entries %d/%d, buckets %d/%d, size %d, charged %d after %d",
			dst.Len(), src.Len(), dst.Entries(), src.Entries(), dst.Buckets(), src.Buckets(), dst.SizeInBytes(), charged, size)
	}
	for i := range 40_000 {
		if src.Contains(key(i)) != dst.Contains(key(i)) {
			t.Fatalf("key %d: source %v, copy %v", i, src.Contains(key(i)), dst.Contains(key(i)))
		}
	}
	for i := 20_000; i < 60_000; i++ {
		if err := dst.Insert(key(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 60_000 {
		if (i >= 20_000 || i%3 != 0) && !dst.Contains(key(i)) {
			t.Fatalf("key %d lost after growing the copy", i)
		}
	}
	if dst.SizeInBytes() != size+charged {
		t.Errorf("size %d, charged %d after %d", dst.SizeInBytes(), charged, size)
	}
}

func TestRawErrors(t *testing.T) {
	f := mustNew(t, growing.Config{InitialCapacity: 1000})
	level, split := rawOf(f).Geometry()
	for _, c := range []struct {
		level uint
		split uint64
		stash int
	}{{level - 1, 0, 0}, {41, 0, 0}, {level + 1, 1 << (level + 1), 0}, {level, split, 65}} {
		if err := rawOf(f).Restore(c.level, c.split, make([]uint64, c.stash), 0); err == nil {
			t.Errorf("Restore(%d, %d, %d stashed) succeeded", c.level, c.split, c.stash)
		}
	}
	if err := rawOf(f).SetBucketBits(f.Buckets(), 0); err == nil {
		t.Error("SetBucketBits past the last bucket succeeded")
	}
	// 0x0001: a tail stop bit with no fingerprint; 0x4000: a fingerprint
	// with no stop bit.
	for _, w := range []uint64{0x0001, 0x4000 << 16} {
		if _, err := rawOf(f).WordEntries(w); err == nil {
			t.Errorf("WordEntries(%#x) accepted a slot that is not an entry", w)
		}
		if err := rawOf(f).SetBucketBits(0, w); err == nil {
			t.Errorf("SetBucketBits(0, %#x) succeeded", w)
		}
	}
	// Five slots of 12 bits leave a word's top 4 bits clear.
	five := mustNew(t, growing.Config{InitialCapacity: 1000, BucketSize: 5})
	if _, err := rawOf(five).WordEntries(1 << 60); err == nil {
		t.Error("WordEntries accepted a 5-slot word with bits beyond its slots")
	}
	f.Insert(key(1))
	if err := rawOf(f).Restore(level, split, nil, 0); err == nil {
		t.Error("Restore of a filter in use succeeded")
	}
	refuse := errors.New("no memory")
	g := mustNew(t, growing.Config{InitialCapacity: 8, Reserve: func(uint64) error { return refuse }})
	// Growth asks Reserve, is refused, and the table fills until no room
	// is left.
	var err error
	for i := 0; err == nil && i < 10_000; i++ {
		err = g.Insert(binary.LittleEndian.AppendUint64(nil, uint64(i)))
	}
	// The refusal that ends it is Reserve's, not ErrFull: the filter is
	// full because it may not grow.
	if !errors.Is(err, refuse) {
		t.Fatalf("inserts into a filter refused memory: %v, want the refusal", err)
	}
	// It grew within its first segment (8 buckets), which needed nothing.
	if g.Buckets() != 8 {
		t.Errorf("%d buckets after refused growth, want the first segment's 8", g.Buckets())
	}
}

// TestNextWrittenSparse reserves a table of 2^24 keys (4.7 million buckets,
// 37 MB never touched) and inserts a few keys: NextWritten reports only the
// blocks of 512 buckets they went to, so that a dump reads those and not
// the table; deleting them leaves the blocks marked (marks are never
// cleared but by Reset) and their words 0.
func TestNextWrittenSparse(t *testing.T) {
	f := mustNew(t, growing.Config{InitialCapacity: 1 << 24, Seed: 3})
	if lo, hi := rawOf(f).NextWritten(0, f.Buckets()); lo != f.Buckets() || hi != lo {
		t.Fatalf("an empty table: NextWritten(0) = [%d, %d), want none of %d", lo, hi, f.Buckets())
	}
	for i := range 3 {
		if err := f.Insert(key(i)); err != nil {
			t.Fatal(err)
		}
	}
	var covered, runs uint64
	for from := uint64(0); ; runs++ {
		lo, hi := rawOf(f).NextWritten(from, f.Buckets())
		if lo == f.Buckets() {
			break
		}
		covered += hi - lo
		from = hi
	}
	if runs < 1 || runs > 3 || covered != runs*512 {
		t.Fatalf("3 keys: %d runs covering %d buckets, want 1 to 3 blocks of 512", runs, covered)
	}
	for i := range 3 {
		f.Delete(key(i))
	}
	if err := f.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	f.Reset()
	if lo, _ := rawOf(f).NextWritten(0, f.Buckets()); lo != f.Buckets() {
		t.Fatalf("after Reset, bucket %d is marked written", lo)
	}
}

// TestRestoreAllocatesOnce restores a table of 2^22 keys' geometry into a
// filter New built for the same capacity: Restore keeps New's segments
// rather than allocating the table again (issue 24: a snapshot's load
// allocated every filter twice, and INFO's used_memory read twice
// used_memory_filters until the next collection).
func TestRestoreAllocatesOnce(t *testing.T) {
	cfg := growing.Config{InitialCapacity: 1 << 22, Seed: 1}
	size, _ := growing.Size(cfg)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f := mustNew(t, cfg)
	level, split := rawOf(f).Geometry()
	if err := rawOf(f).Restore(level, split, nil, 0); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > size+size/8 {
		t.Fatalf("New and Restore allocated %d bytes for a table of %d", got, size)
	}
	if f.SizeInBytes() != size {
		t.Fatalf("SizeInBytes %d, Size %d", f.SizeInBytes(), size)
	}
}
