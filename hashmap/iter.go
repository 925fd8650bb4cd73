package hashmap

import "iter"

// Range calls fn for each key and value in the map, until fn returns false.
//
// Under concurrent writes, each key present for the whole call is visited
// exactly once, with the value it had when Range started; a key inserted or
// deleted during the call may or may not be visited. Range takes a snapshot
// first: it locks every bucket for as long as it takes to copy the entry
// pointers (8 bytes per entry; writers wait, readers do not), then calls fn
// with no lock held, so fn may use the map.
func (m *Map[K, V]) Range(fn func(key K, value V) bool) {
	for _, e := range m.snapshot() {
		if !fn(e.key, e.value) {
			return
		}
	}
}

// All returns an iterator over the map's keys and values, with Range's
// guarantees; the snapshot is taken when iteration starts.
func (m *Map[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) { m.Range(yield) }
}

// snapshot returns every entry in the map at one instant.
func (m *Map[K, V]) snapshot() []*entry[K, V] {
	t := m.lockAll()
	defer t.unlockAll()
	s := make([]*entry[K, V], 0, m.Len())
	for i := range t.buckets {
		b := &t.buckets[i]
		for j := range b.slots {
			if e := b.slots[j].Load(); e != nil {
				s = append(s, e)
			}
		}
	}
	return append(s, t.stashed()...)
}
