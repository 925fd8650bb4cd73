package keyspace

import (
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// TestCommitReleasesWhatItPublished checks commit's contract for the kinds
// that publish a new entry: the entry is under the op's key even when the
// caller left Applying.Key empty, and it is unlocked once the op is logged,
// but for a create held (Hold) for the command that runs on it.
func TestCommitReleasesWhatItPublished(t *testing.T) {
	st := NewStore(0, 1<<30)
	stream := &captured{}
	st.Repl = stream
	w := &Writer{}
	p := cf.Params{Capacity: 64, BucketSize: 4, MaxIter: 20, Expansion: 1}

	// A create: held while the command runs, released after.
	err := st.update(w, []byte("a"), &p, false, func(c *Entry, created bool) error {
		if !created {
			t.Error("the key was not reported created")
		}
		if c.Mu.TryLock() {
			t.Error("a created entry is unlocked while its command runs")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	unlockedUnder(t, st, "a")

	// A restore replacing a key, with the key left to the op.
	payload := dumpOf(st, []byte("a"))
	err = st.update(w, []byte("b"), &p, false, func(c *Entry, _ bool) error {
		built := new(Entry)
		if err := built.LoadPayload(payload, st.Charge, st.Release); err != nil {
			return err
		}
		return st.commit(w, &applying{At: c, Built: built}, &Op{Kind: OpRestore, Key: []byte("b"), Items: [][]byte{payload}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.keys.Load(""); ok {
		t.Fatal("the restore published its entry under the empty key")
	}
	unlockedUnder(t, st, "b")

	// Through the store's own entry points: RESTORE ... REPLACE, and a
	// load's header.
	if err := st.Restore(w, []byte("b"), payload, 0, true); err != nil {
		t.Fatal(err)
	}
	unlockedUnder(t, st, "b")
	c := st.lockLive("a")
	_, header := c.ScanDump(0)
	c.Mu.Unlock()
	if err := st.LoadChunk(w, []byte("c"), 1, header); err != nil {
		t.Fatal(err)
	}
	unlockedUnder(t, st, "c")

	// Every later write to the keys goes through: none waits on a lock
	// left held, none loops on an entry left dead in the map.
	for _, k := range []string{"a", "b"} {
		_, err := st.Add(w, []byte(k), [][]byte{[]byte("x")}, AddOptions{})
		if err != nil {
			t.Fatalf("an add to %q after the replace: %v", k, err)
		}
	}
	if len(stream.ops) == 0 {
		t.Fatal("nothing was logged")
	}
}

// unlockedUnder fails unless key k's entry is live and unlocked.
func unlockedUnder(t *testing.T, st *Store, k string) {
	t.Helper()
	c, ok := st.keys.Load(k)
	if !ok {
		t.Fatalf("key %q is missing", k)
	}
	if c.Dead {
		t.Fatalf("key %q's entry is dead", k)
	}
	if !c.Mu.TryLock() {
		t.Fatalf("key %q's entry was left locked", k)
	}
	c.Mu.Unlock()
}
