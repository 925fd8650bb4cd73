package filter

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/internal/hashing"
)

// SetHash replaces the key hash for the rest of a test; restore undoes it.
func SetHash(fn func(key []byte, seed uint64) uint64) (restore func()) {
	oldKey, oldString := hashKey, hashString
	hashKey = fn
	hashString = func(s string, seed uint64) uint64 { return fn([]byte(s), seed) }
	return func() { hashKey, hashString = oldKey, oldString }
}

// UseRandomWalk makes f displace fingerprints by random walk instead of the
// breadth-first path search.
func (f *Filter) UseRandomWalk() { f.strategy = randomWalk }

// CheckInvariants returns the first broken invariant of f, or nil:
//   - every slot holds 0 or an f-bit fingerprint;
//   - alt is an involution on every stored fingerprint, within [0, m);
//   - the count equals the stored fingerprints plus the victim;
//   - an unused victim is zero, a used one is a valid fingerprint and bucket;
//   - the bits after the last slot and the slack bytes are zero.
func (f *Filter) CheckInvariants() error {
	t := &f.t
	var used uint64
	for i := range t.buckets {
		for j := range t.slots {
			fp := t.slot(i, j)
			if fp == 0 {
				continue
			}
			used++
			if uint64(fp) > t.fpMask {
				return fmt.Errorf("bucket %d slot %d: fingerprint %#x wider than %d bits", i, j, fp, t.bits)
			}
			alt := hashing.Alt(i, fp, t.buckets)
			if alt >= t.buckets {
				return fmt.Errorf("bucket %d slot %d: alt %d out of range", i, j, alt)
			}
			if back := hashing.Alt(alt, fp, t.buckets); back != i {
				return fmt.Errorf("bucket %d slot %d: alt(alt) = %d", i, j, back)
			}
			if t.oneWord && t.lanes.Count(t.word(i), fp) != t.count(i, fp) {
				return fmt.Errorf("bucket %d: word and slot views disagree", i)
			}
		}
	}
	v := f.victim
	if v.used {
		used++
		if v.fp == 0 || uint64(v.fp) > t.fpMask || v.bucket >= t.buckets {
			return fmt.Errorf("victim %+v invalid", v)
		}
	} else if v != (victim{}) {
		return fmt.Errorf("unused victim %+v not zero", v)
	}
	if used != f.count {
		return fmt.Errorf("count %d, table and victim hold %d", f.count, used)
	}
	packed := t.packed()
	if tail := t.buckets * uint64(t.slots) * uint64(t.bits) % 8; tail != 0 && packed[len(packed)-1]>>tail != 0 {
		return fmt.Errorf("bits after the last slot set")
	}
	for _, b := range t.data[len(packed):] {
		if b != 0 {
			return fmt.Errorf("slack bytes set")
		}
	}
	return nil
}

// Locate exposes a key's primary bucket and fingerprint.
func (f *Filter) Locate(key []byte) (uint64, uint32) { return f.locate(hashKey(key, f.seed)) }

// Alt exposes the alternate bucket of fingerprint fp in bucket i.
func Alt(f *Filter, i uint64, fp uint32) uint64 { return f.alt(i, fp) }
