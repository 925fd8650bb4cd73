package growing_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cuckoohash/cuckoo/growing"
)

// TestRestoreRoundTrip copies a grown filter word by word into a fresh one
// with Restore and SetWord, as the server's snapshots and chunked loads do:
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
	level, split := src.Geometry()
	if err := dst.Restore(level, split, src.Stash(), src.Len()); err != nil {
		t.Fatal(err)
	}
	for j := range src.Buckets() {
		if err := dst.SetWord(j, src.Word(j)); err != nil {
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
	level, split := f.Geometry()
	for _, c := range []struct {
		level uint
		split uint64
		stash int
	}{{level - 1, 0, 0}, {41, 0, 0}, {level + 1, 1 << (level + 1), 0}, {level, split, 65}} {
		if err := f.Restore(c.level, c.split, make([]uint64, c.stash), 0); err == nil {
			t.Errorf("Restore(%d, %d, %d stashed) succeeded", c.level, c.split, c.stash)
		}
	}
	if err := f.SetWord(f.Buckets(), 0); err == nil {
		t.Error("SetWord past the last bucket succeeded")
	}
	// 0x0001: a tail stop bit with no fingerprint; 0x4000: a fingerprint
	// with no stop bit.
	for _, w := range []uint64{0x0001, 0x4000 << 16} {
		if _, err := f.WordEntries(w); err == nil {
			t.Errorf("WordEntries(%#x) accepted a slot that is not an entry", w)
		}
		if err := f.SetWord(0, w); err == nil {
			t.Errorf("SetWord(0, %#x) succeeded", w)
		}
	}
	f.Insert(key(1))
	if err := f.Restore(level, split, nil, 0); err == nil {
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
