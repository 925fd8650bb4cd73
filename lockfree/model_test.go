package lockfree_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/hashing"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// This file holds the single-goroutine model checker, shared by FuzzModel
// and the degenerate-hash tests: each operation is applied both to a Filter
// and to a map[string]int multiset of the keys it accepted, and after each
// one the filter must agree with the model wherever a cuckoo filter
// promises to: no false negatives, Count at least the model's count,
// Delete of a held key succeeds, Len exact, invariants intact.

// Operations of the model loop, decoded from one byte.
const (
	opInsert = iota
	opInsertUnique
	opContains
	opDelete
	opCount
	numOps
)

var opNames = [numOps]string{"Insert", "InsertUnique", "Contains", "Delete", "Count"}

// model checks a Filter against a multiset of the keys it accepted.
type model struct {
	t      testing.TB
	f      *lockfree.Filter
	counts map[string]int
	total  uint64
	// step counts operations and op names the current one, for messages.
	step int
	op   string
	// refused counts inserts refused with ErrFull.
	refused int
}

func newModel(t testing.TB, f *lockfree.Filter) *model {
	return &model{t: t, f: f, counts: map[string]int{}}
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
		for _, fp := range f.Slots(i) {
			if fp != 0 {
				a := f.Alt(i, fp)
				c[pair{min(i, a), max(i, a), fp}]++
			}
		}
	}
	return c
}

// apply runs one operation on key and checks the result against the model.
func (m *model) apply(op int, key []byte) {
	m.t.Helper()
	m.step++
	m.op = opNames[op]
	k := string(key)
	held := m.counts[k]
	mutated := false
	switch op {
	case opInsert:
		before := content(m.f)
		err := m.f.Insert(key)
		mutated = m.afterInsert(key, err == nil, err, before)
	case opInsertUnique:
		before := content(m.f)
		present := m.f.Contains(key)
		ok, err := m.f.InsertUnique(key)
		switch {
		case present && (ok || err != nil):
			m.fatalf("InsertUnique(%q) of a key Contains reports = %v, %v; want false, nil", key, ok, err)
		case present:
			m.unchanged(before, "InsertUnique of a present key")
		case !ok && err == nil:
			m.fatalf("InsertUnique(%q) of an absent key = false, nil", key)
		default:
			mutated = m.afterInsert(key, ok, err, before)
		}
	case opContains:
		if held > 0 && !m.f.Contains(key) {
			m.fatalf("false negative: %q inserted %d times is not found", key, held)
		}
	case opDelete:
		switch {
		case held > 0:
			if !m.f.Delete(key) {
				m.fatalf("Delete(%q) = false for a key inserted %d times", key, held)
			}
			m.counts[k]--
			if m.counts[k] == 0 {
				delete(m.counts, k)
			}
			m.total--
			mutated = true
		case m.f.Count(key) == 0:
			// No copy of key's fingerprint: Delete must find none and
			// change nothing. (Deleting a key the model does not hold but
			// whose fingerprint is present would remove another key's
			// copy, which the model cannot follow.)
			before := content(m.f)
			if m.f.Delete(key) {
				m.fatalf("Delete(%q) = true, but Count was 0", key)
			}
			m.unchanged(before, "Delete of an absent key")
		}
	case opCount:
		c := m.f.Count(key)
		if c < held {
			m.fatalf("Count(%q) = %d, below the %d inserts", key, c, held)
		}
		if (c > 0) != m.f.Contains(key) {
			m.fatalf("Count(%q) = %d but Contains = %v", key, c, m.f.Contains(key))
		}
	}
	if mutated {
		m.checkInvariants()
		m.checkAll()
	} else if got := m.f.Len(); got != m.total {
		m.fatalf("Len = %d, the model holds %d", got, m.total)
	}
}

// afterInsert checks the outcome of an insert and reports whether it changed
// the filter. A refused insert may have migrated fingerprints (a round that
// freed a slot and then found the key's buckets full again cannot happen
// with one goroutine, but a chain search may move fingerprints within their
// pairs), so "unchanged" compares the multiset of pairs, not the words.
func (m *model) afterInsert(key []byte, ok bool, err error, before map[pair]int) bool {
	m.t.Helper()
	switch {
	case ok && err == nil:
		m.counts[string(key)]++
		m.total++
		return true
	case errors.Is(err, lockfree.ErrFull):
		m.refused++
		m.unchanged(before, "a refused insert")
	default:
		m.fatalf("insert of %q: %v", key, err)
	}
	return false
}

func (m *model) unchanged(before map[pair]int, what string) {
	m.t.Helper()
	if after := content(m.f); !maps.Equal(before, after) {
		m.fatalf("%s changed the filter's content", what)
	}
	m.checkInvariants()
}

func (m *model) checkInvariants() {
	m.t.Helper()
	if err := m.f.CheckInvariants(); err != nil {
		m.fatalf("invariant broken: %v", err)
	}
}

// checkAll checks every key the model holds, and the length.
func (m *model) checkAll() {
	m.t.Helper()
	for k, n := range m.counts {
		key := []byte(k)
		if !m.f.Contains(key) {
			m.fatalf("false negative: %q inserted %d times is not found", key, n)
		}
		if c := m.f.Count(key); c < n {
			m.fatalf("Count(%q) = %d, below the %d inserts", key, c, n)
		}
	}
	if got := m.f.Len(); got != m.total {
		m.fatalf("Len = %d, the model holds %d", got, m.total)
	}
}

func (m *model) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("step %d (%s): "+format, append([]any{m.step, m.op}, args...)...)
}

// run decodes ops as pairs of bytes, (operation, key), over a key space of
// keySpace one-byte keys, so that keys repeat.
func (m *model) run(ops []byte, keySpace int) {
	m.t.Helper()
	for ; len(ops) >= 2; ops = ops[2:] {
		m.apply(int(ops[0])%numOps, []byte{byte(int(ops[1]) % keySpace)})
	}
}

// maxBits is the widest fingerprint New packs for each bucket size: the b
// fingerprints must leave 15 of 63 bits for the migration counter.
var maxBits = map[int]int{2: 24, 4: 12, 8: 6}

// fuzzConfig decodes the first four bytes of a fuzz input into a small
// filter's configuration:
//
//	byte 0: bits 0-1 bucket size (2, 4, 8, 8); bit 6 a small MaxKicks
//	byte 1: fingerprint bits, 4 up to the widest New packs for the size
//	byte 2: capacity 1..64
//	byte 3: seed, and MaxKicks 1..8 when bit 6 of byte 0 is set
func fuzzConfig(data []byte) (cfg filter.Config, rest []byte) {
	var h [4]byte
	copy(h[:], data)
	b := [4]int{2, 4, 8, 8}[h[0]&3]
	cfg = filter.Config{
		BucketSize:      b,
		FingerprintBits: 4 + int(h[1])%(maxBits[b]-3),
		Capacity:        1 + uint64(h[2])%64,
		Seed:            uint64(h[3]) * 0x9e3779b97f4a7c15,
	}
	if h[0]&0x40 != 0 {
		cfg.MaxKicks = 1 + int(h[3])%8
	}
	return cfg, data[min(len(data), 4):]
}

// maxFuzzOps bounds the operations one input runs, so that every input is
// quick.
const maxFuzzOps = 512

func FuzzModel(f *testing.F) {
	f.Add([]byte{0x01, 8, 20, 1, 0, 1, 0, 1, 3, 1, 2, 1, 4, 1})
	f.Add([]byte{0x00, 0, 0, 0, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 3, 7, 3, 7})
	f.Add([]byte{0x02, 2, 63, 9, 0, 1, 0, 2, 0, 3, 1, 1, 3, 2, 4, 3})
	f.Add([]byte{0x41, 0, 3, 5, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8, 3, 1, 3, 2})
	// A long run of inserts of distinct keys fills the filter to ErrFull
	// through many migrations, then deletes empty it.
	long := []byte{0x01, 8, 40, 2}
	for i := range 200 {
		long = append(long, opInsert, byte(i))
	}
	for i := range 200 {
		long = append(long, opDelete, byte(i))
	}
	f.Add(long)
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, ops := fuzzConfig(data)
		flt, err := lockfree.New(cfg)
		if err != nil {
			t.Fatalf("New(%+v): %v", cfg, err)
		}
		m := newModel(t, flt)
		m.run(ops[:min(len(ops), 2*maxFuzzOps)], 256)
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
		for _, fb := range []int{4, maxBits[b]} {
			t.Run(fmt.Sprintf("b=%d/f=%d", b, fb), func(t *testing.T) {
				runRandomModel(t, filter.Config{Capacity: 100, BucketSize: b, FingerprintBits: fb, Seed: 1}, ops, 250)
			})
		}
	}
}

// runRandomModel applies ops random operations, inserts outnumbering
// deletes so that the filter fills until it refuses, on keySpace keys.
func runRandomModel(t *testing.T, cfg filter.Config, ops, keySpace int) *model {
	t.Helper()
	f := mustNew(t, cfg)
	m := newModel(t, f)
	r := rand.New(rand.NewPCG(uint64(cfg.BucketSize*cfg.FingerprintBits), 9))
	for range ops {
		op := []int{opInsert, opInsert, opInsertUnique, opContains, opDelete, opCount}[r.IntN(6)]
		m.apply(op, []byte{byte(r.IntN(keySpace))})
	}
	if m.total == 0 {
		t.Fatal("no insert succeeded")
	}
	t.Logf("%d keys held, %d inserts refused, load %.3f", m.total, m.refused, f.LoadFactor())
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
				for _, fb := range []int{4, maxBits[b]} {
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
				f := mustNew(t, filter.Config{Capacity: 500, FingerprintBits: 12, Seed: 2})
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
	}
}
