package eval

import "math"

// redisBloom is a model of RedisBloom's expanding cuckoo filter (CF.RESERVE
// key capacity EXPANSION 2, every other option at its default), written from
// a reading of RedisBloom's src/cuckoo.c, src/cuckoo.h, src/config.c and
// src/rebloom.c (github.com/RedisBloom/RedisBloom at b28c294, 2026-06-22)
// as a specification. What it models:
//
//   - Sub-filters of 2-slot buckets (cf-bucket-size 2) holding one byte a
//     fingerprint, 0 meaning empty. The first has capacity/2 buckets rounded
//     up to a power of two; sub-filter k has 2^k times as many, so every
//     table size divides every later one.
//   - A key's hash h gives the fingerprint h mod 255 + 1, the bucket
//     h mod m and the alternate bucket (i XOR fp·0x5bd1e995) mod m, in
//     every sub-filter with its own m. Since m is a power of two, an index
//     in a sub-filter reduces to the index in every older one.
//   - An insert puts the fingerprint in the first free slot of its two
//     buckets, trying the sub-filters newest first. If all are full it kicks
//     in the newest sub-filter only, at most 20 times (cf-max-iterations),
//     starting in the first bucket and taking the slots in turn (slot 0,
//     then 1, then 0: not at random). A kick sequence that ends without a
//     free slot is undone in reverse, so the table is as before; then a
//     sub-filter is added and the insert starts over. Nothing is ever lost.
//   - A lookup reads the key's two buckets in every sub-filter.
//   - A delete removes one matching fingerprint from the newest sub-filter
//     that has one. When more than one sub-filter exists and the deletes
//     since the last compaction exceed 10% of the items, it compacts: each
//     fingerprint of a newer sub-filter moves to a free slot of its buckets
//     in an older one if there is one, and the newest sub-filter is freed
//     when it empties.
//
// Why its deletes lose no key: every sub-filter takes the same fingerprint
// and each index reduces to the key's index in every older sub-filter, so
// two keys that share fingerprint and buckets in a sub-filter share them in
// every older one. A delete of x that takes key y's copy from sub-filter k
// (the newest with a match) leaves x's own copy in k or an older one, where
// y now finds it; compaction moves copies only to older sub-filters.
//
// Simplified: the hash is the caller's 64-bit hash rather than
// MurmurHash64A of the item's bytes; there is no limit on sub-filters
// (RedisBloom refuses inserts at cf-max-expansions, 32 by default, which a
// 1000x growth at EXPANSION 2 does not reach); no headers, no allocation
// failures, no CF.INSERTNX, no persistence. RedisBloom's own default
// expansion is 1 (cf-expansion-factor), equal-sized sub-filters; this
// model is of EXPANSION 2, the doubling that issue 13 compares against.
type redisBloom struct {
	subs    []rbSub
	items   uint64 // fingerprints stored
	deletes uint64 // deletes since the last compaction
}

// rbSub is one sub-filter.
type rbSub struct {
	mask  uint64  // buckets - 1; the bucket count is a power of two
	slots []uint8 // (mask+1)·rbBucketSize fingerprints, 0 for an empty slot
	used  int     // slots not 0
}

const (
	rbBucketSize    = 2          // cf-bucket-size default
	rbMaxIterations = 20         // cf-max-iterations default
	rbExpansion     = 2          // EXPANSION 2 (the default is 1)
	rbAltMul        = 0x5bd1e995 // the alternate bucket's multiplier, MurmurHash2's constant
	rbCompactShare  = 0.10       // deletes, as a share of items, that trigger a compaction
)

// newRedisBloom returns an empty model of CF.RESERVE with this capacity.
func newRedisBloom(capacity uint64) *redisBloom {
	m := uint64(1)
	for m < capacity/rbBucketSize {
		m <<= 1
	}
	r := &redisBloom{}
	r.addSub(m)
	return r
}

func (r *redisBloom) addSub(buckets uint64) {
	r.subs = append(r.subs, rbSub{mask: buckets - 1, slots: make([]uint8, buckets*rbBucketSize)})
}

// grow adds sub-filter k, rbExpansion^k times the first one's size.
func (r *redisBloom) grow() {
	m := r.subs[0].mask + 1
	for range r.subs {
		m *= rbExpansion
	}
	r.addSub(m)
}

// rbFingerprint is never 0, the empty slot.
func rbFingerprint(h uint64) uint8 { return uint8(h%255 + 1) }

// rbAlt is the other bucket before reduction: an involution once masked,
// since masking a power-of-two table commutes with XOR.
func rbAlt(i uint64, fp uint8) uint64 { return i ^ uint64(fp)*rbAltMul }

// bucket returns the slots of bucket i mod the table size.
func (s *rbSub) bucket(i uint64) []uint8 {
	j := (i & s.mask) * rbBucketSize
	return s.slots[j : j+rbBucketSize : j+rbBucketSize]
}

// free returns the first empty slot of bucket i, or -1.
func (s *rbSub) free(i uint64) int {
	for j, fp := range s.bucket(i) {
		if fp == 0 {
			return j
		}
	}
	return -1
}

// place stores fp in the first empty slot of bucket i1 or i2 and reports
// whether there was one.
func (s *rbSub) place(i1, i2 uint64, fp uint8) bool {
	for _, i := range [2]uint64{i1, i2} {
		if j := s.free(i); j >= 0 {
			s.bucket(i)[j] = fp
			s.used++
			return true
		}
	}
	return false
}

func (s *rbSub) has(i1, i2 uint64, fp uint8) bool {
	for _, i := range [2]uint64{i1, i2} {
		for _, x := range s.bucket(i) {
			if x == fp {
				return true
			}
		}
	}
	return false
}

func (s *rbSub) remove(i1, i2 uint64, fp uint8) bool {
	for _, i := range [2]uint64{i1, i2} {
		b := s.bucket(i)
		for j, x := range b {
			if x == fp {
				b[j] = 0
				s.used--
				return true
			}
		}
	}
	return false
}

// kick places fp by displacement, starting in bucket i1. On failure it
// undoes every swap, so the sub-filter is left as it was.
func (s *rbSub) kick(i1 uint64, fp uint8) bool {
	i, victim := i1&s.mask, 0
	for range rbMaxIterations {
		b := s.bucket(i)
		b[victim], fp = fp, b[victim]
		i = rbAlt(i, fp) & s.mask
		if j := s.free(i); j >= 0 {
			s.bucket(i)[j] = fp
			s.used++
			return true
		}
		victim = (victim + 1) % rbBucketSize
	}
	// fp is the last fingerprint kicked out and i its other bucket: walk
	// the path back, each swap returning a fingerprint to where it was.
	for range rbMaxIterations {
		victim = (victim + rbBucketSize - 1) % rbBucketSize
		i = rbAlt(i, fp) & s.mask
		b := s.bucket(i)
		b[victim], fp = fp, b[victim]
	}
	return false
}

// InsertHash adds h. It never fails: when no sub-filter takes it, a new
// one does.
func (r *redisBloom) InsertHash(h uint64) error {
	fp := rbFingerprint(h)
	i1, i2 := h, rbAlt(h, fp)
	for {
		for k := len(r.subs) - 1; k >= 0; k-- {
			if r.subs[k].place(i1, i2, fp) {
				r.items++
				return nil
			}
		}
		if r.subs[len(r.subs)-1].kick(i1, fp) {
			r.items++
			return nil
		}
		r.grow()
	}
}

// ContainsHash reports whether any sub-filter holds h's fingerprint in one
// of h's buckets.
func (r *redisBloom) ContainsHash(h uint64) bool {
	fp := rbFingerprint(h)
	i1, i2 := h, rbAlt(h, fp)
	for k := range r.subs {
		if r.subs[k].has(i1, i2, fp) {
			return true
		}
	}
	return false
}

// DeleteHash removes one copy of h's fingerprint, newest sub-filter first,
// and compacts when deletes pass rbCompactShare of the items.
func (r *redisBloom) DeleteHash(h uint64) bool {
	fp := rbFingerprint(h)
	i1, i2 := h, rbAlt(h, fp)
	for k := len(r.subs) - 1; k >= 0; k-- {
		if r.subs[k].remove(i1, i2, fp) {
			r.items--
			r.deletes++
			if len(r.subs) > 1 && float64(r.deletes) > float64(r.items)*rbCompactShare {
				r.compact()
			}
			return true
		}
	}
	return false
}

// compact moves fingerprints to older sub-filters, newest sub-filter first,
// freeing each newest one it empties; it stops at the first sub-filter that
// keeps a fingerprint, since no older one can then be freed.
func (r *redisBloom) compact() {
	for k := len(r.subs) - 1; k > 0; k-- {
		if !r.compactSub(k) {
			break
		}
	}
	r.deletes = 0
}

// compactSub moves what it can of sub-filter k into older ones and reports
// whether k emptied (and was dropped, if it was the newest).
func (r *redisBloom) compactSub(k int) bool {
	s := &r.subs[k]
	emptied := true
	for i := range s.mask + 1 {
		b := s.bucket(i)
		for j, fp := range b {
			if fp == 0 {
				continue
			}
			// The slot's bucket index stands for the key's: in an older
			// sub-filter both reduce to the same bucket.
			moved := false
			for o := range k {
				if r.subs[o].place(i, rbAlt(i, fp), fp) {
					b[j], moved = 0, true
					s.used--
					break
				}
			}
			emptied = emptied && moved
		}
	}
	if emptied && k == len(r.subs)-1 {
		r.subs = r.subs[:k]
	}
	return emptied
}

// SizeInBytes is the tables' bytes, one a slot; headers are not counted.
func (r *redisBloom) SizeInBytes() uint64 {
	var n uint64
	for _, s := range r.subs {
		n += uint64(len(s.slots))
	}
	return n
}

// Stages returns the number of sub-filters.
func (r *redisBloom) Stages() int { return len(r.subs) }

// FalsePositiveRate is the expected rate at the sub-filters' loads: an
// absent key's fingerprint meets 2b slots in each sub-filter, each full
// with that sub-filter's load and equal with probability 1/255.
func (r *redisBloom) FalsePositiveRate() float64 {
	var logMiss float64
	for _, s := range r.subs {
		load := float64(s.used) / float64(len(s.slots))
		logMiss += 2 * rbBucketSize * math.Log1p(-load/255)
	}
	return -math.Expm1(logMiss)
}
