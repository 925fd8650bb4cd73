package filter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/cuckoohash/cuckoo/internal/hashing"
)

// The binary format, version 3, all integers little-endian:
//
//	offset size field
//	     0    4 magic "CKOO"
//	     4    2 format version (3; 2 for semi-sorted, 1 for plain buckets)
//	     6    1 kind: 1 for a Filter, 2 for a Scalable
//	     7    1 bucket size b
//	     8    1 fingerprint bits f (ranked: ceil(log2 R))
//	     9    1 flags: bit 0 set when the victim slot is used; others 0
//	    10    1 packing: 0 plain, 1 semi-sorted, 2 ranked (version 1: 0;
//	          version 2: 0 or 1)
//	    11    1 ranked: Q, one of 19, 23, 28, 33, and L = f - ceil(log2 Q);
//	          otherwise reserved, 0
//	    12    4 MaxKicks
//	    16    8 capacity
//	    24    8 buckets m
//	    32    8 seed
//	    40    8 count of stored fingerprints, the victim included
//	    48    8 victim bucket (0 when unused)
//	    56    4 victim fingerprint (0 when unused)
//	    60    4 reserved, 0
//	    64    8 table length in bytes, ceil(m*B/8) for buckets of B bits
//	    72    n the table: bucket i at bits i*B, B bits wide; plain, B = b*f
//	          and slot j of bucket i at bits (i*b+j)*f; semi-sorted, B =
//	          4f-4, coded as semisort.go says; ranked, B = 13..16 + 4L,
//	          coded as rank.go says
//	  72+n    4 CRC-32C (Castagnoli) of every preceding byte
//
// Each filter is written as the oldest version that describes it: plain
// filters as version 1, which readers from before semi-sorted buckets read
// too, semi-sorted ones as version 2. Version 3 adds ranked buckets, whose
// alternate bucket is hashing.AltMixed's.
const (
	magic         = "CKOO"
	formatVersion = 3
	// plainVersion is the version plain filters are written as: version 2
	// only adds the packing byte, and semiVersion the one semi-sorted
	// filters are: version 3 only adds ranked buckets.
	plainVersion  = 1
	semiVersion   = 2
	packingPlain  = 0
	packingSemi   = 1
	packingRanked = 2
	kindFilter    = 1
	kindScalable  = 2
	headerSize    = 72
	trailerSize   = 4
	flagVictim    = 1
	// readChunk bounds the memory a reader commits ahead of the data that has
	// actually arrived, so a header claiming a huge table cannot make Read
	// allocate it.
	readChunk = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// EncodedSize returns the number of bytes WriteTo writes.
func (f *Filter) EncodedSize() int64 {
	return headerSize + int64(len(f.t.packed())) + trailerSize
}

func (f *Filter) appendHeader(b []byte) []byte {
	b = append(b, magic...)
	version, packing, q := uint16(plainVersion), byte(packingPlain), byte(0)
	switch f.Packing() {
	case PackingSemiSorted:
		version, packing = semiVersion, packingSemi
	case PackingRanked:
		version, packing, q = formatVersion, packingRanked, byte(f.t.codec.q)
	}
	b = binary.LittleEndian.AppendUint16(b, version)
	var flags byte
	if f.victim.used {
		flags |= flagVictim
	}
	b = append(b, kindFilter, byte(f.t.slots), byte(f.t.bits), flags, packing, q)
	b = binary.LittleEndian.AppendUint32(b, uint32(f.maxKicks))
	b = binary.LittleEndian.AppendUint64(b, f.capacity)
	b = binary.LittleEndian.AppendUint64(b, f.t.buckets)
	b = binary.LittleEndian.AppendUint64(b, f.seed)
	b = binary.LittleEndian.AppendUint64(b, f.count)
	b = binary.LittleEndian.AppendUint64(b, f.victim.bucket)
	b = binary.LittleEndian.AppendUint32(b, f.victim.fp)
	b = binary.LittleEndian.AppendUint32(b, 0)
	return binary.LittleEndian.AppendUint64(b, uint64(len(f.t.packed())))
}

// MarshalBinary returns the filter in the binary format; WriteTo writes the
// same bytes.
func (f *Filter) MarshalBinary() ([]byte, error) {
	if f.t.buckets == 0 {
		return nil, errors.New("filter: MarshalBinary of a zero Filter")
	}
	b := make([]byte, 0, f.EncodedSize())
	b = f.appendHeader(b)
	b = append(b, f.t.packed()...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// WriteTo writes the filter in the binary format. It implements io.WriterTo.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if f.t.buckets == 0 {
		return 0, errors.New("filter: WriteTo of a zero Filter")
	}
	header := f.appendHeader(make([]byte, 0, headerSize))
	sum := crc32.Update(0, castagnoli, header)
	sum = crc32.Update(sum, castagnoli, f.t.packed())
	var written int64
	for _, part := range [][]byte{header, f.t.packed(), binary.LittleEndian.AppendUint32(nil, sum)} {
		n, err := w.Write(part)
		written += int64(n)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// header is a decoded, validated header.
type header struct {
	p        params
	count    uint64
	victim   victim
	tableLen uint64
}

func parseHeader(b []byte) (header, error) {
	var h header
	if string(b[0:4]) != magic {
		return h, corrupt("bad magic %q, want %q", b[0:4], magic)
	}
	// The kind first: a Scalable's version is its own.
	if b[6] != kindFilter {
		return h, corrupt("kind %d is not a Filter (%d)", b[6], kindFilter)
	}
	version := binary.LittleEndian.Uint16(b[4:])
	if version < plainVersion || version > formatVersion {
		return h, corrupt("format version %d, this package reads %d..%d", version, plainVersion, formatVersion)
	}
	p := &h.p
	p.slots, p.bits = uint(b[7]), uint(b[8])
	if p.slots != 2 && p.slots != 4 && p.slots != 8 {
		return h, corrupt("bucket size %d, want 2, 4 or 8", p.slots)
	}
	if p.bits < minFingerprintBits || p.bits > maxFingerprintBits {
		return h, corrupt("fingerprint bits %d, want %d..%d", p.bits, minFingerprintBits, maxFingerprintBits)
	}
	q := uint(b[11])
	switch packing := b[10]; {
	case packing == packingPlain:
	case packing == packingSemi && version >= semiVersion:
		if p.slots != rankSlots || p.bits < minSemiBits || p.bits > maxSemiBits {
			return h, corrupt("semi-sorted buckets of %d slots of %d bits, want %d slots of %d..%d bits",
				p.slots, p.bits, rankSlots, minSemiBits, maxSemiBits)
		}
		p.semi = true
	case packing == packingRanked && version >= formatVersion:
		if rankCodeBitsFor(q) == 0 {
			return h, corrupt("ranked buckets of Q = %d, want one of %v", q, rankQs)
		}
		if p.slots != rankSlots || p.bits < minRankedLow+qBits(q) || p.bits > maxRankedLow+qBits(q) {
			return h, corrupt("ranked buckets of %d slots of %d bits at Q = %d, want %d slots of %d..%d bits",
				p.slots, p.bits, q, rankSlots, minRankedLow+qBits(q), maxRankedLow+qBits(q))
		}
		p.q, q = q, 0
	default:
		return h, corrupt("packing %d, version %d reads 0..%d", packing, version, version-1)
	}
	flags := b[9]
	if flags&^flagVictim != 0 || q != 0 || binary.LittleEndian.Uint32(b[60:]) != 0 {
		return h, corrupt("reserved header bits are set")
	}
	kicks := binary.LittleEndian.Uint32(b[12:])
	if kicks == 0 || kicks > maxMaxKicks {
		return h, corrupt("MaxKicks %d, want 1..%d", kicks, maxMaxKicks)
	}
	p.maxKicks = int(kicks)
	p.capacity = binary.LittleEndian.Uint64(b[16:])
	p.buckets = binary.LittleEndian.Uint64(b[24:])
	p.seed = binary.LittleEndian.Uint64(b[32:])
	h.count = binary.LittleEndian.Uint64(b[40:])
	if p.buckets == 0 || p.buckets > hashing.MaxBuckets {
		return h, corrupt("%d buckets, want 1..2^32", p.buckets)
	}
	slots := p.buckets * uint64(p.slots)
	if p.capacity == 0 || p.capacity > slots {
		return h, corrupt("capacity %d, want 1..%d (the slots)", p.capacity, slots)
	}
	if h.count > slots+1 {
		return h, corrupt("count %d exceeds the %d slots and the victim", h.count, slots)
	}
	h.victim = victim{
		used:   flags&flagVictim != 0,
		bucket: binary.LittleEndian.Uint64(b[48:]),
		fp:     binary.LittleEndian.Uint32(b[56:]),
	}
	if h.victim.used {
		if h.victim.fp == 0 || uint64(h.victim.fp) > p.fpMax() || h.victim.bucket >= p.buckets {
			return h, corrupt("victim fingerprint %#x in bucket %d does not fit fingerprints of 1..%d and %d buckets",
				h.victim.fp, h.victim.bucket, p.fpMax(), p.buckets)
		}
	} else if h.victim.fp != 0 || h.victim.bucket != 0 {
		return h, corrupt("unused victim slot is not zero")
	}
	h.tableLen = binary.LittleEndian.Uint64(b[64:])
	if want := packedBytes(p.buckets, p.bucketBits()); h.tableLen != want {
		return h, corrupt("table length %d, want %d for %d buckets of %d %d-bit slots",
			h.tableLen, want, p.buckets, p.slots, p.bits)
	}
	return h, nil
}

// build checks a table's contents against its header and returns the filter.
// data holds the packed table followed by slack bytes.
func (h *header) build(data []byte) (*Filter, error) {
	f := newFilterShell(h.p)
	f.t.data = data
	clear(f.t.data[h.tableLen:])
	used := uint64(0)
	for i := range f.t.buckets {
		if f.t.coded && !f.t.canonical(i) {
			return nil, corrupt("bucket %d is not a sorted %v bucket", i, f.Packing())
		}
		for j := range f.t.slots {
			if f.t.slot(i, j) != 0 {
				used++
			}
		}
	}
	if tail := f.t.buckets * uint64(f.t.bucketBits) % 8; tail != 0 && data[h.tableLen-1]>>tail != 0 {
		return nil, corrupt("bits after the last slot are set")
	}
	if h.victim.used {
		used++
	}
	if used != h.count {
		return nil, corrupt("header counts %d fingerprints, the table holds %d", h.count, used)
	}
	f.count = h.count
	f.setVictim(h.victim)
	return f, nil
}

// newFilterShell is newFilter without allocating the table.
func newFilterShell(p params) *Filter {
	f := &Filter{t: tableLayout(p.buckets, p.shape), capacity: p.capacity, seed: p.seed, maxKicks: p.maxKicks}
	f.rng = p.seed ^ 0x853c49e6748fea9b
	f.setVictim(victim{})
	return f
}

// UnmarshalBinary replaces f, which may be a zero Filter, with the filter
// encoded in data. Every error wraps ErrCorrupt; f is unchanged on error.
func (f *Filter) UnmarshalBinary(data []byte) error {
	if len(data) < headerSize+trailerSize {
		return corrupt("%d bytes, shorter than the %d-byte header and checksum", len(data), headerSize+trailerSize)
	}
	h, err := parseHeader(data)
	if err != nil {
		return err
	}
	if want := uint64(headerSize) + h.tableLen + trailerSize; uint64(len(data)) != want {
		return corrupt("%d bytes, the header describes %d", len(data), want)
	}
	body := data[:len(data)-trailerSize]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(data[len(body):]); got != want {
		return corrupt("checksum %#08x, computed %#08x", want, got)
	}
	table := make([]byte, h.tableLen+slack)
	copy(table, data[headerSize:len(body)])
	g, err := h.build(table)
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// Read decodes a filter written by WriteTo or MarshalBinary, consuming
// exactly its bytes from r. Every error caused by the data wraps ErrCorrupt,
// a stream that ends early included; errors of r itself are returned
// wrapped.
func Read(r io.Reader) (*Filter, error) {
	var f Filter
	if _, err := f.ReadFrom(r); err != nil {
		return nil, err
	}
	return &f, nil
}

// ReadFrom replaces f with the filter read from r, as Read does, and
// returns the number of bytes read. It implements io.ReaderFrom; f is
// unchanged on error.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	var buf [headerSize]byte
	n, err := io.ReadFull(r, buf[:])
	read := int64(n)
	if err != nil {
		return read, readError("header", err)
	}
	h, err := parseHeader(buf[:])
	if err != nil {
		return read, err
	}
	sum := crc32.Update(0, castagnoli, buf[:])
	table, err := readTable(r, h.tableLen)
	read += int64(len(table))
	if err != nil {
		return read, err
	}
	sum = crc32.Update(sum, castagnoli, table)
	var trailer [trailerSize]byte
	n, err = io.ReadFull(r, trailer[:])
	read += int64(n)
	if err != nil {
		return read, readError("checksum", err)
	}
	if want := binary.LittleEndian.Uint32(trailer[:]); sum != want {
		return read, corrupt("checksum %#08x, computed %#08x", want, sum)
	}
	g, err := h.build(append(table, make([]byte, slack)...))
	if err != nil {
		return read, err
	}
	*f = *g
	return read, nil
}

// readTable reads n bytes, growing its buffer only as data arrives.
func readTable(r io.Reader, n uint64) ([]byte, error) {
	buf := make([]byte, 0, min(n, readChunk)+slack)
	for uint64(len(buf)) < n {
		chunk := min(n-uint64(len(buf)), readChunk)
		buf = append(buf, make([]byte, chunk)...)
		got, err := io.ReadFull(r, buf[uint64(len(buf))-chunk:])
		if err != nil {
			return buf[:uint64(len(buf))-chunk+uint64(got)], readError("table", err)
		}
	}
	return buf, nil
}

func readError(part string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return corrupt("data ends inside the %s", part)
	}
	return fmt.Errorf("filter: reading the %s: %w", part, err)
}
