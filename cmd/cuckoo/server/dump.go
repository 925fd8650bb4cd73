package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// CF.SCANDUMP and CF.LOADCHUNK move a filter in chunks, in this server's own
// format (RedisBloom's chunks are its memory layout; ours are not
// interchangeable with them).
//
// Iterator 0 asks for the header chunk, answered with iterator 1:
//
//	"CKCH" magic, version byte 1,
//	uvarints: capacity, bucket size, max iterations, expansion, seed,
//	          items inserted, items deleted, stages, and each stage's length,
//	u32 CRC-32C of everything before it.
//
// The stages, each in package filter's binary format (with its own CRC),
// concatenated, form the body; iterator i >= 1 asks for the body's bytes from
// (i-1)·chunkSize, answered with iterator i+1 and the data chunk
//
//	"CKCD" magic, uvarint offset, the bytes, u32 CRC-32C of everything before.
//
// and iterator 0 with no data when the body is done. CF.LOADCHUNK with
// iterator 1 takes a header and creates the key; with iterator i >= 2 it takes
// the chunk SCANDUMP answered with i, which must start where the previous one
// ended. Every field is checked; a bad chunk is an error and changes nothing.
// When the last byte arrives the stages are decoded and replace the key's
// (empty) filter.

const (
	chunkSize    = 8 << 20
	headerMagic  = "CKCH"
	chunkMagic   = "CKCD"
	dumpVersion  = 1
	maxStageSize = 1 << 36 // 64 GiB: any larger stage length is corrupt
)

var (
	errInvalidPosition = replyErr("Invalid position")
	errInvalidHeader   = replyErr("Invalid header")
)

// loadState is a CF.LOADCHUNK in progress.
type loadState struct {
	header []byte // the raw header chunk, for snapshots
	total  int    // body length
	lens   []int  // each stage's length
	body   []byte // the bytes received so far
	ins    int64
	del    int64
}

type dumpHeader struct {
	p        params
	ins, del int64
	lens     []int
}

// dumpBody returns the header and body of c. Preconditions: c.mu held, so the
// stages' snapshots are exact.
func dumpBody(c *cuckoo) (header, body []byte) {
	var lens []int
	for _, s := range c.list() {
		b, err := s.Snapshot().MarshalBinary()
		if err != nil {
			panic("server: " + err.Error()) // MarshalBinary of a valid filter does not fail
		}
		lens = append(lens, len(b))
		body = append(body, b...)
	}
	w := opWriter(headerMagic).uvarint(dumpVersion)
	w = w.uvarint(c.p.Capacity).uvarint(uint64(c.p.BucketSize)).uvarint(uint64(c.p.MaxIter)).
		uvarint(uint64(c.p.Expansion)).uvarint(c.p.Seed).
		uvarint(uint64(c.inserted.Load())).uvarint(uint64(c.deleted.Load())).uvarint(uint64(len(lens)))
	for _, n := range lens {
		w = w.uvarint(uint64(n))
	}
	return binary.LittleEndian.AppendUint32(w, crc32.Checksum(w, castagnoli)), body
}

// scanDump answers CF.SCANDUMP key iter: the next iterator and the chunk
// (nil at the end). Preconditions: c.mu held.
func scanDump(c *cuckoo, iter int64) (int64, []byte) {
	header, body := dumpBody(c)
	if iter == 0 {
		return 1, header
	}
	off := (iter - 1) * chunkSize
	if iter < 0 || off/chunkSize != iter-1 || off >= int64(len(body)) {
		return 0, nil
	}
	end := min(off+chunkSize, int64(len(body)))
	w := opWriter(chunkMagic).uvarint(uint64(off))
	w = append(w, body[off:end]...)
	return iter + 1, binary.LittleEndian.AppendUint32(w, crc32.Checksum(w, castagnoli))
}

// checkCRC splits b into the part before its trailing CRC-32C, if it matches.
func checkCRC(b []byte, magic string) ([]byte, bool) {
	if len(b) < len(magic)+4 || string(b[:len(magic)]) != magic {
		return nil, false
	}
	n := len(b) - 4
	if crc32.Checksum(b[:n], castagnoli) != binary.LittleEndian.Uint32(b[n:]) {
		return nil, false
	}
	return b[len(magic):n], true
}

func parseHeader(b []byte) (dumpHeader, error) {
	var h dumpHeader
	body, ok := checkCRC(b, headerMagic)
	if !ok {
		return h, errInvalidHeader
	}
	r := &opReader{b: body}
	if r.uvarint() != dumpVersion {
		return h, errInvalidHeader
	}
	h.p.Capacity = r.uvarint()
	h.p.BucketSize = r.int(maxBucketSize)
	h.p.MaxIter = r.int(maxIterationsMax)
	h.p.Expansion = r.int(maxExpansion)
	h.p.Seed = r.uvarint()
	h.ins = int64(r.uvarint())
	h.del = int64(r.uvarint())
	n := r.int(maxStages * 2)
	for range n {
		h.lens = append(h.lens, r.int(maxStageSize))
	}
	if r.err != nil || len(r.b) != 0 || n == 0 || h.p.validate() != nil {
		return h, errInvalidHeader
	}
	return h, nil
}

// beginLoad creates the filter a header describes, empty, with the load
// pending. It reserves the body's size.
func beginLoad(header []byte, mem func(uint64) error) (*cuckoo, error) {
	h, err := parseHeader(header)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, n := range h.lens {
		total += n
	}
	c, err := newCuckoo(h.p)
	if err != nil {
		return nil, errInvalidHeader
	}
	if err := mem(uint64(total)); err != nil {
		return nil, err
	}
	c.load = &loadState{header: bytes.Clone(header), total: total, lens: h.lens, ins: h.ins, del: h.del}
	return c, nil
}

// loadChunk applies data chunk iter to c. Preconditions: c.mu held.
func loadChunk(c *cuckoo, iter int64, chunk []byte) error {
	ls := c.load
	if ls == nil {
		return replyErr("ERR Couldn't load chunk: no CF.LOADCHUNK header (iterator 1) was loaded into this key")
	}
	b, ok := checkCRC(chunk, chunkMagic)
	if !ok {
		return replyErr("ERR Couldn't load chunk: bad magic or checksum")
	}
	r := &opReader{b: b}
	off := r.uvarint()
	if r.err != nil {
		return replyErr("ERR Couldn't load chunk: truncated")
	}
	if want := uint64(iter-2) * chunkSize; off != want || off != uint64(len(ls.body)) {
		return fmt.Errorf("ERR Couldn't load chunk: it starts at byte %d, expected %d", off, len(ls.body))
	}
	if len(ls.body)+len(r.b) > ls.total {
		return replyErr("ERR Couldn't load chunk: more data than the header announced")
	}
	body := append(ls.body, r.b...)
	if len(body) < ls.total {
		ls.body = body
		return nil
	}
	stages, err := decodeStages(body, ls.lens)
	if err != nil {
		return fmt.Errorf("ERR Couldn't load chunk: %v", err)
	}
	c.stages.Store(&stages)
	c.inserted.Store(ls.ins)
	c.deleted.Store(ls.del)
	c.load = nil
	return nil
}

// decodeStages decodes concatenated filters of the given lengths.
func decodeStages(body []byte, lens []int) ([]*lockfree.Filter, error) {
	var out []*lockfree.Filter
	for i, n := range lens {
		if n > len(body) {
			return nil, fmt.Errorf("stage %d: truncated", i)
		}
		var f filter.Filter
		if err := f.UnmarshalBinary(body[:n]); err != nil {
			return nil, fmt.Errorf("stage %d: %v", i, err)
		}
		lf, err := lockfree.FromFilter(&f)
		if err != nil {
			return nil, fmt.Errorf("stage %d: %v", i, err)
		}
		out = append(out, lf)
		body = body[n:]
	}
	if len(body) != 0 {
		return nil, replyErr("trailing bytes")
	}
	return out, nil
}
