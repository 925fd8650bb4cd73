package server

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/fields"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// A full copy, streamed key by key (the primary's writes go on), and
// applied by the replica with each key's position.
//
// Protocol. With the gate held, the primary notes the key names and the
// stream offset O, and pins the backlog from O; then, for each key, with its
// writer lock held, it notes the offset p the stream has reached (every op
// of the key fed so far lies before p, every later one at or after it) and
// sends the key's filter, deadline and p. Keys created after O come by the
// stream alone. The replica installs each key as it arrives over its own
// entry of that key (Replay of a restore: the map's entry is swapped, the
// old one retired), and drops, once the copy is whole, the keys the copy
// did not hold; then it applies the stream from O as recovery applies a log
// after a snapshot: an op on key k at an offset before p(k) is already in
// the copy and skipped (fuzzyLog). Until the stream passes the last
// position the replica's log is not written (its position is invalid);
// then a snapshot makes its data directory whole.
//
// What a lookup on the replica sees meanwhile. Each key is its old entry
// until its copy replaces it, whole, in one map swap, and the replica
// stood at or before O (it asked for the copy), so an item the replica
// held that the primary still held at O is in the entry either way: a
// full copy never makes the replica answer "absent" for such an item.
// The key space is never emptied first, and needs no second copy of the
// data set in memory (Redis's swapdb does), only the key being installed.
// Keys the primary dropped before O stay until the copy ends.
//
//	+FULLRESYNC <id> <O>\r\n, then records (u32 length, u32 CRC-32C,
//	payload): 'K' string key, uvarint deadline (Unix ms, 0 none), uvarint
//	position, string DUMP payload; last 'E' uvarint keys.

// beginCopy notes the offset a copy starts at and pins the backlog there:
// the stream from it waits while the copy is sent, within the link's
// output limit (repl_output.go).
func (s *Server) beginCopy(link *replicaLink) (id string, offset int64) {
	st, r := s.store, s.repl
	st.LockAll()
	r.mu.Lock()
	id, offset = r.id, r.backlog.End()
	r.backlog.Pin(link, offset)
	r.mu.Unlock()
	link.copyNames = link.copyNames[:0]
	for k := range st.All() {
		link.copyNames = append(link.copyNames, k)
	}
	st.UnlockAll()
	return id, offset
}

// writeCopy sends the keys noted by beginCopy, each with its position.
func (s *Server) writeCopy(w *bufio.Writer, link *replicaLink) (keys int, bytes int64, err error) {
	st, r := s.store, s.repl
	var rec []byte
	for _, k := range link.copyNames {
		c := st.Peek(k)
		if c == nil {
			continue // dropped since: the stream has the drop
		}
		c.Mu.Lock()
		if c.Dead {
			c.Mu.Unlock()
			continue
		}
		r.mu.Lock()
		pos := r.backlog.End()
		r.mu.Unlock()
		body := fields.Writer{'K'}.Str([]byte(k)).Uvarint(uint64(c.Deadline.Load())).Uvarint(uint64(pos)).Str(c.DumpPayload())
		c.Mu.Unlock()
		rec = keyspace.AppendRecord(rec[:0], body)
		if _, err := w.Write(rec); err != nil {
			return keys, bytes, err
		}
		keys++
		bytes += int64(len(rec))
	}
	rec = keyspace.AppendRecord(rec[:0], fields.Writer{'E'}.Uvarint(uint64(keys)))
	if _, err := w.Write(rec); err != nil {
		return keys, bytes, err
	}
	link.copyNames = nil
	return keys, bytes + int64(len(rec)), w.Flush()
}

// readCopy reads the primary's copy and installs it key by key: each key
// the copy holds replaces the replica's entry of that key whole, with its
// position kept for the stream that follows, and once the copy is whole
// the keys it did not hold are dropped. Lookups meanwhile find each key
// either as the replica held it or as the copy holds it, never missing
// (see the protocol above).
func (s *Server) readCopy(m *masterLink, br *bufio.Reader, nc net.Conn, id string, offset int64) error {
	st, r := s.store, s.repl
	start := time.Now()
	if err := s.forgetPosition(m); err != nil {
		return err
	}
	fz := &keyspace.FuzzyLog{Positions: map[string]uint64{}}
	end := offset
	keys := uint64(0)
	var bytes int64
	for {
		rec, err := readRecord(br, nc)
		if err != nil {
			return fmt.Errorf("full copy: %w", err)
		}
		bytes += int64(keyspace.RecordHeader + len(rec))
		if len(rec) == 0 {
			return errors.New("full copy: an empty record")
		}
		rd := &fields.Reader{B: rec[1:]}
		switch rec[0] {
		case 'K':
			k, pos, err := s.installCopyKey(m, rd)
			if err != nil {
				return err
			}
			fz.Positions[k] = pos
			end = max(end, int64(pos))
			keys++
		case 'E':
			if n := rd.Uvarint(); rd.Err != nil || n != keys {
				return fmt.Errorf("full copy: %d keys received, the primary sent %d", keys, n)
			}
			if err := s.lockForLink(m); err != nil {
				return err
			}
			dropped := st.DropExcept(fz.Positions)
			st.UnlockAll()
			r.mu.Lock()
			r.id, r.id2, r.off2, r.followed = id, strings.Repeat("0", 40), -1, true
			r.backlog.Reset(offset)
			r.active.Store(true)
			r.mu.Unlock()
			s.log.Info("full copy from the primary loaded", "keys", keys, "bytes", bytes, "offset", offset,
				"dropped", dropped, "took", time.Since(start))
			if end <= offset {
				return s.copyDone()
			}
			m.fz, m.fzEnd = fz, end
			return nil
		default:
			return fmt.Errorf("full copy: a record of kind %d", rec[0])
		}
	}
}

// forgetPosition drops the replica's position before a full copy changes
// its key space: until the copy is whole and written (copyDone), the log
// holds no valid position, so a restart loads the data it held before the
// copy and takes a full copy again; nor does memory, so a link that breaks
// mid-copy does not continue from the old position over a key space the
// copy changed in part.
func (s *Server) forgetPosition(m *masterLink) error {
	st, r := s.store, s.repl
	if err := s.lockForLink(m); err != nil {
		return err
	}
	if st.AOF != nil {
		st.AOF.Append(keyspace.EncodeReplPos("", -1))
	}
	r.mu.Lock()
	r.id, r.followed = "?", false
	r.backlog.Reset(-1)
	r.mu.Unlock()
	st.UnlockAll()
	return nil
}

// installCopyKey reads a key record of the copy (after its kind, from rd)
// and replaces the replica's entry of that key by it, whole; it answers
// the key and its position in the primary's stream.
func (s *Server) installCopyKey(m *masterLink, rd *fields.Reader) (string, uint64, error) {
	k, d, pos, payload := rd.Str(), rd.Uvarint(), rd.Uvarint(), rd.Str()
	if rd.Err != nil || len(rd.B) != 0 {
		return "", 0, errors.New("full copy: a malformed key record")
	}
	if err := s.lockForLink(m); err != nil {
		return "", 0, err
	}
	err := s.store.ReplaceFromPayload(k, int64(d), payload)
	s.store.UnlockAll()
	if err != nil {
		return "", 0, fmt.Errorf("full copy: key %q: %w", k, err)
	}
	return string(k), pos, nil
}

// copyDone makes the data directory whole after a full copy: a snapshot,
// whose new log generation starts with the replica's position.
func (s *Server) copyDone() error {
	if s.store.AOF == nil {
		return nil
	}
	if err := s.snapshot(); err != nil {
		return fmt.Errorf("snapshot after the full copy: %w", err)
	}
	return nil
}
