package lockfree_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/hashing"
	"github.com/cuckoohash/cuckoo/internal/modeltest"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// The model checker is internal/modeltest's, shared with package filter;
// this file adapts Filter to it. A migration moves fingerprints within their
// bucket pairs, so the model's view of the content is the multiset of pairs
// (a refused insert may have migrated fingerprints and still changed
// nothing).

func newModel(t testing.TB, f *lockfree.Filter) *modeltest.Model {
	return modeltest.New(t, f, func() any { return content(f) }, f.CheckInvariants)
}

// pair identifies the slots a fingerprint may occupy: its unordered bucket
// pair and the fingerprint. A migration moves a fingerprint within its
// pair, so the multiset of pairs is the filter's logical content.
type pair struct {
	lo, hi uint64
	fp     uint32
}

func pairOf(f *lockfree.Filter, key []byte) pair {
	i1, fp := f.Locate(key)
	i2 := f.Alt(i1, fp)
	return pair{min(i1, i2), max(i1, i2), fp}
}

// content returns the multiset of pairs the filter holds.
func content(f *lockfree.Filter) map[pair]int {
	c := map[pair]int{}
	for i := range f.Buckets() {
		for _, fp := range f.BucketSlots(i) {
			if fp != 0 {
				a := f.Alt(i, fp)
				c[pair{min(i, a), max(i, a), fp}]++
			}
		}
	}
	return c
}

// maxBits is the widest fingerprint New packs for each bucket size: the b
// fingerprints must leave 15 of 63 bits for the migration counter.
var maxBits = map[int]int{2: 24, 4: 12, 8: 6}

// modelWidths returns the fingerprint widths the model tests run with b
// slots: the narrowest, the widest, and for 2 slots the widths New picks
// for rates 0.001 and 0.0001.
func modelWidths(b int) []int {
	if b == 2 {
		return []int{4, 12, 16, maxBits[b]}
	}
	return []int{4, maxBits[b]}
}

func FuzzModel(f *testing.F) {
	f.Add([]byte{0x01, 8, 20, 1, 0, 1, 0, 1, 3, 1, 2, 1, 4, 1})
	f.Add([]byte{0x00, 0, 0, 0, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 3, 7, 3, 7})
	f.Add([]byte{0x02, 2, 63, 9, 0, 1, 0, 2, 0, 3, 1, 1, 3, 2, 4, 3})
	f.Add([]byte{0x41, 0, 3, 5, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8, 3, 1, 3, 2})
	// Fills to ErrFull through many migrations, then empties.
	f.Add(modeltest.FillAndDrain([4]byte{0x01, 8, 40, 2}, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _, ops := modeltest.FuzzConfig(data, func(b int) int { return maxBits[b] })
		flt, err := lockfree.New(cfg)
		if err != nil {
			t.Fatalf("New(%+v): %v", cfg, err)
		}
		m := newModel(t, flt)
		m.Run(ops[:min(len(ops), 2*modeltest.MaxFuzzOps)], 256)
	})
}

// TestModel runs the model loop on random operations over several shapes,
// until the filters are full and past it.
func TestModel(t *testing.T) {
	ops := 4000
	if testing.Short() {
		ops = 1500
	}
	for _, b := range []int{2, 4, 8} {
		for _, fb := range modelWidths(b) {
			t.Run(fmt.Sprintf("b=%d/f=%d", b, fb), func(t *testing.T) {
				runRandomModel(t, filter.Config{Capacity: 100, BucketSize: b, FingerprintBits: fb, Seed: 1}, ops, 250)
			})
		}
	}
}

// runRandomModel applies ops random operations, inserts outnumbering
// deletes so that the filter fills until it refuses, on keySpace keys.
func runRandomModel(t *testing.T, cfg filter.Config, ops, keySpace int) *modeltest.Model {
	t.Helper()
	f := mustNew(t, cfg)
	m := newModel(t, f)
	r := rand.New(rand.NewPCG(uint64(cfg.BucketSize*cfg.FingerprintBits), 9))
	for range ops {
		op := []int{modeltest.OpInsert, modeltest.OpInsert, modeltest.OpInsertUnique, modeltest.OpContains, modeltest.OpDelete, modeltest.OpCount}[r.IntN(6)]
		m.Apply(op, []byte{byte(r.IntN(keySpace))})
	}
	if m.Total == 0 {
		t.Fatal("no insert succeeded")
	}
	t.Logf("%d keys held, %d inserts refused, load %.3f", m.Total, m.Refused, f.LoadFactor())
	return m
}

// degenerateHashes replace the key hash to force the paths a good hash
// rarely takes: every key in one bucket pair with one fingerprint, 256
// distinct hashes in bucket 0, 256 well-mixed hashes, a fingerprint that is
// always 1. ErrFull and false positives are then legitimate; losing an
// accepted key, undercounting or breaking an invariant is not.
var degenerateHashes = []struct {
	name string
	fn   func(key []byte, seed uint64) uint64
}{
	{"constant", func([]byte, uint64) uint64 { return 0x0123456789abcdef }},
	{"low8", func(k []byte, s uint64) uint64 { return hashing.Key(k, s) & 0xff }},
	{"spread8", func(k []byte, s uint64) uint64 { return (hashing.Key(k, s)&0xff + 1) * 0x9e3779b97f4a7c15 }},
	{"high16", func(k []byte, s uint64) uint64 { return hashing.Key(k, s) &^ (1<<48 - 1) }},
}

// withHash runs body with the key hash replaced.
func withHash(t *testing.T, fn func(key []byte, seed uint64) uint64, body func(t *testing.T)) {
	t.Helper()
	restore := lockfree.SetHash(fn)
	defer restore()
	body(t)
}

// TestDegenerateModel runs the model loop under every degenerate hash.
func TestDegenerateModel(t *testing.T) {
	ops := 2000
	if testing.Short() {
		ops = 600
	}
	for _, h := range degenerateHashes {
		withHash(t, h.fn, func(t *testing.T) {
			for _, b := range []int{2, 4, 8} {
				for _, fb := range modelWidths(b) {
					t.Run(fmt.Sprintf("hash=%s/b=%d/f=%d", h.name, b, fb), func(t *testing.T) {
						runRandomModel(t, filter.Config{Capacity: 60, BucketSize: b, FingerprintBits: fb, MaxKicks: 50, Seed: 1}, ops, 200)
					})
				}
			}
		})
	}
}

// TestDegenerateFillAndDrain inserts distinct keys under every degenerate
// hash until the filter refuses, checks that every accepted key is found,
// then deletes them all: the filter must end empty.
func TestDegenerateFillAndDrain(t *testing.T) {
	for _, h := range degenerateHashes {
		withHash(t, h.fn, func(t *testing.T) {
			t.Run("hash="+h.name, func(t *testing.T) {
				forShapes(t, func(t *testing.T, s shape) {
					f := mustNew(t, s.config(500, 2))
					ks := keys(600, 8)
					var in [][]byte
					for _, k := range ks {
						err := f.Insert(k)
						if errors.Is(err, lockfree.ErrFull) {
							continue
						}
						if err != nil {
							t.Fatal(err)
						}
						in = append(in, k)
					}
					if err := f.CheckInvariants(); err != nil {
						t.Fatal(err)
					}
					if f.Len() != uint64(len(in)) {
						t.Fatalf("Len = %d after %d accepted inserts", f.Len(), len(in))
					}
					for _, k := range in {
						if !f.Contains(k) {
							t.Fatalf("accepted key %x not found", k)
						}
					}
					for _, k := range in {
						if !f.Delete(k) {
							t.Fatalf("Delete of accepted key %x failed", k)
						}
					}
					if err := f.CheckInvariants(); err != nil {
						t.Fatal(err)
					}
					if f.Len() != 0 {
						t.Fatalf("Len = %d after deleting every key", f.Len())
					}
					t.Logf("%d of %d keys accepted", len(in), len(ks))
				})
			})
		})
	}
}
