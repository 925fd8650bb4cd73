// Package written keeps a table's "ever written" marks: one bit for each
// block of 512 buckets (4 KiB of 64-bit bucket words, one page), set before
// any bucket of the block first holds something. A table is allocated with
// make, whose pages the kernel supplies only when they are first touched;
// dumps, snapshots and copies that ask the marks which blocks to read never
// touch (nor spend time on) the blocks nothing was ever stored in: a filter
// reserved for 2^32 items and holding one is saved by reading one block, not
// its 9.5 GB.
//
// # Invariant
//
// Every bucket that holds something lies in a marked block. A writer that is
// about to make a bucket non-empty, having read it empty, marks its block
// first (Mark), and only then stores (or compares-and-swaps) the bucket. A
// bucket it read non-empty needs no mark: the write that filled it marked it
// (by induction on the bucket's history), and marks are only cleared while
// nothing else runs (Clear).
//
// # Ordering
//
// Marks and buckets are sync/atomic words, whose operations are sequentially
// consistent: Mark's Or precedes the bucket's store in one total order. So a
// reader that loads a block's mark and finds it unset knows that no bucket
// of the block was non-empty when it loaded it: skipping the block reads it
// as it was at that moment, the same as reading its buckets then and finding
// them empty. A reader that needs one moment of a whole table (a snapshot)
// holds the writers off anyway, and then sees marks and buckets exact.
package written

import (
	"math/bits"
	"sync/atomic"
)

const (
	// Shift: a mark covers 2^Shift buckets, 512: 4 KiB of 8-byte words,
	// the page the kernel commits at a time, so a block is the least a read
	// can touch.
	Shift = 9
	// Block is the buckets one mark covers.
	Block = 1 << Shift
	// wordBuckets is the buckets one word of marks covers: 64 blocks.
	wordBuckets = 64 * Block
)

// Words returns the words of marks n buckets need: one a 2^15 buckets (256
// KiB of table), at least one. Tables allocate them with their buckets.
func Words(n uint64) uint64 { return max(1, (n+wordBuckets-1)/wordBuckets) }

// Marks are the marks of a table's buckets 0, 1, ...: block b's mark is bit
// b%64 of word b/64. Mark, Marked and Next may run at once from any number
// of goroutines; Clear may not run with any of them.
type Marks []atomic.Uint64

// Mark marks bucket j's block. It loads first and writes only an unset bit,
// so that a block filled bucket after bucket costs one read of a line that
// stays shared between cores, not a write each time.
func (m Marks) Mark(j uint64) {
	w := &m[j>>(Shift+6)]
	bit := uint64(1) << (j >> Shift & 63)
	if w.Load()&bit == 0 {
		w.Or(bit)
	}
}

// Marked reports whether bucket j's block is marked.
func (m Marks) Marked(j uint64) bool {
	return m[j>>(Shift+6)].Load()>>(j>>Shift&63)&1 != 0
}

// Next returns the buckets [lo, hi) of the first run of marked blocks in
// buckets [from, end), clipped to them: lo >= from is the first bucket of
// [from, end) in a marked block, and hi the first bucket after it in an
// unmarked one, or end. With no marked block there, lo = hi = end. end must
// not exceed the buckets the marks cover, 2^15·len(m).
func (m Marks) Next(from, end uint64) (lo, hi uint64) {
	if from >= end {
		return end, end
	}
	last := (end - 1) >> Shift // the last block of the range
	b, ok := m.scan(from>>Shift, last, 0)
	if !ok {
		return end, end
	}
	lo = max(from, b<<Shift)
	c, ok := m.scan(b, last, ^uint64(0))
	if !ok {
		return lo, end
	}
	return lo, c << Shift
}

// scan returns the first block in [b, last] whose mark is 1 (flip 0) or 0
// (flip all ones), and false if there is none.
func (m Marks) scan(b, last uint64, flip uint64) (uint64, bool) {
	for b <= last {
		w := (m[b>>6].Load() ^ flip) >> (b & 63)
		if w != 0 {
			found := b + uint64(bits.TrailingZeros64(w))
			return found, found <= last
		}
		b = (b | 63) + 1
	}
	return 0, false
}

// Count returns the buckets of [from, end) that lie in marked blocks, and
// the runs of consecutive marked blocks they form (as Next finds them): what
// a sparse encoding of the range can cost at most.
func (m Marks) Count(from, end uint64) (buckets, runs uint64) {
	for from < end {
		lo, hi := m.Next(from, end)
		buckets += hi - lo
		if hi > lo {
			runs++
		}
		from = hi
	}
	return buckets, runs
}

// Clear unmarks every block. Preconditions: no other method of m runs
// meanwhile, and the buckets hold nothing (the caller emptied them).
func (m Marks) Clear() {
	for i := range m {
		m[i].Store(0)
	}
}
