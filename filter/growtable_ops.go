package filter

import (
	"math/bits"
	"slices"

	"github.com/cuckoohash/cuckoo/internal/hashing"
)

// gkey is a key as the growing table sees it: its fingerprint, its two
// virtual addresses and its hash (for the stash).
type gkey struct {
	fp, a, b, h uint64
}

// key splits hash h: the fingerprint from its high 32 bits (in effect its
// top F), the first virtual address is h itself, of which a table uses the
// low level+tail bits, far below the fingerprint's.
func (t *growTable) key(h uint64) gkey {
	fp := uint64(hashing.FingerprintMasked(h>>32, t.fpMask))
	return gkey{fp: fp, a: h, b: h ^ offset(fp), h: h}
}

// bucketMatches calls yield with the slot index of every entry of bucket j
// (level l) that matches fingerprint fp at virtual address v, until it
// returns false.
func (t *growTable) bucketHas(j uint64, l uint, fp, v uint64) bool {
	for i := range t.slots {
		if t.matches(t.slot(j, i), fp, v, l) {
			return true
		}
	}
	return false
}

// containsHash is contains for the common shape, one-word buckets. It
// reads both buckets before testing either and matches their fingerprints
// all at once; only slots whose fingerprint matched (about one lookup in
// 2^F/2b) have their tails checked.
func (t *growTable) containsHash(h uint64) bool {
	if !t.oneWord {
		return t.contains(t.key(h))
	}
	fp := uint64(hashing.FingerprintMasked(h>>32, t.fpMask))
	b := h ^ offset(fp)
	j1, _ := t.bucket(h)
	j2, _ := t.bucket(b)
	w1, w2 := t.word(j1), t.word(j2)
	want := t.lanes.Broadcast(uint32(fp << t.tailBits))
	c1 := t.lanes.Zeros((w1 ^ want) & t.fpLanes)
	c2 := t.lanes.Zeros((w2 ^ want) & t.fpLanes)
	if c1|c2 != 0 && t.tailsMatch(fp, h, b, w1, w2) {
		return true
	}
	return len(t.stash) != 0 && slices.Contains(t.stash, h)
}

// tailsMatch reports whether a slot of bucket word w1 (key h's first
// bucket) or w2 (its second, at b) matches the key, tail included. Slots
// that knew the key's bucket pair from any of its two addresses count, as
// in contains.
func (t *growTable) tailsMatch(fp, a, b, w1, w2 uint64) bool {
	j1, l1 := t.bucket(a)
	j2, l2 := t.bucket(b)
	tail := uint64(1)<<(t.tailBits-1) - 1
	q1, q2 := fp<<t.tailBits|a>>l1&tail, fp<<t.tailBits|b>>l2&tail
	if t.matchWord(w1, q1) != 0 || t.matchWord(w2, q2) != 0 {
		return true
	}
	return j1 == j2 && t.matchWord(w1, fp<<t.tailBits|b>>l1&tail) != 0
}

// matchWord returns the top bit of every slot of bucket word w that
// matches q, a key's fingerprint and the tail bits it has at the bucket's
// level: the fingerprint equal, and the tail bits below each slot's stop
// bit equal. The stop bit is the highest set bit of the slot's tail field;
// smearing it down gives the mask of the bits below it, lane by lane (each
// step's mask keeps only the bits that came from the same lane).
func (t *growTable) matchWord(w, q uint64) uint64 {
	x := w & t.tailLanes
	x |= x >> 1 & t.smear[0]
	x |= x >> 2 & t.smear[1]
	x |= x >> 4 & t.smear[2]
	x |= x >> 8 & t.smear[3]
	return t.lanes.Zeros((w ^ t.lanes.Broadcast(uint32(q))) & (t.fpLanes | x>>1&t.tailLanes))
}

func (t *growTable) contains(k gkey) bool {
	j1, l1 := t.addr(k.a)
	j2, l2 := t.addr(k.b)
	if t.bucketHas(j1, l1, k.fp, k.a) || t.bucketHas(j2, l2, k.fp, k.b) {
		return true
	}
	// Both addresses in one bucket: an entry there may be either.
	if j1 == j2 && t.bucketHas(j1, l1, k.fp, k.b) {
		return true
	}
	return len(t.stash) != 0 && slices.Contains(t.stash, k.h)
}

// match is one entry matching a key: where it is and how much it knows.
type match struct {
	bucket uint64
	slot   uint
	known  uint
}

// matchesOf appends every entry matching k to out.
func (t *growTable) matchesOf(k gkey, out []match) []match {
	j1, l1 := t.addr(k.a)
	j2, l2 := t.addr(k.b)
	scan := func(j uint64, l uint, v uint64, other uint64) {
		for i := range t.slots {
			s := t.slot(j, i)
			if t.matches(s, k.fp, v, l) || (j1 == j2 && t.matches(s, k.fp, other, l)) {
				out = append(out, match{bucket: j, slot: i, known: t.prefix(s, l)})
			}
		}
	}
	scan(j1, l1, k.a, k.b)
	if j2 != j1 {
		scan(j2, l2, k.b, k.a)
	}
	return out
}

// count returns the entries matching k, stashed copies included.
func (t *growTable) countKey(k gkey) int {
	var buf [16]match
	n := len(t.matchesOf(k, buf[:0]))
	for _, h := range t.stash {
		if h == k.h {
			n++
		}
	}
	return n
}

// remove deletes one copy of k: a stashed one (which is exact) if there is
// one, otherwise the matching entry that knows the longest prefix of its
// address. Taking the longest match is what keeps every other key's copy:
// see doc.go.
func (t *growTable) remove(k gkey) bool {
	if i := slices.Index(t.stash, k.h); i >= 0 {
		t.stash = slices.Delete(t.stash, i, i+1)
		return true
	}
	var buf [16]match
	ms := t.matchesOf(k, buf[:0])
	if len(ms) == 0 {
		return false
	}
	best := ms[0]
	for _, m := range ms[1:] {
		if m.known > best.known {
			best = m
		}
	}
	t.setSlot(best.bucket, best.slot, 0)
	t.drainStash()
	return true
}

// place stores k in a free slot of one of its buckets, making room by moving
// a path of entries when both are full. It changes nothing when it fails.
func (t *growTable) place(k gkey, maxKicks int) bool {
	j1, l1 := t.addr(k.a)
	j2, l2 := t.addr(k.b)
	f1, f2 := t.freeCount(j1), t.freeCount(j2)
	switch {
	case f1 > 0 && f1 >= f2:
		t.setSlot(j1, uint(t.free(j1)), t.entry(k.fp, k.a, l1))
		return true
	case f2 > 0:
		t.setSlot(j2, uint(t.free(j2)), t.entry(k.fp, k.b, l2))
		return true
	}
	return t.searchPath(k, j1, l1, j2, l2, maxKicks)
}

func (t *growTable) freeCount(j uint64) int {
	if t.oneWord {
		return bits.OnesCount64(t.lanes.Zeros(t.word(j)))
	}
	n := 0
	for i := range t.slots {
		if t.slot(j, i) == 0 {
			n++
		}
	}
	return n
}

// searchPath is Filter.searchPath for the growing table: breadth first,
// at most maxKicks buckets, nothing written unless a path is found.
func (t *growTable) searchPath(k gkey, j1 uint64, l1 uint, j2 uint64, l2 uint, maxKicks int) bool {
	q := append(t.path[:0], node{bucket: j1, parent: -1})
	if j2 != j1 {
		q = append(q, node{bucket: j2, parent: -1})
	}
	defer func() { t.path = q[:0] }()
	for head := 0; head < len(q) && head < maxKicks; head++ {
		x := q[head].bucket
		lx := t.levelOf(x)
		for s := range t.slots {
			y, _, ok := t.otherAt(x, lx, t.slot(x, s))
			if !ok || y == x || onPath(q, head, y) {
				continue
			}
			if i := t.free(y); i >= 0 {
				t.movePath(q, head, s, y, uint(i), k, j1, l1, l2)
				return true
			}
			if len(q) < maxKicks+2 {
				q = append(q, node{bucket: y, parent: int32(head), slot: uint8(s)})
			}
		}
	}
	return false
}

func onPath(q []node, n int, y uint64) bool {
	for ; n >= 0; n = int(q[n].parent) {
		if q[n].bucket == y {
			return true
		}
	}
	return false
}

// movePath moves the entry in slot s of node n's bucket to slot i of bucket
// y, every entry on the chain one step on, and k into the root's freed slot.
func (t *growTable) movePath(q []node, n int, s uint, y uint64, i uint, k gkey, j1 uint64, l1, l2 uint) {
	x := q[n].bucket
	_, moved, _ := t.other(x, t.slot(x, s))
	t.setSlot(y, i, moved)
	for q[n].parent >= 0 {
		p, ps := int(q[n].parent), uint(q[n].slot)
		_, moved, _ := t.other(q[p].bucket, t.slot(q[p].bucket, ps))
		t.setSlot(x, s, moved)
		n, x, s = p, q[p].bucket, ps
	}
	if x == j1 {
		t.setSlot(x, s, t.entry(k.fp, k.a, l1))
	} else {
		t.setSlot(x, s, t.entry(k.fp, k.b, l2))
	}
}

// splitNext splits the bucket at the split pointer: each entry goes to the
// half its lowest tail bit names, with that bit dropped; an entry with no
// tail left goes to both halves, since its key may be in either.
func (t *growTable) splitNext() {
	p := t.split
	q := p + 1<<t.level
	if q>>t.segShift >= uint64(len(t.segs)) {
		t.appendSegment(make([]byte, t.segmentBytes()))
	}
	var lo, hi [8]uint64
	nlo, nhi := 0, 0
	for i := range t.slots {
		s := t.slot(p, i)
		if s == 0 {
			continue
		}
		t.setSlot(p, i, 0)
		fp := s >> t.tailBits
		tail := s & (1<<t.tailBits - 1)
		n := t.tailLen(s)
		if n == 0 {
			lo[nlo], hi[nhi] = s, s
			nlo, nhi = nlo+1, nhi+1
			continue
		}
		s2 := fp<<t.tailBits | 1<<(n-1) | (tail^1<<n)>>1
		if tail&1 == 0 {
			lo[nlo] = s2
			nlo++
		} else {
			hi[nhi] = s2
			nhi++
		}
	}
	t.split++
	if t.split == 1<<t.level {
		t.setLevel(t.level+1, 0)
		if segShiftFor(t.level) > t.segShift {
			t.mergeSegments()
		}
	}
	for i := range nlo {
		t.setSlot(p, uint(i), lo[i])
	}
	for i := range nhi {
		t.setSlot(q, uint(i), hi[i])
	}
}

// mergeSegments halves the segment count by joining neighbours (the last
// one alone if the count is odd). A segment's buckets are whole bytes, so
// two of them concatenate.
func (t *growTable) mergeSegments() {
	body := uint64(1) << t.segShift * uint64(t.bucketBits) / 8
	old := make([][]byte, len(t.segs))
	for i := range old {
		old[i] = t.segment(i)
	}
	t.segs = nil
	for i := 0; i < len(old); i += 2 {
		m := make([]byte, 2*body+slack)
		copy(m, old[i][:body])
		if i+1 < len(old) {
			copy(m[body:], old[i+1][:body])
		}
		t.appendSegment(m)
	}
	t.segShift++
}

// drainStash moves stashed keys into the table where they now fit.
func (t *growTable) drainStash() {
	for i := 0; i < len(t.stash); {
		if t.place(t.key(t.stash[i]), 64) {
			t.stash = slices.Delete(t.stash, i, i+1)
			continue
		}
		i++
	}
}
