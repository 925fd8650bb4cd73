package repl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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

// Record kinds of a full copy.
const (
	copyKey = 'K'
	copyEnd = 'E'
)

// appendKeyRecord appends a full copy's record of key k: its deadline
// (Unix ms, 0 none), its position in the stream, and its DUMP payload.
func appendKeyRecord(dst []byte, k string, deadline int64, pos int64, payload []byte) []byte {
	body := fields.Writer{copyKey}.Str([]byte(k)).Uvarint(uint64(deadline)).Uvarint(uint64(pos)).Str(payload)
	return keyspace.AppendRecord(dst, body)
}

// appendEndRecord appends a full copy's last record: the number of keys
// sent.
func appendEndRecord(dst []byte, keys int) []byte {
	return keyspace.AppendRecord(dst, fields.Writer{copyEnd}.Uvarint(uint64(keys)))
}

// keyRecord is a key record of a full copy, read (parseKeyRecord).
type keyRecord struct {
	key      string
	deadline int64
	pos      uint64
	payload  []byte
}

// parseKeyRecord reads a key record's body, after its kind.
func parseKeyRecord(b []byte) (keyRecord, error) {
	rd := &fields.Reader{B: b}
	k, d, pos, payload := rd.Str(), rd.Uvarint(), rd.Uvarint(), rd.Str()
	if rd.Err != nil || len(rd.B) != 0 {
		return keyRecord{}, errors.New("full copy: a malformed key record")
	}
	return keyRecord{key: string(k), deadline: int64(d), pos: pos, payload: payload}, nil
}

// parseEndRecord reads the end record's body, after its kind: the number of
// keys the primary sent.
func parseEndRecord(b []byte) (uint64, error) {
	rd := &fields.Reader{B: b}
	n := rd.Uvarint()
	if rd.Err != nil {
		return 0, errors.New("full copy: a malformed end record")
	}
	return n, nil
}

// beginCopy notes the offset a copy starts at and pins the backlog there:
// the stream from it waits while the copy is sent, within the link's
// output limit (output.go).
func (n *Node) beginCopy(link *Link) (id string, offset int64) {
	st := n.cfg.Store
	st.LockAll()
	n.mu.Lock()
	id, offset = n.id, n.backlog.End()
	n.backlog.Pin(link, offset)
	n.mu.Unlock()
	link.copyNames = link.copyNames[:0]
	for k := range st.All() {
		link.copyNames = append(link.copyNames, k)
	}
	st.UnlockAll()
	return id, offset
}

// writeCopy sends the keys noted by beginCopy, each with its position.
func (n *Node) writeCopy(w io.Writer, link *Link) (keys int, bytes int64, err error) {
	st := n.cfg.Store
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
		n.mu.Lock()
		pos := n.backlog.End()
		n.mu.Unlock()
		rec = appendKeyRecord(rec[:0], k, c.Deadline.Load(), pos, c.DumpPayload())
		c.Mu.Unlock()
		if _, err := w.Write(rec); err != nil {
			return keys, bytes, err
		}
		keys++
		bytes += int64(len(rec))
	}
	rec = appendEndRecord(rec[:0], keys)
	if _, err := w.Write(rec); err != nil {
		return keys, bytes, err
	}
	link.copyNames = nil
	if f, ok := w.(interface{ Flush() error }); ok {
		err = f.Flush()
	}
	return keys, bytes + int64(len(rec)), err
}

// readCopy reads the primary's copy and installs it key by key: each key
// the copy holds replaces the replica's entry of that key whole, with its
// position kept for the stream that follows, and once the copy is whole
// the keys it did not hold are dropped. Lookups meanwhile find each key
// either as the replica held it or as the copy holds it, never missing
// (see the protocol above).
func (n *Node) readCopy(m *primaryLink, br *bufio.Reader, nc net.Conn, id string, offset int64) error {
	st := n.cfg.Store
	start := time.Now()
	if err := n.forgetPosition(m); err != nil {
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
		switch rec[0] {
		case copyKey:
			kr, err := parseKeyRecord(rec[1:])
			if err != nil {
				return err
			}
			if err := n.installCopyKey(m, kr); err != nil {
				return err
			}
			fz.Positions[kr.key] = kr.pos
			end = max(end, int64(kr.pos))
			keys++
		case copyEnd:
			if sent, err := parseEndRecord(rec[1:]); err != nil || sent != keys {
				return fmt.Errorf("full copy: %d keys received, the primary sent %d", keys, sent)
			}
			if err := n.lockForLink(m); err != nil {
				return err
			}
			dropped := st.DropExcept(fz.Positions)
			st.UnlockAll()
			n.mu.Lock()
			n.id, n.id2, n.off2, n.followed = id, strings.Repeat("0", 40), -1, true
			n.backlog.Reset(offset)
			n.active.Store(true)
			n.mu.Unlock()
			n.log.Info("full copy from the primary loaded", "keys", keys, "bytes", bytes, "offset", offset,
				"dropped", dropped, "took", time.Since(start))
			if end <= offset {
				return n.copyDone()
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
func (n *Node) forgetPosition(m *primaryLink) error {
	st := n.cfg.Store
	if err := n.lockForLink(m); err != nil {
		return err
	}
	if st.AOF != nil {
		st.AOF.Append(keyspace.EncodeReplPos("", -1))
	}
	n.mu.Lock()
	n.id, n.followed = "?", false
	n.backlog.Reset(-1)
	n.mu.Unlock()
	st.UnlockAll()
	return nil
}

// installCopyKey replaces the replica's entry of the key kr holds by it,
// whole.
func (n *Node) installCopyKey(m *primaryLink, kr keyRecord) error {
	if err := n.lockForLink(m); err != nil {
		return err
	}
	err := n.cfg.Store.ReplaceFromPayload([]byte(kr.key), kr.deadline, kr.payload)
	n.cfg.Store.UnlockAll()
	if err != nil {
		return fmt.Errorf("full copy: key %q: %w", kr.key, err)
	}
	return nil
}

// copyDone makes the data directory whole after a full copy: a snapshot,
// whose new log generation starts with the replica's position.
func (n *Node) copyDone() error {
	if n.cfg.Store.AOF == nil || n.cfg.Snapshot == nil {
		return nil
	}
	if err := n.cfg.Snapshot(); err != nil {
		return fmt.Errorf("snapshot after the full copy: %w", err)
	}
	return nil
}
