package filter

import (
	"errors"
	"fmt"
)

// The methods in this file expose the table itself, for code that moves
// fingerprints between filter implementations (the lockfree package loads a
// Filter built offline and saves itself as one). Most users need none of
// them.

// Fingerprint returns the fingerprint in slot j of bucket i, 0 if the slot
// is empty. A semi-sorted or ranked bucket's slots are in ascending order,
// empty ones first. It panics if i or j is out of range.
func (f *Filter) Fingerprint(i uint64, j int) uint32 {
	if i >= f.t.buckets || j < 0 || j >= int(f.t.slots) {
		panic(fmt.Sprintf("filter: Fingerprint(%d, %d) out of range (%d buckets of %d slots)", i, j, f.t.buckets, f.t.slots))
	}
	return f.t.slot(i, uint(j))
}

// Victim returns the fingerprint in the victim slot and the bucket recorded
// with it; ok is false if the slot is empty.
func (f *Filter) Victim() (bucket uint64, fp uint32, ok bool) {
	return f.victim.bucket, f.victim.fp, f.victim.used
}

// InsertFingerprint stores fingerprint fp, whose buckets are i and
// its alternate, as Insert would store a key with that bucket and
// fingerprint (the alternate of a ranked filter is hashing.AltMixed's).
// It returns ErrFull, leaving the filter unchanged, when there is no room.
func (f *Filter) InsertFingerprint(i uint64, fp uint32) error {
	if i >= f.t.buckets {
		return fmt.Errorf("filter: InsertFingerprint: bucket %d out of range (%d buckets)", i, f.t.buckets)
	}
	if fp == 0 || uint64(fp) > f.t.fpMax {
		return errors.New("filter: InsertFingerprint: fingerprint 0 or wider than the filter's")
	}
	return f.insert(i, fp)
}
