// Package fields encodes and decodes the fields of the server's binary
// records: log records, dump chunks, DUMP payloads and snapshots. A field is
// an unsigned varint, or a string as a varint length and its bytes.
//
// Writer appends fields to a byte slice; Reader reads them from bytes and
// Stream from a buffered stream. Readers keep their first error: every later
// read returns zero, so a decoder reads all its fields and checks once.
//
// It imports only the standard library; the server's internal packages
// import it.
package fields

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrShort is a record that ends inside a field.
var ErrShort = errors.New("truncated op")

// Writer appends fields.
type Writer []byte

// Uvarint appends v.
func (w Writer) Uvarint(v uint64) Writer { return binary.AppendUvarint(w, v) }

// Str appends s with its length.
func (w Writer) Str(s []byte) Writer {
	return append(binary.AppendUvarint(w, uint64(len(s))), s...)
}

// Source is what a description is read from: a Reader or a Stream.
type Source interface {
	Uvarint() uint64
	Int(limit uint64) int
	Failed() error
}

// Reader decodes fields from B, consuming it; the first error sticks in Err.
type Reader struct {
	B   []byte
	Err error
}

// Failed returns the first error.
func (r *Reader) Failed() error { return r.Err }

// Uvarint reads a varint.
func (r *Reader) Uvarint() uint64 {
	if r.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.Err = ErrShort
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Str reads a string; it aliases B, with its capacity cut to its length.
func (r *Reader) Str() []byte {
	n := r.Uvarint()
	if r.Err != nil {
		return nil
	}
	if n > uint64(len(r.B)) {
		r.Err = ErrShort
		return nil
	}
	s := r.B[:n:n]
	r.B = r.B[n:]
	return s
}

// Int reads a varint of at most limit.
func (r *Reader) Int(limit uint64) int { return checkLimit(r.Uvarint(), limit, &r.Err) }

func checkLimit(v, limit uint64, err *error) int {
	if v > limit && *err == nil {
		*err = fmt.Errorf("field %d out of range", v)
	}
	return int(v)
}

// Stream decodes fields from a buffered stream; the first error sticks in
// Err.
type Stream struct {
	R   *bufio.Reader
	Err error
}

// Failed returns the first error.
func (r *Stream) Failed() error { return r.Err }

// Uvarint reads a varint.
func (r *Stream) Uvarint() uint64 {
	if r.Err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(r.R)
	if err != nil {
		r.Err = ErrShort
	}
	return v
}

// Int reads a varint of at most limit.
func (r *Stream) Int(limit uint64) int { return checkLimit(r.Uvarint(), limit, &r.Err) }

// Str reads a string of at most limit bytes, allocating as it arrives: a
// damaged length cannot make it allocate more than the stream holds.
func (r *Stream) Str(limit uint64) []byte {
	n := r.Int(limit)
	if r.Err != nil {
		return nil
	}
	b := make([]byte, 0, min(n, 1<<16))
	for len(b) < n && r.Err == nil {
		chunk := min(n-len(b), 1<<16)
		b = append(b, make([]byte, chunk)...)
		if _, err := io.ReadFull(r.R, b[len(b)-chunk:]); err != nil {
			r.Err = ErrShort
		}
	}
	return b
}
