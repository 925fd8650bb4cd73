package repl

import (
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// TestPsyncFrom: the decision for each kind of PSYNC position, in one walk
// of the backlog: continue, refuse as never this primary's (past the end,
// inside a record), or refuse quietly (behind the backlog, another
// history, no position).
func TestPsyncFrom(t *testing.T) {
	r := New(Config{BacklogSize: 64})
	r.active.Store(true)
	for range 20 {
		r.feedLocked([]byte{keyspace.OpReplPing})
	}
	start, end := r.backlog.Start(), r.backlog.End()
	if start == 0 {
		t.Fatal("the backlog never trimmed")
	}
	const past, inside = "past the end of this primary's stream", "inside a record of this primary's stream"
	// A promotion: the old id stays valid up to the offset reached.
	old := r.id
	r.id2, r.off2, r.id = old, end-keyspace.RecordHeader-1, newID()
	for _, c := range []struct {
		id       string
		offset   int64
		cont     bool
		neverHad string
	}{
		{r.id, end, true, ""},
		{r.id, start, true, ""},
		{r.id, start - 1, false, ""},
		{r.id, start + 1, false, inside},
		{r.id, end + 1, false, past},
		{old, end - 2*(keyspace.RecordHeader+1), true, ""},
		{old, end - keyspace.RecordHeader - 2, false, inside},
		{old, end - keyspace.RecordHeader - 1, true, ""},
		{old, end, false, past},
		{strings.Repeat("x", 40), end, false, ""},
		{"?", -1, false, ""},
	} {
		cont, neverHad := r.psyncFrom(c.id, c.offset)
		if cont != c.cont || neverHad != c.neverHad {
			t.Errorf("psyncFrom(%.8s, %d) = %v, %q; want %v, %q (backlog %d to %d)", c.id, c.offset, cont, neverHad, c.cont, c.neverHad, start, end)
		}
	}

	// Without a backlog kept, nothing continues, nor is inside a record.
	r.active.Store(false)
	for offset, want := range map[int64]string{end: "", start + 1: "", end + 1: past} {
		if cont, neverHad := r.psyncFrom(r.id, offset); cont || neverHad != want {
			t.Errorf("inactive: psyncFrom(id, %d) = %v, %q; want false, %q", offset, cont, neverHad, want)
		}
	}

	// A replica that lost its position (?, -1) and was then promoted:
	// PSYNC ? -1, a replica asking for a copy, must not continue.
	r.active.Store(true)
	r.id = "?"
	r.backlog.Reset(-1)
	r.id2, r.off2, r.id = r.id, r.backlog.End(), newID()
	if cont, neverHad := r.psyncFrom("?", -1); cont || neverHad != "" {
		t.Errorf("promoted from no position: psyncFrom(?, -1) = %v, %q; want a quiet full copy", cont, neverHad)
	}
	if cont, _ := r.psyncFrom(r.id, -1); !cont {
		t.Error("promoted from no position: its own stream from -1 does not continue")
	}
}
