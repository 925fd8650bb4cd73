package server

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Startup: load the snapshot, replay the logs from its generation on, and
// open the last log for appending.
//
// A torn final record of the last log (a crash mid-write) is dropped with a
// warning and the file truncated to its last good record. Any other damage
// (a bad record with good data after it, a bad record in an older log, a
// damaged snapshot) stops startup with an error naming the file and offset,
// unless repair is set: then the damaged log is cut at the bad record, with a
// warning saying how many bytes were dropped, and replay goes on.

// listLogs returns the generations of the log files in dir, in order.
func listLogs(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var gens []uint64
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "appendonly.") || !strings.HasSuffix(name, ".log") {
			continue
		}
		g, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, "appendonly."), ".log"), 16, 64)
		if err != nil {
			continue
		}
		gens = append(gens, g)
	}
	slices.Sort(gens)
	return gens, nil
}

func removeLogsBefore(dir string, gen uint64, log *slog.Logger) {
	gens, err := listLogs(dir)
	if err != nil {
		log.Warn("listing logs", "err", err)
		return
	}
	for _, g := range gens {
		if g < gen {
			if err := os.Remove(filepath.Join(dir, logName(g))); err != nil {
				log.Warn("removing an old log", "err", err)
			}
		}
	}
}

// recoverDir loads dir into st and returns the open log.
func recoverDir(st *store, dir string, mode fsyncMode, repair bool, log *slog.Logger) (*aof, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	os.Remove(filepath.Join(dir, snapTmp)) // an unfinished snapshot
	var gen uint64
	var fuzzy *fuzzyLog
	snapPath := filepath.Join(dir, snapName)
	if _, err := os.Stat(snapPath); err == nil {
		g, entries, isFuzzy, err := readSnapshotFile(snapPath)
		if err != nil {
			return nil, err
		}
		gen = g
		if isFuzzy {
			fuzzy = &fuzzyLog{gen: g, positions: make(map[string]uint64, len(entries))}
		}
		for _, e := range entries {
			if old, ok := st.keys.Load(e.key); ok {
				st.dropLocked(e.key, old) // a key renamed during the snapshot: the last entry counts
			}
			st.keys.Store(e.key, e.c)
			st.touch(e.c)
			st.mem.Add(int64(e.c.sizeBytes()))
			if e.deadline != 0 {
				st.exp.set(e.key, e.c, e.deadline)
			}
			if fuzzy != nil {
				fuzzy.positions[e.key] = e.pos
			}
		}
		log.Info("snapshot loaded", "file", snapPath, "keys", len(entries), "generation", gen)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	gens, err := listLogs(dir)
	if err != nil {
		return nil, err
	}
	gens = slices.DeleteFunc(gens, func(g uint64) bool { return g < gen })
	if len(gens) == 0 {
		gens = []uint64{gen}
	}
	removeLogsBefore(dir, gen, log)
	var size int64
	ops := 0
	for i, g := range gens {
		path := filepath.Join(dir, logName(g))
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		var at, off int64
		var fz *fuzzyLog
		if fuzzy != nil && g == fuzzy.gen {
			fz = fuzzy
		}
		good, torn, err := scanLog(path, data, func(b []byte) error {
			// scanLog hands over the records in order from offset 0.
			rec := off
			off += recordHeader + int64(len(b))
			if err := st.replay(b, rec, fz); err != nil {
				return err
			}
			ops++
			return nil
		})
		at = good
		if err != nil {
			var le *logError
			if !errors.As(err, &le) {
				// The record's checksum held but its op did not decode
				// or apply: damage that the checksum cannot explain.
				le = &logError{path, good, err.Error()}
				torn = false
				err = le
			}
			last := i == len(gens)-1
			switch {
			case torn && last:
				log.Warn("dropping a torn final record (the server stopped mid-write; it was never acknowledged)",
					"file", path, "offset", le.Offset, "bytes", int64(len(data))-le.Offset, "reason", le.Reason)
			case repair:
				log.Warn("--repair: dropping the rest of a damaged log", "file", path, "offset", le.Offset,
					"bytes", int64(len(data))-le.Offset, "reason", le.Reason)
			default:
				return nil, fmt.Errorf("%w; refusing to start (the records after it would be lost): restart with --repair to drop the log from that offset on", err)
			}
			if err := os.Truncate(path, at); err != nil {
				return nil, err
			}
		}
		size = at
	}
	st.dirty.Store(int64(ops))
	last := gens[len(gens)-1]
	log.Info("log replayed", "dir", dir, "logs", len(gens), "ops", ops, "keys", st.keys.Len())
	return openAOF(dir, last, size, mode, log)
}

// fuzzyLog is the log generation a version 2 snapshot stands in part for:
// each key's position in it (see snapshot.go).
type fuzzyLog struct {
	gen       uint64
	positions map[string]uint64
}

// replay applies one logged op, which starts at offset at of its log; fz is
// set for the log the snapshot stands in part for. Replayed inserts never
// fail for lack of room or memory: each was acknowledged once.
func (st *store) replay(b []byte, at int64, fz *fuzzyLog) error {
	if len(b) > 0 && b[0] == opMulti {
		return st.replayMulti(b, at, fz)
	}
	o, err := decodeOp(b)
	if err != nil {
		return err
	}
	if o.kind == opFlush {
		if fz == nil {
			st.clear()
			return nil
		}
		// Keys the snapshot captured after the flush keep their state.
		var drop []string
		for k := range st.keys.All() {
			if uint64(at) >= fz.positions[k] {
				drop = append(drop, k)
			}
		}
		for _, k := range drop {
			if c, ok := st.keys.Load(k); ok {
				st.dropLocked(k, c)
			}
		}
		return nil
	}
	k := string(o.key)
	if fz != nil && uint64(at) < fz.positions[k] {
		return nil // in the key's snapshot entry already
	}
	c, ok := st.keys.Load(k)
	switch o.kind {
	case opRestore:
		nc, err := loadPayload(o.items[0], st.chargeForce, st.release)
		if err != nil {
			return fmt.Errorf("restore of %q: %v", o.key, err)
		}
		if ok {
			st.dropLocked(k, c)
		}
		st.keys.Store(k, nc)
		st.touch(nc)
		if o.deadline != 0 {
			st.exp.set(k, nc, o.deadline)
		}
		return nil
	case opCreate:
		nc, err := newCuckoo(o.p, st.chargeForce)
		if err != nil {
			return err
		}
		if ok {
			st.dropLocked(k, c)
		}
		st.keys.Store(k, nc)
		st.touch(nc)
		return nil
	case opChunk:
		if o.iter == 1 {
			nc, err := beginLoad(o.items[0], st.chargeForce, st.release)
			if err != nil {
				return err
			}
			if ok {
				st.dropLocked(k, c)
			}
			st.keys.Store(k, nc)
			st.touch(nc)
			return nil
		}
	}
	if !ok {
		if fz != nil {
			return nil // a life of the key that ended in this log before the snapshot reached it
		}
		return fmt.Errorf("op %d on missing key %q", o.kind, o.key)
	}
	switch o.kind {
	case opAdd:
		for _, it := range o.items {
			if _, err := c.add(it, false, true, st.chargeForce); err != nil {
				return err
			}
		}
	case opDel:
		c.del(o.items[0])
	case opDrop:
		st.dropLocked(k, c)
	case opCompact:
		before := c.sizeBytes()
		c.compact()
		st.release(before - c.sizeBytes())
	case opChunk:
		return loadChunk(c, int64(o.iter), o.items[0])
	case opExpire:
		st.exp.set(k, c, o.deadline)
	case opPersist:
		st.exp.set(k, c, 0)
	case opRename:
		st.replayRename(k, c, string(o.to), at, fz)
	}
	return nil
}

// replayRename moves c from key from to key to. If the snapshot's last
// entry of to stands after the op, it holds the moved filter already (see
// snapshot.go): only from's copy goes.
func (st *store) replayRename(from string, c *cuckoo, to string, at int64, fz *fuzzyLog) {
	if from == to {
		return
	}
	if fz != nil && uint64(at) < fz.positions[to] {
		st.dropLocked(from, c)
		return
	}
	if old, ok := st.keys.Load(to); ok {
		st.retire(to, old)
	}
	st.keys.Store(to, c)
	st.keys.Delete(from)
	st.exp.move(from, to, c)
}
