package keyspace_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// TestSnapshotsUnderWrites: writers share a few keys, adding, renaming,
// restoring, dropping and giving them deadlines that pass, while
// snapshots are taken and the sweeper drops expired keys. Each snapshot
// stands for part of a log generation, key by key; whatever the
// interleaving, the newest snapshot plus the logs since must rebuild the
// store exactly, and so must the previous one plus its logs.
func TestSnapshotsUnderWrites(t *testing.T) {
	const writers = 4
	snaps := 8
	if testing.Short() {
		snaps = 3
	}
	// Writes interleave with a snapshot's entries, not only between
	// snapshots.
	keyspace.TestHookSnapshotEntry = func() { time.Sleep(50 * time.Microsecond) }
	t.Cleanup(func() { keyspace.TestHookSnapshotEntry = nil })
	dir := t.TempDir()
	st := open(t, dir)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() { randomWrites(t, st, uint64(g), stop) })
	}
	swept := 0
	for i := range snaps {
		if _, _, _, err := st.Snapshot(dir); err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("snapshot %d: %v", i, err)
		}
		time.Sleep(5 * time.Millisecond) // deadlines pass
		swept += st.Sweep(time.Now().Add(keyspace.SweepBudget))
	}
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d snapshots, %d keys swept, %d keys at the end", snaps, swept, st.Len())
	checkCharged(t, st, "after the writes")
	want := stateOf(st)
	shut(t, st)
	st = open(t, dir)
	sameSpace(t, "recovered", stateOf(st), want)
	shut(t, st)
	// The previous snapshot, with the logs since it, is the same state.
	flipByte(t, filepath.Join(dir, keyspace.SnapName), 20)
	st, err := openErr(t, dir, true)
	if err != nil {
		t.Fatalf("--repair with the newest snapshot damaged: %v", err)
	}
	sameSpace(t, "recovered from the previous snapshot", stateOf(st), want)
}

// randomWrites makes writes of every kind to 6 keys shared with other
// writers, as writer g, until stop is closed. Refusals a client may get
// are fine.
func randomWrites(t *testing.T, st *keyspace.Store, g uint64, stop <-chan struct{}) {
	r := rand.New(rand.NewPCG(g, 42))
	w := &keyspace.Writer{}
	key := func() []byte { return fmt.Appendf(nil, "k%d", r.IntN(6)) }
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if i%64 == 63 {
			time.Sleep(100 * time.Microsecond) // leave the snapshot its turns
		}
		k := key()
		var err error
		switch r.IntN(10) {
		case 0, 1, 2, 3:
			var res []keyspace.AddResult
			res, err = st.Add(w, k, items(fmt.Sprintf("g%d-%d", g, i), 1+r.IntN(20)), keyspace.AddOptions{Create: &growing})
			for _, x := range res {
				if x.Status != keyspace.Added {
					t.Errorf("writer %d: an add: %s (%v)", g, x.Status, x.Err)
				}
			}
		case 4:
			_, err = st.Rename(w, k, key(), r.IntN(2) == 0)
		case 5:
			_, err = st.Expire(w, k, keyspace.NowMs()+int64(r.IntN(30)), 0)
		case 6:
			_, err = st.Persist(w, k)
		case 7:
			_, err = st.Drop(w, k)
		case 8:
			if c := st.Get(k); c != nil {
				c.Mu.Lock()
				payload := c.DumpPayload()
				c.Mu.Unlock()
				err = st.Restore(w, key(), payload, 0, true)
			}
		case 9:
			_, err = st.DeleteItem(w, k, []byte(fmt.Sprintf("g%d-%d-0", g, r.IntN(i+1))))
		}
		switch {
		case err == nil, errors.Is(err, keyspace.ErrNoSuchKey), errors.Is(err, keyspace.ErrNotFound):
		default:
			t.Errorf("writer %d, write %d: %v", g, i, err)
			return
		}
	}
}
