package cf

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/internal/tables"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// rawTable is one table of a key's filter as dumps and snapshots move it:
// its buckets as words (package internal/tables, the raw access packages
// growing and lockfree keep out of their API), each checked when read back.
// A filter is either one growing table (keys created with EXPANSION >= 1:
// growing.Filter) or a list of fixed lock-free stages (EXPANSION 0, and the
// chains of stages that snapshots and dumps of format 2 hold).
type rawTable interface {
	tableShape
	// raw returns the table's buckets: runs.go reads them (BucketBits,
	// and NextWritten: every bucket outside its runs is empty, and is
	// neither read nor written by a dump) and writes them
	// (SetBucketBits).
	raw() tables.Table
	// stored returns the entries in the table (a growing table's stash
	// aside).
	stored() uint64
}

// tableShape is what checking a table's runs needs, without the table:
// verifying a snapshot (verifySnapshot) allocates no filter.
type tableShape interface {
	Buckets() uint64
	BucketBytes() int
	// entries returns the entries in bucket word v, or an error if v is
	// not a bucket of this table.
	entries(v uint64) (uint64, error)
}

// fixedTable is a lock-free stage.
type fixedTable struct {
	*lockfree.Filter
	rw tables.Table
}

func newFixedTable(st *lockfree.Filter) fixedTable { return fixedTable{st, tables.OfLockfree(st)} }

func (t fixedTable) raw() tables.Table { return t.rw }
func (t fixedTable) BucketBytes() int  { return t.rw.BucketBytes() }
func (t fixedTable) stored() uint64    { return t.Len() }
func (t fixedTable) entries(v uint64) (uint64, error) {
	return fingerprintEntries(v, uint(t.FingerprintBits()), uint(t.BucketSize()))
}

// fingerprintEntries returns the fingerprints in a lock-free stage's bucket
// bits v, slots of f bits, or an error for bits beyond them.
func fingerprintEntries(v uint64, f, slots uint) (uint64, error) {
	if v&^(uint64(1)<<(f*slots)-1) != 0 {
		return 0, fmt.Errorf("bits beyond its fingerprints")
	}
	var n uint64
	for j := range slots {
		if v>>(j*f)&(1<<f-1) != 0 {
			n++
		}
	}
	return n, nil
}

// stageShape is the shape of a lock-free stage, from its description.
type stageShape struct {
	buckets    uint64
	bits, slot uint
}

func (s stageShape) Buckets() uint64  { return s.buckets }
func (s stageShape) BucketBytes() int { return (int(s.bits*s.slot) + 7) / 8 }
func (s stageShape) entries(v uint64) (uint64, error) {
	return fingerprintEntries(v, s.bits, s.slot)
}

// growShape is the shape of a growing table: its buckets, and a filter of
// the same bucket size, 8 buckets, that checks words (an entry's layout
// depends on the bucket size alone).
type growShape struct {
	buckets uint64
	check   tables.Growing
}

func (s growShape) Buckets() uint64  { return s.buckets }
func (s growShape) BucketBytes() int { return 8 }
func (s growShape) entries(v uint64) (uint64, error) {
	n, err := s.check.WordEntries(v)
	return uint64(n), err
}

// growTable is a growing table: each bucket a 64-bit word.
type growTable struct {
	*growing.Filter
	rw tables.Growing
}

func newGrowTable(t *growing.Filter) growTable { return growTable{t, tables.OfGrowing(t)} }

func (t growTable) raw() tables.Table { return t.rw }
func (t growTable) BucketBytes() int  { return 8 }
func (t growTable) stored() uint64    { return t.Entries() - uint64(t.Stashed()) }
func (t growTable) entries(v uint64) (uint64, error) {
	n, err := t.rw.WordEntries(v)
	return uint64(n), err
}

// tables returns f's tables in order. Preconditions: the key's lock held, or a
// filter not yet published.
func (f *Filter) tables() []rawTable {
	if f.table != nil {
		return []rawTable{newGrowTable(f.table)}
	}
	var out []rawTable
	for _, st := range f.list() {
		out = append(out, newFixedTable(st))
	}
	return out
}

// FillForTest stores words, cycling through them, into every bucket of f's
// tables and counts what they hold as inserted: tests build a full filter
// of any size without inserting its items. Words must be valid buckets of
// f's tables. Preconditions: f not yet shared.
func (f *Filter) FillForTest(words []uint64) error {
	var n uint64
	for _, t := range f.tables() {
		for j := range t.Buckets() {
			if err := t.raw().SetBucketBits(j, words[j%uint64(len(words))]); err != nil {
				return err
			}
		}
		n += t.stored()
	}
	f.inserted.Store(int64(n))
	return nil
}
