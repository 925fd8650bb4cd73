package filter

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/cuckoohash/cuckoo/internal/hashing"
	"github.com/cuckoohash/cuckoo/internal/linhash"
)

// gkey is a key as the growing table sees it: its fingerprint, its two
// virtual addresses and its hash (for the stash).
type gkey struct {
	fp, a, b, h uint64
}

func (t *growTable) key(h uint64) gkey {
	fp, a, b := t.shape.Key(h)
	return gkey{fp: fp, a: a, b: b, h: h}
}

// bucketHas reports whether an entry of bucket j (level l) matches
// fingerprint fp at address v.
func (t *growTable) bucketHas(j uint64, l uint, fp, v uint64) bool {
	e := t.entries(j)
	for i := range t.shape.Slots {
		if t.shape.Matches(e[i&7], fp, v, l) {
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
	if t.is4x14 {
		return t.contains4x14(h)
	}
	if !t.oneWord {
		return t.contains(t.key(h))
	}
	fp, a, b := t.shape.Key(h)
	j1, l1 := t.geom.Bucket(a)
	j2, l2 := t.geom.Bucket(b)
	w1, w2 := t.word(j1), t.word(j2)
	if t.lanes.Candidates(w1, fp)|t.lanes.Candidates(w2, fp) != 0 && t.tailsMatch(fp, a, b, w1, w2, l1, l2, j1 == j2) {
		return true
	}
	return len(t.stash) != 0 && slices.Contains(t.stash, h)
}

// contains4x14 is containsHash for the shape of a 1% rate, 4 slots of 14
// bits with 6-bit fingerprints, with the shape's constants folded in: a
// bucket is 7 whole bytes, read with no shift, and the fingerprint test
// needs no table of masks. Lookups that call it do about half the work of
// the general one-word path, so that more of them overlap their loads.
func (t *growTable) contains4x14(h uint64) bool {
	const (
		ones   = 1 | 1<<14 | 1<<28 | 1<<42 // the lowest bit of every lane
		highs  = ones << 13
		fpBits = 0x3f << 8 * ones // the fingerprint bits of every lane
	)
	fp := uint64(hashing.FingerprintMasked(h>>32, 0x3f))
	a, b := h, h^linhash.Offset(fp)
	j1, _ := t.geom.Bucket(a)
	j2, _ := t.geom.Bucket(b)
	// Safety: as in word; the bucket is the 7 bytes at 7·(j mod segment).
	segs, sh := unsafe.Pointer(unsafe.SliceData(t.segs)), t.segShift&63
	in := uint64(1)<<sh - 1
	s1 := *(*unsafe.Pointer)(unsafe.Add(segs, uintptr(j1>>sh)*unsafe.Sizeof(t.segs[0])))
	s2 := *(*unsafe.Pointer)(unsafe.Add(segs, uintptr(j2>>sh)*unsafe.Sizeof(t.segs[0])))
	w1 := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(s1, (j1&in)*7))[:]) & (1<<56 - 1)
	w2 := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(s2, (j2&in)*7))[:]) & (1<<56 - 1)
	x1, x2 := (w1^fp<<8*ones)&fpBits, (w2^fp<<8*ones)&fpBits
	if ((x1-ones)&^x1|(x2-ones)&^x2)&highs != 0 && t.tailsMatchAt(fp, a, b, w1, w2) {
		return true
	}
	return len(t.stash) != 0 && slices.Contains(t.stash, h)
}

// tailsMatchAt is tailsMatch for a key's addresses a and b, which finds
// their buckets' levels itself: what a lookup needs only when a
// fingerprint matched.
func (t *growTable) tailsMatchAt(fp, a, b, w1, w2 uint64) bool {
	j1, l1 := t.geom.Bucket(a)
	j2, l2 := t.geom.Bucket(b)
	return t.tailsMatch(fp, a, b, w1, w2, l1, l2, j1 == j2)
}

// tailsMatch reports whether a slot of bucket word w1 (the key's bucket for
// address a, of level l1) or w2 (for b, level l2) matches the key, tail
// included; both addresses count in a bucket they share, as in contains.
func (t *growTable) tailsMatch(fp, a, b, w1, w2 uint64, l1, l2 uint, shared bool) bool {
	if t.lanes.Match(w1, t.lanes.Query(fp, a, l1)) != 0 || t.lanes.Match(w2, t.lanes.Query(fp, b, l2)) != 0 {
		return true
	}
	return shared && t.lanes.Match(w1, t.lanes.Query(fp, b, l1)) != 0
}

func (t *growTable) contains(k gkey) bool {
	j1, l1 := t.geom.Addr(k.a)
	j2, l2 := t.geom.Addr(k.b)
	if t.bucketHas(j1, l1, k.fp, k.a) || t.bucketHas(j2, l2, k.fp, k.b) {
		return true
	}
	// Both addresses in one bucket: an entry there may be either.
	if j1 == j2 && t.bucketHas(j1, l1, k.fp, k.b) {
		return true
	}
	return len(t.stash) != 0 && slices.Contains(t.stash, k.h)
}

// matchesOf appends every entry matching k to out.
func (t *growTable) matchesOf(k gkey, out []linhash.Match) []linhash.Match {
	j1, l1 := t.geom.Addr(k.a)
	j2, l2 := t.geom.Addr(k.b)
	scan := func(j uint64, l uint, v uint64, other uint64) {
		for i := range t.shape.Slots {
			s := t.slot(j, i)
			if t.shape.Matches(s, k.fp, v, l) || (j1 == j2 && t.shape.Matches(s, k.fp, other, l)) {
				out = append(out, linhash.Match{Bucket: j, Slot: i, Known: t.shape.Known(s, l)})
			}
		}
	}
	scan(j1, l1, k.a, k.b)
	if j2 != j1 {
		scan(j2, l2, k.b, k.a)
	}
	return out
}

// countKey returns the entries matching k, stashed copies included.
func (t *growTable) countKey(k gkey) int {
	var buf [16]linhash.Match
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
	var buf [16]linhash.Match
	ms := t.matchesOf(k, buf[:0])
	if len(ms) == 0 {
		return false
	}
	best := linhash.Longest(ms)
	t.setSlot(best.Bucket, best.Slot, 0)
	t.drainStash()
	return true
}

// place stores k in a free slot of one of its buckets, making room by moving
// a path of entries when both are full. It changes nothing when it fails.
func (t *growTable) place(k gkey, maxKicks int) bool {
	j1, l1 := t.geom.Bucket(k.a)
	j2, l2 := t.geom.Bucket(k.b)
	if t.oneWord {
		e1, e2 := t.lanes.Empty(t.word(j1)), t.lanes.Empty(t.word(j2))
		f1, f2 := bits.OnesCount64(e1), bits.OnesCount64(e2)
		switch {
		case f1 > 0 && f1 >= f2:
			t.setSlot(j1, uint(bits.TrailingZeros64(e1))/t.shape.Bits, t.shape.Entry(k.fp, k.a, l1))
			return true
		case f2 > 0:
			t.setSlot(j2, uint(bits.TrailingZeros64(e2))/t.shape.Bits, t.shape.Entry(k.fp, k.b, l2))
			return true
		}
		return t.searchPath(k, j1, l1, j2, l2, maxKicks)
	}
	f1, s1 := t.freeSlots(j1)
	f2, s2 := t.freeSlots(j2)
	switch {
	case f1 > 0 && f1 >= f2:
		t.setSlot(j1, uint(s1), t.shape.Entry(k.fp, k.a, l1))
		return true
	case f2 > 0:
		t.setSlot(j2, uint(s2), t.shape.Entry(k.fp, k.b, l2))
		return true
	}
	return t.searchPath(k, j1, l1, j2, l2, maxKicks)
}

// searchPath is Filter.searchPath for the growing table: breadth first,
// at most maxKicks buckets, nothing written unless a path is found.
func (t *growTable) searchPath(k gkey, j1 uint64, l1 uint, j2 uint64, l2 uint, maxKicks int) bool {
	q := append(t.path[:0], linhash.Node{Bucket: j1, Parent: -1})
	if j2 != j1 {
		q = append(q, linhash.Node{Bucket: j2, Parent: -1})
	}
	defer func() { t.path = q[:0] }()
	if t.oneWord {
		var found bool
		found, q = t.searchWords(q, k, j1, l1, l2, maxKicks)
		return found
	}
	for head := 0; head < len(q) && head < maxKicks; head++ {
		x := q[head].Bucket
		lx := t.geom.LevelOf(x)
		e := t.entries(x)
		// As in searchWords, every bucket the entries would move to is
		// found, then all are read, before any is tested.
		var ys [8]uint64
		var moves uint // the slots whose entry can move, one bit each
		for s := range t.shape.Slots {
			y, ok := t.shape.OtherBucket(t.geom, x, lx, e[s&7])
			ys[s&7] = y
			if ok && y != x {
				moves |= 1 << s
			}
		}
		var free [8]int
		for s := range t.shape.Slots {
			if moves>>s&1 != 0 {
				free[s&7] = t.free(ys[s&7])
			}
		}
		for s := range t.shape.Slots {
			y := ys[s&7]
			if moves>>s&1 == 0 || linhash.OnPath(q, head, y) {
				continue
			}
			if i := free[s&7]; i >= 0 {
				t.movePath(q, head, s, y, uint(i), k, j1, l1, l2)
				return true
			}
			if len(q) < maxKicks+2 {
				q = append(q, linhash.Node{Bucket: y, Parent: int32(head), Slot: uint8(s)})
			}
		}
	}
	return false
}

// searchWords is searchPath for one-word buckets. A node's bucket is read
// once, and the buckets its entries would move to are all found before any
// of them is read, so that their cache misses overlap instead of queueing
// behind each test of the one before.
// It returns the queue, grown, for reuse.
func (t *growTable) searchWords(q []linhash.Node, k gkey, j1 uint64, l1, l2 uint, maxKicks int) (bool, []linhash.Node) {
	b, w := t.shape.Slots, t.shape.Bits
	for head := 0; head < len(q) && head < maxKicks; head++ {
		x := q[head].Bucket
		lx := t.geom.LevelOf(x)
		var ys [8]uint64
		moves := t.shape.OtherBuckets(t.geom, x, lx, t.word(x), &ys)
		var empty [8]uint64
		for s := range b {
			if moves>>s&1 != 0 {
				empty[s&7] = t.lanes.Empty(t.word(ys[s&7]))
			}
		}
		for s := range b {
			y := ys[s&7]
			if moves>>s&1 == 0 || linhash.OnPath(q, head, y) {
				continue
			}
			if e := empty[s&7]; e != 0 {
				t.movePath(q, head, s, y, uint(bits.TrailingZeros64(e))/w, k, j1, l1, l2)
				return true, q
			}
			if len(q) < maxKicks+2 {
				q = append(q, linhash.Node{Bucket: y, Parent: int32(head), Slot: uint8(s)})
			}
		}
	}
	return false, q
}

// movePath moves the entry in slot s of node n's bucket to slot i of bucket
// y, every entry on the chain one step on, and k into the root's freed slot.
func (t *growTable) movePath(q []linhash.Node, n int, s uint, y uint64, i uint, k gkey, j1 uint64, l1, l2 uint) {
	x := q[n].Bucket
	_, moved, _ := t.shape.Other(t.geom, x, t.geom.LevelOf(x), t.slot(x, s))
	t.setSlot(y, i, moved)
	for q[n].Parent >= 0 {
		p, ps := int(q[n].Parent), uint(q[n].Slot)
		pb := q[p].Bucket
		_, moved, _ := t.shape.Other(t.geom, pb, t.geom.LevelOf(pb), t.slot(pb, ps))
		t.setSlot(x, s, moved)
		n, x, s = p, pb, ps
	}
	if x == j1 {
		t.setSlot(x, s, t.shape.Entry(k.fp, k.a, l1))
	} else {
		t.setSlot(x, s, t.shape.Entry(k.fp, k.b, l2))
	}
}

// splitNext splits the bucket at the split pointer: each entry goes to the
// half its lowest tail bit names, with that bit dropped; an entry with no
// tail left goes to both halves, since its key may be in either.
func (t *growTable) splitNext() {
	p := t.geom.Split
	q := p + 1<<t.geom.Level
	if q>>t.segShift >= uint64(len(t.segs)) {
		t.appendSegment(make([]byte, t.segmentBytes()))
	}
	// Bucket p is read once and both halves written whole; the counts are
	// kept here: each entry leaves its tail length for its next one's, and
	// one copied into both halves counts twice.
	var lo, hi [8]uint64
	var nlo, nhi uint
	for _, s := range t.entries(p) {
		if s == 0 {
			continue
		}
		t.byTail[t.shape.TailLen(s)]--
		next, high, both := t.shape.Split(s)
		n := t.shape.TailLen(next)
		if both || !high {
			lo[nlo&7] = next
			nlo++
			t.byTail[n]++
		}
		if both || high {
			hi[nhi&7] = next
			nhi++
			t.byTail[n]++
		}
		if both {
			t.count++
		}
	}
	next := t.geom.Next()
	if next.Level != t.geom.Level && segShiftFor(next.Level) > t.segShift {
		t.mergeSegments()
	}
	t.geom = next
	t.setEntries(p, &lo)
	t.setEntries(q, &hi)
}

// mergeSegments halves the segment count by joining neighbours (the last
// one alone if the count is odd). A segment's buckets are whole bytes, so
// two of them concatenate. Each pair is dropped as soon as it is copied, so
// that the collector can take it back while the rest are copied: the table
// never needs twice its memory at once, only one more segment.
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
		old[i] = nil // garbage now, not after the whole table is copied
		if i+1 < len(old) {
			copy(m[body:], old[i+1][:body])
			old[i+1] = nil
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
