package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// DUMP's payload, which RESTORE takes: one key's filter in this server's
// dump format (persist_dump.go), whole, then a version and a checksum, as
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

var (
	errPayload    = replyErr("ERR DUMP payload version or checksum are wrong")
	errBadPayload = replyErr("ERR Bad data format")
)

// payloadBound bounds the bytes of c's payload: each table's runs' bound
// (runsBound: the buckets in blocks ever written, so a sparse filter's
// payload is charged its size, not its table's), and 2 KiB for the header
// chunk (its stash holds at most 64 hashes), its length and the trailer.
// Preconditions: c.mu held.
func payloadBound(c *cuckoo) uint64 {
	n := uint64(2 << 10)
	for _, st := range c.tables() {
		n += runsBound(st, 0, st.Buckets())
	}
	return n
}

// dumpPayload returns c's payload. Preconditions: c.mu held.
func dumpPayload(c *cuckoo) []byte {
	w := opWriter(nil).str(dumpHeader(c))
	for _, st := range c.tables() {
		w = appendRuns(w, st, 0, st.Buckets())
	}
	w = binary.LittleEndian.AppendUint16(w, payloadVersion)
	return binary.LittleEndian.AppendUint32(w, crc32.Checksum(w, castagnoli))
}

// checkPayload returns the body of payload b (before its version) if the
// version and checksum are right.
func checkPayload(b []byte) ([]byte, error) {
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

// loadPayload builds the filter payload b holds, charging its tables to mem
// before they are allocated; on failure it releases what it charged and
// returns errPayload, errBadPayload or mem's refusal.
func loadPayload(b []byte, mem charger, release func(uint64)) (*cuckoo, error) {
	body, err := checkPayload(b)
	if err != nil {
		return nil, err
	}
	r := &opReader{b: body}
	header := r.str()
	if r.err != nil {
		return nil, errBadPayload
	}
	c, err := beginLoad(header, mem, release)
	if err != nil {
		var le *loadError
		if errors.As(err, &le) {
			return nil, errBadPayload
		}
		return nil, err // mem refused it
	}
	want := c.load.fps
	c.load = nil
	rr := bytes.NewReader(r.b)
	for i, st := range c.tables() {
		if _, err := readRuns(rr, st, 0, st.Buckets(), st); err != nil || st.stored() != want[i] {
			release(c.sizeBytes())
			return nil, errBadPayload
		}
	}
	if rr.Len() != 0 {
		release(c.sizeBytes())
		return nil, errBadPayload
	}
	return c, nil
}
