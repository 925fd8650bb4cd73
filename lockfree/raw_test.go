package lockfree_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/tables"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// rawOf is f's raw bucket access, as the server's persistence reaches it.
func rawOf(f *lockfree.Filter) tables.Table { return tables.OfLockfree(f) }

// TestBucketBitsRoundTrip copies a filter bucket by bucket into a new one
// built with the same Config: same Len, every key present, and Size
// predicts SizeInBytes.
func TestBucketBitsRoundTrip(t *testing.T) {
	for _, cfg := range []filter.Config{
		{Capacity: 5000, BucketSize: 4, FingerprintBits: 12, Seed: 7},
		{Capacity: 5000, BucketSize: 2, FingerprintBits: 24, Seed: 9},
		{Capacity: 5000, BucketSize: 8, FingerprintBits: 6, Seed: 11},
	} {
		t.Run(fmt.Sprintf("b=%d/f=%d", cfg.BucketSize, cfg.FingerprintBits), func(t *testing.T) {
			src, err := lockfree.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4000 {
				if err := src.InsertString(fmt.Sprint("key", i)); err != nil {
					t.Fatal(err)
				}
			}
			dst, err := lockfree.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := lockfree.Size(cfg); n != dst.SizeInBytes() {
				t.Errorf("Size %d, SizeInBytes %d", n, dst.SizeInBytes())
			}
			if got, want := rawOf(dst).BucketBytes(), (cfg.BucketSize*cfg.FingerprintBits+7)/8; got != want {
				t.Errorf("BucketBytes %d, want %d", got, want)
			}
			for i := range src.Buckets() {
				if err := rawOf(dst).SetBucketBits(i, rawOf(src).BucketBits(i)); err != nil {
					t.Fatal(err)
				}
			}
			if dst.Len() != src.Len() {
				t.Errorf("Len %d, source %d", dst.Len(), src.Len())
			}
			for i := range 4000 {
				if !dst.ContainsString(fmt.Sprint("key", i)) {
					t.Fatalf("key%d missing after the copy", i)
				}
			}
			// Overwriting with zeros empties the filter.
			for i := range dst.Buckets() {
				rawOf(dst).SetBucketBits(i, 0)
			}
			if dst.Len() != 0 {
				t.Errorf("Len %d after clearing every bucket", dst.Len())
			}
		})
	}
}

func TestSetBucketBitsErrors(t *testing.T) {
	f, err := lockfree.New(filter.Config{Capacity: 100, BucketSize: 4, FingerprintBits: 12})
	if err != nil {
		t.Fatal(err)
	}
	if err := rawOf(f).SetBucketBits(f.Buckets(), 1); err == nil {
		t.Error("bucket out of range accepted")
	}
	if err := rawOf(f).SetBucketBits(0, 1<<48); err == nil {
		t.Error("bits beyond the fingerprints accepted")
	}
	if f.Len() != 0 || rawOf(f).BucketBits(0) != 0 {
		t.Errorf("a refused SetBucketBits changed the filter: Len %d", f.Len())
	}
	for _, cfg := range []filter.Config{{}, {Capacity: 100, BucketSize: 4, FingerprintBits: 13}} {
		_, errSize := lockfree.Size(cfg)
		_, errNew := lockfree.New(cfg)
		if errSize == nil || errNew == nil || errSize.Error() != errNew.Error() {
			t.Errorf("%+v: Size error %v, New error %v", cfg, errSize, errNew)
		}
	}
}

// written returns the buckets NextWritten reports, run by run, and the
// runs.
func written(f *lockfree.Filter) (buckets, runs uint64) {
	for lo, hi := rawOf(f).NextWritten(0, f.Buckets()); lo < f.Buckets(); lo, hi = rawOf(f).NextWritten(hi, f.Buckets()) {
		if hi <= lo || hi > f.Buckets() {
			panic(fmt.Sprintf("NextWritten: [%d, %d) of %d", lo, hi, f.Buckets()))
		}
		buckets += hi - lo
		runs++
	}
	return buckets, runs
}

// TestNextWrittenSparse reserves a filter of 2^20 keys (2^18 buckets, 2 MB
// never touched) and inserts three: NextWritten reports only the blocks of
// 512 buckets they went to, so that a dump reads those and not the table.
// FromFilter and SetBucketBits mark what they fill; Reset clears the marks.
func TestNextWrittenSparse(t *testing.T) {
	cfg := filter.Config{Capacity: 1 << 20, FingerprintBits: 12, Seed: 3}
	f, err := lockfree.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := written(f); n != 0 {
		t.Fatalf("an empty filter has %d buckets written", n)
	}
	for i := range 3 {
		if err := f.InsertString(fmt.Sprint("key", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n, runs := written(f); runs < 1 || runs > 3 || n != 512*runs {
		t.Fatalf("3 keys: %d runs covering %d buckets, want 1 to 3 blocks of 512", runs, n)
	}
	if err := f.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	// A copy bucket by bucket of the runs alone is the same filter.
	g, err := lockfree.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for lo, hi := rawOf(f).NextWritten(0, f.Buckets()); lo < f.Buckets(); lo, hi = rawOf(f).NextWritten(hi, f.Buckets()) {
		for i := lo; i < hi; i++ {
			if err := rawOf(g).SetBucketBits(i, rawOf(f).BucketBits(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a, b := written(g); a != 512 && a != 1024 && a != 1536 || b == 0 {
		t.Fatalf("the copy: %d runs covering %d buckets", b, a)
	}
	for i := range 3 {
		if !g.ContainsString(fmt.Sprint("key", i)) {
			t.Fatalf("key%d missing from the copy of the runs", i)
		}
	}
	if err := g.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	// FromFilter writes the buckets that hold something, only.
	plain, err := filter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	plain.InsertString("one")
	h, err := lockfree.FromFilter(plain)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := written(h); n != 512 || !h.ContainsString("one") {
		t.Fatalf("FromFilter of one key: %d buckets written", n)
	}
	f.Reset()
	if n, _ := written(f); n != 0 || f.Len() != 0 {
		t.Fatalf("after Reset: %d buckets written, Len %d", n, f.Len())
	}
}

// TestNextWrittenConcurrent has writers insert while a reader collects the
// filter as a dump does, reading only the runs NextWritten reports: every
// key whose Insert returned before a collection began is in it (the mark
// is set before the CAS that stores the fingerprint). The load stays
// below a quarter, so that no fingerprint moves while it is read (a moving
// one may be missed by any fuzzy copy, marks or not).
func TestNextWrittenConcurrent(t *testing.T) {
	cfg := filter.Config{Capacity: 1 << 18, FingerprintBits: 12, Seed: 5}
	f, err := lockfree.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const writers = 2
	n := 40_000
	if testing.Short() {
		n = 10_000
	}
	var done [writers]atomic.Int64 // keys g, g+writers, ... below done[g]·writers+g are in
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := g; k < n; k += writers {
				if err := f.InsertString(fmt.Sprint("key", k)); err != nil {
					panic(err)
				}
				done[g].Add(1)
			}
		}()
	}
	collections := 0
	for finished := false; !finished; collections++ {
		var in [writers]int64
		for g := range writers {
			in[g] = done[g].Load()
		}
		finished = int(in[0]+in[1]) == n
		seen := map[uint64]uint64{}
		for lo, hi := rawOf(f).NextWritten(0, f.Buckets()); lo < f.Buckets(); lo, hi = rawOf(f).NextWritten(hi, f.Buckets()) {
			for i := lo; i < hi; i++ {
				if v := rawOf(f).BucketBits(i); v != 0 {
					seen[i] = v
				}
			}
		}
		for g := range writers {
			for j := range in[g] {
				k := fmt.Sprint("key", int(j)*writers+g)
				i1, fp := f.Locate([]byte(k))
				i2 := f.Alt(i1, fp)
				if !holds(seen[i1], fp) && !holds(seen[i2], fp) {
					t.Fatalf("collection %d: %s, inserted before it began, is not in it", collections, k)
				}
			}
		}
	}
	wg.Wait()
	if err := f.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d collections", collections)
}

// holds reports whether bucket bits v (4 slots of 12 bits) hold fp.
func holds(v uint64, fp uint32) bool {
	for j := range 4 {
		if uint32(v>>(12*j)&0xfff) == fp {
			return true
		}
	}
	return false
}

// TestSnapshotWhileWriting takes snapshots while writers insert, at a load
// low enough that no fingerprint moves: each copy holds every key whose
// Insert returned before Snapshot began, though its collections read only
// the blocks marked written (a block first marked between two of them reads
// empty in the first, as it was).
func TestSnapshotWhileWriting(t *testing.T) {
	cfg := filter.Config{Capacity: 1 << 16, FingerprintBits: 12, Seed: 9}
	f, err := lockfree.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := 10_000
	if testing.Short() {
		n = 3_000
	}
	var done atomic.Int64
	go func() {
		for k := range n {
			if err := f.InsertString(fmt.Sprint("key", k)); err != nil {
				panic(err)
			}
			done.Store(int64(k + 1))
		}
	}()
	for snaps := 0; ; snaps++ {
		in := done.Load()
		g := f.Snapshot()
		for k := range in {
			if !g.ContainsString(fmt.Sprint("key", k)) {
				t.Fatalf("snapshot %d: key%d, inserted before it began, is not in it", snaps, k)
			}
		}
		if in == int64(n) {
			t.Logf("%d snapshots", snaps+1)
			break
		}
	}
}
