package redisbloom

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A filter whole, as WriteTo writes it and ReadFrom reads it back (a
// server's snapshot holds its filters so):
//
//	the 38-byte header (dump.go)
//	per sub-filter: u64 its bucket count, little-endian, then its slots
//
// Bucket counts are written, not derived from the header, since a filter
// restored from a DUMP payload has the counts its payload gave.

// streamBlock is the bytes WriteTo and ReadFrom hold at a time.
const streamBlock = 1 << 20

// WriteTo writes f to w, a block at a time, with the writers' lock held:
// one moment's filter.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	buf := f.header().AppendBinary(make([]byte, 0, streamBlock))
	var total int64
	flush := func() error {
		n, err := w.Write(buf)
		total += int64(n)
		buf = buf[:0]
		return err
	}
	for _, s := range f.list() {
		buf = binary.LittleEndian.AppendUint64(buf, s.buckets)
		for from := uint64(0); from < s.bytes; {
			to := min(s.bytes, from+uint64(cap(buf)-len(buf)))
			buf = s.appendBytes(buf, from, to)
			from = to
			if len(buf) == cap(buf) {
				if err := flush(); err != nil {
					return total, err
				}
			}
		}
	}
	return total, flush()
}

// ErrStream is a filter stream that does not hold a filter.
var ErrStream = errors.New("redisbloom: not a filter stream")

// ReadFrom reads a filter WriteTo wrote, charging its sub-filters to
// reserve (nil: at most DefaultMaxBytes) before allocating them. With
// check set it only checks the stream, allocating no slots.
func ReadFrom(r io.Reader, reserve Reserve, check bool) (*Filter, error) {
	var hb [HeaderSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStream, err)
	}
	h, _ := ParseHeader(hb[:])
	if !h.sane() {
		return nil, fmt.Errorf("%w: a header of no filter", ErrStream)
	}
	sizes := make([]uint64, h.Filters)
	subs := make([]*sub, h.Filters)
	var total uint64
	var f *Filter
	for i := range sizes {
		var nb [8]byte
		if _, err := io.ReadFull(r, nb[:]); err != nil {
			return nil, fmt.Errorf("%w: sub-filter %d: %v", ErrStream, i, err)
		}
		n := binary.LittleEndian.Uint64(nb[:])
		bytes := n * uint64(h.BucketSize)
		if n == 0 || n > maxBuckets || total+bytes < total {
			return nil, fmt.Errorf("%w: sub-filter %d of %d buckets", ErrStream, i, n)
		}
		total += bytes
		if !check {
			if f == nil {
				f = &Filter{reserve: reserve}
			}
			if err := f.charge(total-bytes, bytes); err != nil {
				return nil, err
			}
			subs[i] = newSub(n, int(h.BucketSize), &f.open, i)
		}
		buf := make([]byte, min(bytes, streamBlock))
		for from := uint64(0); from < bytes; {
			k := min(bytes-from, uint64(len(buf)))
			if _, err := io.ReadFull(r, buf[:k]); err != nil {
				return nil, fmt.Errorf("%w: sub-filter %d: %v", ErrStream, i, err)
			}
			if !check {
				subs[i].putBytes(from, buf[:k])
			}
			from += k
		}
		sizes[i] = n
	}
	if check {
		return nil, nil
	}
	f.buckets, f.bucketSize, f.maxIterations, f.expansion = h.Buckets, int(h.BucketSize), int(h.MaxIterations), int(h.Expansion)
	f.items.Store(h.Items)
	f.deletes.Store(h.Deletes)
	f.publish(subs)
	return f, nil
}
