// Package lincheck checks recorded histories of a concurrent structure for
// linearizability with porcupine, for the tests of the hashmap and lockfree
// packages. A test states the sequential specification of one key as a
// typed Model; operations on different keys commute, so the history is
// partitioned by key and each key's sub-history checked apart. A history
// that is not linearizable fails the test with every operation logged and
// porcupine's visualization written beside the test's files. Nothing here
// is for use outside tests.
package lincheck

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Model is the sequential specification of one key: I is an operation's
// input, O its output and S the key's state.
type Model[S, I, O any] struct {
	// Key returns the key an input acts on.
	Key func(in I) int
	// Init is a key's state before any operation (the zero S if unset).
	Init S
	// Step reports whether an operation with input in could return out
	// in state s, and returns the state after it. It must not change s.
	Step func(s S, in I, out O) (bool, S)
	// Describe names an operation and its result, for the logs.
	Describe func(in I, out O) string
	// DescribeState names a state, for the visualization; may be nil.
	DescribeState func(s S) string
}

// Porcupine returns m as porcupine's model, partitioned by key.
func (m Model[S, I, O]) Porcupine() porcupine.Model {
	pm := porcupine.Model{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[int][]porcupine.Operation{}
			for _, op := range history {
				k := m.Key(op.Input.(I))
				byKey[k] = append(byKey[k], op)
			}
			out := make([][]porcupine.Operation, 0, len(byKey))
			for _, ops := range byKey {
				out = append(out, ops)
			}
			return out
		},
		Init: func() any { return m.Init },
		Step: func(state, input, output any) (bool, any) {
			return m.Step(state.(S), input.(I), output.(O))
		},
		DescribeOperation: func(input, output any) string {
			return m.Describe(input.(I), output.(O))
		},
	}
	if m.DescribeState != nil {
		pm.DescribeState = func(state any) string { return m.DescribeState(state.(S)) }
	}
	return pm
}

// Check checks history against m, within timeout if it is not 0. A history
// that is not linearizable fails t: each operation is logged, porcupine's
// visualization is written to a file in t.TempDir() (its path logged), and
// t.Fatalf names the history by name. A check that times out is logged, and
// does not fail t. Check returns the check's result.
func Check[S, I, O any](t testing.TB, m Model[S, I, O], history []porcupine.Operation, timeout time.Duration, name string) porcupine.CheckResult {
	t.Helper()
	pm := m.Porcupine()
	res := porcupine.CheckOperationsTimeout(pm, history, timeout)
	switch res {
	case porcupine.Illegal:
		// Again, keeping what the visualization shows: the longest
		// linearizable prefixes.
		_, info := porcupine.CheckOperationsVerbose(pm, history, 0)
		path := filepath.Join(t.TempDir(), "history.html")
		if err := porcupine.VisualizePath(pm, info, path); err == nil {
			t.Logf("visualization: %s", path)
		}
		for _, op := range history {
			t.Logf("client %d [%d, %d] %s", op.ClientId, op.Call, op.Return, m.Describe(op.Input.(I), op.Output.(O)))
		}
		t.Fatalf("%s is not linearizable", name)
	case porcupine.Unknown:
		t.Logf("%s: check timed out", name)
	}
	return res
}
