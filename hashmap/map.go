package hashmap

// This file holds the Map and its operations. The protocol:
//
// Readers (Load, and the lock-free first step of LoadOrStore, LoadAndDelete
// and Delete) take no lock and never wait. A lookup loads the table, hashes
// the key with the table's seeds, and searches the key's first bucket, then
// its second if the first's overflow count for the key's tag class is not
// 0, then the stash. A hit
// returns at once: the slot's pointer was loaded while it pointed to the
// entry, which is the linearization point. A miss counts if the first
// bucket's version was even before the search and is the same after it
// (no writer held it, so the key was absent throughout: the linearization
// point is any moment of the search); otherwise lookup searches both
// buckets between two readings of their versions (and the stash), and a
// miss counts only if both versions are unchanged.
//
// Writers lock the key's first bucket (and its second when they must look
// or insert there, in increasing index order), check that the table is
// still the map's current one, and then act; while they hold the first
// bucket nobody else can move, add or remove their key. An insert that finds both buckets full releases its locks,
// makes room (a displacement path, or growth; path.go, resize.go) and
// starts again, so that an operation's decision and its effect happen under
// one critical section, and Compute's fn runs exactly once.

import (
	"hash/maphash"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Map is a concurrent hash map from K to V built on cuckoo hashing: each key
// lives in one of two buckets of six slots, so a lookup reads at most two
// cache lines of slots whatever the load. Loads take no locks; writers lock
// the buckets they change. The zero Map is not usable; call New.
//
// See the package documentation for the design and its guarantees.
type Map[K comparable, V any] struct {
	table  atomic.Pointer[table[K, V]]
	kind   hashKind
	hasher func(K, uint64) uint64 // WithHasher, for hashCustom

	counters    []counter
	counterMask uint64
	maxLoad     float64
	initial     int // buckets of the first table, and of the table after Clear
}

// counter is one stripe of the striped entry count: entries are counted
// in the stripe of their first bucket's index, under that bucket's lock,
// so that writers of different stripes never share a counter's cache line.
// Padded to 64 bytes.
type counter struct {
	n int64 // through sync/atomic's functions only
	_ [64 - 8]byte
}

// New returns an empty map. Options: WithCapacity, WithHasher, WithMaxLoad.
func New[K comparable, V any](opts ...Option) *Map[K, V] {
	c := config{maxLoad: defaultMaxLoad}
	for _, o := range opts {
		o(&c)
	}
	c.validate(reflectKeyType[K]())
	m := &Map[K, V]{kind: kindOf[K](), maxLoad: c.maxLoad}
	if c.hasher != nil {
		m.kind = hashCustom
		m.hasher = c.hasher.(func(K, uint64) uint64)
	}
	// 16 counters per P: two writers share a counter's line with
	// probability about 1/(16 P); a map costs 1 KiB of counters per P.
	n := 16
	for n < 16*runtime.GOMAXPROCS(0) && n < 1024 {
		n *= 2
	}
	m.counters = make([]counter, n)
	m.counterMask = uint64(n - 1)
	m.initial = bucketsFor(c.capacity, c.maxLoad)
	m.table.Store(newTable[K, V](m.initial))
	return m
}

// Load returns the value stored for key, or the zero value and false. It
// takes no lock and never waits for a writer.
func (m *Map[K, V]) Load(key K) (value V, ok bool) {
	t := m.table.Load()
	var h uint64
	switch m.kind { // m.hash, inlined for the commonest keys
	case hashWord64:
		h = mix(*(*uint64)(unsafe.Pointer(&key)), t.seeds.word)
	case hashComparable: // strings too; maphash.Comparable is inlined
		h = maphash.Comparable(t.seeds.mh, key)
	default:
		h = m.hash(t, key)
	}
	tag := tagOf(h)
	i1 := h & t.mask
	b1 := t.at(i1)
	v := b1.loadVersion()
	tags := b1.loadTags()
	for mt := matchTag(tags, tag); mt != 0; mt &= mt - 1 {
		if e := b1.slot(lane(mt)).Load(); e != nil && e.key == key {
			return e.value, true
		}
	}
	// Every writer and mover of key holds b1's lock, and so does every
	// change of b1's overflow counts. If b1 was unlocked at v (even) and
	// its version is still v after the search, no lock of b1 overlapped
	// the search: key stayed where it was (in one slot of b1 or of b2, in
	// the stash, or absent) and the overflow counts stayed as read. So one
	// pass over b1, then b2 only if a key of b1 of key's tag class has
	// overflowed, then the
	// stash, is exact, and a miss is linearizable at any moment of it.
	if v&1 == 0 {
		if overflow(tags, tag) != 0 { // b2.find, inlined
			b2 := t.at(t.alt(i1, tag))
			for mt := matchTag(b2.loadTags(), tag); mt != 0; mt &= mt - 1 {
				if e := b2.slot(lane(mt)).Load(); e != nil && e.key == key {
					return e.value, true
				}
			}
		}
		if t.stash.Load() != nil {
			if e := t.findStash(key); e != nil {
				return e.value, true
			}
		}
		if b1.loadVersion() == v {
			return value, false
		}
	}
	if e := t.lookup(h, key); e != nil {
		return e.value, true
	}
	return value, false
}

// lookup is the validated lookup of key, whose hash in t is h. It returns
// nil only if key was absent at some moment during the call.
//
// Why a miss is correct: suppose key is in the map for the whole call, yet
// both searches miss. A slot holds key from the store of its pointer until
// the store that replaces it (tags are written so that a slot holding an
// entry always shows the entry's tag). Only a move takes key out of a slot
// without deleting it, and a move stores the new copy, then bumps the
// version of the bucket it leaves, then empties the old slot. So at the
// first reading of the versions, key sits in a slot σ of bucket X whose
// next departure comes after a bump of X that is later than that reading
// (if key was mid-move, σ is the copy in the destination). If X's version
// is the same at the second reading, no such bump happened, so key was in σ
// while X was searched, and the search found it. Contradiction; so a miss
// with unchanged versions has a moment in the call when key was absent.
//
// A table that is no longer the map's current one is frozen (writers
// re-check the table under their locks and go to the new one), and it
// holds the map's contents at the moment it was replaced, which falls
// inside this call, since t was loaded before it; so searching it is
// correct too, and no reader ever needs to wait for a resize.
func (t *table[K, V]) lookup(h uint64, key K) *entry[K, V] {
	tag := tagOf(h)
	i1 := h & t.mask
	b1, b2 := &t.buckets[i1], &t.buckets[t.alt(i1, tag)]
	for {
		v1, v2 := b1.loadVersion(), b2.loadVersion()
		if e := b1.find(key, tag); e != nil {
			return e
		}
		if e := b2.find(key, tag); e != nil {
			return e
		}
		if t.stash.Load() != nil {
			if e := t.findStash(key); e != nil {
				return e
			}
		}
		if b1.loadVersion() == v1 && b2.loadVersion() == v2 {
			return nil
		}
	}
}

// lockAll locks every bucket of the current table and returns it. Nothing
// can change the map until t.unlockAll.
func (m *Map[K, V]) lockAll() *table[K, V] {
	for {
		t := m.table.Load()
		t.lockAll()
		if m.table.Load() == t {
			return t
		}
		t.unlockAll()
	}
}

// locked is a key whose two buckets are locked in the current table, and where the key is or may go.
type locked[K comparable, V any] struct {
	m      *Map[K, V]
	t      *table[K, V]
	i1, i2 uint64
	both   bool // i2 is locked too, not just i1
	tag    uint8
	found  bool          // key is in the map: in slot of b, or in the stash
	e      *entry[K, V]  // the key's entry, if found
	b      *bucket[K, V] // nil: the stash (or no room was asked for)
	slot   int           // slot in b
}

// lockKey locks key's buckets in the current table and finds the key. With
// room, if the key is absent, it also guarantees a place for it (a free
// slot in one of its buckets, or the stash), making room first if it must.
func (m *Map[K, V]) lockKey(key K, room bool) locked[K, V] {
	var stashIn *table[K, V] // the table whose makeRoom asked for the stash
	for {
		t := m.table.Load()
		h := m.hash(t, key)
		l := locked[K, V]{m: m, t: t, tag: tagOf(h), i1: h & t.mask}
		l.i2 = t.alt(l.i1, l.tag)
		b1, b2 := &t.buckets[l.i1], &t.buckets[l.i2]
		// Every writer of key locks its first bucket, and so does every
		// move of key (moves lock both ends), so holding b1 alone owns
		// the key: enough if the key is in b1, or if it is absent and
		// b1 can take it. It is absent if it is not in b1, no key of b1
		// of its tag class has overflowed into its second bucket, and the
		// stash is empty.
		b1.lock()
		if m.table.Load() != t { // grown or cleared while we waited
			b1.unlock()
			continue
		}
		if j := b1.findSlot(key, l.tag); j >= 0 {
			l.found, l.b, l.slot, l.e = true, b1, j, b1.slots[j].Load()
			return l
		}
		if overflow(b1.loadTags(), l.tag) == 0 && t.stash.Load() == nil {
			if !room {
				return l
			}
			if j := b1.freeSlot(); j >= 0 {
				l.b, l.slot = b1, j
				return l
			}
		}
		// Both buckets are needed: lock b2, keeping the order.
		if l.i2 > l.i1 {
			b2.lock()
		} else {
			b1.unlock()
			t.lockPair(l.i1, l.i2)
			if m.table.Load() != t {
				t.unlockPair(l.i1, l.i2)
				continue
			}
		}
		l.both = true
		if j := b1.findSlot(key, l.tag); j >= 0 {
			l.found, l.b, l.slot, l.e = true, b1, j, b1.slots[j].Load()
			return l
		}
		if j := b2.findSlot(key, l.tag); j >= 0 {
			l.found, l.b, l.slot, l.e = true, b2, j, b2.slots[j].Load()
			return l
		}
		if t.stash.Load() != nil {
			if e := t.findStash(key); e != nil {
				l.found, l.e = true, e
				return l
			}
		}
		if !room {
			return l
		}
		if j := b1.freeSlot(); j >= 0 {
			l.b, l.slot = b1, j
			return l
		}
		if j := b2.freeSlot(); j >= 0 {
			l.b, l.slot = b2, j
			return l
		}
		if stashIn == t {
			return l
		}
		t.unlockPair(l.i1, l.i2)
		if m.makeRoom(t, l.i1, l.i2) {
			stashIn = t
		}
	}
}

func (l *locked[K, V]) unlock() {
	l.t.buckets[l.i1].unlock()
	if l.both {
		l.t.buckets[l.i2].unlock()
	}
}

// set stores e for the key: an update if found, else an insert into the
// place lockKey reserved. The pointer store is the linearization point.
func (l *locked[K, V]) set(e *entry[K, V]) {
	switch {
	case l.b == nil:
		l.t.setStash(e.key, e)
	case l.found:
		l.b.slots[l.slot].Store(e)
	case l.b == &l.t.buckets[l.i2]: // in its second bucket: count it in the first
		l.t.buckets[l.i1].addOverflow(l.tag, +1)
		l.b.fill(l.slot, l.tag, e, true)
	default:
		l.b.fill(l.slot, l.tag, e, false)
	}
	if !l.found {
		atomic.AddInt64(&l.m.counters[l.i1&l.m.counterMask].n, 1)
	}
}

// remove deletes the key (l.found).
func (l *locked[K, V]) remove() {
	switch {
	case l.b == nil:
		l.t.setStash(l.e.key, nil)
	case l.b == &l.t.buckets[l.i2]:
		l.b.empty(l.slot)
		l.t.buckets[l.i1].addOverflow(l.tag, -1)
	default:
		l.b.empty(l.slot)
	}
	atomic.AddInt64(&l.m.counters[l.i1&l.m.counterMask].n, -1)
}

// Store sets the value for key.
func (m *Map[K, V]) Store(key K, value V) {
	e := &entry[K, V]{key, value}
	l := m.lockKey(key, true)
	l.set(e)
	l.unlock()
}

// Swap stores value for key and returns the previous value, if any.
func (m *Map[K, V]) Swap(key K, value V) (previous V, loaded bool) {
	e := &entry[K, V]{key, value}
	l := m.lockKey(key, true)
	if l.found {
		previous, loaded = l.e.value, true
	}
	l.set(e)
	l.unlock()
	return previous, loaded
}

// LoadOrStore returns the existing value for key if present (loaded is
// true). Otherwise it stores value and returns it (loaded is false). A key
// that is present is answered without locking.
func (m *Map[K, V]) LoadOrStore(key K, value V) (actual V, loaded bool) {
	if v, ok := m.Load(key); ok {
		return v, true
	}
	l := m.lockKey(key, true)
	if l.found {
		actual, loaded = l.e.value, true
	} else {
		l.set(&entry[K, V]{key, value})
		actual = value
	}
	l.unlock()
	return actual, loaded
}

// LoadAndDelete deletes key and returns its value, if it was present. A key
// that is absent is answered without locking.
func (m *Map[K, V]) LoadAndDelete(key K) (value V, loaded bool) {
	if _, ok := m.Load(key); !ok {
		return value, false
	}
	l := m.lockKey(key, false)
	if l.found {
		value, loaded = l.e.value, true
		l.remove()
	}
	l.unlock()
	return value, loaded
}

// Delete deletes key.
func (m *Map[K, V]) Delete(key K) { m.LoadAndDelete(key) }

// ComputeOp tells Compute what to do with the value fn computed.
type ComputeOp int

const (
	// UpdateOp stores the new value (inserting the key if absent).
	UpdateOp ComputeOp = iota
	// DeleteOp deletes the key (nothing if absent).
	DeleteOp
	// CancelOp leaves the map as it is.
	CancelOp
)

// Compute calls fn once with key's current value (and whether the key is
// present) and then, per the op fn returns, stores fn's value, deletes the
// key or does nothing, atomically with respect to every other writer of
// key: fn runs with the key's bucket locks held, so it must not use the map
// itself, and it should be quick. It returns the key's value afterwards and
// whether the key is present: (new value, true) after UpdateOp, (zero,
// false) after DeleteOp, (current value, present) after CancelOp.
//
// If fn panics, the map is left unchanged and unlocked, and the panic goes
// on. Compute on an absent key makes room for it before calling fn (fn may
// return UpdateOp), so it may grow the table even if fn then cancels.
func (m *Map[K, V]) Compute(key K, fn func(old V, loaded bool) (V, ComputeOp)) (actual V, ok bool) {
	l := m.lockKey(key, true)
	defer l.unlock()
	var old V
	if l.found {
		old = l.e.value
	}
	v, op := fn(old, l.found)
	switch op {
	case UpdateOp:
		l.set(&entry[K, V]{key, v})
		return v, true
	case DeleteOp:
		if l.found {
			l.remove()
		}
		return actual, false
	}
	return old, l.found
}

// Len returns the number of keys: the sum of the striped counters. It is
// exact when no writer is active; under concurrent writes it is some count
// between the smallest and largest size the map had during the call.
func (m *Map[K, V]) Len() int {
	n := int64(0)
	for i := range m.counters {
		n += atomic.LoadInt64(&m.counters[i].n)
	}
	return int(max(n, 0))
}

// Clear deletes every key and shrinks the table to its first size: the only
// way a Map ever shrinks. It waits for writers, like growth; readers of the
// old table see its contents as of the Clear, and are never blocked.
func (m *Map[K, V]) Clear() {
	t := m.lockAll()
	// Counters change only under a lock of the current table: reset them
	// before the new table is published.
	for i := range m.counters {
		atomic.StoreInt64(&m.counters[i].n, 0)
	}
	m.table.Store(newTable[K, V](m.initial))
	t.unlockAll()
}
