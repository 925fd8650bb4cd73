package redisbloom

import (
	"encoding/binary"
	"math"
)

// CF.SCANDUMP and CF.LOADCHUNK move a filter as RedisBloom does: a header
// chunk, then each sub-filter's slots, oldest first, in chunks of at most
// MaxChunk bytes that never span two sub-filters. A data chunk's iterator
// is one more than the byte offset of its end in the concatenated slots,
// so CF.LOADCHUNK knows where it goes from the iterator and its length.

// HeaderSize is the length of RedisBloom's dump header since 2.2.11:
// packed little-endian numItems, numBuckets, numDeletes, numFilters (8
// bytes each), bucketSize, maxIterations, expansion (2 bytes each).
const HeaderSize = 38

// oldHeaderSize is the header RedisBloom 2.2.0 to 2.2.10 wrote, which no
// later version loads.
const oldHeaderSize = 46

// MaxChunk is the largest data chunk CF.SCANDUMP gives, RedisBloom's.
const MaxChunk = 16 << 20

// Errors of loading a dump, with RedisBloom's replies where it has one.
var (
	ErrHeader    error = reply("Invalid header")
	ErrOldHeader error = reply("Invalid header: a 46-byte header, as RedisBloom 2.2.0 to 2.2.10 wrote, which RedisBloom itself no longer loads; dump the key from RedisBloom 2.2.11 or later")
	ErrBadFilter error = reply("Couldn't create filter!")
	ErrBadChunk  error = reply("Couldn't load chunk!")
)

// Header is a dump's header: the filter's figures and parameters.
type Header struct {
	Items, Buckets, Deletes, Filters     uint64
	BucketSize, MaxIterations, Expansion uint16
}

// header returns f's header. Writers' lock held.
func (f *Filter) header() Header {
	return Header{
		Items:         f.items.Load(),
		Buckets:       f.buckets,
		Deletes:       f.deletes.Load(),
		Filters:       uint64(len(f.list())),
		BucketSize:    uint16(f.bucketSize),
		MaxIterations: uint16(f.maxIterations),
		Expansion:     uint16(f.expansion),
	}
}

// AppendBinary appends h's 38 bytes to b.
func (h Header) AppendBinary(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, h.Items)
	b = binary.LittleEndian.AppendUint64(b, h.Buckets)
	b = binary.LittleEndian.AppendUint64(b, h.Deletes)
	b = binary.LittleEndian.AppendUint64(b, h.Filters)
	b = binary.LittleEndian.AppendUint16(b, h.BucketSize)
	b = binary.LittleEndian.AppendUint16(b, h.MaxIterations)
	return binary.LittleEndian.AppendUint16(b, h.Expansion)
}

// ParseHeader reads a dump's header chunk.
func ParseHeader(b []byte) (Header, error) {
	switch len(b) {
	case HeaderSize:
	case oldHeaderSize:
		return Header{}, ErrOldHeader
	default:
		return Header{}, ErrHeader
	}
	le := binary.LittleEndian
	return Header{
		Items: le.Uint64(b), Buckets: le.Uint64(b[8:]), Deletes: le.Uint64(b[16:]), Filters: le.Uint64(b[24:]),
		BucketSize: le.Uint16(b[32:]), MaxIterations: le.Uint16(b[34:]), Expansion: le.Uint16(b[36:]),
	}, nil
}

// sane reports whether h can describe a filter this package holds, whatever
// its sub-filters' sizes: RedisBloom's bounds on every field, but not its
// rules on how a header's sizes follow from each other, which filters
// restored from DUMP payloads need not keep.
func (h Header) sane() bool {
	return h.BucketSize >= 1 && h.BucketSize <= MaxBucketSize && h.Filters >= 1 && h.Filters <= maxSubFilters &&
		h.Buckets >= 1 && h.Buckets <= maxBuckets && h.MaxIterations >= 1
}

// DumpChunk returns CF.SCANDUMP's answer at iter: for 0 the header and
// iterator 1; then the chunk after iter and the iterator of the next; 0
// and nil once the slots are done, and at once for a filter with no items.
// A sub-filter of at most MaxChunk bytes goes whole, one of more in
// MaxChunk pieces. Preconditions: iter >= 0.
func (f *Filter) DumpChunk(iter int64) (int64, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.items.Load() == 0 {
		return 0, nil
	}
	if iter == 0 {
		return 1, f.header().AppendBinary(make([]byte, 0, HeaderSize))
	}
	s, offset := f.locate(uint64(iter - 1))
	if s == nil {
		return 0, nil
	}
	if s.bytes <= MaxChunk {
		// Whole, from its start, wherever iter pointed into it.
		return iter + int64(s.bytes), s.appendBytes(make([]byte, 0, s.bytes), 0, s.bytes)
	}
	n := min(s.bytes-offset, MaxChunk)
	return iter + int64(n), s.appendBytes(make([]byte, 0, n), offset, offset+n)
}

// locate returns the sub-filter holding byte offset of the concatenated
// slots and the offset within it, or nil past the end.
func (f *Filter) locate(offset uint64) (*sub, uint64) {
	for _, s := range f.list() {
		if offset < s.bytes {
			return s, offset
		}
		offset -= s.bytes
	}
	return nil, 0
}

// Load returns an empty filter of a dump's header, as CF.LOADCHUNK's first
// call makes it; LoadChunk fills its slots. Every sub-filter is charged to
// reserve (nil: at most DefaultMaxBytes in all) before it is allocated.
func Load(b []byte, reserve Reserve) (*Filter, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return nil, err
	}
	return h.filter(reserve)
}

// filter builds an empty filter of h's geometry and figures, checked as
// RedisBloom checks a header. numFilters is 16 bits in RedisBloom's
// filter: a header's larger count is cut to them, as it cuts it.
func (h Header) filter(reserve Reserve) (*Filter, error) {
	filters := uint16(h.Filters)
	if h.BucketSize == 0 || h.BucketSize > MaxBucketSize || h.Buckets == 0 || h.Buckets > maxBuckets ||
		filters == 0 || h.MaxIterations == 0 || h.Buckets&(h.Buckets-1) != 0 || (h.Expansion == 0 && filters > 1) {
		return nil, ErrBadFilter
	}
	sizes := make([]uint64, filters)
	var total uint64
	for i := range sizes {
		// RedisBloom computes numBuckets * expansion^i in floating point
		// and keeps 56 bits of it.
		p := float64(h.Buckets) * math.Pow(float64(h.Expansion), float64(i))
		if p >= math.MaxUint64 {
			return nil, ErrBadFilter
		}
		n := uint64(p) & maxBuckets
		if n == 0 {
			return nil, ErrBadFilter
		}
		bytes := n * uint64(h.BucketSize)
		if total+bytes < total {
			return nil, ErrBadFilter
		}
		sizes[i], total = n, total+bytes
	}
	return build(h, sizes, reserve)
}

// build returns a filter of h's figures whose sub-filters have the given
// bucket counts, all slots empty, charged to reserve first.
func build(h Header, sizes []uint64, reserve Reserve) (*Filter, error) {
	f := &Filter{
		buckets:       h.Buckets,
		bucketSize:    int(h.BucketSize),
		maxIterations: int(h.MaxIterations),
		expansion:     int(h.Expansion),
		reserve:       reserve,
	}
	f.items.Store(h.Items)
	f.deletes.Store(h.Deletes)
	var total uint64
	for _, n := range sizes {
		total += n * uint64(h.BucketSize)
	}
	if err := f.charge(0, total); err != nil {
		return nil, err
	}
	subs := make([]*sub, len(sizes))
	for i, n := range sizes {
		subs[i] = newSub(n, f.bucketSize, &f.open, i)
	}
	f.publish(subs)
	return f, nil
}

// LoadChunk stores a data chunk CF.SCANDUMP gave at iterator iter: at
// byte iter-len(data)-1 of the concatenated slots, within one sub-filter.
// Past the last sub-filter, RedisBloom writes into the last one at the
// offset left over; so does this. Writers' lock.
func (f *Filter) LoadChunk(iter int64, data []byte) error {
	if len(data) == 0 || iter <= 0 || uint64(iter-1) < uint64(len(data)) {
		return ErrBadChunk
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	offset := uint64(iter) - uint64(len(data)) - 1
	var s *sub
	for _, s = range f.list() {
		if offset < s.bytes {
			break
		}
		offset -= s.bytes
	}
	if s == nil || offset > math.MaxUint64-uint64(len(data)) || s.bytes < offset+uint64(len(data)) {
		return ErrBadChunk
	}
	s.putBytes(offset, data)
	return nil
}
