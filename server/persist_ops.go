package server

import (
	"encoding/binary"
	"errors"
	"fmt"
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
const (
	opCreate byte = 1 + iota
	opAdd
	opDel
	opDrop
	opFlush
	opCompact
	opChunk
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
	case opDrop, opFlush, opCompact:
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
