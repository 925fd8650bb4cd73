package backlog

import (
	"encoding/binary"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// Backlog holds the end of a replication stream (see the package doc). K
// keys the pins: whatever identifies a full copy in progress to its owner.
// A Backlog must not be copied after first use.
type Backlog[K comparable] struct {
	start int64  // the offset of buf[0]
	buf   []byte // whole records, from start to the end
	size  int64  // the bytes a trim keeps
	pins  map[K]int64
}

// New returns an empty backlog at offset 0 that keeps about size bytes,
// and more while a pin holds its start. It panics if size is not positive.
func New[K comparable](size int64) Backlog[K] {
	if size <= 0 {
		panic("backlog: the size must be positive")
	}
	return Backlog[K]{size: size, pins: map[K]int64{}}
}

// Start is the offset of the first byte held (repl_backlog_first_byte_offset).
func (b *Backlog[K]) Start() int64 { return b.start }

// End is the stream's end (master_repl_offset): where the next record starts.
func (b *Backlog[K]) End() int64 { return b.start + int64(len(b.buf)) }

// Len is the number of bytes held (repl_backlog_histlen).
func (b *Backlog[K]) Len() int64 { return int64(len(b.buf)) }

// Size is the number of bytes a trim keeps (repl_backlog_size).
func (b *Backlog[K]) Size() int64 { return b.size }

// Append frames payload as a record, adds it at the end and trims.
func (b *Backlog[K]) Append(payload []byte) {
	b.buf = keyspace.AppendRecord(b.buf, payload)
	b.trim()
}

// trim drops the front if the backlog holds more than twice its size: to
// size bytes, or to the earliest pin if that is earlier. A trim that a pin
// holds back is made only once it drops at least as many bytes as it
// keeps, so that the bytes a lagging pin holds are copied a bounded number
// of times each.
func (b *Backlog[K]) trim() {
	over := b.Len() - b.size
	if over <= b.size {
		return
	}
	pinned := false
	for _, p := range b.pins {
		if p-b.start < over {
			over, pinned = max(p-b.start, 0), true
		}
	}
	cut := int64(0)
	for cut < over {
		next := b.recordEnd(cut)
		if next > over {
			break
		}
		cut = next
	}
	if pinned && cut < b.Len()-cut {
		return
	}
	if cut > 0 {
		// To a new array: a slice Since returned keeps the old one.
		b.buf = append(b.buf[:0:0], b.buf[cut:]...)
		b.start += cut
	}
}

// recordEnd is the index in buf just past the record that starts at index
// i. Preconditions: a record starts at i.
func (b *Backlog[K]) recordEnd(i int64) int64 {
	return i + keyspace.RecordHeader + int64(binary.LittleEndian.Uint32(b.buf[i:]))
}

// Pin holds the start at or before offset, for k, until Unpin(k): the
// bytes from offset on stay held (those still held when it is pinned).
// Pinning k again moves its pin, and trims what it no longer holds. The
// owner bounds how far a pin may lag behind the end (package server:
// client-output-buffer-limit replica).
func (b *Backlog[K]) Pin(k K, offset int64) {
	b.pins[k] = offset
	b.trim()
}

// Pinned reports k's pin, and whether k holds one.
func (b *Backlog[K]) Pinned(k K) (offset int64, ok bool) {
	offset, ok = b.pins[k]
	return offset, ok
}

// Unpin releases k's pin, if any, and trims.
func (b *Backlog[K]) Unpin(k K) {
	delete(b.pins, k)
	b.trim()
}

// Since returns the bytes from offset to the end, and ok=false if offset is
// not held (before the start or past the end). The slice stays valid and
// unchanged whatever the backlog does later; it must not be written to.
func (b *Backlog[K]) Since(offset int64) (data []byte, ok bool) {
	if offset < b.start || offset > b.End() {
		return nil, false
	}
	return b.buf[offset-b.start : len(b.buf) : len(b.buf)], true
}

// Reset empties the backlog and starts it at offset: the next record
// appended starts there. Pins stay until their holders release them.
func (b *Backlog[K]) Reset(offset int64) {
	b.start, b.buf = offset, nil
}

// Position is where an offset lies relative to the backlog.
type Position int

const (
	// BeforeStart: the offset is before the first byte held.
	BeforeStart Position = iota
	// AtRecord: the offset is held and a record starts there, or it is
	// the end; the stream can be continued from it.
	AtRecord
	// InsideRecord: the offset is held but falls inside a record: it was
	// never a position of this stream.
	InsideRecord
	// PastEnd: the offset is after the end.
	PastEnd
)

var positionNames = [...]string{"BeforeStart", "AtRecord", "InsideRecord", "PastEnd"}

func (p Position) String() string { return positionNames[p] }

// Locate tells where offset lies: before the start, past the end, or,
// within the backlog, at a record's start or inside a record. It walks the
// record boundaries from the start, once.
func (b *Backlog[K]) Locate(offset int64) Position {
	switch {
	case offset < b.start:
		return BeforeStart
	case offset > b.End():
		return PastEnd
	}
	at, want := int64(0), offset-b.start
	for at < want {
		at = b.recordEnd(at)
	}
	if at == want {
		return AtRecord
	}
	return InsideRecord
}
