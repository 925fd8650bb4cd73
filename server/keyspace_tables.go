package server

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// rawTable is one table of a key's filter as dumps and snapshots move it:
// its buckets as words, each checked when read back. A filter is either one
// growing table (keys created with EXPANSION >= 1: growing.Filter) or a list
// of fixed lock-free stages (EXPANSION 0, and the chains of stages that
// snapshots and dumps of format 2 hold).
type rawTable interface {
	Buckets() uint64
	BucketBytes() int
	BucketBits(i uint64) uint64
	SetBucketBits(i, v uint64) error
	// entries returns the entries in bucket word v, or an error if v is
	// not a bucket of this table.
	entries(v uint64) (uint64, error)
	// stored returns the entries in the table (a growing table's stash
	// aside).
	stored() uint64
}

// fixedTable is a lock-free stage.
type fixedTable struct{ *lockfree.Filter }

func (t fixedTable) entries(v uint64) (uint64, error) {
	f, slots := uint(t.FingerprintBits()), uint(t.BucketSize())
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

func (t fixedTable) stored() uint64 { return t.Len() }

// growTable is a growing table: each bucket a 64-bit word.
type growTable struct{ *growing.Filter }

func (t growTable) BucketBytes() int                { return 8 }
func (t growTable) BucketBits(i uint64) uint64      { return t.Word(i) }
func (t growTable) SetBucketBits(i, v uint64) error { return t.SetWord(i, v) }
func (t growTable) stored() uint64                  { return t.Entries() - uint64(t.Stashed()) }
func (t growTable) entries(v uint64) (uint64, error) {
	n, err := t.WordEntries(v)
	return uint64(n), err
}

// tables returns c's tables in order. Preconditions: c.mu held, or a
// filter not yet published.
func (c *cuckoo) tables() []rawTable {
	if c.table != nil {
		return []rawTable{growTable{c.table}}
	}
	var out []rawTable
	for _, st := range c.list() {
		out = append(out, fixedTable{st})
	}
	return out
}
