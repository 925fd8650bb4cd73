package filter

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"

	"github.com/cuckoohash/cuckoo/internal/linhash"
)

// The Scalable format, version 2, little-endian:
//
//	offset size field
//	     0    4 magic "CKOO"
//	     4    2 format version (2)
//	     6    1 kind: 2
//	     7    1 bucket size b
//	     8    1 slot bits w
//	     9    1 fingerprint bits F
//	    10    1 level L
//	    11    1 reserved, 0
//	    12    4 MaxKicks
//	    16    8 initial capacity
//	    24    8 false-positive rate, IEEE 754 binary64
//	    32    8 seed
//	    40    8 split pointer p, below 2^L
//	    48    4 growth (recorded, unused)
//	    52    4 stashed keys s
//	    56    8 keys held (Len): inserts less deletes
//	    64    n the table: 2^L+p buckets of b slots of w bits, packed as a
//	          Filter's table, zero bits up to the next byte
//	  64+n  8·s the stashed keys' hashes
//	     .    4 CRC-32C of every preceding byte
//
// Version 1 was the chain of Filters that Scalable was before: its stages
// hash keys differently from one another and from the table, so it cannot be
// converted without the keys, and ReadScalable refuses it with ErrOldFormat.
const (
	scalableVersion    = 2
	scalableHeaderSize = 64
)

// ErrOldFormat is returned by ReadScalable for a Scalable written in format
// version 1 (a chain of stages): rebuild it from its keys.
var ErrOldFormat = errors.New("filter: a version-1 Scalable (a chain of stages, before the growing table of format 2) cannot be converted without its keys: rebuild it from the keys (cuckoo build --scalable)")

func (s *Scalable) appendHeader(b []byte) []byte {
	t := s.t
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint16(b, scalableVersion)
	b = append(b, kindScalable, byte(t.shape.Slots), byte(t.shape.Bits), byte(t.shape.FPBits), byte(t.geom.Level), 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(s.cfg.MaxKicks))
	b = binary.LittleEndian.AppendUint64(b, s.cfg.InitialCapacity)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.cfg.FalsePositiveRate))
	b = binary.LittleEndian.AppendUint64(b, s.cfg.Seed)
	b = binary.LittleEndian.AppendUint64(b, t.geom.Split)
	b = binary.LittleEndian.AppendUint32(b, uint32(s.cfg.Growth))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.stash)))
	return binary.LittleEndian.AppendUint64(b, s.items)
}

// packedLen returns the bytes of the packed table.
func (t *growTable) packedLen() uint64 {
	return (t.buckets()*uint64(t.bucketBits) + 7) / 8
}

// EncodedSize returns the number of bytes WriteTo writes.
func (s *Scalable) EncodedSize() int64 {
	return scalableHeaderSize + int64(s.t.packedLen()) + 8*int64(len(s.t.stash)) + trailerSize
}

// crcWriter passes writes through and checksums them.
type crcWriter struct {
	w   io.Writer
	sum uint32
	n   int64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.sum = crc32.Update(c.sum, castagnoli, p[:n])
	c.n += int64(n)
	return n, err
}

// WriteTo writes the filter in the Scalable format. It implements
// io.WriterTo.
func (s *Scalable) WriteTo(w io.Writer) (int64, error) {
	if s.t == nil {
		return 0, errors.New("filter: WriteTo of a zero Scalable")
	}
	t := s.t
	cw := &crcWriter{w: w}
	if _, err := cw.Write(s.appendHeader(nil)); err != nil {
		return cw.n, err
	}
	// Segments hold whole bytes of buckets, so the packed table is their
	// bodies in order, the last one cut at the table's end. Bits past the
	// last bucket are zero: splits only write buckets below 2^L+p.
	left := t.packedLen()
	body := uint64(1) << t.segShift * uint64(t.bucketBits) / 8
	for i := range t.segs {
		n := min(left, body)
		if _, err := cw.Write(t.segment(i)[:n]); err != nil {
			return cw.n, err
		}
		left -= n
	}
	var stash []byte
	for _, h := range t.stash {
		stash = binary.LittleEndian.AppendUint64(stash, h)
	}
	if _, err := cw.Write(stash); err != nil {
		return cw.n, err
	}
	n, err := w.Write(binary.LittleEndian.AppendUint32(nil, cw.sum))
	return cw.n + int64(n), err
}

// MarshalBinary returns the bytes WriteTo writes.
func (s *Scalable) MarshalBinary() ([]byte, error) {
	if s.t == nil {
		return nil, errors.New("filter: MarshalBinary of a zero Scalable")
	}
	var buf sliceWriter
	buf.b = make([]byte, 0, s.EncodedSize())
	if _, err := s.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.b, nil
}

type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// crcReader passes reads through and checksums them.
type crcReader struct {
	r   io.Reader
	sum uint32
	n   int64
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.sum = crc32.Update(c.sum, castagnoli, p[:n])
	c.n += int64(n)
	return n, err
}

// ReadScalable decodes a filter written by Scalable.WriteTo, consuming
// exactly its bytes. Errors caused by the data wrap ErrCorrupt; a version-1
// file gives ErrOldFormat.
func ReadScalable(r io.Reader) (*Scalable, error) {
	var s Scalable
	if _, err := s.ReadFrom(r); err != nil {
		return nil, err
	}
	return &s, nil
}

// ReadFrom replaces s with the filter read from r. It implements
// io.ReaderFrom; s is unchanged on error.
func (s *Scalable) ReadFrom(r io.Reader) (int64, error) {
	cr := &crcReader{r: r}
	var b [scalableHeaderSize]byte
	if _, err := io.ReadFull(cr, b[:8]); err != nil {
		return cr.n, readError("scalable header", err)
	}
	if string(b[0:4]) != magic {
		return cr.n, corrupt("bad magic %q, want %q", b[0:4], magic)
	}
	if b[6] != kindScalable {
		return cr.n, corrupt("kind %d is not a Scalable (%d)", b[6], kindScalable)
	}
	switch v := binary.LittleEndian.Uint16(b[4:]); v {
	case scalableVersion:
	case 1:
		return cr.n, ErrOldFormat
	default:
		return cr.n, corrupt("Scalable format version %d, this package reads %d", v, scalableVersion)
	}
	if _, err := io.ReadFull(cr, b[8:]); err != nil {
		return cr.n, readError("scalable header", err)
	}
	cfg := ScalableConfig{
		BucketSize:        int(b[7]),
		MaxKicks:          int(binary.LittleEndian.Uint32(b[12:])),
		InitialCapacity:   binary.LittleEndian.Uint64(b[16:]),
		FalsePositiveRate: math.Float64frombits(binary.LittleEndian.Uint64(b[24:])),
		Seed:              binary.LittleEndian.Uint64(b[32:]),
		Growth:            int(binary.LittleEndian.Uint32(b[48:])),
	}
	width, fpBits, level := uint(b[8]), uint(b[9]), uint(b[10])
	split := binary.LittleEndian.Uint64(b[40:])
	stashed := binary.LittleEndian.Uint32(b[52:])
	items := binary.LittleEndian.Uint64(b[56:])
	if b[11] != 0 {
		return cr.n, corrupt("reserved header byte %d, want 0", b[11])
	}
	// The header must be one NewScalable makes: that checks the
	// configuration and gives the shape and the initial size. Nothing is
	// allocated for the table until its bytes arrive.
	fresh, w, f, err := scalableLayout(cfg)
	switch {
	case err != nil:
		return cr.n, corrupt("header: %v", err)
	case fresh.cfg != cfg:
		return cr.n, corrupt("header: configuration %+v is not in canonical form", cfg)
	case width != w || fpBits != f:
		return cr.n, corrupt("%d-bit slots with %d-bit fingerprints, want %d and %d for this rate and bucket size",
			width, fpBits, w, f)
	case level > linhash.MaxLevel || level < fresh.level0 || split >= 1<<level:
		return cr.n, corrupt("level %d and split %d, want level %d..%d and split below 2^level", level, split, fresh.level0, linhash.MaxLevel)
	case 1<<level+split < fresh.buckets:
		return cr.n, corrupt("%d buckets, fewer than the initial %d", 1<<level+split, fresh.buckets)
	case stashed > linhash.MaxStash:
		return cr.n, corrupt("%d stashed keys, at most %d", stashed, linhash.MaxStash)
	}
	t := newGrowTableShape(linhash.NewShape(uint(cfg.BucketSize), width, fpBits))
	t.geom = linhash.At(level, split)
	t.segShift = segShiftFor(level)
	left := t.packedLen()
	body := uint64(1) << t.segShift * uint64(t.bucketBits) / 8
	for left > 0 {
		n := min(left, body)
		data, err := readTable(cr, n)
		if err != nil {
			return cr.n, err
		}
		seg := make([]byte, body+slack)
		copy(seg, data)
		t.appendSegment(seg)
		left -= n
	}
	if err := t.recount(); err != nil {
		return cr.n, err
	}
	stash := make([]byte, 8*stashed)
	if _, err := io.ReadFull(cr, stash); err != nil {
		return cr.n, readError("stash", err)
	}
	for i := range stashed {
		t.stash = append(t.stash, binary.LittleEndian.Uint64(stash[8*i:]))
	}
	sum := cr.sum
	var trailer [trailerSize]byte
	if _, err := io.ReadFull(cr, trailer[:]); err != nil {
		return cr.n, readError("scalable checksum", err)
	}
	if want := binary.LittleEndian.Uint32(trailer[:]); want != sum {
		return cr.n, corrupt("scalable checksum %#08x, computed %#08x", want, sum)
	}
	// Every held key has an entry of its own (doc.go), so there are at
	// least as many entries as keys.
	if items > t.count+uint64(len(t.stash)) {
		return cr.n, corrupt("%d keys held in %d entries", items, t.count+uint64(len(t.stash)))
	}
	fresh.items, fresh.t = items, t
	*s = *fresh
	return cr.n, nil
}

// recount checks every slot of a table just read and sets its counts: a
// used slot has a fingerprint and a tail stop bit, and the bits past the
// last bucket are zero.
func (t *growTable) recount() error {
	t.count, t.byTail = 0, [linhash.MaxTailBits]uint64{}
	for j := range t.buckets() {
		for i := range t.shape.Slots {
			s := t.slot(j, i)
			if s == 0 {
				continue
			}
			if !t.shape.Valid(s) {
				return corrupt("bucket %d slot %d: %#x has no fingerprint or no tail stop bit", j, i, s)
			}
			t.count++
			t.byTail[t.shape.TailLen(s)]++
		}
	}
	end := t.buckets() * uint64(t.bucketBits)
	seg, off := t.segment(len(t.segs)-1), end-uint64(len(t.segs)-1)<<t.segShift*uint64(t.bucketBits)
	if off%8 != 0 && seg[off/8]>>(off%8) != 0 {
		return corrupt("nonzero bits after the last bucket")
	}
	return nil
}

// UnmarshalBinary replaces s, which may be a zero Scalable, with the filter
// in data, which must hold exactly one encoded Scalable.
func (s *Scalable) UnmarshalBinary(data []byte) error {
	r := &sliceReader{b: data}
	var t Scalable
	if _, err := t.ReadFrom(r); err != nil {
		return err
	}
	if len(r.b) != 0 {
		return corrupt("%d bytes after the filter", len(r.b))
	}
	*s = t
	return nil
}

type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
