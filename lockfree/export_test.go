package lockfree

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/internal/kcas"
)

// SetHash replaces the key hash for the rest of a test; restore undoes it.
// It must not run concurrently with any use of a Filter.
func SetHash(fn func(key []byte, seed uint64) uint64) (restore func()) {
	oldKey, oldString := hashKey, hashString
	hashKey = fn
	hashString = func(s string, seed uint64) uint64 { return fn([]byte(s), seed) }
	return func() { hashKey, hashString = oldKey, oldString }
}

// CheckInvariants returns the first broken invariant of f, or nil. It must
// run at quiescence (no method of f running):
//   - no bucket word is marked by a K-CAS;
//   - the bits between the counter and the mark are as the layout says
//     (the mark bit clear);
//   - every slot holds 0 or an f-bit fingerprint;
//   - alt is an involution on every stored fingerprint, within [0, m);
//   - the occupied slots add up to Len;
//   - every bucket holding a fingerprint lies in a block marked written.
func (f *Filter) CheckInvariants() error {
	var used uint64
	for i := range f.m {
		v := f.words[i].Load()
		if f.l.fingerprints(v) != 0 && !f.marks.Marked(i) {
			return fmt.Errorf("bucket %d holds %#x in a block never marked written", i, f.l.fingerprints(v))
		}
		if kcas.IsMarked(v) {
			return fmt.Errorf("bucket %d: word %#x still marked at quiescence", i, v)
		}
		for j := range f.l.slots {
			fp := f.l.slot(v, j)
			if fp == 0 {
				continue
			}
			used++
			if uint64(fp) > f.l.fpMask {
				return fmt.Errorf("bucket %d slot %d: fingerprint %#x wider than %d bits", i, j, fp, f.l.bits)
			}
			alt := f.alt(i, fp)
			if alt >= f.m {
				return fmt.Errorf("bucket %d slot %d: alt %d out of range [0, %d)", i, j, alt, f.m)
			}
			if back := f.alt(alt, fp); back != i {
				return fmt.Errorf("bucket %d slot %d: fingerprint %#x: alt(alt) = %d", i, j, fp, back)
			}
		}
	}
	sum := f.count.load()
	if sum < 0 || uint64(sum) != used {
		return fmt.Errorf("the stripe counts add up to %d, the table holds %d fingerprints", sum, used)
	}
	if f.Len() != used {
		return fmt.Errorf("Len = %d, the table holds %d fingerprints", f.Len(), used)
	}
	return nil
}

// Locate exposes a key's primary bucket and fingerprint.
func (f *Filter) Locate(key []byte) (uint64, uint32) { return f.locate(hashKey(key, f.layout.Seed)) }

// Alt exposes the alternate bucket of fingerprint fp in bucket i.
func (f *Filter) Alt(i uint64, fp uint32) uint64 { return f.alt(i, fp) }

// BucketSlots returns bucket i's fingerprints, read through any K-CAS in
// flight.
func (f *Filter) BucketSlots(i uint64) []uint32 {
	v := f.load(i)
	out := make([]uint32, f.l.slots)
	for j := range out {
		out[j] = f.l.slot(v, uint(j))
	}
	return out
}

// Move migrates fingerprint fp from slot s of bucket x to a free slot of
// bucket y (its alternate) with one K-CAS, as a displacement step does, and
// reports whether it did.
func (f *Filter) Move(x uint64, s int, fp uint32, y uint64) bool {
	return f.shift([]step{{from: x, to: y, fp: fp, slot: uint(s)}}, 0)
}
