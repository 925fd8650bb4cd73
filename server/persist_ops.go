package server

import (
	"errors"
	"fmt"
	"math"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/fields"
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

func encodeCreate(key []byte, p cf.Params) []byte {
	return fields.Writer{opCreate}.Str(key).Uvarint(p.Capacity).Uvarint(uint64(p.BucketSize)).
		Uvarint(uint64(p.MaxIter)).Uvarint(uint64(p.Expansion)).Uvarint(p.Seed)
}

func encodeAdd(key []byte, items [][]byte) []byte {
	w := fields.Writer{opAdd}.Str(key).Uvarint(uint64(len(items)))
	for _, it := range items {
		w = w.Str(it)
	}
	return w
}

func encodeKeyOp(op byte, key []byte) []byte { return fields.Writer{op}.Str(key) }

func encodeDel(key, item []byte) []byte { return fields.Writer{opDel}.Str(key).Str(item) }

func encodeExpire(key []byte, deadline int64) []byte {
	return fields.Writer{opExpire}.Str(key).Uvarint(uint64(deadline))
}

func encodeRename(from, to []byte) []byte { return fields.Writer{opRename}.Str(from).Str(to) }

func encodeRestore(key []byte, deadline int64, payload []byte) []byte {
	return fields.Writer{opRestore}.Str(key).Uvarint(uint64(deadline)).Str(payload)
}

func encodeChunk(key []byte, iter uint64, data []byte) []byte {
	return fields.Writer{opChunk}.Str(key).Uvarint(iter).Str(data)
}

// op is a decoded log payload.
type op struct {
	kind  byte
	key   []byte
	p     cf.Params
	items [][]byte
	iter  uint64
	// to is opRename's new key; deadline opExpire's and opRestore's.
	to       []byte
	deadline int64
}

func decodeOp(b []byte) (op, error) {
	if len(b) == 0 {
		return op{}, fields.ErrShort
	}
	o := op{kind: b[0]}
	r := &fields.Reader{B: b[1:]}
	if o.kind != opFlush {
		o.key = r.Str()
	}
	switch o.kind {
	case opCreate:
		o.p.Capacity = r.Uvarint()
		o.p.BucketSize = r.Int(cf.MaxBucketSize)
		o.p.MaxIter = r.Int(cf.MaxIterations)
		o.p.Expansion = r.Int(cf.MaxExpansion)
		o.p.Seed = r.Uvarint()
	case opAdd:
		n := r.Uvarint()
		if n > uint64(len(r.B)) {
			return o, fields.ErrShort
		}
		for range n {
			o.items = append(o.items, r.Str())
		}
	case opDel:
		o.items = [][]byte{r.Str()}
	case opDrop, opFlush, opCompact, opPersist:
	case opExpire:
		o.deadline = int64(r.Int(math.MaxInt64))
		if o.deadline == 0 && r.Err == nil {
			r.Err = errors.New("an expiry with no deadline")
		}
	case opRename:
		o.to = r.Str()
	case opRestore:
		o.deadline = int64(r.Int(math.MaxInt64))
		o.items = [][]byte{r.Str()}
	case opChunk:
		o.iter = r.Uvarint()
		o.items = [][]byte{r.Str()}
	default:
		return o, fmt.Errorf("unknown op %d", o.kind)
	}
	if r.Err == nil && len(r.B) != 0 {
		r.Err = fmt.Errorf("%d trailing bytes", len(r.B))
	}
	return o, r.Err
}
