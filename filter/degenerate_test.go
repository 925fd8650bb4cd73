package filter_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/hashing"
	"github.com/cuckoohash/cuckoo/internal/modeltest"
)

// degenerateHashes replace the key hash to force the paths a good hash
// rarely takes: every key in one bucket pair with one fingerprint, a few
// hundred distinct hashes, a bucket index that is always 0, a fingerprint
// that is always 1. Under them ErrFull is a legitimate answer and false
// positives are the rule; what must still hold is that the filter never
// loses a key it accepted, never undercounts, keeps its invariants, leaves
// itself unchanged when it refuses, and deletes every key it holds.
var degenerateHashes = []struct {
	name string
	fn   func(key []byte, seed uint64) uint64
}{
	{"constant", func([]byte, uint64) uint64 { return 0x0123456789abcdef }},
	// 8 and 16 bits of the real hash in the low bits: the index (from the
	// high 32 bits) is always 0, the fingerprint takes 256 or 65536 values.
	{"low8", func(k []byte, s uint64) uint64 { return hashing.Key(k, s) & 0xff }},
	{"low16", func(k []byte, s uint64) uint64 { return hashing.Key(k, s) & 0xffff }},
	// 8 bits of the real hash spread over all 64: 256 distinct, well-mixed
	// hashes, so keys collide in both bucket and fingerprint.
	{"spread8", func(k []byte, s uint64) uint64 { return (hashing.Key(k, s)&0xff + 1) * 0x9e3779b97f4a7c15 }},
	// The high 16 bits only: the fingerprint is always 1.
	{"high16", func(k []byte, s uint64) uint64 { return hashing.Key(k, s) &^ (1<<48 - 1) }},
}

// withHash runs fn with the key hash replaced.
func withHash(t *testing.T, fn func(key []byte, seed uint64) uint64, body func(t *testing.T)) {
	t.Helper()
	restore := filter.SetHash(fn)
	defer restore()
	body(t)
}

// TestDegenerateModel runs the model-based random-operation loop under every
// degenerate hash, for every bucket size, several widths and both
// displacement strategies.
func TestDegenerateModel(t *testing.T) {
	ops := scaled(3000, 3)
	for _, h := range degenerateHashes {
		withHash(t, h.fn, func(t *testing.T) {
			for _, b := range []int{2, 4, 8} {
				for _, fb := range []int{4, 8, 13, 32} {
					for _, walk := range []bool{false, true} {
						name := fmt.Sprintf("hash=%s/b=%d/f=%d/walk=%v", h.name, b, fb, walk)
						t.Run(name, func(t *testing.T) {
							f := mustNew(t, filter.Config{Capacity: 60, BucketSize: b, FingerprintBits: fb, MaxKicks: 50, Seed: 1})
							if walk {
								f.UseRandomWalk()
							}
							m := newFilterModel(t, f)
							r := rand.New(rand.NewPCG(uint64(b*fb), 9))
							for range ops {
								// Inserts outnumber deletes, so the filter
								// fills until it refuses.
								op := []int{modeltest.OpInsert, modeltest.OpInsert, modeltest.OpInsertUnique, modeltest.OpContains, modeltest.OpDelete, modeltest.OpCount}[r.IntN(6)]
								m.Apply(op, []byte{byte(r.IntN(200))})
							}
							if m.Total == 0 {
								t.Fatal("no insert succeeded")
							}
							t.Logf("%d keys held, %d inserts refused", m.Total, m.Refused)
						})
					}
				}
			}
		})
	}
}

// TestDegenerateFillAndDrain inserts distinct keys until the first ErrFull,
// checks every accepted key, round-trips the filter through its encoding,
// and deletes every accepted key, after which the filter must be empty.
func TestDegenerateFillAndDrain(t *testing.T) {
	for _, h := range degenerateHashes {
		withHash(t, h.fn, func(t *testing.T) {
			for _, b := range []int{2, 4, 8} {
				for _, fb := range []int{4, 12, 32} {
					t.Run(fmt.Sprintf("hash=%s/b=%d/f=%d", h.name, b, fb), func(t *testing.T) {
						fillAndDrain(t, mustNew(t, filter.Config{Capacity: 200, BucketSize: b, FingerprintBits: fb, Seed: 5}))
					})
				}
			}
		})
	}
}

func fillAndDrain(t *testing.T, f *filter.Filter) {
	var accepted [][]byte
	for i := 0; ; i++ {
		k := fmt.Appendf(nil, "fill-%d", i)
		before := mustMarshal(t, f)
		err := f.Insert(k)
		if errors.Is(err, filter.ErrFull) {
			if !bytes.Equal(before, mustMarshal(t, f)) {
				t.Fatal("a refused insert changed the filter")
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		accepted = append(accepted, k)
		check(t, f)
		if uint64(i) > f.Slots()+1 {
			t.Fatalf("%d inserts accepted into %d slots and a victim", i, f.Slots())
		}
	}
	if f.Len() != uint64(len(accepted)) {
		t.Fatalf("Len = %d after %d accepted inserts", f.Len(), len(accepted))
	}
	out := make([]bool, len(accepted))
	f.ContainsBatch(accepted, out)
	for i, k := range accepted {
		if !f.Contains(k) || !out[i] || f.Count(k) < 1 {
			t.Fatalf("accepted key %q: Contains %v, batch %v, Count %d", k, f.Contains(k), out[i], f.Count(k))
		}
	}
	enc := mustMarshal(t, f)
	var g filter.Filter
	if err := g.UnmarshalBinary(enc); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	for _, k := range accepted {
		if !g.Contains(k) {
			t.Fatalf("decoded filter lost %q", k)
		}
	}
	for i, k := range accepted {
		if !f.Delete(k) {
			t.Fatalf("Delete of accepted key %d (%q) = false", i, k)
		}
		check(t, f)
	}
	if f.Len() != 0 || f.VictimUsed() {
		t.Fatalf("after deleting every accepted key: Len %d, victim %v", f.Len(), f.VictimUsed())
	}
	for _, k := range accepted {
		if f.Contains(k) {
			t.Fatalf("%q found in an empty filter", k)
		}
	}
}

// TestDegenerateScalable runs the model on a Scalable under the degenerate
// hashes. Under the constant hash each stage holds only 2b+1 keys, so the
// number of inserts is kept small: stages double in size each time.
func TestDegenerateScalable(t *testing.T) {
	for _, h := range degenerateHashes {
		withHash(t, h.fn, func(t *testing.T) {
			for _, b := range []int{2, 4, 8} {
				t.Run(fmt.Sprintf("hash=%s/b=%d", h.name, b), func(t *testing.T) {
					s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 4, BucketSize: b, FalsePositiveRate: 0.1, Seed: 2})
					m := newScalableModel(t, s)
					r := rand.New(rand.NewPCG(uint64(b), 3))
					inserts := 0
					for inserts < 6*b {
						op := []int{modeltest.OpInsert, modeltest.OpInsert, modeltest.OpInsertUnique, modeltest.OpContains, modeltest.OpDelete, modeltest.OpCount}[r.IntN(6)]
						if op == modeltest.OpInsert || op == modeltest.OpInsertUnique {
							inserts++
						}
						m.Apply(op, []byte{byte(r.IntN(50))})
					}
					t.Logf("%d keys in %d stages", m.Total, s.Stages())
				})
			}
		})
	}
}
