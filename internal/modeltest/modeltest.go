// Package modeltest checks a cuckoo filter against a model, for the tests of
// the filter and lockfree packages: each operation is applied both to the
// filter and to a map[string]int multiset of the keys it accepted, and after
// each one the filter must agree with the model wherever a cuckoo filter
// promises to: no false negatives, Count at least the model's count, Delete
// of a held key succeeds, Len exact, invariants intact, and an operation that
// must change nothing (a refused insert, an InsertUnique of a present key, a
// Delete of an absent fingerprint) changes nothing.
package modeltest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
)

// Target is the method set the filters share.
type Target interface {
	Insert(key []byte) error
	InsertUnique(key []byte) (bool, error)
	Contains(key []byte) bool
	Delete(key []byte) bool
	Count(key []byte) int
	Len() uint64
}

// Operations, as Apply takes them and Run decodes them from one byte.
const (
	OpInsert = iota
	OpInsertUnique
	OpContains
	OpDelete
	OpCount
	NumOps
)

var opNames = [NumOps]string{"Insert", "InsertUnique", "Contains", "Delete", "Count"}

// Model checks a Target against a multiset of the keys it accepted.
type Model struct {
	t testing.TB
	f Target
	// state returns the filter's logical content, compared with
	// reflect.DeepEqual before and after an operation that must not
	// change it.
	state func() any
	// invariants checks the filter's internal invariants after a mutation.
	invariants func() error

	// FullAllowed, if set, says for which keys ErrFull is a legitimate
	// answer (a Scalable refuses only a key of which its buckets hold 2b
	// copies, and grows otherwise); unset, ErrFull always is.
	FullAllowed func(key []byte) bool
	// ContainsBeyondCount, if set, lets Contains answer true for a key of
	// which Count finds no entry: a growing table's lookups match the
	// bucket next to split under both of its encodings (a split may be
	// under way: growing/doc.go), which Count, under the writer lock, need
	// not. Count > 0 with Contains false is refused either way.
	ContainsBeyondCount bool

	// Counts is the multiset of accepted keys; Total its size.
	Counts map[string]int
	Total  uint64
	// Refused counts inserts refused with ErrFull.
	Refused int

	// step counts operations and op names the current one, for messages.
	step int
	op   string
}

// New returns a model of f, empty as f must be. state returns f's logical
// content; invariants checks f's internal invariants.
func New(t testing.TB, f Target, state func() any, invariants func() error) *Model {
	return &Model{t: t, f: f, state: state, invariants: invariants, Counts: map[string]int{}}
}

// Apply runs one operation on key and checks the result against the model.
func (m *Model) Apply(op int, key []byte) {
	m.t.Helper()
	m.step++
	m.op = opNames[op]
	k := string(key)
	held := m.Counts[k]
	mutated := false
	switch op {
	case OpInsert:
		before := m.state()
		err := m.f.Insert(key)
		mutated = m.afterInsert(key, err == nil, err, before)
	case OpInsertUnique:
		before := m.state()
		present := m.f.Contains(key)
		ok, err := m.f.InsertUnique(key)
		switch {
		case present && (ok || err != nil):
			m.Fatalf("InsertUnique(%q) of a key Contains reports = %v, %v; want false, nil", key, ok, err)
		case present:
			m.unchanged(before, "InsertUnique of a present key")
		case !ok && err == nil:
			m.Fatalf("InsertUnique(%q) of an absent key = false, nil", key)
		default:
			mutated = m.afterInsert(key, ok, err, before)
		}
	case OpContains:
		if held > 0 && !m.f.Contains(key) {
			m.Fatalf("false negative: %q inserted %d times is not found", key, held)
		}
	case OpDelete:
		switch {
		case held > 0:
			if !m.f.Delete(key) {
				m.Fatalf("Delete(%q) = false for a key inserted %d times", key, held)
			}
			m.Counts[k]--
			if m.Counts[k] == 0 {
				delete(m.Counts, k)
			}
			m.Total--
			mutated = true
		case m.f.Count(key) == 0:
			// No copy of key's fingerprint: Delete must find none and
			// change nothing. (Deleting a key the model does not hold but
			// whose fingerprint is present would remove another key's
			// copy, which the model cannot follow.)
			before := m.state()
			if m.f.Delete(key) {
				m.Fatalf("Delete(%q) = true, but Count was 0", key)
			}
			m.unchanged(before, "Delete of an absent key")
		}
	case OpCount:
		c := m.f.Count(key)
		if c < held {
			m.Fatalf("Count(%q) = %d, below the %d inserts", key, c, held)
		}
		if has := m.f.Contains(key); c > 0 && !has || c == 0 && has && !m.ContainsBeyondCount {
			m.Fatalf("Count(%q) = %d but Contains = %v", key, c, has)
		}
	}
	if mutated {
		m.checkInvariants()
		m.CheckAll()
	} else if got := m.f.Len(); got != m.Total {
		m.Fatalf("Len = %d, the model holds %d", got, m.Total)
	}
}

// afterInsert checks the outcome of an insert and reports whether it changed
// the filter.
func (m *Model) afterInsert(key []byte, ok bool, err error, before any) bool {
	m.t.Helper()
	switch {
	case ok && err == nil:
		m.Counts[string(key)]++
		m.Total++
		return true
	case errors.Is(err, filter.ErrFull) && (m.FullAllowed == nil || m.FullAllowed(key)):
		m.Refused++
		m.unchanged(before, "a refused insert")
	default:
		m.Fatalf("insert of %q: %v", key, err)
	}
	return false
}

func (m *Model) unchanged(before any, what string) {
	m.t.Helper()
	if !reflect.DeepEqual(before, m.state()) {
		m.Fatalf("%s changed the filter", what)
	}
	m.checkInvariants()
}

func (m *Model) checkInvariants() {
	m.t.Helper()
	if err := m.invariants(); err != nil {
		m.Fatalf("invariant broken: %v", err)
	}
}

// CheckAll checks every key the model holds, and the length.
func (m *Model) CheckAll() {
	m.t.Helper()
	for k, n := range m.Counts {
		key := []byte(k)
		if !m.f.Contains(key) {
			m.Fatalf("false negative: %q inserted %d times is not found", key, n)
		}
		if c := m.f.Count(key); c < n {
			m.Fatalf("Count(%q) = %d, below the %d inserts", key, c, n)
		}
	}
	if got := m.f.Len(); got != m.Total {
		m.Fatalf("Len = %d, the model holds %d", got, m.Total)
	}
}

// Fatalf fails the test, naming the step and operation that failed.
func (m *Model) Fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("step %d (%s): "+format, append([]any{m.step, m.op}, args...)...)
}

// Run decodes ops as pairs of bytes, (operation, key), over a key space of
// keySpace one-byte keys, so that keys repeat.
func (m *Model) Run(ops []byte, keySpace int) {
	m.t.Helper()
	for ; len(ops) >= 2; ops = ops[2:] {
		m.Apply(int(ops[0])%NumOps, []byte{byte(int(ops[1]) % keySpace)})
	}
}
