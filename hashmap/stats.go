package hashmap

// Stats describes a Map's table, for measurements.
type Stats struct {
	Len            int     // keys in the map
	Buckets        int     // buckets in the table
	SlotsPerBucket int     // slots in a bucket
	Slots          int     // Buckets * SlotsPerBucket
	Stashed        int     // keys in the stash (not in any slot)
	Load           float64 // (Len - Stashed) / Slots
	Counters       int     // stripes of the striped entry count
}

// Stats returns the current table's figures. Under concurrent writes they
// are a mix of moments.
//
// To measure at an exact load factor λ: create the map with
// WithCapacity(n) and WithMaxLoad(1), read Stats().Slots = s, and store
// round(λ·s) keys; the table does not grow until a displacement search
// fails, which with six-slot buckets happens only above about 97%.
func (m *Map[K, V]) Stats() Stats {
	t := m.table.Load()
	s := Stats{
		Len:            m.Len(),
		Buckets:        len(t.buckets),
		SlotsPerBucket: slotsPerBucket,
		Slots:          len(t.buckets) * slotsPerBucket,
		Stashed:        len(t.stashed()),
		Counters:       len(m.counters),
	}
	s.Load = float64(s.Len-s.Stashed) / float64(s.Slots)
	return s
}

// Probe counts the work of one lookup.
type Probe struct {
	Buckets int // buckets whose tags were examined (1 or 2, per attempt)
	Slots   int // slots whose tags were compared: SlotsPerBucket per bucket
	Keys    int // keys compared: slots whose tag matched, plus stash entries
}

// LoadProbe is Load that also counts what the lookup inspected, for
// measurements (the classic "key comparisons per lookup" figure). It takes
// Load's steps: the first bucket; then the second, only if the first
// bucket's overflow count for the key's tag class shows that a key of it
// sits in its second bucket; then the stash; and, if a writer held the first bucket
// meanwhile, both buckets and the stash under version validation. A retry
// after a concurrent write counts again.
func (m *Map[K, V]) LoadProbe(key K) (value V, ok bool, p Probe) {
	t := m.table.Load()
	h := m.hash(t, key)
	tag := tagOf(h)
	i1 := h & t.mask
	b1, b2 := &t.buckets[i1], &t.buckets[t.alt(i1, tag)]
	// recount is false when b1 is searched again, as Load does, right
	// after its first search: that search reads lines already in cache and
	// is not counted.
	recount := true
	find := func(b *bucket[K, V]) *entry[K, V] {
		if recount {
			p.Buckets++
			p.Slots += slotsPerBucket
		}
		for mt := matchTag(b.loadTags(), tag); mt != 0; mt &= mt - 1 {
			if recount {
				p.Keys++
			}
			if e := b.slots[lane(mt)].Load(); e != nil && e.key == key {
				return e
			}
		}
		return nil
	}
	v := b1.loadVersion()
	if e := find(b1); e != nil {
		return e.value, true, p
	}
	if v&1 == 0 { // Load's one pass while b1 is unchanged
		if overflow(b1.loadTags(), tag) != 0 {
			if e := find(b2); e != nil {
				return e.value, true, p
			}
		}
		for _, e := range t.stashed() {
			p.Keys++
			if e.key == key {
				return e.value, true, p
			}
		}
		if b1.loadVersion() == v {
			return value, false, p
		}
	}
	for attempt := 0; ; attempt++ {
		v1, v2 := b1.loadVersion(), b2.loadVersion()
		recount = attempt > 0
		e := find(b1)
		recount = true
		if e != nil {
			return e.value, true, p
		}
		if e := find(b2); e != nil {
			return e.value, true, p
		}
		for _, e := range t.stashed() {
			p.Keys++
			if e.key == key {
				return e.value, true, p
			}
		}
		if b1.loadVersion() == v1 && b2.loadVersion() == v2 {
			return value, false, p
		}
	}
}
