package keyspace

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/cuckoohash/cuckoo/server/internal/fields"
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
	r := &fields.Reader{B: data[len(snapMagicV1)+8 : n]}
	keys := r.Uvarint()
	if keys > uint64(len(r.B)) {
		return 0, nil, bad("key count %d", keys)
	}
	for i := uint64(0); i < keys && r.Err == nil; i++ {
		key := string(r.Str())
		c := new(Entry)
		if err := c.ReadV1(r); err != nil {
			if r.Err != nil {
				break
			}
			return 0, nil, bad("key %q: %v", key, err)
		}
		entries = append(entries, snapEntry{key: key, c: c})
	}
	if r.Err != nil {
		return 0, nil, bad("%v", r.Err)
	}
	if len(r.B) != 0 {
		return 0, nil, bad("%d trailing bytes", len(r.B))
	}
	return gen, entries, nil
}
