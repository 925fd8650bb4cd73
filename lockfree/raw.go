package lockfree

import (
	"fmt"
	"unsafe"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/written"
)

// Raw bucket access, for streaming a filter out and in without copying its
// table: a dump or snapshot reads one bucket at a time with BucketBits, and
// a loader writes them back with SetBucketBits into a filter New built with
// the same Config.

// Size returns the bytes New(cfg) allocates, SizeInBytes of the filter it
// returns, without allocating them: a server charges them against its
// memory limit first. It fails exactly when New(cfg) fails.
func Size(cfg filter.Config) (uint64, error) {
	_, lay, err := layoutOf(cfg)
	if err != nil {
		return 0, err
	}
	return 8*(lay.Buckets+written.Words(lay.Buckets)) + uint64(unsafe.Sizeof(Filter{})), nil
}

// NextWritten returns the buckets [lo, hi) of the first run in buckets
// [from, end) whose fingerprints may be non-zero, clipped to them: the
// run's blocks of 512 buckets are marked ever written (package
// internal/written), and every bucket outside such runs is empty. With
// none, lo = hi = end (end is taken as Buckets() if greater). A dump that
// reads only these runs touches none of the pages a reserved, sparse filter
// never wrote, which stay unresident. It takes no lock and may run with any
// operation: a block it reports unwritten held no fingerprint when it
// looked (the mark is set before the CAS that fills a bucket).
func (f *Filter) NextWritten(from, end uint64) (lo, hi uint64) {
	return f.marks.Next(from, min(end, f.m))
}

// BucketBits returns the fingerprints of bucket i, slot j at bits
// [j·f, (j+1)·f), 0 for an empty slot: the bucket's word without its
// migration counter. It reads through any move in flight, as lookups do; a
// caller that needs the buckets of one moment pauses the writers.
func (f *Filter) BucketBits(i uint64) uint64 { return f.l.fingerprints(f.load(i)) }

// SetBucketBits replaces the fingerprints of bucket i by v (as BucketBits
// returns them) and adjusts Len. Lookups may run meanwhile and see the
// bucket before or after; no other writer may. It fails, changing nothing,
// when v has bits beyond the b·f fingerprint bits.
func (f *Filter) SetBucketBits(i, v uint64) error {
	if i >= f.m {
		return fmt.Errorf("lockfree: bucket %d of %d", i, f.m)
	}
	if v&^f.l.fpsMask != 0 {
		return fmt.Errorf("lockfree: bucket bits %#x exceed %d slots of %d bits", v, f.l.slots, f.l.bits)
	}
	old := f.settle(i)
	if v != 0 && f.l.fingerprints(old) == 0 {
		f.marks.Mark(i)
	}
	f.count.add(int64(f.occupied(v)) - int64(f.occupied(old)))
	// Keep the counter moving, so that a lookup that read the old word
	// sees the bucket changed (doc.go).
	f.words[i].Store(f.l.bump(old)&^f.l.fpsMask | v)
	return nil
}

// occupied returns the non-empty slots of word v.
func (f *Filter) occupied(v uint64) int {
	n := 0
	for j := range f.l.slots {
		if f.l.slot(v, j) != 0 {
			n++
		}
	}
	return n
}

// BucketBytes returns the bytes a bucket's fingerprints take when packed:
// ceil(b·f/8).
func (f *Filter) BucketBytes() int { return (int(f.l.slots*f.l.bits) + 7) / 8 }
