package filter_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
)

// This file holds the model-based checker shared by the fuzz tests and the
// degenerate-hash tests: a sequence of operations is applied both to a filter
// and to a map[string]int multiset, and after each one the filter must agree
// with the model wherever a cuckoo filter promises to.

// target is the method set that Filter and Scalable share.
type target interface {
	Insert(key []byte) error
	InsertUnique(key []byte) (bool, error)
	Contains(key []byte) bool
	Delete(key []byte) bool
	Count(key []byte) int
	Len() uint64
	MarshalBinary() ([]byte, error)
}

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

// model checks a target against a multiset of the keys it accepted.
type model struct {
	t      testing.TB
	f      target
	counts map[string]int
	total  uint64
	// fullOK says whether ErrFull may be a legitimate answer; fullAllowed, if
	// set, says for which keys (a Scalable refuses only a key of which its
	// newest stage holds 2b copies, and grows otherwise).
	fullOK      bool
	fullAllowed func(key []byte) bool
	// invariants checks the target's internal invariants after a mutation.
	invariants func() error
	// deletable, if set, says whether deleting a key the model holds is
	// safe to check; see scalableDeleteSafe.
	deletable func(key []byte) bool
	// step counts operations and op names the current one, for messages.
	step int
	op   string
	// refused counts inserts refused with ErrFull.
	refused int
}

func newFilterModel(t testing.TB, f *filter.Filter) *model {
	return &model{t: t, f: f, counts: map[string]int{}, fullOK: true, invariants: f.CheckInvariants}
}

func newScalableModel(t testing.TB, s *filter.Scalable) *model {
	m := &model{t: t, f: s, counts: map[string]int{}, fullOK: true, invariants: func() error { return scalableInvariants(s) }}
	m.fullAllowed = func(key []byte) bool {
		last := s.Stage(s.Stages() - 1)
		return last.Count(key) >= 2*last.BucketSize()
	}
	m.deletable = func(key []byte) bool { return scalableDeleteSafe(s, m.counts, key) }
	return m
}

// scalableInvariants runs CheckInvariants on every stage and checks the
// stages' fingerprint widths.
func scalableInvariants(s *filter.Scalable) error {
	f0 := s.Stage(0).FingerprintBits()
	for i := range s.Stages() {
		st := s.Stage(i)
		if err := st.CheckInvariants(); err != nil {
			return fmt.Errorf("stage %d: %w", i, err)
		}
		if want := min(f0+i, 32); st.FingerprintBits() != want {
			return fmt.Errorf("stage %d has %d-bit fingerprints, want %d", i, st.FingerprintBits(), want)
		}
	}
	return nil
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
		before := m.snapshot()
		err := m.f.Insert(key)
		mutated = m.afterInsert(key, err == nil, err, before)
	case opInsertUnique:
		before := m.snapshot()
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
		case held > 0 && m.deletable != nil && !m.deletable(key):
			// Skipped; see scalableDeleteSafe.
		case held > 0:
			if !m.f.Delete(key) {
				m.fatalf("Delete(%q) = false for a key inserted %d times", key, held)
			}
			m.counts[k]--
			if m.counts[k] == 0 {
				delete(m.counts, k)
			}
			m.total--
			m.checkInvariants()
			mutated = true
		case m.f.Count(key) == 0:
			// A key with no copy of its fingerprint: Delete must find none
			// and change nothing. (Deleting a key the model does not hold
			// but whose fingerprint is present would remove another key's
			// copy, which the model cannot follow.)
			before := m.snapshot()
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
		m.checkAll()
	} else if got := m.f.Len(); got != m.total {
		m.fatalf("Len = %d, the model holds %d", got, m.total)
	}
}

// afterInsert checks the outcome of an insert and reports whether it changed
// the filter.
func (m *model) afterInsert(key []byte, ok bool, err error, before []byte) bool {
	m.t.Helper()
	switch {
	case ok && err == nil:
		m.counts[string(key)]++
		m.total++
		m.checkInvariants()
		return true
	case errors.Is(err, filter.ErrFull) && m.fullOK && (m.fullAllowed == nil || m.fullAllowed(key)):
		m.refused++
		m.unchanged(before, "a refused insert")
	default:
		m.fatalf("insert of %q: %v", key, err)
	}
	return false
}

// snapshot returns the target's encoding, to check that an operation that
// must not change it did not.
func (m *model) snapshot() []byte {
	m.t.Helper()
	b, err := m.f.MarshalBinary()
	if err != nil {
		m.fatalf("MarshalBinary: %v", err)
	}
	return b
}

func (m *model) unchanged(before []byte, what string) {
	m.t.Helper()
	if !bytes.Equal(before, m.snapshot()) {
		m.fatalf("%s changed the filter", what)
	}
	m.checkInvariants()
}

func (m *model) checkInvariants() {
	m.t.Helper()
	if err := m.invariants(); err != nil {
		m.fatalf("invariant broken: %v", err)
	}
}

// checkAll checks every key the model holds and the length.
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

// Scalable.Delete can remove another key's copy from a newer stage, a
// documented hazard (see TestScalableDeleteAcrossStages, which bounds its
// rate). The model therefore only deletes keys whose fingerprint collides
// with no other held key's in any stage, where it cannot occur.

// scalableDeleteSafe reports whether no other key the model holds shares key's
// bucket pair and fingerprint in any stage of s.
func scalableDeleteSafe(s *filter.Scalable, counts map[string]int, key []byte) bool {
	for i := range s.Stages() {
		st := s.Stage(i)
		c := pairOf(st, key)
		for k := range counts {
			if k != string(key) && pairOf(st, []byte(k)) == c {
				return false
			}
		}
	}
	return true
}

// pair identifies the slots a key's fingerprint may occupy: its unordered
// bucket pair and the fingerprint. Keys with equal pairs are
// indistinguishable to a filter.
type pair struct {
	lo, hi uint64
	fp     uint32
}

func pairOf(f *filter.Filter, key []byte) pair {
	i1, fp := f.Locate(key)
	i2 := filter.Alt(f, i1, fp)
	return pair{min(i1, i2), max(i1, i2), fp}
}

// flawedFilter is a Filter with one deliberate defect, to show that the model
// catches it.
type flawedFilter struct {
	*filter.Filter
	flaw    string
	inserts int
}

func (f *flawedFilter) Insert(key []byte) error {
	f.inserts++
	switch {
	case f.flaw == "lose" && f.inserts%5 == 0:
		return nil // claims success, stores nothing
	case f.flaw == "refuse-after-storing" && f.inserts%5 == 0:
		if err := f.Filter.Insert(key); err != nil {
			return err
		}
		return filter.ErrFull
	}
	return f.Filter.Insert(key)
}

func (f *flawedFilter) Delete(key []byte) bool {
	if f.flaw == "delete-twice" {
		f.Filter.Delete(key)
	}
	return f.Filter.Delete(key)
}

func (f *flawedFilter) Count(key []byte) int {
	if f.flaw == "undercount" {
		return min(f.Filter.Count(key), 1)
	}
	return f.Filter.Count(key)
}

// fatalTB records the first Fatalf and stops the model there.
type fatalTB struct {
	testing.TB
	msg string
}

type stopModel struct{}

func (r *fatalTB) Helper() {}

func (r *fatalTB) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(stopModel{})
}

// TestModelDetectsFlaws runs the model against filters with planted defects:
// each must be reported.
func TestModelDetectsFlaws(t *testing.T) {
	for _, c := range []struct{ flaw, want string }{
		{"lose", "false negative"},
		{"refuse-after-storing", "a refused insert changed the filter"},
		{"delete-twice", "below the 2 inserts"},
		{"undercount", "below the"},
	} {
		t.Run(c.flaw, func(t *testing.T) {
			f := &flawedFilter{Filter: mustNew(t, filter.Config{Capacity: 100, Seed: 1}), flaw: c.flaw}
			tb := &fatalTB{TB: t}
			m := &model{t: tb, f: f, counts: map[string]int{}, fullOK: true, invariants: f.CheckInvariants}
			func() {
				defer func() {
					if r := recover(); r != nil {
						if _, ok := r.(stopModel); !ok {
							panic(r)
						}
					}
				}()
				// Inserts of a few keys, repeated, then deletes.
				for i := range 60 {
					m.apply(opInsert, []byte{byte(i % 20)})
				}
				for i := range 60 {
					m.apply(opDelete, []byte{byte(i % 20)})
				}
			}()
			if !strings.Contains(tb.msg, c.want) {
				t.Fatalf("model reported %q, want a report of %q", tb.msg, c.want)
			}
		})
	}
}
