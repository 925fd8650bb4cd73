package redisbloom

import (
	"errors"
	"fmt"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

// A DUMP payload of a RedisBloom cuckoo filter is Redis's module value of
// the type MBbloomCF (internal/rdb): its id with encoding version 4, then,
// as RedisBloom saves it, unsigned fields numFilters, numBuckets, numItems,
// numDeletes, bucketSize, maxIterations and expansion, and for each
// sub-filter its bucket count and its slots as a string; the module's EOF;
// Redis's RDB version and CRC-64. Encoding versions 2 and 3 (RedisBloom
// before 2.2) saved numFilters, numBuckets and numItems, then each
// sub-filter's slots, all of numBuckets buckets of 2 slots, with 20
// iterations and expansion 1: RedisBloom 2.6 still loads them, and so does
// ParsePayload.

// typeName is RedisBloom's module type name for cuckoo filters.
const typeName = "MBbloomCF"

// encodingVersion is the encoding RedisBloom writes since 2.2.
const encodingVersion = 4

// ErrPayload is a DUMP payload that does not hold a RedisBloom cuckoo
// filter RedisBloom would load: the wrong type or version, a field out of
// range, or sizes that disagree. Errors of the payload's framing
// (checksum, RDB version, a truncated field) are internal/rdb's, wrapped.
var ErrPayload = errors.New("redisbloom: not a RedisBloom cuckoo filter payload")

// AppendPayload appends f's DUMP payload to b, as Redis with RedisBloom
// writes it (its strings LZF-compressed where that saves bytes, as Redis
// does by default), with the writers' lock held.
func (f *Filter) AppendPayload(b []byte) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	start := len(b)
	h := f.header()
	b = rdb.AppendModuleType(b, rdb.NewModuleID(typeName, encodingVersion))
	for _, v := range []uint64{h.Filters, h.Buckets, h.Items, h.Deletes, uint64(h.BucketSize), uint64(h.MaxIterations), uint64(h.Expansion)} {
		b = rdb.AppendUnsigned(b, v)
	}
	for _, s := range f.list() {
		b = rdb.AppendUnsigned(b, s.buckets)
		b = rdb.AppendStringBuffer(b, s.appendBytes(make([]byte, 0, s.bytes), 0, s.bytes))
	}
	b = rdb.AppendModuleEOF(b)
	return rdb.AppendFooter(b, start)
}

// IsPayload reports whether p looks like a DUMP payload of a module value
// (RedisBloom's, or another module's): its first byte is Redis's module
// type. ParsePayload says whether it is a cuckoo filter's.
func IsPayload(p []byte) bool { return len(p) > 0 && p[0] == rdb.TypeModule }

// ParsePayload returns the filter of a DUMP payload RedisBloom wrote,
// charging each sub-filter to reserve (nil: at most DefaultMaxBytes in
// all) before reading its slots. The CRC-64 and the RDB version are
// checked first, then every field: a bad payload is an error, never a
// panic or an allocation the reserve did not allow. As Redis's RESTORE
// does, it reads the value from the start of p, footer included, and
// leaves what follows the value's end unread (internal/rdb, "Payload").
func ParsePayload(p []byte, reserve Reserve) (*Filter, error) {
	if _, _, err := rdb.SplitPayload(p); err != nil {
		return nil, err
	}
	r := rdb.NewReader(p)
	id, err := r.ReadModuleType()
	if err != nil {
		return nil, err
	}
	v := id.EncodingVersion()
	if id.Name() != typeName || v < 2 || v > encodingVersion {
		return nil, fmt.Errorf("%w: a value of module type %s", ErrPayload, id)
	}
	var fields [7]uint64
	n := 3 // numFilters, numBuckets, numItems
	if v == encodingVersion {
		n = 7
	} else {
		fields[4], fields[5], fields[6] = 2, 20, 1 // RedisBloom's defaults then
	}
	for i := range n {
		if fields[i], err = r.ReadUnsigned(); err != nil {
			return nil, err
		}
	}
	h := Header{Filters: fields[0], Buckets: fields[1], Items: fields[2], Deletes: fields[3],
		BucketSize: uint16(fields[4]), MaxIterations: uint16(fields[5]), Expansion: uint16(fields[6])}
	if fields[4] > MaxBucketSize || fields[5] > MaxIterations || fields[6] > MaxExpansion || !h.sane() {
		return nil, fmt.Errorf("%w: %d sub-filters of %d buckets of %d slots, %d iterations, expansion %d",
			ErrPayload, fields[0], fields[1], fields[4], fields[5], fields[6])
	}
	f := &Filter{buckets: h.Buckets, bucketSize: int(h.BucketSize), maxIterations: int(h.MaxIterations),
		expansion: int(h.Expansion), reserve: reserve}
	f.items.Store(h.Items)
	f.deletes.Store(h.Deletes)
	subs := make([]*sub, h.Filters)
	var total uint64
	for i := range subs {
		buckets := h.Buckets
		if v == encodingVersion {
			if buckets, err = r.ReadUnsigned(); err != nil {
				return nil, err
			}
		}
		bytes := buckets * uint64(h.BucketSize)
		if buckets == 0 || buckets > maxBuckets || total+bytes < total {
			return nil, fmt.Errorf("%w: sub-filter %d of %d buckets", ErrPayload, i, buckets)
		}
		if err := f.charge(total, bytes); err != nil {
			return nil, err
		}
		total += bytes
		data, err := r.ReadStringBuffer(int(min(bytes, uint64(r.Len())*rdbExpansion+64)))
		if err != nil {
			return nil, err
		}
		if uint64(len(data)) != bytes {
			return nil, fmt.Errorf("%w: sub-filter %d holds %d bytes, %d buckets of %d slots take %d",
				ErrPayload, i, len(data), buckets, h.BucketSize, bytes)
		}
		subs[i] = newSub(buckets, f.bucketSize, &f.open, i)
		subs[i].putBytes(0, data)
	}
	if err := r.ReadModuleEOF(); err != nil {
		return nil, err
	}
	f.publish(subs)
	return f, nil
}

// rdbExpansion bounds how far LZF expands: a back-reference of 3 bytes
// copies at most 264.
const rdbExpansion = 90

// UncheckedPayload reports whether p's footer carries no checksum (a CRC-64
// of 0), which Redis 8's RESTORE takes, checking the value as it reads it,
// and Redis 7.0's refuses as a wrong checksum.
func UncheckedPayload(p []byte) bool { return rdb.Unchecked(p) }

// CheckPayload checks a DUMP payload's footer as Redis's RESTORE does: its
// RDB version and CRC-64.
func CheckPayload(p []byte) error {
	_, _, err := rdb.SplitPayload(p)
	return err
}
