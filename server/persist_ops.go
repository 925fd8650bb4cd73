package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A log record's payload is one op: the effect of a write command, not the
// command itself, so that replay does exactly what the live server did (only
// the items an insert accepted, the seed a new filter drew).
//
//	op byte, then fields: uvarints, and strings as uvarint length + bytes
//
//	opCreate  key, capacity, bucket size, max iterations, expansion, seed
//	opAdd     key, n, n items            (each was inserted)
//	opDel     key, item                  (one copy was deleted)
//	opDrop    key                        (DEL of the key)
//	opFlush                              (FLUSHALL)
//	opCompact key
//	opChunk   key, iterator, data        (an accepted CF.LOADCHUNK)
//	opExpire  key, deadline              (EXPIRE and its kin: the absolute
//	                                      deadline, Unix ms, > 0)
//	opPersist key                        (PERSIST: the deadline cleared)
//	opRename  key, new key               (RENAME, RENAMENX: the filter and
//	                                      its deadline move, replacing the
//	                                      new key's)
//	opRestore key, deadline, payload     (RESTORE: DUMP's payload, replacing
//	                                      the key; deadline 0 for none)
//
// A key dropped because its deadline passed (by a lookup, a write or the
// sweeper) is logged as opDrop: replay never reads the clock.
const (
	opCreate byte = 1 + iota
	opAdd
	opDel
	opDrop
	opFlush
	opCompact
	opChunk
	opExpire
	opPersist
	opRename
	opRestore
)

// The records that are not one key's op, numbered apart from the ops.
// Every record kind of the log and the stream is numbered here, nowhere
// else.
const (
	// opMulti holds a transaction's ops, applied together (cmd_multi.go):
	// uvarint n, then n ops as strings.
	opMulti byte = 64
	// opReplPing is the primary's heartbeat in the stream, never logged: a
	// replica sees the link alive, and offsets move on both sides alike
	// (repl.go).
	opReplPing byte = 65
	// opReplPos is a replica's position in its own log (repl_position.go).
	opReplPos byte = 66
)

type opWriter []byte

func (w opWriter) uvarint(v uint64) opWriter { return binary.AppendUvarint(w, v) }
func (w opWriter) str(s []byte) opWriter {
	return append(binary.AppendUvarint(w, uint64(len(s))), s...)
}

func encodeCreate(key []byte, p params) []byte {
	return opWriter{opCreate}.str(key).uvarint(p.Capacity).uvarint(uint64(p.BucketSize)).
		uvarint(uint64(p.MaxIter)).uvarint(uint64(p.Expansion)).uvarint(p.Seed)
}

func encodeAdd(key []byte, items [][]byte) []byte {
	w := opWriter{opAdd}.str(key).uvarint(uint64(len(items)))
	for _, it := range items {
		w = w.str(it)
	}
	return w
}

func encodeKeyOp(op byte, key []byte) []byte { return opWriter{op}.str(key) }

func encodeDel(key, item []byte) []byte { return opWriter{opDel}.str(key).str(item) }

func encodeExpire(key []byte, deadline int64) []byte {
	return opWriter{opExpire}.str(key).uvarint(uint64(deadline))
}

func encodeRename(from, to []byte) []byte { return opWriter{opRename}.str(from).str(to) }

func encodeRestore(key []byte, deadline int64, payload []byte) []byte {
	return opWriter{opRestore}.str(key).uvarint(uint64(deadline)).str(payload)
}

func encodeChunk(key []byte, iter uint64, data []byte) []byte {
	return opWriter{opChunk}.str(key).uvarint(iter).str(data)
}

// opReader decodes fields; the first error sticks.
type opReader struct {
	b   []byte
	err error
}

var errShortOp = errors.New("truncated op")

func (r *opReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShortOp
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *opReader) str() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errShortOp
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *opReader) int(limit uint64) int {
	v := r.uvarint()
	if v > limit && r.err == nil {
		r.err = fmt.Errorf("field %d out of range", v)
	}
	return int(v)
}

// op is a decoded log payload.
type op struct {
	kind  byte
	key   []byte
	p     params
	items [][]byte
	iter  uint64
	// to is opRename's new key; deadline opExpire's and opRestore's.
	to       []byte
	deadline int64
}

func decodeOp(b []byte) (op, error) {
	if len(b) == 0 {
		return op{}, errShortOp
	}
	o := op{kind: b[0]}
	r := &opReader{b: b[1:]}
	if o.kind != opFlush {
		o.key = r.str()
	}
	switch o.kind {
	case opCreate:
		o.p.Capacity = r.uvarint()
		o.p.BucketSize = r.int(maxBucketSize)
		o.p.MaxIter = r.int(maxIterationsMax)
		o.p.Expansion = r.int(maxExpansion)
		o.p.Seed = r.uvarint()
	case opAdd:
		n := r.uvarint()
		if n > uint64(len(r.b)) {
			return o, errShortOp
		}
		for range n {
			o.items = append(o.items, r.str())
		}
	case opDel:
		o.items = [][]byte{r.str()}
	case opDrop, opFlush, opCompact, opPersist:
	case opExpire:
		o.deadline = int64(r.int(math.MaxInt64))
		if o.deadline == 0 && r.err == nil {
			r.err = errors.New("an expiry with no deadline")
		}
	case opRename:
		o.to = r.str()
	case opRestore:
		o.deadline = int64(r.int(math.MaxInt64))
		o.items = [][]byte{r.str()}
	case opChunk:
		o.iter = r.uvarint()
		o.items = [][]byte{r.str()}
	default:
		return o, fmt.Errorf("unknown op %d", o.kind)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	return o, r.err
}
