package hashmap

// This file makes room for an insert whose two buckets are full: a
// breadth-first search for a displacement path that reads only tags and
// changes nothing, then the moves along it from the end back to the start.
//
// Protocol: the search runs without locks on a possibly changing table, so
// the path it returns is a guess. Each move locks its two buckets, checks that it is still valid (the table is current, the
// destination slot is free, the source slot holds an entry whose other
// bucket is the destination), and either makes the move (table.move: the
// entry arrives before it departs) or abandons the rest of the path. Every
// move on its own keeps every key in the map, so an abandoned path leaves
// nothing to undo; the insert simply starts again. Moving back to front
// means the free slot travels towards the insert's buckets, and no entry is
// ever overwritten.

// Bounds of the search. With six-slot buckets a path of length 1 or 2 is
// almost always found below the maximum load; the bounds only matter when
// the table is nearly full or the hash is degenerate, and then they make the
// search fail in bounded time, and the map grows (or stashes), instead of
// looping along a cycle of displacements.
const (
	maxPathLen = 5   // moves in a path
	maxSearch  = 512 // buckets examined
)

// bfsNode is a bucket reached by the search.
type bfsNode struct {
	bucket uint64
	parent int16 // index of the node whose entry would move here; -1 at a root
	slot   int8  // the slot of the parent bucket holding that entry
	depth  int8  // moves from a root
}

// search looks for a displacement path from bucket i1 or i2 to a free slot,
// in q. It returns the index of the node with the free slot and the slot,
// or ok == false.
func (t *table[K, V]) search(i1, i2 uint64, q *[maxSearch]bfsNode) (end, free int, ok bool) {
	q[0] = bfsNode{bucket: i1, parent: -1}
	q[1] = bfsNode{bucket: i2, parent: -1}
	n := 2
	for head := 0; head < n; head++ {
		node := q[head]
		tags := t.buckets[node.bucket].loadTags()
		if m := emptyLanes(tags); m != 0 {
			return head, lane(m), true
		}
		if node.depth == maxPathLen {
			continue
		}
		for j := 0; j < slotsPerBucket && n < maxSearch; j++ {
			q[n] = bfsNode{bucket: t.alt(node.bucket, tagAt(tags, j)), parent: int16(head), slot: int8(j), depth: node.depth + 1}
			n++
		}
	}
	return 0, 0, false
}

// displace carries out the path ending at q[end], whose bucket has the free
// slot free, back to front. With lock, each move takes its buckets' locks and
// checks itself first; without, the caller owns the table (a resize
// filling an unpublished table). It reports whether the whole path was
// carried out, leaving the path's root slot free.
func (m *Map[K, V]) displace(t *table[K, V], q *[maxSearch]bfsNode, end, free int, lock bool) bool {
	dst, di := q[end].bucket, free
	for i := end; q[i].parent >= 0; i = int(q[i].parent) {
		src, si := q[q[i].parent].bucket, int(q[i].slot)
		sb, db := &t.buckets[src], &t.buckets[dst]
		if lock {
			t.lockPair(src, dst)
		}
		tag := tagAt(sb.loadTags(), si)
		ok := tag != 0 && t.alt(src, tag) == dst && tagAt(db.loadTags(), di) == 0
		if lock {
			ok = ok && m.table.Load() == t
		}
		if ok {
			t.move(sb, si, db, di)
		}
		if lock {
			t.unlockPair(src, dst)
		}
		if !ok {
			return false
		}
		dst, di = src, si
	}
	return true
}

// makeRoom tries to free a slot in bucket i1 or i2 of t, for an insert that
// found both full. The caller holds no lock. It grows the table if the load
// is at the maximum, or if no path exists at a load above minGrowLoad. It
// returns true if no path exists at a lower load: the hash is degenerate
// for this key, which should then go to the stash.
func (m *Map[K, V]) makeRoom(t *table[K, V], i1, i2 uint64) (stash bool) {
	if m.load(t) >= m.maxLoad {
		m.grow(t)
		return false
	}
	var q [maxSearch]bfsNode
	if end, free, ok := t.search(i1, i2, &q); ok {
		m.displace(t, &q, end, free, true)
		return false
	}
	if m.load(t) >= minGrowLoad {
		m.grow(t)
		return false
	}
	return true
}

// load returns the fraction of t's slots in use (stashed entries do not
// use slots).
func (m *Map[K, V]) load(t *table[K, V]) float64 {
	return float64(m.Len()-len(t.stashed())) / float64(len(t.buckets)*slotsPerBucket)
}
