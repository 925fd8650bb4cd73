package hashmap

import (
	"errors"
	"fmt"
)

// Test hooks.
const (
	SlotsPerBucket = slotsPerBucket
	MaxPathLen     = maxPathLen
)

// Mix is the integer hash, for tests that build degenerate hashers from it.
func Mix(x, seed uint64) uint64 { return mix(x, seed) }

// CheckInvariants checks the map's table with every lock held:
//   - a slot's tag is 0 exactly when its pointer is nil;
//   - every entry sits in one of its two buckets, under its own tag;
//   - alt is an involution and never returns the bucket it is given;
//   - no key is in two slots, or in a slot and the stash;
//   - Len equals the number of entries.
func (m *Map[K, V]) CheckInvariants() error {
	m.lockAll()
	defer m.unlockAll()
	t := m.table.Load()
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
	var errs []error
	for i := range t.buckets {
		b := &t.buckets[i]
		tags := b.tags.Load()
		if tags>>(8*slotsPerBucket) != 0 {
			errs = append(errs, fmt.Errorf("bucket %d: unused tag lanes set: %#x", i, tags))
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
			if i1 := h & t.mask; uint64(i) != i1 && uint64(i) != t.alt(i1, tagOf(h)) {
				errs = append(errs, fmt.Errorf("%s: key %v belongs in %d or %d", where, e.key, i1, t.alt(i1, tagOf(h))))
			}
			if w, dup := seen[e.key]; dup {
				errs = append(errs, fmt.Errorf("%s: key %v also in %s", where, e.key, w))
			}
			seen[e.key] = where
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
