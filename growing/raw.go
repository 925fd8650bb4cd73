package growing

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/internal/linhash"
	"github.com/cuckoohash/cuckoo/internal/tables"
)

// Raw access to the table, for the server's dumps and snapshots, through
// package internal/tables (not this package's API): a table is its
// geometry, its bucket words in order (0 outside the runs NextWritten
// reports), its stash and its key count. Reads are lock-free like lookups
// and see one moment of each word; the server reads under the key's writer
// lock, so that they see one moment of the whole table.

func init() {
	tables.RegisterGrowing(func(f any) tables.Growing { return (*raw)(f.(*Filter)) })
}

// raw is a Filter seen through tables.Growing.
type raw Filter

func (r *raw) f() *Filter { return (*Filter)(r) }

func (r *raw) Buckets() uint64 { return r.f().Buckets() }

// BucketBytes is 8: a bucket is a 64-bit word.
func (r *raw) BucketBytes() int { return 8 }

// BucketBits returns bucket j's word, j < Buckets().
func (r *raw) BucketBits(j uint64) uint64 { return r.dir.Load().word(j).Load() }

// Geometry returns the table's level and split pointer.
func (r *raw) Geometry() (level uint, split uint64) {
	g := r.f().geometry()
	return g.Level, g.Split
}

// NextWritten is tables.Table's. Runs do not cross segments.
func (r *raw) NextWritten(from, end uint64) (lo, hi uint64) {
	d := r.dir.Load()
	n := min(end, r.f().Buckets(), d.buckets)
	for from < n {
		seg, off := d.layout.Locate(from)
		start := from - off // the segment's first bucket
		stop := min(uint64(len(d.segs[seg])), n-start)
		if lo, hi := d.marks[seg].Next(off, stop); lo < stop {
			return start + lo, start + hi
		}
		from = start + stop
	}
	return n, n
}

// Stash returns the stashed keys' hashes.
func (r *raw) Stash() []uint64 { return append([]uint64(nil), *r.stash.Load()...) }

// WordEntries is tables.Growing's.
func (r *raw) WordEntries(w uint64) (int, error) {
	f := r.f()
	if used := f.shape.Slots * f.shape.Bits; used < 64 && w>>used != 0 {
		return 0, fmt.Errorf("bits beyond its %d slots: %#x", f.shape.Slots, w)
	}
	n := 0
	for i := range f.shape.Slots {
		e := f.slot(w, i)
		if e == 0 {
			continue
		}
		if !f.shape.Valid(e) {
			return 0, fmt.Errorf("slot %d holds %#x, not an entry", i, e)
		}
		n++
	}
	return n, nil
}

// Restore is tables.Growing's.
func (r *raw) Restore(level uint, split uint64, stash []uint64, items uint64) error {
	f := r.f()
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case level < f.level0 || level > linhash.MaxLevel || split >= 1<<level:
		return fmt.Errorf("growing: level %d and split %d, want level %d..%d and split below 2^level", level, split, f.level0, linhash.MaxLevel)
	case 1<<level+split < f.initial:
		return fmt.Errorf("growing: %d buckets, fewer than the initial %d", 1<<level+split, f.initial)
	case len(stash) > linhash.MaxStash:
		return fmt.Errorf("growing: %d stashed keys, at most %d", len(stash), linhash.MaxStash)
	case f.items.Load() != 0 || f.entries.Load() != 0:
		return fmt.Errorf("growing: Restore of a filter in use")
	}
	if err := f.reset(linhash.At(level, split), true, true); err != nil {
		return err
	}
	s := append([]uint64{}, stash...)
	f.stash.Store(&s)
	f.items.Store(int64(items))
	return nil
}

// SetBucketBits stores bucket j's word, j < Buckets(), keeping the counts;
// it refuses a word with a slot that is not an entry. It takes the writer
// lock.
func (r *raw) SetBucketBits(j uint64, w uint64) error {
	if _, err := r.WordEntries(w); err != nil {
		return fmt.Errorf("growing: bucket %d: %v", j, err)
	}
	f := r.f()
	f.mu.Lock()
	defer f.mu.Unlock()
	if j >= f.Buckets() {
		return fmt.Errorf("growing: bucket %d of %d", j, f.Buckets())
	}
	d := f.dir.Load()
	f.store(d, j, d.word(j).Load(), w)
	return nil
}
