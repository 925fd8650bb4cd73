package growing

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/internal/linhash"
)

// Raw access to the table, for the server's dumps and snapshots: a table is
// its geometry, its bucket words in order (0 outside the runs NextWritten
// reports), its stash and its key count.
// Reads are lock-free like lookups and see one moment of each word; the
// server reads under the key's writer lock, so that they see one moment of
// the whole table.

// Geometry returns the table's level and split pointer: 2^level + split
// buckets.
func (f *Filter) Geometry() (level uint, split uint64) {
	g := f.geometry()
	return g.Level, g.Split
}

// Word returns bucket j's word, j < Buckets().
func (f *Filter) Word(j uint64) uint64 { return f.dir.Load().word(j).Load() }

// NextWritten returns the buckets [lo, hi) of the first run in buckets
// [from, end) whose words may be non-zero, clipped to them: the run's
// blocks of 512 buckets are marked ever written (package internal/written),
// and every bucket outside such runs is 0. With none, lo = hi = end (end is
// taken as Buckets() if greater). Runs do not cross segments: the next may
// start at hi. A dump that reads only these runs touches none of the pages
// a reserved, sparse table never wrote, which stay unresident. Like Word it
// takes no lock; a block it reports unwritten held nothing when it looked
// (written's Ordering).
func (f *Filter) NextWritten(from, end uint64) (lo, hi uint64) {
	d := f.dir.Load()
	n := min(end, f.Buckets(), d.buckets)
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
func (f *Filter) Stash() []uint64 { return append([]uint64(nil), *f.stash.Load()...) }

// WordEntries returns the entries in bucket word w, or an error if a used
// slot is not an entry (no fingerprint or no stop bit) or w has bits beyond
// its slots (5 slots of 12 bits leave the top 4 clear).
func (f *Filter) WordEntries(w uint64) (int, error) {
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

// Restore gives f, as New returned it, the geometry of a saved table (its
// segments charged through Reserve), its stash and its key count; SetWord
// then fills its buckets.
func (f *Filter) Restore(level uint, split uint64, stash []uint64, items uint64) error {
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

// SetWord stores bucket j's word, j < Buckets(), keeping the counts; it
// refuses a word with a slot that is not an entry. It is a writer: the
// caller restoring a table does not publish it before it is filled, or
// holds its own writer lock (a load in chunks, whose readers see the
// buckets loaded so far).
func (f *Filter) SetWord(j uint64, w uint64) error {
	if _, err := f.WordEntries(w); err != nil {
		return fmt.Errorf("growing: bucket %d: %v", j, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if j >= f.Buckets() {
		return fmt.Errorf("growing: bucket %d of %d", j, f.Buckets())
	}
	d := f.dir.Load()
	f.store(d, j, d.word(j).Load(), w)
	return nil
}
