package cf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cuckoohash/cuckoo/internal/tables"
)

// A range of a stage's buckets, as dump chunks and snapshots store it: runs
// of empty buckets and of literal ones,
//
//	repeated until the range is covered:
//	  uvarint  empty buckets
//	  uvarint  literal buckets k
//	  k × w    bytes: each bucket's word, little-endian in w bytes: a
//	           lock-free stage's fingerprint bits (BucketBits) in
//	           ceil(b·f/8) bytes, a growing table's word in 8
//
// so an empty or sparse filter costs almost nothing to dump or save, and a
// full one w bytes a bucket. Runs are read straight from the live stage,
// bucket by bucket, and written straight back: no copy of a table is made.
//
// Neither side touches a region of the table that was never written.
// Writing, the encoder asks the table for its runs of blocks ever written
// (tables.Table's NextWritten: packages growing and lockfree keep a mark
// per 512 buckets, set before a block first holds anything) and counts
// every bucket outside them as empty without reading it: a table reserved
// for 2^32 items and holding one is saved by reading 512 buckets, where
// reading all of them took minutes and committed every page of its 9.5 GB,
// since the kernel backs a page once it is read as well as written.
// Reading, the loader stores only the literal, non-empty buckets into a
// table freshly allocated (whose pages nothing touched), which marks their
// blocks. The bytes are the same as a dense encoding's: the runs depend
// only on which buckets are empty.

// runsBlock is the buckets encoded at a time when a stage is streamed, and
// the longest literal run it writes in one piece, so that the buffer stays
// bounded however full the table.
const runsBlock = 1 << 16

// runsEncoder builds the runs of a table's buckets, fed in order: it holds
// the empty buckets counted since the last literal run and the literal run
// not yet written, which it reads again from the table when it writes it
// (the caller holds the key's writer lock: the buckets do not change).
type runsEncoder struct {
	st    tables.Table
	w     int
	zeros uint64 // empty buckets before the pending literal run
	lit   uint64 // the pending literal run's first bucket
	lits  uint64 // and its length, 0 for none
	max   uint64 // write a literal run once it is this long; 0: never
}

func newRunsEncoder(st tables.Table, max uint64) *runsEncoder {
	return &runsEncoder{st: st, w: st.BucketBytes(), max: max}
}

// scan feeds buckets [first, end): those outside the table's written runs
// as empty, unread.
func (e *runsEncoder) scan(dst []byte, first, end uint64) []byte {
	for i := first; i < end; {
		lo, hi := e.st.NextWritten(i, end)
		if lo > i {
			dst = e.empty(dst, lo-i)
		}
		for j := lo; j < hi; {
			z := j
			for z < hi && e.st.BucketBits(z) == 0 {
				z++
			}
			if z > j {
				dst = e.empty(dst, z-j)
			}
			l := z
			for l < hi && e.st.BucketBits(l) != 0 {
				l++
			}
			if l > z {
				dst = e.literals(dst, z, l-z)
			}
			j = l
		}
		i = max(lo, hi)
	}
	return dst
}

// empty feeds n empty buckets.
func (e *runsEncoder) empty(dst []byte, n uint64) []byte {
	if e.lits > 0 {
		dst = e.emit(dst, e.lits)
	}
	e.zeros += n
	return dst
}

// literals feeds the n non-empty buckets from first on, which follow the
// buckets fed so far.
func (e *runsEncoder) literals(dst []byte, first, n uint64) []byte {
	if e.lits == 0 {
		e.lit = first
	}
	e.lits += n
	for e.max > 0 && e.lits >= e.max {
		dst = e.emit(dst, e.max)
	}
	return dst
}

// emit writes a run: the pending empty buckets and the first k of the
// pending literal ones.
func (e *runsEncoder) emit(dst []byte, k uint64) []byte {
	dst = binary.AppendUvarint(dst, e.zeros)
	dst = binary.AppendUvarint(dst, k)
	for j := e.lit; j < e.lit+k; j++ {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], e.st.BucketBits(j))
		dst = append(dst, b[:e.w]...)
	}
	e.zeros, e.lit, e.lits = 0, e.lit+k, e.lits-k
	return dst
}

// end writes what is pending: the literal run, then the empty buckets
// after it.
func (e *runsEncoder) end(dst []byte) []byte {
	if e.lits > 0 {
		dst = e.emit(dst, e.lits)
	}
	if e.zeros > 0 {
		dst = binary.AppendUvarint(dst, e.zeros)
		dst = binary.AppendUvarint(dst, 0)
		e.zeros = 0
	}
	return dst
}

// appendRuns appends the runs of buckets [first, first+n) of st.
func appendRuns(dst []byte, st tables.Table, first, n uint64) []byte {
	e := newRunsEncoder(st, 0)
	return e.end(e.scan(dst, first, first+n))
}

// writeRuns streams every bucket of st to w as runs, runsBlock buckets at a
// time.
func writeRuns(w io.Writer, st tables.Table, buf []byte) ([]byte, error) {
	e := newRunsEncoder(st, runsBlock)
	n := st.Buckets()
	for first := uint64(0); first < n; first += runsBlock {
		buf = e.scan(buf[:0], first, min(first+runsBlock, n))
		if first+runsBlock >= n {
			buf = e.end(buf)
		}
		if len(buf) == 0 {
			continue
		}
		if _, err := w.Write(buf); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// runsBound bounds the bytes of appendRuns(st, first, n): with W buckets of
// the range in written blocks, in R runs of them (NextWritten's), at most
// W·(w+2) + 11·R + 16. A run's two uvarints take 2 bytes but for counts of
// 128 or more: literal runs are separated by an empty bucket, so there are
// at most W/2 + R + 1 runs (W + 2R + 2 bytes); a count of 128 or more
// spans 128 buckets of the written ones (at most 2W/128 such counts) or
// reaches into a gap between written runs (R + 1 of them), and takes at
// most 9 bytes more; the literals take w bytes each. So a sparse filter's
// chunks and payloads are charged their size, not their table's.
func runsBound(st tables.Table, first, n uint64) uint64 {
	var written, runs uint64
	for i, end := first, first+n; i < end; {
		lo, hi := st.NextWritten(i, end)
		if lo == hi {
			break
		}
		written += hi - lo
		runs++
		i = hi
	}
	return written*uint64(st.BucketBytes()+2) + 11*runs + 16
}

// byteReader is what readRuns reads from: a bytes.Reader for a dump chunk, a
// bufio.Reader for a snapshot.
type byteReader interface {
	io.Reader
	io.ByteReader
}

var errRuns = errors.New("bad bucket runs")

// readRuns reads the runs of n buckets of a table of shape sh starting at
// first. With into, a table of that shape freshly allocated or filled only
// below first, it stores each non-empty literal bucket (SetBucketBits,
// which marks its block written) and touches nothing else; with nil it only
// checks them. It returns the fingerprints the range holds. A malformed
// range is an error wrapping errRuns; with into, it may then hold part of
// it, so callers that must change nothing check first.
func readRuns(r byteReader, sh tableShape, first, n uint64, into tables.Table) (uint64, error) {
	w := sh.BucketBytes()
	var fps uint64
	var b [8]byte
	for i, end := first, first+n; i < end; {
		zeros, err := binary.ReadUvarint(r)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", errRuns, err)
		}
		lits, err := binary.ReadUvarint(r)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", errRuns, err)
		}
		if zeros > end-i || lits > end-i-zeros || zeros+lits == 0 {
			return 0, fmt.Errorf("%w: a run of %d+%d buckets at bucket %d of a range ending at %d", errRuns, zeros, lits, i, end)
		}
		i += zeros
		for range lits {
			if _, err := io.ReadFull(r, b[:w]); err != nil {
				return 0, fmt.Errorf("%w: %v", errRuns, err)
			}
			v := binary.LittleEndian.Uint64(b[:])
			k, err := sh.entries(v)
			if err != nil {
				return 0, fmt.Errorf("%w: bucket %d: %v", errRuns, i, err)
			}
			fps += k
			if into != nil && v != 0 {
				if err := into.SetBucketBits(i, v); err != nil {
					return 0, err
				}
			}
			i++
		}
	}
	return fps, nil
}
