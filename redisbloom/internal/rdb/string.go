package rdb

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Redis tries LZF only on strings longer than this: shorter ones never
// shrink by the 4 bytes it asks for.
const lzfMinString = 20

// AppendString appends s as an RDB string, as Redis's rdbSaveRawString
// does with rdbcompression on (its default): a decimal integer of at most
// 11 bytes that reads back the same and fits 32 bits as an integer
// encoding; a string longer than 20 bytes that LZF shrinks by 4 bytes or
// more compressed (up to 4 GiB, the most liblzf takes); anything else as a
// length and the bytes. So the bytes are Redis's own for the same string.
func AppendString(b, s []byte) []byte {
	if len(s) <= 11 {
		if v, ok := decimal(s); ok {
			if enc, ok := appendInt(b, v); ok {
				return enc
			}
		}
	}
	if len(s) > lzfMinString && uint64(len(s)) <= math.MaxUint32 {
		if enc, ok := appendLZFString(b, s); ok {
			return enc
		}
	}
	return append(AppendLen(b, uint64(len(s))), s...)
}

// decimal parses s if it is an integer written as Redis writes one: no
// sign but a leading '-', no leading zeros, no "-0".
func decimal(s []byte) (int64, bool) {
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != string(s) {
		return 0, false
	}
	return v, true
}

// appendInt appends v in the smallest integer encoding that holds it, if
// one does (32 bits at most).
func appendInt(b []byte, v int64) ([]byte, bool) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, lenEnc|encInt8, byte(v)), true
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return binary.LittleEndian.AppendUint16(append(b, lenEnc|encInt16), uint16(v)), true
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return binary.LittleEndian.AppendUint32(append(b, lenEnc|encInt32), uint32(v)), true
	}
	return b, false
}

// appendLZFString appends s LZF-compressed if that saves at least 4 bytes
// (Redis's bar). The stream is compressed after room for the longest
// header, then moved down to follow the actual one.
func appendLZFString(b, s []byte) ([]byte, bool) {
	limit := len(s) - 4
	start := len(b)
	gap := 1 + lenSize(uint64(limit)) + lenSize(uint64(len(s)))
	b = append(b, make([]byte, gap)...)
	b, ok := AppendLZF(b, s, limit)
	if !ok {
		return b[:start], false
	}
	stream := b[start+gap:]
	// The header is written over the gap; its capacity keeps it there.
	header := append(b[start:start:start+gap], lenEnc|encLZF)
	header = AppendLen(header, uint64(len(stream)))
	header = AppendLen(header, uint64(len(s)))
	n := copy(b[start+len(header):], stream)
	return b[:start+len(header)+n], true
}

// ReadString reads an RDB string in any of its forms (raw, integer, LZF)
// and returns its bytes, newly allocated. A string longer than limit is
// refused with ErrTooLarge before anything is allocated for it, and an LZF
// string that states more than its stream could expand to (88 times) with
// ErrCorrupt, also before. A negative limit is 0.
func (r *Reader) ReadString(limit int) ([]byte, error) {
	limit = max(limit, 0)
	start := r.off
	n, enc, err := r.readLenOrEnc()
	if err != nil {
		return nil, err
	}
	if !enc {
		if n > uint64(limit) {
			return nil, tooLarge(start, n, limit)
		}
		if n > uint64(r.Len()) {
			return nil, truncated(start, "string")
		}
		s := make([]byte, n)
		r.off += copy(s, r.b[r.off:])
		return s, nil
	}
	switch n {
	case encInt8, encInt16, encInt32:
		size := 1 << n
		if r.Len() < size {
			return nil, truncated(start, "integer string")
		}
		var v int64
		switch n {
		case encInt8:
			v = int64(int8(r.b[r.off]))
		case encInt16:
			v = int64(int16(binary.LittleEndian.Uint16(r.b[r.off:])))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(r.b[r.off:])))
		}
		r.off += size
		s := strconv.AppendInt(nil, v, 10)
		if len(s) > limit {
			return nil, tooLarge(start, uint64(len(s)), limit)
		}
		return s, nil
	case encLZF:
		return r.readLZFString(start, limit)
	default:
		return nil, corrupt(start, "unknown string encoding %#x", lenEnc|n)
	}
}

// readLZFString reads the rest of an LZF string, whose 0xC3 byte at start
// has been read.
func (r *Reader) readLZFString(start, limit int) ([]byte, error) {
	clen, err := r.ReadLen()
	if err != nil {
		return nil, err
	}
	ulen, err := r.ReadLen()
	if err != nil {
		return nil, err
	}
	switch {
	case clen == 0 || ulen == 0:
		// Redis never writes either: it compresses only long strings.
		return nil, corrupt(start, "LZF string of compressed length %d, length %d", clen, ulen)
	case ulen > uint64(limit):
		return nil, tooLarge(start, ulen, limit)
	case clen > uint64(r.Len()):
		return nil, truncated(start, "LZF string")
	case ulen > clen*lzfMaxRatio: // clen*88 fits: clen is at most r.Len()
		return nil, corrupt(start, "LZF string of %d bytes states a length of %d, more than LZF can expand to", clen, ulen)
	}
	s := make([]byte, ulen)
	if err := DecompressLZF(s, r.b[r.off:r.off+int(clen)]); err != nil {
		return nil, fmt.Errorf("%w, in the string at byte %d", err, start)
	}
	r.off += int(clen)
	return s, nil
}

func tooLarge(off int, n uint64, limit int) error {
	return fmt.Errorf("%w: %d bytes, limit %d, at byte %d", ErrTooLarge, n, limit, off)
}
