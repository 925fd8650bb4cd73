package redisbloom

import "math/bits"

// An insert looks for a free slot in the item's buckets of every
// sub-filter, newest first, and a compaction in every older sub-filter.
// A full sub-filter can offer none, so both visit only the sub-filters the
// open set holds, and skip the rest without reading them: in RedisBloom's
// smallest shape (2 slots a sub-filter) all but the newest are full, and
// an add visits one or two sub-filters instead of up to 65535. The
// placement is the same as visiting them all.
//
// Invariant (checked by checkInvariants): for every sub-filter i of the
// published list, bit i is set if and only if its fill is below its slots.
// sub.set and sub.putBytes keep it, the only writes to slots; bits past
// the list's end (a sub-filter a compaction freed) mean nothing, and the
// next sub-filter made at that index sets its bit.

// openSet is a set of sub-filter indexes, below 65536, in two levels of
// bitmaps, so that the previous or next member is found in a few words.
// Writers only.
type openSet struct {
	words   []uint64 // bit i%64 of words[i/64]: index i is in the set
	summary []uint64 // bit w%64 of summary[w/64]: words[w] != 0
}

// mark puts i in the set, or takes it out.
func (o *openSet) mark(i int, in bool) {
	w := i >> 6
	for w >= len(o.words) {
		o.words = append(o.words, 0)
	}
	for w>>6 >= len(o.summary) {
		o.summary = append(o.summary, 0)
	}
	if in {
		o.words[w] |= 1 << (i & 63)
		o.summary[w>>6] |= 1 << (w & 63)
		return
	}
	o.words[w] &^= 1 << (i & 63)
	if o.words[w] == 0 {
		o.summary[w>>6] &^= 1 << (w & 63)
	}
}

// has reports whether i is in the set.
func (o *openSet) has(i int) bool {
	return i>>6 < len(o.words) && o.words[i>>6]&(1<<(i&63)) != 0
}

// prev is the largest member at most i, or -1.
func (o *openSet) prev(i int) int {
	if i < 0 {
		return -1
	}
	w := i >> 6
	if w >= len(o.words) {
		w, i = len(o.words)-1, len(o.words)*64-1
		if w < 0 {
			return -1
		}
	}
	if m := o.words[w] & (^uint64(0) >> (63 - i&63)); m != 0 {
		return w<<6 + 63 - bits.LeadingZeros64(m)
	}
	w = prevBit(o.summary, w-1)
	if w < 0 {
		return -1
	}
	return w<<6 + 63 - bits.LeadingZeros64(o.words[w])
}

// next is the smallest member at least i, or -1.
func (o *openSet) next(i int) int {
	w := i >> 6
	if w >= len(o.words) {
		return -1
	}
	if m := o.words[w] & (^uint64(0) << (i & 63)); m != 0 {
		return w<<6 + bits.TrailingZeros64(m)
	}
	w = nextBit(o.summary, w+1)
	if w < 0 {
		return -1
	}
	return w<<6 + bits.TrailingZeros64(o.words[w])
}

// prevBit is the largest set bit of b at most i, or -1.
func prevBit(b []uint64, i int) int {
	for ; i >= 0; i = i&^63 - 1 {
		if m := b[i>>6] & (^uint64(0) >> (63 - i&63)); m != 0 {
			return i&^63 + 63 - bits.LeadingZeros64(m)
		}
	}
	return -1
}

// nextBit is the smallest set bit of b at least i, or -1.
func nextBit(b []uint64, i int) int {
	for ; i>>6 < len(b); i = i&^63 + 64 {
		if m := b[i>>6] & (^uint64(0) << (i & 63)); m != 0 {
			return i&^63 + bits.TrailingZeros64(m)
		}
	}
	return -1
}
