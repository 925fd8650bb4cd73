package hashmap

// This file grows the table.
//
// Protocol: the grower takes every bucket lock, in order, so no writer is
// inside a critical section and none can enter one; it checks that the
// table it was asked to grow is still current (another writer may have
// grown it first), builds a table of twice the buckets with new seeds by
// re-inserting every entry pointer of the old one, and publishes it with
// one atomic store of Map.table: the linearization point of the resize,
// which changes no key's value. Then it unlocks. Writers that waited on a
// bucket lock find Map.table changed and retry on the new table (writers wait;
// they do not help, which keeps the protocol simple; a 1e6-entry table
// migrates in tens of milliseconds).
//
// Readers never wait: one that loaded the old table keeps searching it. The
// old table is frozen from the moment the grower holds all locks, so it
// holds exactly the map's contents at the publication, which falls inside
// the reader's call (see table.lookup). Entries are immutable and shared by
// both tables, so nothing is copied but pointers.
//
// The map never shrinks, except on Clear.

// grow doubles t, unless t is no longer the current table.
func (m *Map[K, V]) grow(t *table[K, V]) {
	t.lockAll()
	defer t.unlockAll()
	if m.table.Load() != t {
		return
	}
	m.table.Store(m.rehash(t, 2*len(t.buckets)))
}

// rehash returns a new table of nbuckets buckets holding t's entries. The
// caller holds every lock, so t does not change.
func (m *Map[K, V]) rehash(t *table[K, V], nbuckets int) *table[K, V] {
	nt := newTable[K, V](nbuckets)
	var q [maxSearch]bfsNode
	for i := range t.buckets {
		b := &t.buckets[i]
		for j := range b.slots {
			if e := b.slots[j].Load(); e != nil {
				m.place(nt, e, &q)
			}
		}
	}
	for _, e := range t.stashed() {
		m.place(nt, e, &q)
	}
	return nt
}

// place puts e into the unpublished table nt: into a free slot of one of
// its buckets, else along a displacement path, else into the stash.
func (m *Map[K, V]) place(nt *table[K, V], e *entry[K, V], q *[maxSearch]bfsNode) {
	h := m.hash(nt, e.key)
	tag := tagOf(h)
	i1 := h & nt.mask
	i2 := nt.alt(i1, tag)
	if j := nt.buckets[i1].freeSlot(); j >= 0 {
		nt.buckets[i1].fill(j, tag, e, false)
		return
	}
	if j := nt.buckets[i2].freeSlot(); j >= 0 {
		nt.buckets[i1].addOverflow(tag, +1)
		nt.buckets[i2].fill(j, tag, e, true)
		return
	}
	if end, free, ok := nt.search(i1, i2, q); ok && m.displace(nt, q, end, free, false) {
		root := q[end]
		for root.parent >= 0 {
			root = q[root.parent]
		}
		b := &nt.buckets[root.bucket]
		alt := root.bucket != i1
		if alt {
			nt.buckets[i1].addOverflow(tag, +1)
		}
		b.fill(b.freeSlot(), tag, e, alt)
		return
	}
	nt.setStash(e.key, e)
}
