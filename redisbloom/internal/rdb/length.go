package rdb

import (
	"encoding/binary"
	"math"
)

// The first byte of a length: its top two bits say the form.
const (
	len6     = 0b00 << 6 // 00xxxxxx: the length is the low 6 bits
	len14    = 0b01 << 6 // 01xxxxxx yyyyyyyy: 14 bits, big-endian
	len32    = 0x80      // then 4 bytes, big-endian
	len64    = 0x81      // then 8 bytes, big-endian
	lenEnc   = 0b11 << 6 // 11xxxxxx: a string in a special encoding, xxxxxx
	formMask = 0b11 << 6
)

// The special string encodings, the low 6 bits of an 11xxxxxx byte.
const (
	encInt8  = 0 // then 1 byte, signed
	encInt16 = 1 // then 2 bytes, signed, little-endian
	encInt32 = 2 // then 4 bytes, signed, little-endian
	encLZF   = 3 // then the compressed length, the uncompressed length, the stream
)

// AppendLen appends n in RDB length encoding, in its shortest form, as
// Redis's rdbSaveLen does.
func AppendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, len14|byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, len32), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, len64), n)
	}
}

// lenSize is the number of bytes AppendLen writes for n.
func lenSize(n uint64) int {
	switch {
	case n < 1<<6:
		return 1
	case n < 1<<14:
		return 2
	case n <= math.MaxUint32:
		return 5
	default:
		return 9
	}
}

// ReadLen reads an RDB length. Any of the four forms is accepted, even a
// longer one than needed, as Redis accepts them; an 11xxxxxx byte (a
// special string encoding) is not a length and is refused.
func (r *Reader) ReadLen() (uint64, error) {
	n, enc, err := r.readLenOrEnc()
	if err != nil {
		return 0, err
	}
	if enc {
		return 0, corrupt(r.off-1, "string encoding %#x where a length belongs", lenEnc|n)
	}
	return n, nil
}

// readLenOrEnc reads a length, or the 11xxxxxx byte that begins a string in
// a special encoding: then enc is true and n is the encoding (xxxxxx).
func (r *Reader) readLenOrEnc() (n uint64, enc bool, err error) {
	start := r.off
	if r.off >= len(r.b) {
		return 0, false, truncated(start, "length")
	}
	c := r.b[r.off]
	r.off++
	switch {
	case c&formMask == len6:
		return uint64(c), false, nil
	case c&formMask == len14:
		if r.off >= len(r.b) {
			return 0, false, truncated(start, "14-bit length")
		}
		r.off++
		return uint64(c&^formMask)<<8 | uint64(r.b[r.off-1]), false, nil
	case c&formMask == lenEnc:
		return uint64(c &^ formMask), true, nil
	case c == len32:
		if len(r.b)-r.off < 4 {
			return 0, false, truncated(start, "32-bit length")
		}
		r.off += 4
		return uint64(binary.BigEndian.Uint32(r.b[r.off-4:])), false, nil
	case c == len64:
		if len(r.b)-r.off < 8 {
			return 0, false, truncated(start, "64-bit length")
		}
		r.off += 8
		return binary.BigEndian.Uint64(r.b[r.off-8:]), false, nil
	default:
		return 0, false, corrupt(start, "unknown length form %#x", c)
	}
}
