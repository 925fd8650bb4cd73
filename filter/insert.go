package filter

// strategy selects how an insert that finds both buckets full makes room.
type strategy uint8

const (
	// breadthFirst searches for a displacement path without changing
	// anything, then moves fingerprints along it from the end backwards. A
	// failed search leaves the table as it was.
	breadthFirst strategy = iota
	// randomWalk kicks a random fingerprint out of a full bucket to its
	// other bucket, repeatedly, as the reference implementation does.
	randomWalk
)

// node is one bucket reached by the path search: the fingerprint in slot
// `slot` of the parent node's bucket has this bucket as its other bucket.
type node struct {
	bucket uint64
	parent int32 // index of the parent node; -1 for the key's own buckets
	slot   uint8
}

// insert stores fp, whose buckets are i1 and alt(i1, fp).
func (f *Filter) insert(i1 uint64, fp uint32) error {
	i2 := f.alt(i1, fp)
	if f.t.add2(i1, i2, fp) {
		f.count++
		return nil
	}
	switch f.strategy {
	case randomWalk:
		return f.randomWalk(i1, i2, fp)
	case breadthFirst:
		if f.searchPath(i1, i2, fp) {
			f.count++
			return nil
		}
	}
	if f.victim.used {
		return ErrFull
	}
	f.setVictim(victim{used: true, fp: fp, bucket: i1})
	f.count++
	return nil
}

// searchPath looks breadth-first, from the full buckets i1 and i2, for a
// chain of fingerprints that ends at a bucket with a free slot; it examines
// at most maxKicks buckets. If it finds one it moves the chain back to front
// (the last fingerprint first into the free slot, then each predecessor into
// the slot its successor left) and stores fp in the slot freed in i1 or i2.
// Otherwise nothing changes. Buckets on one chain are distinct, so each move
// finds the fingerprint the search saw.
func (f *Filter) searchPath(i1, i2 uint64, fp uint32) bool {
	if f.path == nil {
		f.path = make([]node, 0, f.maxKicks+2)
	}
	q := append(f.path[:0], node{bucket: i1, parent: -1})
	if i2 != i1 {
		q = append(q, node{bucket: i2, parent: -1})
	}
	for head := 0; head < len(q) && head < f.maxKicks; head++ {
		x := q[head].bucket
		var w uint64 // bucket x's slots, read once (decoded once if semi-sorted)
		if f.t.oneWord {
			w = f.t.word(x)
		}
		for s := range f.t.slots {
			var moved uint32 // the fingerprint in slot s, which would move
			if f.t.oneWord {
				moved = uint32(w >> (s * f.t.bits) & f.t.fpMask)
			} else {
				moved = f.t.slot(x, s)
			}
			y := f.alt(x, moved)
			if y == x || f.onPath(q, head, y) {
				continue
			}
			if f.t.hasEmpty(y) {
				f.movePath(q, head, s, y, fp)
				f.path = q[:0]
				return true
			}
			if len(q) < cap(q) {
				q = append(q, node{bucket: y, parent: int32(head), slot: uint8(s)})
			}
		}
	}
	f.path = q[:0]
	return false
}

// onPath reports whether bucket y is on the chain from node n to its root.
func (f *Filter) onPath(q []node, n int, y uint64) bool {
	for ; n >= 0; n = int(q[n].parent) {
		if q[n].bucket == y {
			return true
		}
	}
	return false
}

// movePath moves the fingerprint in slot s of node n's bucket to the free
// bucket y, then every fingerprint on the chain one step toward y, and
// stores fp in the root's freed slot.
func (f *Filter) movePath(q []node, n int, s uint, y uint64, fp uint32) {
	x := q[n].bucket
	f.t.add(y, f.t.slot(x, s))
	for q[n].parent >= 0 {
		p, ps := int(q[n].parent), uint(q[n].slot)
		f.t.setSlot(x, s, f.t.slot(q[p].bucket, ps))
		n, x, s = p, q[p].bucket, ps
	}
	f.t.setSlot(x, s, fp)
}

// randomWalk makes room the reference implementation's way: swap fp with a
// random fingerprint of one of its buckets and carry the evicted one to its
// other bucket, up to maxKicks times; the one left homeless becomes the
// victim. It refuses to start when the victim slot is taken, since a walk
// cannot be undone.
func (f *Filter) randomWalk(i1, i2 uint64, fp uint32) error {
	if f.victim.used {
		return ErrFull
	}
	i := i1
	if f.random()&1 == 1 {
		i = i2
	}
	for range f.maxKicks {
		s := uint(f.random() % uint64(f.t.slots))
		evicted := f.t.slot(i, s)
		f.t.setSlot(i, s, fp)
		fp, i = evicted, f.alt(i, evicted)
		if f.t.add(i, fp) {
			f.count++
			return nil
		}
	}
	f.setVictim(victim{used: true, fp: fp, bucket: i})
	f.count++
	return nil
}

// random returns the next value of a splitmix64 sequence.
func (f *Filter) random() uint64 {
	f.rng += 0x9e3779b97f4a7c15
	z := f.rng
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
