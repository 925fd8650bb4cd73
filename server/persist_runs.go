package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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

// runsBlock is the buckets encoded at a time when a stage is streamed.
const runsBlock = 1 << 16

// appendRuns appends the runs of buckets [first, first+n) of st.
func appendRuns(dst []byte, st rawTable, first, n uint64) []byte {
	w := st.BucketBytes()
	end := first + n
	for i := first; i < end; {
		zeros := i
		for zeros < end && st.BucketBits(zeros) == 0 {
			zeros++
		}
		lits := zeros
		for lits < end && st.BucketBits(lits) != 0 {
			lits++
		}
		dst = binary.AppendUvarint(dst, zeros-i)
		dst = binary.AppendUvarint(dst, lits-zeros)
		for j := zeros; j < lits; j++ {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], st.BucketBits(j))
			dst = append(dst, b[:w]...)
		}
		i = lits
	}
	return dst
}

// writeRuns streams every bucket of st to w as runs.
func writeRuns(w io.Writer, st rawTable, buf []byte) ([]byte, error) {
	for first := uint64(0); first < st.Buckets(); first += runsBlock {
		buf = appendRuns(buf[:0], st, first, min(runsBlock, st.Buckets()-first))
		if _, err := w.Write(buf); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// byteReader is what readRuns reads from: a bytes.Reader for a dump chunk, a
// bufio.Reader for a snapshot.
type byteReader interface {
	io.Reader
	io.ByteReader
}

var errRuns = errors.New("bad bucket runs")

// readRuns reads the runs of n buckets of st starting at first. With apply
// it stores each literal bucket into st (SetBucketBits); without, it only
// checks them. It returns the fingerprints the range holds. A malformed
// range is an error wrapping errRuns; with apply, st may then hold part of
// it, so callers that must change nothing check first.
func readRuns(r byteReader, st rawTable, first, n uint64, apply bool) (uint64, error) {
	w := st.BucketBytes()
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
			k, err := st.entries(v)
			if err != nil {
				return 0, fmt.Errorf("%w: bucket %d: %v", errRuns, i, err)
			}
			fps += k
			if apply {
				if err := st.SetBucketBits(i, v); err != nil {
					return 0, err
				}
			}
			i++
		}
	}
	return fps, nil
}
