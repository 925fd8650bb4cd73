package hashmap

// This file holds the table: buckets of slots, each slot a tag and a pointer
// to an immutable entry, and the per-bucket version counter that moves bump.
//
// Protocol (every word below is read and written with sync/atomic; writers
// hold the lock of every bucket they write, see map.go):
//
//   - A slot is a pair (tag byte in bucket.tags, pointer in bucket.slots).
//     Under a lock the pair is always consistent: tag 0 ⇔ nil pointer.
//     Between a writer's two stores a reader may see them out of step, and
//     the order of the stores keeps one rule true at every instant:
//
//	   slots[j] != nil  ⇒  tag j == tagOf(hash(slots[j].key))
//
//     so that a reader that scans the tags never skips a slot that holds an
//     entry. Filling a slot stores the tag first, then the pointer; emptying
//     one stores nil first, then clears the tag.
//   - The pointer is what counts: key k is in the map exactly when some slot
//     of one of its two buckets (or the stash) points to an entry for k. The
//     store of that pointer is the linearization point of every insert,
//     update, delete and arrival.
//   - bucket.version is the bucket's lock and its version. Bit 0 is the
//     lock: a writer sets it by compare-and-swap from an even value, and
//     clears it by adding 1, so every critical section moves the version
//     on by 2. A move out of the bucket adds 2 more, after the entry has
//     arrived in its other bucket and before it leaves this one (see
//     table.move). Readers never look at the lock bit and never wait: a
//     reader's miss is valid only if the versions of both of the key's
//     buckets are the same before and after its search (table.lookup), and
//     any change, a write or a move, just makes it search again.

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// slotsPerBucket is 6 so that a bucket is exactly one 64-byte cache line:
// a version word, a tags word and six 8-byte pointers. Two buckets of six
// give each key 12 candidate slots, which lets cuckoo hashing with a short
// breadth-first search fill well over 95% of the slots; the map grows at
// maxLoad, below that.
const slotsPerBucket = 6

// ptrSize is the size of a pointer, and of a slot.
const ptrSize = unsafe.Sizeof(uintptr(0))

// bucketSize is a bucket's size in bytes: the version and tags words and
// the slots, 64 (one cache line) where pointers are 8 bytes.
const bucketSize = 16 + slotsPerBucket*ptrSize

// Lane masks for the tags word: one byte per slot, low byte = slot 0, in
// the low slotsPerBucket bytes. Byte 6 holds the alt bits (bit j: slot j's
// entry sits in its second bucket, not its first), byte 7 the overflow
// counts: four 2-bit counts, one per tag class (tag & 3), of the keys of
// that class whose first bucket this is and which sit in their second. A
// count saturates at 3 and is then never decremented. Counting by class
// lets a miss skip the second bucket when only keys of other classes
// overflowed: at 95% load a miss reads it 23% of the time, against 54%
// with one count for all keys.
const (
	altShift = 8 * slotsPerBucket
	ovfShift = altShift + 8
	ovfMax   = 3 // a class's count saturates here

	laneOnes  = 0x0000_0101_0101_0101 // 0x01 in each used lane
	laneLow7  = 0x7f7f_7f7f_7f7f_7f7f
	laneHighs = 0x0000_8080_8080_8080 // 0x80 in each used lane
)

// entry is an immutable key-value pair. A slot's pointer to it is replaced,
// never the entry's fields, so a reader that loads the pointer sees a whole
// entry.
type entry[K comparable, V any] struct {
	key   K
	value V
}

// bucket is one cache line of slots.
type bucket[K comparable, V any] struct {
	// version is the lock (bit 0) and the count of critical sections and
	// moves out of the bucket; see the file comment. Keeping the lock in
	// the bucket's own cache line means a writer pulls in one line per
	// bucket, not a lock's line too (a striped lock array's lines bounced
	// between cores on every write and cost a third of Store's time).
	version uint64
	// tags holds one tag byte per slot, slot j in bits 8j..8j+7. Tag 0 marks
	// an empty slot; tags of entries are 1..255 (tagOf). Above them, the
	// alt bits and the overflow counts (see altShift): a lookup that misses
	// in its first bucket, while that bucket's overflow count for the key's
	// tag class is 0 and no
	// writer touched it, has missed for good, and reads no second line.
	tags  uint64
	slots [slotsPerBucket]atomic.Pointer[entry[K, V]]
}

// version and tags are read and written only through these methods and
// sync/atomic's functions, which the compiler turns into single
// instructions wherever the map is instantiated (see inlining below).
func (b *bucket[K, V]) loadVersion() uint64 { return atomic.LoadUint64(&b.version) }
func (b *bucket[K, V]) loadTags() uint64    { return atomic.LoadUint64(&b.tags) }
func (b *bucket[K, V]) storeTags(x uint64)  { atomic.StoreUint64(&b.tags, x) }

// word is the type parameter of the helpers below, always uint64 and
// inferred, so that calls read as plain calls. They are generic only so
// that they are inlined: Go inlines a non-generic function of this package
// into an instantiation of Map only when the package that instantiates it
// imports this one, and a generic caller elsewhere (such as a benchmark's
// NewMap[K]) instantiates Map in its own package. A generic function's
// body travels with the generic code that calls it. Without this, Load
// made four calls.
type word interface{ ~uint64 }

// zeroLanes returns 0x80 in each used lane of x that is 0, exactly (no
// false positives from borrows, unlike the shorter (x-1)&^x trick).
func zeroLanes[W word](x W) W {
	y := (x & laneLow7) + laneLow7
	return ^(y | x | laneLow7) & laneHighs
}

// matchTag returns 0x80 in each lane of tags that equals tag (tag != 0),
// and maybe in lanes above such a lane: a borrow out of a matching lane
// can mark the next one (the (x-1)&^x trick, three operations against
// zeroLanes' six). The lowest mark is always exact, and no lane is marked
// if none matches, so a false mark costs at most a key comparison, made
// only after the true match below it has failed to be the key.
func matchTag[W word](tags W, tag uint8) W {
	x := tags ^ laneOnes*W(tag)
	return (x - laneOnes) &^ x & laneHighs
}

// emptyLanes returns 0x80 in each free lane of tags.
func emptyLanes[W word](tags W) W { return zeroLanes(tags) }

// lane returns the slot index of the lowest lane set in m (m != 0).
func lane[W word](m W) int { return bits.TrailingZeros64(uint64(m)) >> 3 }

// tagAt returns the tag of slot j.
func tagAt[W word](tags W, j int) uint8 { return uint8(tags >> (8 * j)) }

// withTag returns tags with slot j's tag replaced by tag and its alt bit
// set to alt.
func withTag[W word](tags W, j int, tag uint8, alt bool) W {
	tags = tags&^(0xff<<(8*j)) | W(tag)<<(8*j)
	tags &^= 1 << (altShift + j)
	if alt {
		tags |= 1 << (altShift + j)
	}
	return tags
}

// isAlt reports whether slot j's entry sits in its second bucket.
func isAlt[W word](tags W, j int) bool { return tags>>(altShift+j)&1 != 0 }

// overflow returns the overflow count of tag's class in a tags word.
func overflow[W word](tags W, tag uint8) W {
	return tags >> (ovfShift + 2*(tag&3)) & ovfMax
}

// addOverflow adds d (+1 or -1) to b's overflow count of tag's class,
// which saturates at ovfMax. The caller holds b's lock.
func (b *bucket[K, V]) addOverflow(tag uint8, d int) {
	tags := b.loadTags()
	one := uint64(1) << (ovfShift + 2*(tag&3))
	switch o := overflow(tags, tag); {
	case o == ovfMax:
	case d > 0:
		b.storeTags(tags + one)
	case o > 0:
		b.storeTags(tags - one)
	}
}

// lock acquires b's lock. It spins briefly, then yields, so that a holder
// that was preempted (or, at GOMAXPROCS 1, that is waiting to run) can
// finish; critical sections are a few stores long, except Compute's fn and
// a resize.
func (b *bucket[K, V]) lock() {
	for i := 0; ; i++ {
		if v := b.loadVersion(); v&1 == 0 && atomic.CompareAndSwapUint64(&b.version, v, v+1) {
			return
		}
		if i >= 16 {
			runtime.Gosched()
		}
	}
}

// unlock releases b's lock; the version is even again, 2 more than before
// the lock.
func (b *bucket[K, V]) unlock() { atomic.AddUint64(&b.version, 1) }

// lockPair locks buckets i1 and i2 (distinct), lower index first, so that
// writers never wait for each other in a cycle.
func (t *table[K, V]) lockPair(i1, i2 uint64) {
	if i1 > i2 {
		i1, i2 = i2, i1
	}
	t.buckets[i1].lock()
	t.buckets[i2].lock()
}

func (t *table[K, V]) unlockPair(i1, i2 uint64) {
	t.buckets[i1].unlock()
	t.buckets[i2].unlock()
}

// lockAll locks every bucket, in index order: then nothing can change t.
func (t *table[K, V]) lockAll() {
	for i := range t.buckets {
		t.buckets[i].lock()
	}
}

func (t *table[K, V]) unlockAll() {
	for i := range t.buckets {
		t.buckets[i].unlock()
	}
}

// find returns the entry for key in b, or nil. Lock-free: it loads the tags
// once, then the pointer of each matching slot.
func (b *bucket[K, V]) find(key K, tag uint8) *entry[K, V] {
	for m := matchTag(b.loadTags(), tag); m != 0; m &= m - 1 {
		if e := b.slots[lane(m)].Load(); e != nil && e.key == key {
			return e
		}
	}
	return nil
}

// findSlot returns the slot of b holding key, or -1. The caller holds b's
// lock.
func (b *bucket[K, V]) findSlot(key K, tag uint8) int {
	for m := matchTag(b.loadTags(), tag); m != 0; m &= m - 1 {
		j := lane(m)
		if e := b.slots[j].Load(); e != nil && e.key == key {
			return j
		}
	}
	return -1
}

// freeSlot returns a free slot of b, or -1. The caller holds b's lock.
func (b *bucket[K, V]) freeSlot() int {
	if m := emptyLanes(b.loadTags()); m != 0 {
		return lane(m)
	}
	return -1
}

// fill stores e with tag into the free slot j; alt says b is the second
// bucket of e's key (the caller has counted it in the first bucket's
// overflow). Tag first, then the pointer: the pointer store is the
// linearization point. The caller holds the lock.
func (b *bucket[K, V]) fill(j int, tag uint8, e *entry[K, V], alt bool) {
	b.storeTags(withTag(b.loadTags(), j, tag, alt))
	b.slots[j].Store(e)
}

// empty removes the entry of slot j. Pointer first (the linearization point
// of a delete), then the tag. The caller holds the lock.
func (b *bucket[K, V]) empty(j int) {
	b.slots[j].Store(nil)
	b.storeTags(withTag(b.loadTags(), j, 0, false))
}

// table is one generation of the map: a power-of-two array of buckets, the
// seeds its hashes use, and a stash for the rare key that fits nowhere.
type table[K comparable, V any] struct {
	buckets []bucket[K, V]
	mask    uint64 // len(buckets)-1; at least 1, so a key's buckets differ
	seeds   seeds

	// stash holds entries for which no displacement path was found while
	// the table was less than minGrowLoad full: with a real hash this
	// practically never happens; with a constant or truncated hash (tests,
	// or an adversary who knows a custom hasher) it is what keeps Store
	// from growing the table forever. Copy on write: a reader loads the
	// slice and searches it; writers replace it under stashMu (taken after
	// the key's bucket locks). Entries never move between the stash and
	// the buckets of one table.
	stash   atomic.Pointer[[]*entry[K, V]]
	stashMu sync.Mutex
}

func newTable[K comparable, V any](nbuckets int) *table[K, V] {
	nbuckets = max(nbuckets, minBuckets)
	return &table[K, V]{
		buckets: make([]bucket[K, V], nbuckets),
		mask:    uint64(nbuckets - 1),
		seeds:   newSeeds(),
	}
}

// minBuckets is the smallest table: two buckets, so that alt never returns
// the bucket it is given.
const minBuckets = 2

// tagOf returns the tag of hash h: its top byte, with 0 (the empty mark)
// folded onto 1.
func tagOf[W word](h W) uint8 {
	tag := uint8(h >> 56)
	if tag == 0 {
		tag = 1
	}
	return tag
}

// alt returns the other bucket of an entry with tag in bucket i:
// i XOR an odd offset derived from the tag alone (partial-key cuckoo
// hashing), so a displacement search needs only the tags. It is an
// involution, alt(alt(i, tag), tag) == i, and alt(i, tag) != i because the
// offset is odd and mask >= 1.
func (t *table[K, V]) alt(i uint64, tag uint8) uint64 {
	return i ^ (uint64(tag)*0x9e3779b97f4a7c15>>32|1)&t.mask
}

// move moves the entry in slot si of bucket src to the free slot di of
// bucket dst, where dst == alt(src, tag). The caller holds both locks.
// The entry arrives before it departs, so it is never absent; in between,
// src's version is bumped, so that a reader who searched dst before the
// arrival and src after the departure sees the change and searches again
// (see table.lookup for the argument).
//
// The entry goes from its first bucket to its second, or back, so the
// first bucket's overflow count goes up before the arrival, or down after
// the departure.
func (t *table[K, V]) move(src *bucket[K, V], si int, dst *bucket[K, V], di int) {
	tags := src.loadTags()
	tag := tagAt(tags, si)
	back := isAlt(tags, si) // src is the entry's second bucket, dst its first
	if !back {
		src.addOverflow(tag, +1)
	}
	dst.fill(di, tag, src.slots[si].Load(), !back) // arrival
	atomic.AddUint64(&src.version, 2)              // still locked (odd), and changed
	src.empty(si)                                  // departure
	if back {
		dst.addOverflow(tag, -1)
	}
}

// at returns &t.buckets[i] for i <= t.mask, without the bounds check that
// Load would otherwise make twice.
func (t *table[K, V]) at(i uint64) *bucket[K, V] {
	// Safety: i <= t.mask == len(t.buckets)-1, and a bucket is bucketSize
	// bytes (TestBucketSize), so the address is inside the array.
	return (*bucket[K, V])(unsafe.Add(unsafe.Pointer(unsafe.SliceData(t.buckets)), uintptr(i)*bucketSize))
}

// slot returns &b.slots[j] for j < slotsPerBucket, without a bounds check:
// j comes from a lane of a tags word masked to the slots' lanes.
func (b *bucket[K, V]) slot(j int) *atomic.Pointer[entry[K, V]] {
	// Safety: 0 <= j < slotsPerBucket, and slots are pointer-sized
	// (TestBucketSize).
	return (*atomic.Pointer[entry[K, V]])(unsafe.Add(unsafe.Pointer(&b.slots), uintptr(j)*ptrSize))
}

// stashed returns the stash, possibly empty.
func (t *table[K, V]) stashed() []*entry[K, V] {
	if p := t.stash.Load(); p != nil {
		return *p
	}
	return nil
}

// findStash returns key's entry in the stash, or nil. It loads the stash
// once: an index into one stash slice means nothing in the next.
func (t *table[K, V]) findStash(key K) *entry[K, V] {
	if _, e := stashIndex(t.stashed(), key); e != nil {
		return e
	}
	return nil
}

// stashIndex returns the index and entry of key in stash s, or -1, nil.
func stashIndex[K comparable, V any](s []*entry[K, V], key K) (int, *entry[K, V]) {
	for i, e := range s {
		if e.key == key {
			return i, e
		}
	}
	return -1, nil
}

// setStash stores e for key in the stash: replaces key's entry, appends
// e if key is not there, or removes key's entry if e is nil. The caller
// holds the locks of key's buckets, so nobody else changes key's place in the
// stash; other keys' entries may come and go meanwhile (under stashMu), so
// the stash is searched again here rather than trusting an earlier index.
func (t *table[K, V]) setStash(key K, e *entry[K, V]) {
	t.stashMu.Lock()
	defer t.stashMu.Unlock()
	old := t.stashed()
	i, _ := stashIndex(old, key)
	var s []*entry[K, V]
	switch {
	case i < 0 && e == nil:
		return
	case i < 0:
		s = append(append(make([]*entry[K, V], 0, len(old)+1), old...), e)
	case e == nil:
		s = append(append(make([]*entry[K, V], 0, len(old)-1), old[:i]...), old[i+1:]...)
	default:
		s = append([]*entry[K, V](nil), old...)
		s[i] = e
	}
	if len(s) == 0 {
		t.stash.Store(nil)
	} else {
		t.stash.Store(&s)
	}
}
