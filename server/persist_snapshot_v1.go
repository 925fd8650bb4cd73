package server

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// Version 1 snapshots ("CKSNAP01"), written by earlier servers, are still
// read, so that an upgraded server starts on an old data directory:
//
//	"CKSNAP01", u64 generation G (every op of the logs before G, none of
//	G's), uvarint number of keys, then for each key: string key, uvarints
//	capacity, bucket size, max iterations, expansion, seed, items
//	inserted, items deleted, number of stages, each stage as a string in
//	package filter's binary format, uvarint 0 (or 1 and a pending load,
//	which this version cannot resume), and u32 CRC-32C of everything.
//
// The next snapshot is written in version 2.

// readSnapshotV1 decodes a snapshot file's contents. Every error wraps
// ErrCorrupt and names the file.
func readSnapshotV1(name string, data []byte) (gen uint64, entries []snapEntry, err error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", name, ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(data) < len(snapMagicV1)+8+4 || string(data[:len(snapMagicV1)]) != snapMagicV1 {
		return 0, nil, bad("not a snapshot (bad magic or too short)")
	}
	n := len(data) - 4
	if crc32.Checksum(data[:n], castagnoli) != binary.LittleEndian.Uint32(data[n:]) {
		return 0, nil, bad("checksum mismatch")
	}
	gen = binary.LittleEndian.Uint64(data[len(snapMagicV1):])
	r := &opReader{b: data[len(snapMagicV1)+8 : n]}
	keys := r.uvarint()
	if keys > uint64(len(r.b)) {
		return 0, nil, bad("key count %d", keys)
	}
	for i := uint64(0); i < keys && r.err == nil; i++ {
		key := string(r.str())
		var p params
		p.Capacity = r.uvarint()
		p.BucketSize = r.int(maxBucketSize)
		p.MaxIter = r.int(maxIterationsMax)
		p.Expansion = r.int(maxExpansion)
		p.Seed = r.uvarint()
		ins, del := int64(r.uvarint()), int64(r.uvarint())
		ns := r.int(maxStages * 2)
		if r.err != nil {
			break
		}
		if err := p.validate(); err != nil {
			return 0, nil, bad("key %q: %v", key, err)
		}
		if ns == 0 {
			return 0, nil, bad("key %q: no stages", key)
		}
		var raw []byte
		var lens []int
		for range ns {
			b := r.str()
			raw = append(raw, b...)
			lens = append(lens, len(b))
		}
		if loading := r.uvarint(); loading != 0 && r.err == nil {
			return 0, nil, bad("key %q: a CF.LOADCHUNK was in progress, which this server cannot resume from a version 1 snapshot: start the previous version once, finish or delete the load, and SAVE", key)
		}
		if r.err != nil {
			break
		}
		stages, err := decodeStages(raw, lens)
		if err != nil {
			return 0, nil, bad("key %q: %v", key, err)
		}
		c := &cuckoo{p: p}
		c.stages.Store(&stages)
		c.inserted.Store(ins)
		c.deleted.Store(del)
		entries = append(entries, snapEntry{key: key, c: c})
	}
	if r.err != nil {
		return 0, nil, bad("%v", r.err)
	}
	if len(r.b) != 0 {
		return 0, nil, bad("%d trailing bytes", len(r.b))
	}
	return gen, entries, nil
}

// decodeStages decodes concatenated filters of the given lengths.
func decodeStages(body []byte, lens []int) ([]*lockfree.Filter, error) {
	var out []*lockfree.Filter
	for i, n := range lens {
		if n > len(body) {
			return nil, fmt.Errorf("stage %d: truncated", i)
		}
		var f filter.Filter
		if err := f.UnmarshalBinary(body[:n]); err != nil {
			return nil, fmt.Errorf("stage %d: %v", i, err)
		}
		lf, err := lockfree.FromFilter(&f)
		if err != nil {
			return nil, fmt.Errorf("stage %d: %v", i, err)
		}
		out = append(out, lf)
		body = body[n:]
	}
	if len(body) != 0 {
		return nil, fmt.Errorf("trailing bytes")
	}
	return out, nil
}
