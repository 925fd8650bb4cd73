package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Version is the RDB version AppendFooter writes: Redis 7.0's. Redis
// reads a payload of its own version or older and refuses a newer one, so
// a payload of version 10 RESTOREs into Redis 7.0 and every later Redis
// (Redis 8.6.3 takes it), where one of 13, Redis 8's, would be refused by
// Redis 7.0. The bytes before the footer do not depend on the version for
// a module value (doc.go, "Payload").
const Version = 10

// MaxVersion is the newest RDB version SplitPayload accepts: Redis 8.6's,
// which Redis 8.0 to 8.6 write in DUMP payloads (Redis 7.2 writes 11,
// 7.4 writes 12). Like Redis, SplitPayload refuses a newer one: a payload
// of a Redis this package has not been checked against.
const MaxVersion = 13

// Errors of a payload's footer (SplitPayload). Each wraps ErrBadPayload,
// whose text is Redis's reply to RESTORE for all of them, so that a server
// can answer "ERR " + ErrBadPayload.Error() whichever one it got.
var (
	ErrBadPayload = errors.New("DUMP payload version or checksum are wrong")
	// ErrShortPayload: fewer bytes than the 10-byte footer.
	ErrShortPayload = fmt.Errorf("%w (payload shorter than its 10-byte footer)", ErrBadPayload)
	// ErrVersion: an RDB version newer than MaxVersion, which Redis 8.6
	// refuses.
	ErrVersion = fmt.Errorf("%w (RDB version newer than %d)", ErrBadPayload, MaxVersion)
	// ErrChecksum: the CRC-64 does not match the bytes before it.
	ErrChecksum = fmt.Errorf("%w (CRC-64 mismatch)", ErrBadPayload)
)

// FooterSize is the length of a payload's footer: the RDB version (2 bytes)
// and the CRC-64 (8 bytes), both little-endian.
const FooterSize = 2 + 8

// AppendFooter ends the payload that begins at b[start:] (its body, already
// appended): it appends Version and the CRC-64 of the body and the version,
// as Redis's DUMP does.
func AppendFooter(b []byte, start int) []byte {
	b = binary.LittleEndian.AppendUint16(b, Version)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b[start:]))
}

// SplitPayload checks a payload's footer as Redis's RESTORE does, and
// returns its body (a subslice of p: the bytes before the footer) and its
// RDB version. A value is read from p itself, as RESTORE reads it (doc.go,
// "Payload"): with a CRC of 0 it may run into the footer. The version is
// checked before the checksum, as Redis does; the version is returned
// whenever p has a footer, even with ErrVersion or ErrChecksum.
func SplitPayload(p []byte) (body []byte, version uint16, err error) {
	if len(p) < FooterSize {
		return nil, 0, ErrShortPayload
	}
	end := len(p) - FooterSize
	version = binary.LittleEndian.Uint16(p[end:])
	if version > MaxVersion {
		return nil, version, ErrVersion
	}
	if crc := binary.LittleEndian.Uint64(p[end+2:]); crc != 0 && CRC64(0, p[:end+2]) != crc {
		// A CRC of 0 is one not computed, as Redis 8 takes it (doc.go,
		// "Payload"); the bytes are then checked as they are read.
		return nil, version, ErrChecksum
	}
	return p[:end], version, nil
}

// Unchecked reports whether payload p's footer carries no checksum (a CRC-64
// field of 0), which Redis 8 takes and Redis 7.0 refuses.
func Unchecked(p []byte) bool {
	return len(p) >= FooterSize && binary.LittleEndian.Uint64(p[len(p)-8:]) == 0
}
