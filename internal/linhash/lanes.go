package linhash

import "github.com/cuckoohash/cuckoo/internal/swar"

// Lanes matches the entries of a bucket packed in one word, all at once.
type Lanes struct {
	lanes    swar.Lanes
	fp       uint64    // the fingerprint bits of every entry
	tail     uint64    // the tail field of every entry
	smear    [4]uint64 // for a shift by 2^i, the tail bits that stay in their lane
	tailBits uint
}

// Lanes returns the matcher of s's buckets. It requires Slots·Bits <= 64.
func (s *Shape) Lanes() Lanes {
	l := Lanes{lanes: swar.New(s.Slots, s.Bits), tailBits: s.TailBits}
	l.fp = l.lanes.Broadcast(uint32(s.FPMask << s.TailBits))
	l.tail = l.lanes.Broadcast(uint32(1<<s.TailBits - 1))
	for i := range l.smear {
		if shift := uint(1) << i; shift < s.TailBits {
			l.smear[i] = l.lanes.Broadcast(uint32(1<<(s.TailBits-shift) - 1))
		}
	}
	return l
}

// Candidates returns the top bit of every entry of bucket word w whose
// fingerprint is fp: the only ones whose tails need checking.
func (l *Lanes) Candidates(w, fp uint64) uint64 {
	return l.lanes.Zeros((w ^ l.lanes.Broadcast(uint32(fp<<l.tailBits))) & l.fp)
}

// Query returns what Match compares a bucket with: the key's fingerprint
// and its address bits from the bucket's level on.
func (l *Lanes) Query(fp, v uint64, level uint) uint64 {
	return fp<<l.tailBits | v>>level&(1<<(l.tailBits-1)-1)
}

// Match returns the top bit of every entry of bucket word w that matches
// query q: the fingerprint equal, and the tail bits below each entry's
// stop bit equal. The stop bit is the highest set bit of the tail field;
// smearing it down gives the mask of the bits below it, lane by lane (each
// step's mask keeps only the bits that came from the same lane).
func (l *Lanes) Match(w, q uint64) uint64 {
	x := w & l.tail
	x |= x >> 1 & l.smear[0]
	x |= x >> 2 & l.smear[1]
	x |= x >> 4 & l.smear[2]
	x |= x >> 8 & l.smear[3]
	return l.lanes.Zeros((w ^ l.lanes.Broadcast(uint32(q))) & (l.fp | x>>1&l.tail))
}

// Empty returns the top bit of every empty slot of bucket word w.
func (l *Lanes) Empty(w uint64) uint64 { return l.lanes.Zeros(w) }
