package lockfree

import (
	"fmt"
	"unsafe"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/tables"
	"github.com/cuckoohash/cuckoo/internal/written"
)

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

// nextWritten returns the first run of blocks ever written in buckets
// [from, end), as tables.Table's NextWritten. It takes no lock and may run
// with any operation: a block it reports unwritten held no fingerprint when
// it looked (the mark is set before the CAS that fills a bucket).
func (f *Filter) nextWritten(from, end uint64) (lo, hi uint64) {
	return f.marks.Next(from, min(end, f.m))
}

// Raw bucket access, for the server's dumps and snapshots, through package
// internal/tables (not this package's API): they stream a filter out and
// in without copying its table, reading one bucket at a time, and a loader
// writes them back into a filter New built with the same Config.

func init() {
	tables.RegisterLockfree(func(f any) tables.Table { return (*raw)(f.(*Filter)) })
}

// raw is a Filter seen through tables.Table.
type raw Filter

func (r *raw) f() *Filter { return (*Filter)(r) }

func (r *raw) Buckets() uint64 { return r.m }

// BucketBytes returns the bytes a bucket's fingerprints take when packed:
// ceil(b·f/8).
func (r *raw) BucketBytes() int { return (int(r.l.slots*r.l.bits) + 7) / 8 }

func (r *raw) NextWritten(from, end uint64) (lo, hi uint64) { return r.f().nextWritten(from, end) }

// BucketBits returns the fingerprints of bucket i: the bucket's word without
// its migration counter. It reads through any move in flight, as lookups
// do.
func (r *raw) BucketBits(i uint64) uint64 { return r.l.fingerprints(r.f().load(i)) }

// SetBucketBits replaces the fingerprints of bucket i by v and adjusts Len.
// It fails, changing nothing, when v has bits beyond the b·f fingerprint
// bits.
func (r *raw) SetBucketBits(i, v uint64) error {
	f := r.f()
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
