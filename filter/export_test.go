package filter

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/internal/bipartite"
	"github.com/cuckoohash/cuckoo/internal/linhash"
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
		if t.coded && !t.canonical(i) {
			return fmt.Errorf("bucket %d: %#x is not a sorted coded bucket", i, t.head(i))
		}
		for j := range t.slots {
			fp := t.slot(i, j)
			if fp == 0 {
				continue
			}
			used++
			if uint64(fp) > t.fpMax {
				return fmt.Errorf("bucket %d slot %d: fingerprint %#x above %d", i, j, fp, t.fpMax)
			}
			alt := t.alt(i, fp)
			if alt >= t.buckets {
				return fmt.Errorf("bucket %d slot %d: alt %d out of range", i, j, alt)
			}
			if back := t.alt(alt, fp); back != i {
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
		if v.fp == 0 || uint64(v.fp) > t.fpMax || v.bucket >= t.buckets {
			return fmt.Errorf("victim %+v invalid", v)
		}
	} else if v != (victim{}) {
		return fmt.Errorf("unused victim %+v not zero", v)
	}
	if used != f.count {
		return fmt.Errorf("count %d, table and victim hold %d", f.count, used)
	}
	packed := t.packed()
	if tail := t.buckets * uint64(t.bucketBits) % 8; tail != 0 && packed[len(packed)-1]>>tail != 0 {
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

// MaxStash is the most keys a Scalable keeps beside its table.
const MaxStash = linhash.MaxStash

// CheckInvariants returns the first broken invariant of s's table, or nil:
//   - every used slot has a fingerprint and a tail stop bit;
//   - the entry and per-tail counts equal the slots in use;
//   - the level, split pointer and segments describe 2^L+p buckets, and the
//     bits after the last bucket are zero;
//   - the stash is within its bound, and there are at least Len entries.
func (s *Scalable) CheckInvariants() error {
	t := s.t
	count, byTail := t.count, t.byTail
	if t.geom.Split >= 1<<t.geom.Level || t.geom.Level < s.level0 {
		return fmt.Errorf("level %d split %d (initial level %d)", t.geom.Level, t.geom.Split, s.level0)
	}
	if need := (t.buckets() + 1<<t.segShift - 1) >> t.segShift; uint64(len(t.segs)) != need {
		return fmt.Errorf("%d segments of 2^%d buckets for %d buckets", len(t.segs), t.segShift, t.buckets())
	}
	if err := t.recount(); err != nil {
		return err
	}
	if t.count != count || t.byTail != byTail {
		return fmt.Errorf("counts %d %v, the slots hold %d %v", count, byTail, t.count, t.byTail)
	}
	// Bytes after the table in the last segment are zero too.
	end := t.buckets() * uint64(t.bucketBits)
	last := t.segment(len(t.segs) - 1)
	off := end - uint64(len(t.segs)-1)<<t.segShift*uint64(t.bucketBits)
	for i := (off + 7) / 8; i < uint64(len(last)); i++ {
		if last[i] != 0 {
			return fmt.Errorf("byte %d after the last bucket is %#x", i, last[i])
		}
	}
	if len(t.stash) > linhash.MaxStash {
		return fmt.Errorf("%d stashed keys", len(t.stash))
	}
	if s.items > t.count+uint64(len(t.stash)) {
		return fmt.Errorf("%d keys in %d entries", s.items, t.count+uint64(len(t.stash)))
	}
	return nil
}

// CheckMatching checks that each copy of each key in held (key -> copies)
// can be assigned an entry of its own that matches it, a stashed hash
// counting as an entry (bipartite.Check).
func (s *Scalable) CheckMatching(held map[string]int) error {
	t := s.t
	return bipartite.Check(held, func(key string) []bipartite.Entry {
		k := t.key(s.hash([]byte(key)))
		var out []bipartite.Entry
		for _, m := range t.matchesOf(k, nil) {
			out = append(out, bipartite.Entry{m.Bucket, uint64(m.Slot)})
		}
		for i, h := range t.stash {
			if h == k.h {
				out = append(out, bipartite.Entry{1 << 63, uint64(i)})
			}
		}
		return out
	})
}

// DesignLoad is designLoad, the load a table of b slots of f bits is sized
// for.
func DesignLoad(b, f int) float64 { return designLoad(uint(b), uint(f)) }

// SemiCode is the 12-bit code of the sorted nibbles a <= b <= c <= d.
func SemiCode(a, b, c, d int) uint64 {
	return uint64(codecFor(semiQ).rank(uint32(a), uint32(b), uint32(c), uint32(d)))
}

// RankCode is the code of the sorted values a <= b <= c <= d below q.
func RankCode(q uint, a, b, c, d uint32) uint64 { return uint64(codecFor(q).rank(a, b, c, d)) }

// RankQs are the Q of the ranked tables.
var RankQs = rankQs[:]

// NewRanked returns an empty ranked filter of the given buckets, Q and L,
// whatever the rate.
func NewRanked(buckets uint64, q, low uint, seed uint64) *Filter {
	return newFilter(params{shape: shape{slots: rankSlots, bits: low + qBits(q), q: q},
		capacity: buckets * rankSlots * 96 / 100, buckets: buckets, maxKicks: defaultMaxKicks, seed: seed})
}
