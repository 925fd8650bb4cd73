package hashmap

import (
	"errors"
	"fmt"
	"unsafe"
)

// Test hooks.
const (
	SlotsPerBucket = slotsPerBucket
	MaxPathLen     = maxPathLen
)

// BucketSizes are the sizes of buckets of a few instantiations, and of
// their slots; BucketSize is the size that Load's unchecked addressing
// (table.at, bucket.slot) assumes.
var BucketSizes = []uintptr{
	unsafe.Sizeof(bucket[int, int]{}),
	unsafe.Sizeof(bucket[string, [3]string]{}),
	unsafe.Sizeof(bucket[int8, struct{}]{}),
}

// SlotSize is a slot's size, and PtrSize the size bucket.slot assumes.
var SlotSize = unsafe.Sizeof(bucket[string, int]{}.slots[0])

const PtrSize = ptrSize

const BucketSize = bucketSize

// MatchTag is the SWAR tag match of a tags word.
func MatchTag(tags uint64, tag uint8) uint64 { return matchTag(tags, tag) }

// Mix is the integer hash, for tests that build degenerate hashers from it.
func Mix(x, seed uint64) uint64 { return mix(x, seed) }

// CheckInvariants checks the map's table with every lock held:
//   - a slot's tag is 0 exactly when its pointer is nil;
//   - every entry sits in one of its two buckets, under its own tag;
//   - alt is an involution and never returns the bucket it is given;
//   - no key is in two slots, or in a slot and the stash;
//   - Len equals the number of entries.
func (m *Map[K, V]) CheckInvariants() error {
	t := m.lockAll()
	defer t.unlockAll()
	if len(t.buckets) < minBuckets || len(t.buckets)&(len(t.buckets)-1) != 0 || t.mask != uint64(len(t.buckets)-1) {
		return fmt.Errorf("table of %d buckets, mask %#x", len(t.buckets), t.mask)
	}
	for tag := 1; tag < 256; tag++ {
		for _, i := range []uint64{0, t.mask, t.mask / 2} {
			a := t.alt(i, uint8(tag))
			if a == i || a > t.mask || t.alt(a, uint8(tag)) != i {
				return fmt.Errorf("alt(%d, %d) = %d, alt of that = %d", i, tag, a, t.alt(a, uint8(tag)))
			}
		}
	}
	seen := make(map[K]string)
	overflows := make(map[[2]uint64]uint64) // by first bucket and tag class
	var errs []error
	for i := range t.buckets {
		b := &t.buckets[i]
		tags := b.loadTags()
		for j := range slotsPerBucket {
			if tagAt(tags, j) == 0 && isAlt(tags, j) {
				errs = append(errs, fmt.Errorf("bucket %d slot %d: empty with its alt bit set", i, j))
			}
		}
		for j := range b.slots {
			e, tag := b.slots[j].Load(), tagAt(tags, j)
			if (e == nil) != (tag == 0) {
				errs = append(errs, fmt.Errorf("bucket %d slot %d: tag %d with entry %v", i, j, tag, e))
				continue
			}
			if e == nil {
				continue
			}
			where := fmt.Sprintf("bucket %d slot %d", i, j)
			h := m.hash(t, e.key)
			if tagOf(h) != tag {
				errs = append(errs, fmt.Errorf("%s: key %v has tag %d, slot says %d", where, e.key, tagOf(h), tag))
			}
			i1 := h & t.mask
			if uint64(i) != i1 && uint64(i) != t.alt(i1, tagOf(h)) {
				errs = append(errs, fmt.Errorf("%s: key %v belongs in %d or %d", where, e.key, i1, t.alt(i1, tagOf(h))))
			}
			if isAlt(tags, j) != (uint64(i) != i1) {
				errs = append(errs, fmt.Errorf("%s: key %v: alt bit %v, first bucket %d", where, e.key, isAlt(tags, j), i1))
			}
			if uint64(i) != i1 {
				overflows[[2]uint64{i1, uint64(tag & 3)}]++
			}
			if w, dup := seen[e.key]; dup {
				errs = append(errs, fmt.Errorf("%s: key %v also in %s", where, e.key, w))
			}
			seen[e.key] = where
		}
	}
	for i := range t.buckets {
		// A count that reached ovfMax saturates and stays there: it no
		// longer knows how many keys overflowed, so it never decrements,
		// and lookups of its class then always read the second bucket,
		// which is safe whatever the true count (addOverflow). Below
		// ovfMax it is exact.
		for class := range uint8(4) {
			got, want := overflow(t.buckets[i].loadTags(), class), overflows[[2]uint64{uint64(i), uint64(class)}]
			if got != want && got != ovfMax {
				errs = append(errs, fmt.Errorf("bucket %d: overflow count %d for class %d, %d keys overflowed", i, got, class, want))
			}
		}
	}
	for i, e := range t.stashed() {
		if w, dup := seen[e.key]; dup {
			errs = append(errs, fmt.Errorf("stash %d: key %v also in %s", i, e.key, w))
		}
		seen[e.key] = fmt.Sprintf("stash %d", i)
	}
	if n := m.Len(); n != len(seen) {
		errs = append(errs, fmt.Errorf("Len() = %d, table holds %d", n, len(seen)))
	}
	return errors.Join(errs...)
}
