package redisbloom

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
)

// A sub-filter's slots are bytes, one fingerprint each, bucket b's at
// b*bucketSize. They are kept in 64-bit words, slot i in byte i%8 of word
// i/8 (little-endian, so the words' bytes are RedisBloom's bytes in
// order), because Go has no atomic byte: readers load words atomically,
// and the writer, alone under the filter's lock, stores a whole word
// with one slot changed.

// sub is one sub-filter: numBuckets buckets of the filter's bucket size.
type sub struct {
	buckets uint64
	mask    uint64 // buckets-1 if buckets is a power of two, else 0
	words   []uint64
	bytes   uint64 // buckets * bucketSize: the slots
	// fill is the slots holding a fingerprint. When it passes to or from
	// bytes, set and putBytes tell open, the filter's set of sub-filters
	// with a free slot, where this one is index at (open.go). Writers only.
	fill uint64
	open *openSet
	at   int
}

// newSub returns an empty sub-filter, index at of the filter whose open
// set is open, and puts it in the set.
func newSub(buckets uint64, bucketSize int, open *openSet, at int) *sub {
	n := buckets * uint64(bucketSize)
	s := &sub{buckets: buckets, bytes: n, words: make([]uint64, (n+7)/8), open: open, at: at}
	if buckets&(buckets-1) == 0 {
		s.mask = buckets - 1
	}
	open.mark(at, true)
	return s
}

// refill changes fill by d and keeps the open set's bit, writers only.
func (s *sub) refill(d int64) {
	was := s.fill < s.bytes
	s.fill += uint64(d)
	if is := s.fill < s.bytes; is != was {
		s.open.mark(s.at, is)
	}
}

// reduce is x modulo the sub-filter's bucket count.
func (s *sub) reduce(x uint64) uint64 {
	if s.mask != 0 || s.buckets == 1 {
		return x & s.mask
	}
	return x % s.buckets
}

// start is the first slot of hash h's bucket, as RedisBloom's lookups,
// deletes and free-slot searches compute it: in 32 bits, so that in a
// sub-filter of more than 2^32 slots they wrap into its first 4 GiB (its
// displacement walk does not; see kick).
func (s *sub) start(h uint64, bucketSize int) uint64 {
	return uint64(uint32(s.reduce(h) * uint64(bucketSize)))
}

func (s *sub) get(i uint64) byte {
	return byte(atomic.LoadUint64(&s.words[i>>3]) >> (i & 7 * 8))
}

// set stores fp in slot i. Writers only.
func (s *sub) set(i uint64, fp byte) {
	w := &s.words[i>>3]
	sh := i & 7 * 8
	old := atomic.LoadUint64(w)
	atomic.StoreUint64(w, old&^(0xff<<sh)|uint64(fp)<<sh)
	switch was := byte(old >> sh); {
	case was == 0 && fp != 0:
		s.refill(1)
	case was != 0 && fp == 0:
		s.refill(-1)
	}
}

// used is the bytes of w that are not 0.
func used(w uint64) int64 {
	const lo7, hi = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	return int64(bits.OnesCount64(((w & lo7) + lo7 | w) & hi))
}

// swap stores fp in slot i and returns what was there. Writers only.
func (s *sub) swap(i uint64, fp byte) byte {
	old := s.get(i)
	s.set(i, fp)
	return old
}

// find reports whether the bucket at slot o holds fp.
func (s *sub) find(o uint64, bucketSize int, fp byte) bool {
	for i := o; i < o+uint64(bucketSize); i++ {
		if s.get(i) == fp {
			return true
		}
	}
	return false
}

// count is the copies of fp in the bucket at slot o.
func (s *sub) count(o uint64, bucketSize int, fp byte) uint64 {
	var n uint64
	for i := o; i < o+uint64(bucketSize); i++ {
		if s.get(i) == fp {
			n++
		}
	}
	return n
}

// free is the first empty slot of the bucket at slot o, or -1.
func (s *sub) free(o uint64, bucketSize int) int64 {
	for i := o; i < o+uint64(bucketSize); i++ {
		if s.get(i) == 0 {
			return int64(i)
		}
	}
	return -1
}

// remove clears the first copy of fp in the bucket at slot o. Writers only.
func (s *sub) remove(o uint64, bucketSize int, fp byte) bool {
	for i := o; i < o+uint64(bucketSize); i++ {
		if s.get(i) == fp {
			s.set(i, 0)
			return true
		}
	}
	return false
}

// freeFor is the first empty slot of h1's bucket, then of h2's, or -1.
func (s *sub) freeFor(h1, h2 uint64, bucketSize int) int64 {
	if i := s.free(s.start(h1, bucketSize), bucketSize); i >= 0 {
		return i
	}
	return s.free(s.start(h2, bucketSize), bucketSize)
}

// appendBytes appends slots [from, to) to b, a word at a time where it can.
func (s *sub) appendBytes(b []byte, from, to uint64) []byte {
	i := from
	for ; i < to && i&7 != 0; i++ {
		b = append(b, s.get(i))
	}
	for ; i+8 <= to; i += 8 {
		b = binary.LittleEndian.AppendUint64(b, atomic.LoadUint64(&s.words[i>>3]))
	}
	for ; i < to; i++ {
		b = append(b, s.get(i))
	}
	return b
}

// putBytes stores b at slot from on, a word at a time where it can.
// Writers only.
func (s *sub) putBytes(from uint64, b []byte) {
	i := from
	for ; len(b) > 0 && i&7 != 0; i, b = i+1, b[1:] {
		s.set(i, b[0])
	}
	for ; len(b) >= 8; i, b = i+8, b[8:] {
		w := binary.LittleEndian.Uint64(b)
		if d := used(w) - used(s.words[i>>3]); d != 0 {
			s.refill(d)
		}
		atomic.StoreUint64(&s.words[i>>3], w)
	}
	for ; len(b) > 0; i, b = i+1, b[1:] {
		s.set(i, b[0])
	}
}
