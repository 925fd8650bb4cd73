package keyspace_test

import (
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// A snapshot stands for each key at its own position in the log
// generation it starts. These tests make a write right after the
// snapshot's first entry, with nothing logged in between, so that it
// lands exactly at a key's position or on a key not yet visited, the
// boundaries of snapshot.go's argument, and check that recovery rebuilds
// the store the writes left.

// snapshotWithWrite takes a snapshot of a store holding keys a and b,
// running write once, after the first entry, with the key visited and
// the one not yet; it returns the store's state after both, and the
// state recovered from the directory.
func snapshotWithWrite(t *testing.T, write func(st *keyspace.Store, visited, next string)) (got, want space) {
	t.Helper()
	dir := t.TempDir()
	st := open(t, dir)
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "a", growing, items("a", 10))
	mustAdd(t, st, w, "b", growing, items("b", 10))
	if _, err := st.Expire(w, []byte("b"), hour, 0); err != nil {
		t.Fatal(err)
	}
	calls := 0
	keyspace.TestHookSnapshotEntry = func() {
		calls++
		if calls > 1 {
			return
		}
		visited, next := "a", "b"
		if st.SnapVisited("b") {
			visited, next = "b", "a"
		}
		if !st.SnapVisited(visited) || st.SnapVisited(next) {
			t.Error("after the first entry, not exactly one key is visited")
			return
		}
		write(st, visited, next)
	}
	t.Cleanup(func() { keyspace.TestHookSnapshotEntry = nil })
	snapshot(t, st, dir)
	keyspace.TestHookSnapshotEntry = nil
	if calls == 0 {
		t.Fatal("the snapshot wrote no entry")
	}
	want = stateOf(st)
	shut(t, st)
	return stateOf(open(t, dir)), want
}

func TestSnapshotBoundaries(t *testing.T) {
	w := &keyspace.Writer{}
	t.Run("write at a key's position", func(t *testing.T) {
		// The visited key's op is the first record after its position:
		// it is not in its entry, so replay applies it.
		got, want := snapshotWithWrite(t, func(st *keyspace.Store, visited, _ string) {
			if _, err := st.Add(w, []byte(visited), items("after", 3), keyspace.AddOptions{}); err != nil {
				t.Error(err)
			}
		})
		sameSpace(t, "recovered", got, want)
	})
	t.Run("write to a key not yet visited", func(t *testing.T) {
		got, want := snapshotWithWrite(t, func(st *keyspace.Store, _, next string) {
			if _, err := st.Add(w, []byte(next), items("before", 3), keyspace.AddOptions{}); err != nil {
				t.Error(err)
			}
		})
		sameSpace(t, "recovered", got, want)
	})
	t.Run("rename of a key not yet visited to a new one", func(t *testing.T) {
		// The key is absent when the snapshot comes to it; the new name
		// is queued, so the moved filter has an entry after the rename.
		got, want := snapshotWithWrite(t, func(st *keyspace.Store, _, next string) {
			if _, err := st.Rename(w, []byte(next), []byte("moved"), false); err != nil {
				t.Error(err)
			}
		})
		if _, ok := want.keys["moved"]; !ok {
			t.Fatal("the rename did not happen")
		}
		sameSpace(t, "recovered", got, want)
	})
	t.Run("rename of a key not yet visited over the visited one", func(t *testing.T) {
		got, want := snapshotWithWrite(t, func(st *keyspace.Store, visited, next string) {
			if _, err := st.Rename(w, []byte(next), []byte(visited), false); err != nil {
				t.Error(err)
			}
		})
		sameSpace(t, "recovered", got, want)
	})
	t.Run("rename of the visited key over the next", func(t *testing.T) {
		// The next key's entry, written later, holds the moved filter and
		// the add after the rename: replay drops the old name's copy
		// rather than move it over that entry.
		got, want := snapshotWithWrite(t, func(st *keyspace.Store, visited, next string) {
			if _, err := st.Rename(w, []byte(visited), []byte(next), false); err != nil {
				t.Error(err)
			}
			if _, err := st.Add(w, []byte(next), items("moved", 2), keyspace.AddOptions{}); err != nil {
				t.Error(err)
			}
		})
		sameSpace(t, "recovered", got, want)
	})
	t.Run("flushall at a key's position", func(t *testing.T) {
		// The flush is the first record after the visited key's
		// position: it clears that key's entry too.
		got, want := snapshotWithWrite(t, func(st *keyspace.Store, _, _ string) {
			if err := st.FlushAll(w); err != nil {
				t.Error(err)
			}
			mustAdd(t, st, w, "c", growing, items("c", 2))
		})
		if len(want.keys) != 1 {
			t.Fatalf("%d keys after FLUSHALL and one add", len(want.keys))
		}
		sameSpace(t, "recovered", got, want)
	})
	t.Run("drop and make again", func(t *testing.T) {
		got, want := snapshotWithWrite(t, func(st *keyspace.Store, visited, next string) {
			for _, k := range []string{visited, next} {
				if _, err := st.Drop(w, []byte(k)); err != nil {
					t.Error(err)
				}
				mustAdd(t, st, w, k, fixed, items("again", 2))
			}
		})
		sameSpace(t, "recovered", got, want)
	})
}
