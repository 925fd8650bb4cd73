package lockfree

import "github.com/cuckoohash/cuckoo/internal/kcas"

// Insert protocol.
//
//  1. Try a single CAS into an empty slot of either bucket (linearization
//     point of the insert).
//  2. Otherwise search breadth first, reading only, for a chain of
//     fingerprints ending at a bucket with a free slot, as filter does.
//  3. Migrate the chain from its end backwards. While more than
//     kcas.MaxWords-1 moves remain, each step moves one fingerprint from
//     bucket x to its other bucket y with one K-CAS of the two words (clear
//     the slot in x, fill a free slot in y, bump both counters). The last
//     moves, those out of the key's own bucket included, and the insert of
//     the new fingerprint into the slot they free are one K-CAS of up to
//     kcas.MaxWords words: its success is the insert's linearization point,
//     and no other insert can take the freed slot first. Every fingerprint
//     is in exactly one of its buckets at every moment. If a step finds a
//     word changed, the chain is abandoned: the steps already taken are
//     valid moves, nothing is lost.
//  4. Go back to 1, a bounded number of rounds.

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
		inserted, found := f.makeRoom(i1, i2, fp)
		if inserted {
			return nil
		}
		if !found {
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
		if f.l.fingerprints(v) == 0 {
			f.marks.Mark(i) // before the CAS that fills it (filter.go, marks)
		}
		if f.words[i].CompareAndSwap(v, f.l.bump(f.l.setSlot(v, uint(j), fp))) {
			f.added(1)
			return true
		}
	}
}

// makeRoom searches for a chain of fingerprints from bucket i1 or i2 to a
// bucket with a free slot and migrates it, inserting newFP into the slot it
// frees. It reports whether newFP was inserted, and whether a chain was
// found (the caller retries while one is).
func (f *Filter) makeRoom(i1, i2 uint64, newFP uint32) (inserted, found bool) {
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
				inserted = f.migrate(q, head, s, fp, y, newFP)
				*bufp = q[:0]
				return inserted, true
			}
			if len(q) < cap(q) {
				q = append(q, node{bucket: y, fp: fp, parent: int32(head), slot: uint8(s)})
			}
		}
	}
	*bufp = q[:0]
	return false, false
}

func onPath(q []node, n int, y uint64) bool {
	for ; n >= 0; n = int(q[n].parent) {
		if q[n].bucket == y {
			return true
		}
	}
	return false
}

// step is one move of a chain: fingerprint fp leaves slot `slot` of bucket
// from for a free slot of bucket to.
type step struct {
	from, to uint64
	fp       uint32
	slot     uint
}

// migrate moves the chain ending with fingerprint fp in slot s of node n's
// bucket into bucket y, back to front, and inserts newFP into the slot the
// chain frees at its head. It stops at the first step that finds the table
// changed, and reports whether newFP was inserted.
func (f *Filter) migrate(q []node, n int, s uint, fp uint32, y uint64, newFP uint32) bool {
	moves := 1
	for m := n; q[m].parent >= 0; m = int(q[m].parent) {
		moves++
	}
	var last [kcas.MaxWords - 1]step // made with the insert in one K-CAS, tail first
	k := 0
	x := q[n].bucket
	for {
		if moves > len(last) {
			if !f.shift([]step{{from: x, to: y, fp: fp, slot: s}}, 0) {
				return false
			}
		} else {
			last[k] = step{from: x, to: y, fp: fp, slot: s}
			k++
		}
		moves--
		if q[n].parent < 0 {
			break
		}
		y, fp, s = x, q[n].fp, uint(q[n].slot)
		n = int(q[n].parent)
		x = q[n].bucket
	}
	return f.shift(last[:k], newFP)
}

// shift makes steps of a chain (tail first, at most kcas.MaxWords-1) and
// puts newFP into the slot they free at the head (newFP 0: leaves it free),
// all in one K-CAS, and reports whether it did; false if a bucket no longer
// holds what the chain expects.
func (f *Filter) shift(steps []step, newFP uint32) bool {
	var es [kcas.MaxWords]kcas.Entry
	head := steps[len(steps)-1]
	for {
		// The head bucket: its fingerprint leaves, newFP takes the slot.
		v := f.settle(head.from)
		if f.l.slot(v, head.slot) != head.fp {
			return false
		}
		es[0] = f.entry(head.from, v, f.l.setSlot(v, head.slot, newFP))
		// Each middle bucket takes the fingerprint of the step before and
		// gives up the one of the step after; the tail takes a free slot.
		for j := len(steps) - 1; j >= 0; j-- {
			st := steps[j]
			v := f.settle(st.to)
			var slot int
			if j > 0 {
				if slot = int(steps[j-1].slot); f.l.slot(v, uint(slot)) != steps[j-1].fp {
					return false
				}
			} else if slot = f.l.find(v, 0); slot < 0 {
				return false
			} else if f.l.fingerprints(v) == 0 {
				// The tail bucket, read empty: marked before the K-CAS
				// that fills it. Every other bucket of the chain holds
				// a fingerprint, so its block is marked already.
				f.marks.Mark(st.to)
			}
			es[len(steps)-j] = f.entry(st.to, v, f.l.setSlot(v, uint(slot), st.fp))
		}
		if kcas.CAS(es[:len(steps)+1]...) {
			if newFP != 0 {
				f.added(1) // a move alone leaves Len as it was
			}
			return true
		}
		// A word changed between settle and the K-CAS: look again.
	}
}

// entry is the K-CAS entry that changes bucket i from old to updated with
// its counter bumped, or back to old with its counter bumped on failure.
func (f *Filter) entry(i uint64, old, updated uint64) kcas.Entry {
	return kcas.Entry{Word: &f.words[i], Old: old, New: f.l.bump(updated), Restore: f.l.bump(old)}
}
