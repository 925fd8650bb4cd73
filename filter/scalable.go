package filter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/cuckoohash/cuckoo/internal/hashing"
)

// ScalableConfig describes a Scalable filter.
type ScalableConfig struct {
	// InitialCapacity is the capacity of the first stage; required.
	InitialCapacity uint64
	// FalsePositiveRate bounds the rate of the whole filter however many
	// stages it grows. 0 means 0.01.
	FalsePositiveRate float64
	// Growth is the factor by which each stage's capacity exceeds the last
	// one's, 1..1024. 0 means 2.
	Growth int
	// BucketSize is the slots per bucket of every stage: 2, 4 or 8. 0 means 4.
	BucketSize int
	// MaxKicks is every stage's displacement bound. 0 means 500.
	MaxKicks int
	// Seed seeds the key hash, which all stages share.
	Seed uint64
}

const (
	defaultGrowth = 2
	maxGrowth     = 1024
	// maxStages bounds the stages: Growth 2 reaches the largest table long
	// before it; Growth 1 (equal stages, each lookup reading all of them)
	// comes closest. Past it the newest stage grows beyond its capacity.
	maxStages = 1 << 16
)

// Scalable is a cuckoo filter that grows: when its newest stage holds its
// capacity, it adds a stage Growth times larger whose fingerprints are one bit
// wider, so the stages' false-positive rates halve in turn and their sum
// stays below the configured rate however far the filter grows. Inserts go
// to the newest stage; lookups check every stage. A Scalable has the same
// concurrency rules as a Filter.
type Scalable struct {
	cfg    ScalableConfig // defaults filled in
	bits   uint           // fingerprint width of stage 0
	stages []*Filter
}

// NewScalable returns an empty scalable filter with one stage, or an error
// that names the ScalableConfig field at fault.
func NewScalable(cfg ScalableConfig) (*Scalable, error) {
	if cfg.InitialCapacity == 0 {
		return nil, errors.New("filter: ScalableConfig.InitialCapacity is 0: it must be at least 1")
	}
	if cfg.FalsePositiveRate == 0 {
		cfg.FalsePositiveRate = defaultFalsePositiveRate
	}
	if !(cfg.FalsePositiveRate > 0 && cfg.FalsePositiveRate < 1) {
		return nil, fmt.Errorf("filter: ScalableConfig.FalsePositiveRate is %v: it must be in (0, 1)", cfg.FalsePositiveRate)
	}
	switch {
	case cfg.Growth == 0:
		cfg.Growth = defaultGrowth
	case cfg.Growth < 1 || cfg.Growth > maxGrowth:
		return nil, fmt.Errorf("filter: ScalableConfig.Growth is %d: it must be in 1..%d", cfg.Growth, maxGrowth)
	}
	switch cfg.BucketSize {
	case 0:
		cfg.BucketSize = defaultBucketSize
	case 2, 4, 8:
	default:
		return nil, fmt.Errorf("filter: ScalableConfig.BucketSize is %d: it must be 2, 4 or 8", cfg.BucketSize)
	}
	switch {
	case cfg.MaxKicks == 0:
		cfg.MaxKicks = defaultMaxKicks
	case cfg.MaxKicks < 0 || cfg.MaxKicks > maxMaxKicks:
		return nil, fmt.Errorf("filter: ScalableConfig.MaxKicks is %d: it must be in 1..%d", cfg.MaxKicks, maxMaxKicks)
	}
	// Stage k has rate at most 2b/2^(f0+k); the sum over k stays below
	// 2·2b/2^f0, so stage 0 is built for half the target rate.
	bits, err := bitsForRate(cfg.FalsePositiveRate/2, uint(cfg.BucketSize))
	if err != nil {
		return nil, fmt.Errorf("filter: ScalableConfig.FalsePositiveRate %v: too small for 32-bit fingerprints", cfg.FalsePositiveRate)
	}
	s := &Scalable{cfg: cfg, bits: bits}
	if cfg.InitialCapacity > s.maxStageCapacity(0) {
		return nil, fmt.Errorf("filter: ScalableConfig.InitialCapacity %d: more than the largest table holds (%d)",
			cfg.InitialCapacity, s.maxStageCapacity(0))
	}
	first, err := s.newStage(0, cfg.InitialCapacity)
	if err != nil {
		return nil, err
	}
	s.stages = []*Filter{first}
	return s, nil
}

// stageBits returns the fingerprint width of stage k.
func (s *Scalable) stageBits(k int) uint { return min(s.bits+uint(k), maxFingerprintBits) }

// maxStageCapacity returns the capacity of the largest table stage k can have.
func (s *Scalable) maxStageCapacity(k int) uint64 {
	b := uint(s.cfg.BucketSize)
	return uint64(math.Floor(hashing.MaxBuckets * float64(b) * designLoad(b, s.stageBits(k)) * 0.999))
}

func (s *Scalable) newStage(k int, capacity uint64) (*Filter, error) {
	cfg := Config{
		Capacity:        capacity,
		FingerprintBits: int(s.stageBits(k)),
		BucketSize:      s.cfg.BucketSize,
		MaxKicks:        s.cfg.MaxKicks,
		Seed:            s.cfg.Seed,
	}
	p, err := cfg.params()
	if err != nil {
		return nil, fmt.Errorf("stage %d: %w", k, err)
	}
	return newFilter(p), nil
}

// grow appends a stage Growth times the newest one's capacity, or the
// largest table there is.
func (s *Scalable) grow() {
	last := s.stages[len(s.stages)-1]
	k := len(s.stages)
	c := s.maxStageCapacity(k)
	if grown := float64(last.capacity) * float64(s.cfg.Growth); grown < float64(c) {
		c = uint64(grown)
	}
	next, err := s.newStage(k, c)
	if err != nil {
		panic("filter: Scalable stage: " + err.Error()) // c is within range by construction
	}
	s.stages = append(s.stages, next)
}

func (s *Scalable) hash(key []byte) uint64       { return hashKey(key, s.cfg.Seed) }
func (s *Scalable) hashString(key string) uint64 { return hashString(key, s.cfg.Seed) }

// Insert adds key to the newest stage, adding a stage first if that one
// holds its capacity. It returns ErrFull only when the newest stage already
// holds 2b copies of the key's fingerprint (a key inserted that many times,
// or colliding keys): more copies of one key do not make the filter grow.
func (s *Scalable) Insert(key []byte) error { return s.InsertHash(s.hash(key)) }

// InsertString is Insert for a string key.
func (s *Scalable) InsertString(key string) error { return s.InsertHash(s.hashString(key)) }

// InsertHash is Insert for a caller-computed hash.
func (s *Scalable) InsertHash(h uint64) error {
	last := s.stages[len(s.stages)-1]
	if last.count >= last.capacity && len(s.stages) < maxStages {
		s.grow()
		last = s.stages[len(s.stages)-1]
	}
	err := last.InsertHash(h)
	if err == nil || last.CountHash(h) >= 2*last.BucketSize() || len(s.stages) == maxStages {
		return err
	}
	// Refused below its capacity for want of a path, which the capacity
	// promise makes rare: a new stage takes the key.
	s.grow()
	return s.stages[len(s.stages)-1].InsertHash(h)
}

// InsertUnique inserts key unless Contains(key) holds, and reports whether
// it inserted.
func (s *Scalable) InsertUnique(key []byte) (bool, error) { return s.InsertUniqueHash(s.hash(key)) }

// InsertUniqueString is InsertUnique for a string key.
func (s *Scalable) InsertUniqueString(key string) (bool, error) {
	return s.InsertUniqueHash(s.hashString(key))
}

// InsertUniqueHash is InsertUnique for a caller-computed hash.
func (s *Scalable) InsertUniqueHash(h uint64) (bool, error) {
	if s.ContainsHash(h) {
		return false, nil
	}
	return true, s.InsertHash(h)
}

// Contains reports whether key may have been inserted: never false for a key
// inserted and not deleted.
func (s *Scalable) Contains(key []byte) bool { return s.ContainsHash(s.hash(key)) }

// ContainsString is Contains for a string key.
func (s *Scalable) ContainsString(key string) bool { return s.ContainsHash(s.hashString(key)) }

// ContainsHash is Contains for a caller-computed hash.
func (s *Scalable) ContainsHash(h uint64) bool {
	for i := len(s.stages) - 1; i >= 0; i-- {
		if s.stages[i].ContainsHash(h) {
			return true
		}
	}
	return false
}

// ContainsBatch sets out[i] = Contains(keys[i]), overlapping the memory
// reads of different keys. It panics if out is shorter than keys.
func (s *Scalable) ContainsBatch(keys [][]byte, out []bool) {
	if len(out) < len(keys) {
		panic("filter: ContainsBatch: out is shorter than keys")
	}
	var hashes [batchSize]uint64
	var hit [batchSize]bool
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		for i, k := range keys[:n] {
			hashes[i] = s.hash(k)
			out[i] = false
		}
		for _, st := range s.stages {
			st.ContainsHashBatch(hashes[:n], hit[:n])
			for i := range n {
				out[i] = out[i] || hit[i]
			}
		}
		keys, out = keys[n:], out[n:]
	}
}

// Delete removes one copy of key's fingerprint from the newest stage that
// holds one, and reports whether there was one. As with Filter.Delete,
// delete only keys known to be present. Unlike a Filter, a Scalable cannot
// always tell which copy is the key's own: when the key's fingerprint also
// matches in a newer stage than the one it was inserted into (a false
// positive there, with probability below the configured rate), the copy
// removed belongs to another key, which may then be reported absent. The
// newest stage is tried first because it is the likeliest home: it holds
// the most keys and has the lowest false-positive rate.
func (s *Scalable) Delete(key []byte) bool { return s.DeleteHash(s.hash(key)) }

// DeleteString is Delete for a string key.
func (s *Scalable) DeleteString(key string) bool { return s.DeleteHash(s.hashString(key)) }

// DeleteHash is Delete for a caller-computed hash.
func (s *Scalable) DeleteHash(h uint64) bool {
	for i := len(s.stages) - 1; i >= 0; i-- {
		if s.stages[i].DeleteHash(h) {
			return true
		}
	}
	return false
}

// Count returns the copies of key's fingerprint in all stages.
func (s *Scalable) Count(key []byte) int { return s.CountHash(s.hash(key)) }

// CountString is Count for a string key.
func (s *Scalable) CountString(key string) int { return s.CountHash(s.hashString(key)) }

// CountHash is Count for a caller-computed hash.
func (s *Scalable) CountHash(h uint64) int {
	n := 0
	for _, st := range s.stages {
		n += st.CountHash(h)
	}
	return n
}

// Len returns the fingerprints stored in all stages.
func (s *Scalable) Len() uint64 {
	var n uint64
	for _, st := range s.stages {
		n += st.count
	}
	return n
}

// Capacity returns the sum of the stages' capacities.
func (s *Scalable) Capacity() uint64 {
	var n uint64
	for _, st := range s.stages {
		n += st.capacity
	}
	return n
}

// LoadFactor returns the fraction of all stages' slots in use.
func (s *Scalable) LoadFactor() float64 {
	var slots uint64
	for _, st := range s.stages {
		slots += st.Slots()
	}
	return float64(s.Len()) / float64(slots)
}

// SizeInBytes returns the memory of all stages.
func (s *Scalable) SizeInBytes() uint64 {
	n := uint64(64)
	for _, st := range s.stages {
		n += st.SizeInBytes()
	}
	return n
}

// FalsePositiveRate returns the expected rate at the current loads: the
// chance that at least one stage reports a false positive.
func (s *Scalable) FalsePositiveRate() float64 {
	miss := 1.0
	for _, st := range s.stages {
		miss *= 1 - st.FalsePositiveRate()
	}
	return 1 - miss
}

// Stages returns the number of stages.
func (s *Scalable) Stages() int { return len(s.stages) }

// Stage returns stage i, oldest first, for inspection. It must not be
// modified.
func (s *Scalable) Stage(i int) *Filter { return s.stages[i] }

// Config returns the configuration with its defaults filled in.
func (s *Scalable) Config() ScalableConfig { return s.cfg }

// Reset empties the filter and drops every stage but the first.
func (s *Scalable) Reset() {
	s.stages = s.stages[:1]
	s.stages[0].Reset()
}

// The Scalable format, version 1, little-endian:
//
//	offset size field
//	     0    4 magic "CKOO"
//	     4    2 format version (1)
//	     6    1 kind: 2
//	     7    1 bucket size b
//	     8    4 growth
//	    12    4 MaxKicks
//	    16    8 initial capacity
//	    24    8 false-positive rate, IEEE 754 binary64
//	    32    8 seed
//	    40    4 number of stages k
//	    44    4 fingerprint bits of stage 0
//	    48      k stages, each in the Filter format
//	     .    4 CRC-32C of every preceding byte
const scalableHeaderSize = 48

func (s *Scalable) appendHeader(b []byte) []byte {
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint16(b, formatVersion)
	b = append(b, kindScalable, byte(s.cfg.BucketSize))
	b = binary.LittleEndian.AppendUint32(b, uint32(s.cfg.Growth))
	b = binary.LittleEndian.AppendUint32(b, uint32(s.cfg.MaxKicks))
	b = binary.LittleEndian.AppendUint64(b, s.cfg.InitialCapacity)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.cfg.FalsePositiveRate))
	b = binary.LittleEndian.AppendUint64(b, s.cfg.Seed)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.stages)))
	return binary.LittleEndian.AppendUint32(b, uint32(s.bits))
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
	if len(s.stages) == 0 {
		return 0, errors.New("filter: WriteTo of a zero Scalable")
	}
	cw := &crcWriter{w: w}
	if _, err := cw.Write(s.appendHeader(nil)); err != nil {
		return cw.n, err
	}
	for _, st := range s.stages {
		if _, err := st.WriteTo(cw); err != nil {
			return cw.n, err
		}
	}
	n, err := w.Write(binary.LittleEndian.AppendUint32(nil, cw.sum))
	return cw.n + int64(n), err
}

// MarshalBinary returns the bytes WriteTo writes.
func (s *Scalable) MarshalBinary() ([]byte, error) {
	size := int64(scalableHeaderSize + trailerSize)
	for _, st := range s.stages {
		size += st.EncodedSize()
	}
	var buf sliceWriter
	buf.b = make([]byte, 0, size)
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
// exactly its bytes. Errors caused by the data wrap ErrCorrupt.
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
	if _, err := io.ReadFull(cr, b[:]); err != nil {
		return cr.n, readError("scalable header", err)
	}
	if string(b[0:4]) != magic {
		return cr.n, corrupt("bad magic %q, want %q", b[0:4], magic)
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != formatVersion {
		return cr.n, corrupt("format version %d, this package reads %d", v, formatVersion)
	}
	if b[6] != kindScalable {
		return cr.n, corrupt("kind %d is not a Scalable (%d)", b[6], kindScalable)
	}
	cfg := ScalableConfig{
		BucketSize:        int(b[7]),
		Growth:            int(binary.LittleEndian.Uint32(b[8:])),
		MaxKicks:          int(binary.LittleEndian.Uint32(b[12:])),
		InitialCapacity:   binary.LittleEndian.Uint64(b[16:]),
		FalsePositiveRate: math.Float64frombits(binary.LittleEndian.Uint64(b[24:])),
		Seed:              binary.LittleEndian.Uint64(b[32:]),
	}
	count := binary.LittleEndian.Uint32(b[40:])
	bits := binary.LittleEndian.Uint32(b[44:])
	switch {
	case cfg.Growth < 1 || cfg.Growth > maxGrowth:
		return cr.n, corrupt("growth %d, want 1..%d", cfg.Growth, maxGrowth)
	case !(cfg.FalsePositiveRate > 0 && cfg.FalsePositiveRate < 1):
		return cr.n, corrupt("false-positive rate %v, want (0, 1)", cfg.FalsePositiveRate)
	case cfg.InitialCapacity == 0:
		return cr.n, corrupt("initial capacity 0")
	case count == 0 || count > maxStages:
		return cr.n, corrupt("%d stages, want 1..%d", count, maxStages)
	case bits < minFingerprintBits || bits > maxFingerprintBits:
		return cr.n, corrupt("stage 0 fingerprint bits %d, want %d..%d", bits, minFingerprintBits, maxFingerprintBits)
	}
	stages := make([]*Filter, 0, min(count, 64)) // grown as stages arrive
	for k := range int(count) {
		st, err := Read(cr)
		if err != nil {
			return cr.n, fmt.Errorf("stage %d: %w", k, err)
		}
		if st.BucketSize() != cfg.BucketSize || st.seed != cfg.Seed || st.maxKicks != cfg.MaxKicks {
			return cr.n, corrupt("stage %d: bucket size, seed or MaxKicks differ from the header", k)
		}
		if want := min(uint(bits)+uint(k), maxFingerprintBits); uint(st.FingerprintBits()) != want {
			return cr.n, corrupt("stage %d: %d-bit fingerprints, want %d", k, st.FingerprintBits(), want)
		}
		stages = append(stages, st)
	}
	sum := cr.sum
	var trailer [trailerSize]byte
	if _, err := io.ReadFull(cr, trailer[:]); err != nil {
		return cr.n, readError("scalable checksum", err)
	}
	if want := binary.LittleEndian.Uint32(trailer[:]); want != sum {
		return cr.n, corrupt("scalable checksum %#08x, computed %#08x", want, sum)
	}
	*s = Scalable{cfg: cfg, bits: uint(bits), stages: stages}
	return cr.n, nil
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
