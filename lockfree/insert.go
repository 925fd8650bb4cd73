package lockfree

import "github.com/cuckoohash/cuckoo/internal/kcas"

// Insert protocol.
//
//  1. Try a single CAS into an empty slot of either bucket (linearization
//     point of the insert).
//  2. Otherwise search breadth first, reading only, for a chain of
//     fingerprints ending at a bucket with a free slot, as filter does.
//  3. Migrate the chain from its end backwards: each step moves one
//     fingerprint from bucket x to its other bucket y with one K-CAS of the
//     two words (clear the slot in x, fill a free slot in y, bump both
//     counters), so the fingerprint is in exactly one of its buckets at
//     every moment. If a step finds a word changed, the chain is abandoned:
//     the steps already taken are valid moves, nothing is lost.
//  4. Go back to 1; the freed slot at the head of the chain may have been
//     taken meanwhile, so a bounded number of rounds is allowed.

// maxRounds bounds the search-and-migrate rounds of one insert that keeps
// losing its freed slot to concurrent inserts.
const maxRounds = 8

// node is a bucket reached by the path search: the fingerprint fp in slot
// `slot` of the parent's bucket has this bucket as its other bucket.
type node struct {
	bucket uint64
	fp     uint32
	parent int32
	slot   uint8
}

func (f *Filter) insert(i1 uint64, fp uint32) error {
	i2 := f.alt(i1, fp)
	for range maxRounds {
		if f.addTo(i1, fp) || f.addTo(i2, fp) {
			return nil
		}
		if !f.makeRoom(i1, i2) {
			return ErrFull
		}
	}
	return ErrFull
}

// addTo stores fp in a free slot of bucket i with one CAS, retrying while
// the bucket has a free slot but changes under it.
func (f *Filter) addTo(i uint64, fp uint32) bool {
	for {
		v := f.settle(i)
		j := f.l.find(v, 0)
		if j < 0 {
			return false
		}
		if f.words[i].CompareAndSwap(v, f.l.bump(f.l.setSlot(v, uint(j), fp))) {
			f.added(1)
			return true
		}
	}
}

// makeRoom frees a slot in bucket i1 or i2 by migrating a chain of
// fingerprints, and reports whether a chain was found (whether or not its
// migration completed: the caller retries either way).
func (f *Filter) makeRoom(i1, i2 uint64) bool {
	bufp := f.paths.Get().(*[]node)
	defer f.paths.Put(bufp)
	q := append((*bufp)[:0], node{bucket: i1, parent: -1})
	if i2 != i1 {
		q = append(q, node{bucket: i2, parent: -1})
	}
	maxKicks := f.layout.MaxKicks
	for head := 0; head < len(q) && head < maxKicks; head++ {
		x := q[head].bucket
		v := f.load(x)
		for s := range f.l.slots {
			fp := f.l.slot(v, s)
			if fp == 0 {
				continue // freed meanwhile: the caller's retry will use it
			}
			y := f.alt(x, fp)
			if y == x || onPath(q, head, y) {
				continue
			}
			if f.l.find(f.load(y), 0) >= 0 {
				f.migrate(q, head, s, fp, y)
				*bufp = q[:0]
				return true
			}
			if len(q) < cap(q) {
				q = append(q, node{bucket: y, fp: fp, parent: int32(head), slot: uint8(s)})
			}
		}
	}
	*bufp = q[:0]
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

// migrate moves the chain ending with fingerprint fp in slot s of node n's
// bucket into bucket y, back to front, stopping at the first step that
// finds the table changed.
func (f *Filter) migrate(q []node, n int, s uint, fp uint32, y uint64) {
	x := q[n].bucket
	for {
		if !f.move(x, s, fp, y) {
			return
		}
		if q[n].parent < 0 {
			return
		}
		y, fp, s = x, q[n].fp, uint(q[n].slot)
		n = int(q[n].parent)
		x = q[n].bucket
	}
}

// move moves fingerprint fp from slot s of bucket x to a free slot of
// bucket y with one K-CAS of the two words, and reports whether it did.
func (f *Filter) move(x uint64, s uint, fp uint32, y uint64) bool {
	for {
		vx, vy := f.settle(x), f.settle(y)
		if f.l.slot(vx, s) != fp {
			return false
		}
		e := f.l.find(vy, 0)
		if e < 0 {
			return false
		}
		ok := kcas.CAS(
			kcas.Entry{Word: &f.words[x], Old: vx, New: f.l.bump(f.l.setSlot(vx, s, 0)), Restore: f.l.bump(vx)},
			kcas.Entry{Word: &f.words[y], Old: vy, New: f.l.bump(f.l.setSlot(vy, uint(e), fp)), Restore: f.l.bump(vy)},
		)
		if ok {
			// The stripe counts only sum to Len, so a move needs no update.
			return true
		}
		// A word changed between settle and the K-CAS: look again.
	}
}
