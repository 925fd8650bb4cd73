package keyspace

import (
	"cmp"
	"iter"
	"math/rand/v2"
	"slices"

	"github.com/tidwall/match"
	"github.com/zeebo/xxh3"
)

// The key space's enumerations for KEYS, SCAN and RANDOMKEY: each a pass
// over the live keys (LiveKeys), with no lock; a key written meanwhile may
// or may not be seen, as in Redis.

// RandomKey returns a live key chosen uniformly (reservoir sampling over
// one pass), or false when there is none.
func (s *Store) RandomKey() (string, bool) {
	var pick string
	n := 0
	for k := range s.LiveKeys() {
		n++
		if rand.IntN(n) == 0 {
			pick = k
		}
	}
	return pick, n > 0
}

// Matching returns the live keys that pattern, a KEYS glob, matches.
func (s *Store) Matching(pattern string) []string {
	var out []string
	for k := range s.LiveKeys() {
		if pattern == "*" || match.Match(k, pattern) {
			out = append(out, k)
		}
	}
	return out
}

// Scan is one SCAN call: the live keys of the page at cursor cur (see
// scanPage) that pattern matches, and the next cursor, 0 at the end. The
// map has no iteration cursor, so keys are visited in the order of a fixed
// 64-bit hash of their names, and the cursor is the hash the next call
// starts at: each call returns the keys hashed in [cursor, next), the count
// lowest (all keys that share the last hash, so a tie is never split). The
// ranges of a scan partition the hash space, so a key present for the whole
// scan is returned exactly once, whatever is added or deleted meanwhile, as
// Redis promises. Each call costs a pass over the key space.
func (s *Store) Scan(cur uint64, count int, pattern string) ([]string, uint64) {
	page, next := scanPage(s.LiveKeys(), cur, count)
	out := page[:0]
	for _, k := range page {
		if pattern == "*" || match.Match(k, pattern) {
			out = append(out, k)
		}
	}
	return out, next
}

// scanPage returns the count keys of seq with the lowest scan hashes at or
// above cur, plus every other key sharing the highest of those hashes, and
// the cursor after them: 0 when none are left.
func scanPage[V any](seq iter.Seq2[string, V], cur uint64, count int) ([]string, uint64) {
	type hashed struct {
		h uint64
		k string
	}
	var cands []hashed
	for k := range seq {
		if h := scanHash(k); h >= cur {
			cands = append(cands, hashed{h, k})
		}
	}
	if len(cands) <= count {
		keys := make([]string, len(cands))
		for i, c := range cands {
			keys[i] = c.k
		}
		return keys, 0
	}
	slices.SortFunc(cands, func(x, y hashed) int { return cmp.Compare(x.h, y.h) })
	last := cands[count-1].h
	var keys []string
	for _, c := range cands {
		if c.h > last {
			break
		}
		keys = append(keys, c.k)
	}
	// last+1 wraps to 0, the end, only when last is the highest hash.
	return keys, last + 1
}

// scanHash orders the key space for SCAN; fixed, so cursors outlive a call.
func scanHash(key string) uint64 { return xxh3.HashString(key) }
