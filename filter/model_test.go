package filter_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/modeltest"
)

// The model checker is internal/modeltest's; this file adapts Filter and
// Scalable to it and shows that it catches planted defects.

func newFilterModel(t testing.TB, f *filter.Filter) *modeltest.Model {
	return modeltest.New(t, f, encoding(t, f), f.CheckInvariants)
}

func newScalableModel(t testing.TB, s *filter.Scalable) *modeltest.Model {
	var m *modeltest.Model
	m = modeltest.New(t, s, encoding(t, s), func() error { return scalableInvariants(s, m.Counts) })
	m.FullAllowed = func(key []byte) bool {
		return s.Count(key) >= 2*s.Config().BucketSize || s.Stashed() >= filter.MaxStash
	}
	return m
}

// encoding is the model's view of a filter's content: its binary encoding,
// which an operation that must change nothing leaves identical.
func encoding(t testing.TB, f interface{ MarshalBinary() ([]byte, error) }) func() any {
	return func() any {
		b, err := f.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary: %v", err)
		}
		return b
	}
}

// scalableInvariants checks the table's own invariants and, with the keys
// the model holds, the one no false negative rests on: each copy of a held
// key can be given an entry of its own that matches it.
func scalableInvariants(s *filter.Scalable, held map[string]int) error {
	if err := s.CheckInvariants(); err != nil {
		return err
	}
	return s.CheckMatching(held)
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
			m := modeltest.New(tb, f, encoding(tb, f), f.CheckInvariants)
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
					m.Apply(modeltest.OpInsert, []byte{byte(i % 20)})
				}
				for i := range 60 {
					m.Apply(modeltest.OpDelete, []byte{byte(i % 20)})
				}
			}()
			if !strings.Contains(tb.msg, c.want) {
				t.Fatalf("model reported %q, want a report of %q", tb.msg, c.want)
			}
		})
	}
}
