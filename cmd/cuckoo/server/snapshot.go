package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"
)

// A snapshot is the whole key space at one point of the log, in one file:
//
//	"CKSNAP01"  magic
//	u64         generation G: the snapshot holds every op of the logs
//	            before appendonly.G.log, and none of that log's
//	uvarint     number of keys, then for each key:
//	  string    key
//	  uvarints  capacity, bucket size, max iterations, expansion, seed,
//	            items inserted, items deleted, number of stages
//	  strings   each stage in package filter's binary format (own CRC)
//	  uvarint   1 if a CF.LOADCHUNK is in progress, then strings: its
//	            header chunk and the body bytes received; else 0
//	u32         CRC-32C of every byte before it
//
// Writing one: with the gate held exclusively (no write in flight) copy every
// filter (lockfree Snapshot is exact with no writer) and rotate the log to
// generation G; release the gate; then write snapshot.tmp, fsync it, rename it
// to snapshot.cks, fsync the directory, and only then remove the logs before
// G. A crash at any step leaves either the old snapshot and all the logs
// after it, or the new snapshot and the new log: startup loads the snapshot
// and replays every log from its generation on.

const (
	snapName  = "snapshot.cks"
	snapTmp   = "snapshot.tmp"
	snapMagic = "CKSNAP01"
)

// snapshot writes a snapshot and truncates the log. Only one runs at a time
// (snapMu).
func (s *Server) snapshot() error {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	st := s.store
	if st.aof == nil {
		return errors.New("ERR persistence is off (no --dir)")
	}
	start := time.Now()
	st.gate.Lock()
	gen := st.aof.gen + 1
	w := opWriter(snapMagic)
	w = binary.LittleEndian.AppendUint64(w, gen)
	w = w.uvarint(uint64(st.keys.Len()))
	n := 0
	for k, c := range st.keys.All() {
		n++
		w = w.str([]byte(k))
		w = w.uvarint(c.p.Capacity).uvarint(uint64(c.p.BucketSize)).uvarint(uint64(c.p.MaxIter)).
			uvarint(uint64(c.p.Expansion)).uvarint(c.p.Seed).
			uvarint(uint64(c.inserted.Load())).uvarint(uint64(c.deleted.Load()))
		list := c.list()
		w = w.uvarint(uint64(len(list)))
		for _, f := range list {
			b, err := f.Snapshot().MarshalBinary()
			if err != nil {
				st.gate.Unlock()
				return err
			}
			w = w.str(b)
		}
		if c.load != nil {
			w = w.uvarint(1).str(c.load.header).str(c.load.body)
		} else {
			w = w.uvarint(0)
		}
	}
	if err := st.aof.rotate(gen); err != nil {
		st.gate.Unlock()
		return err
	}
	dirty := st.dirty.Swap(0)
	st.gate.Unlock()
	if n != st.keys.Len() {
		// All and Len disagree only under concurrent writes, which the
		// gate excludes.
		return fmt.Errorf("server: snapshot saw %d keys, map has %d", n, st.keys.Len())
	}
	w = binary.LittleEndian.AppendUint32(w, crc32.Checksum(w, castagnoli))

	if err := writeFileSync(s.dir, snapTmp, snapName, w); err != nil {
		st.dirty.Add(dirty)
		return err
	}
	removeLogsBefore(s.dir, gen, s.log)
	s.lastSave.Store(time.Now().Unix())
	s.log.Info("snapshot written", "keys", n, "bytes", len(w), "generation", gen, "took", time.Since(start))
	return nil
}

// writeFileSync writes data to tmp, fsyncs it, renames it to name and fsyncs
// the directory.
func writeFileSync(dir, tmp, name string, data []byte) error {
	p := filepath.Join(dir, tmp)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(p, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

// snapEntry is one key of a decoded snapshot.
type snapEntry struct {
	key string
	c   *cuckoo
}

// readSnapshot decodes a snapshot file's contents. Every error wraps
// ErrCorrupt and names the file.
func readSnapshot(name string, data []byte) (gen uint64, entries []snapEntry, err error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", name, ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(data) < len(snapMagic)+8+4 || string(data[:len(snapMagic)]) != snapMagic {
		return 0, nil, bad("not a snapshot (bad magic or too short)")
	}
	n := len(data) - 4
	if crc32.Checksum(data[:n], castagnoli) != binary.LittleEndian.Uint32(data[n:]) {
		return 0, nil, bad("checksum mismatch")
	}
	gen = binary.LittleEndian.Uint64(data[len(snapMagic):])
	r := &opReader{b: data[len(snapMagic)+8 : n]}
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
		loading := r.uvarint()
		var hdr, body []byte
		if loading == 1 {
			hdr, body = r.str(), r.str()
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
		if loading == 1 {
			lc, err := beginLoad(hdr, func(uint64) error { return nil })
			if err != nil {
				return 0, nil, bad("key %q: pending load: %v", key, err)
			}
			lc.load.body = body
			c.load = lc.load
		} else if loading != 0 {
			return 0, nil, bad("key %q: load flag %d", key, loading)
		}
		entries = append(entries, snapEntry{key, c})
	}
	if r.err != nil {
		return 0, nil, bad("%v", r.err)
	}
	if len(r.b) != 0 {
		return 0, nil, bad("%d trailing bytes", len(r.b))
	}
	return gen, entries, nil
}
