package cf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"

	"github.com/cuckoohash/cuckoo/redisbloom"
	"github.com/cuckoohash/cuckoo/server/internal/fields"
)

// DUMP's payload, which RESTORE takes: one key's filter in this server's
// dump format (dump.go), whole, then a version and a checksum, as
// Redis closes its own payloads (Redis's RDB payloads are not read):
//
//	uvarint   length of the header chunk, then the chunk ("CKCH", with its
//	          own CRC-32C)
//	runs      every table's buckets, in order, as a snapshot holds them
//	          (runs.go)
//	u16       payloadVersion, little-endian
//	u32       CRC-32C of every byte before it
//
// RESTORE checks the version and the checksum before anything else ("ERR
// DUMP payload version or checksum are wrong"), then every field as
// CF.LOADCHUNK does ("ERR Bad data format"); the filter is charged to
// --maxmemory before it is allocated, and built apart: a refused payload
// changes nothing.

const payloadVersion = 1

// ErrPayloadFooter is RESTORE's refusal of a payload's footer.
var ErrPayloadFooter error = errPayload

// UncheckedPayload reports whether b is a RedisBloom payload whose footer
// carries no checksum: Redis 8 takes one, Redis 7.0 does not
// (redisbloom-compat 2.6 refuses it).
func UncheckedPayload(b []byte) bool {
	return redisbloom.IsPayload(b) && redisbloom.UncheckedPayload(b)
}

var (
	errPayload    = reply("ERR DUMP payload version or checksum are wrong")
	errBadPayload = reply("ERR Bad data format")
)

// PayloadBound bounds the bytes of f's payload: each table's runs' bound
// (runsBound: the buckets in blocks ever written, so a sparse filter's
// payload is charged its size, not its table's), and 2 KiB for the header
// chunk (its stash holds at most 64 hashes), its length and the trailer.
// Preconditions: the key's lock held.
func (f *Filter) PayloadBound() uint64 {
	if f.rb != nil {
		return f.payloadBoundRB()
	}
	n := uint64(2 << 10)
	for _, st := range f.tables() {
		n += runsBound(st.raw(), 0, st.Buckets())
	}
	return n
}

// DumpPayload returns f's payload. Preconditions: the key's lock held.
func (f *Filter) DumpPayload() []byte {
	if f.rb != nil {
		return f.rb.AppendPayload(nil)
	}
	w := fields.Writer(nil).Str(dumpHeader(f))
	for _, st := range f.tables() {
		w = appendRuns(w, st.raw(), 0, st.Buckets())
	}
	w = binary.LittleEndian.AppendUint16(w, payloadVersion)
	return binary.LittleEndian.AppendUint32(w, crc32.Checksum(w, castagnoli))
}

// CheckPayload returns the body of payload b (before its version) if the
// version and checksum are right.
func CheckPayload(b []byte) ([]byte, error) {
	if redisbloom.IsPayload(b) {
		return checkPayloadRB(b)
	}
	if len(b) < 6 {
		return nil, errPayload
	}
	n := len(b) - 4
	if crc32.Checksum(b[:n], castagnoli) != binary.LittleEndian.Uint32(b[n:]) ||
		binary.LittleEndian.Uint16(b[n-2:]) != payloadVersion {
		return nil, errPayload
	}
	return b[:n-2], nil
}

// LoadPayload makes f the filter payload b holds (RESTORE), charging its
// tables to mem before they are allocated; on failure it releases what it
// charged and returns errPayload, errBadPayload or mem's refusal.
// Preconditions: f is a zero Filter.
func (f *Filter) LoadPayload(b []byte, mem Charger, release func(uint64)) error {
	if redisbloom.IsPayload(b) {
		return f.loadPayloadRB(b, mem, release)
	}
	body, err := CheckPayload(b)
	if err != nil {
		return err
	}
	r := &fields.Reader{B: body}
	header := r.Str()
	if r.Err != nil {
		return errBadPayload
	}
	if err := f.BeginLoad(header, mem, release); err != nil {
		var le *LoadError
		if errors.As(err, &le) {
			return errBadPayload
		}
		return err // mem refused it
	}
	want := f.load.fps
	f.load = nil
	rr := bytes.NewReader(r.B)
	for i, st := range f.tables() {
		if _, err := readRuns(rr, st, 0, st.Buckets(), st.raw()); err != nil || st.stored() != want[i] {
			release(f.SizeBytes())
			return errBadPayload
		}
	}
	if rr.Len() != 0 {
		release(f.SizeBytes())
		return errBadPayload
	}
	return nil
}
