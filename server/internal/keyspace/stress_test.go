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
// restoring, dropping, flushing and giving them deadlines that pass, while
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
	keyspace.TestHookSnapshotEntry = func() { time.Sleep(300 * time.Microsecond) }
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

// stressKeys are the keys the writers share.
const stressKeys = 12

// randomWrites makes writes of every kind to the keys shared with other
// writers, as writer g, until stop is closed. Refusals a client may get
// are fine.
func randomWrites(t *testing.T, st *keyspace.Store, g uint64, stop <-chan struct{}) {
	r := rand.New(rand.NewPCG(g, 42))
	w := &keyspace.Writer{}
	key := func() []byte { return fmt.Appendf(nil, "k%d", r.IntN(stressKeys)) }
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
		// Mostly adds, which accumulate, so that an op replay loses or
		// doubles shows in the end state; now and then a write that ends
		// or moves a key's life.
		switch n := r.IntN(1000); {
		case n < 700:
			var res []keyspace.AddResult
			res, err = st.Add(w, k, items(fmt.Sprintf("g%d-%d", g, i), 1+r.IntN(8)), keyspace.AddOptions{Create: &growing})
			for _, x := range res {
				if x.Status != keyspace.Added {
					t.Errorf("writer %d: an add: %s (%v)", g, x.Status, x.Err)
				}
			}
		case n < 800:
			_, err = st.DeleteItem(w, k, []byte(fmt.Sprintf("g%d-%d-0", g, r.IntN(i+1))))
		case n < 840:
			_, err = st.Rename(w, k, key(), r.IntN(2) == 0)
		case n < 880:
			_, err = st.Expire(w, k, keyspace.NowMs()+50+int64(r.IntN(100)), 0)
		case n < 900:
			_, err = st.Persist(w, k)
		case n < 930:
			_, err = st.Drop(w, k)
		case n < 970:
			if c := st.Get(k); c != nil {
				c.Mu.Lock()
				payload := c.DumpPayload()
				c.Mu.Unlock()
				err = st.Restore(w, key(), payload, 0, true)
			}
		case n < 999:
			_, err = st.Compact(w, k)
		default:
			// A FLUSHALL, which a snapshot's replay must order against
			// each key's position.
			err = st.FlushAll(w)
		}
		switch {
		case err == nil, errors.Is(err, keyspace.ErrNoSuchKey), errors.Is(err, keyspace.ErrNotFound):
		default:
			t.Errorf("writer %d, write %d: %v", g, i, err)
			return
		}
	}
}

// TestConcurrentWritesReplay: writers race on four keys with every write,
// renames both ways and transactions included, with no log; the ops the
// stream received, replayed in that order, rebuild the store exactly (the
// key locks order each key's apply and its op alike), and the writers
// finish (a deadlock fails the test after a minute rather than hang it).
func TestConcurrentWritesReplay(t *testing.T) {
	ops := 1500
	if testing.Short() {
		ops = 300
	}
	st, rec := recorded()
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			w := &keyspace.Writer{}
			key := func() []byte { return []byte{'k', byte('0' + r.IntN(4))} }
			for i := range ops {
				k := key()
				var err error
				switch r.IntN(10) {
				case 0, 1, 2, 3:
					_, err = st.Add(w, k, items(fmt.Sprintf("g%d-%d", g, i), 2), keyspace.AddOptions{Create: &growing})
				case 4, 5:
					_, err = st.Rename(w, k, key(), r.IntN(3) == 0)
				case 6:
					_, err = st.Drop(w, k)
				case 7:
					_, err = st.Expire(w, k, hour+int64(r.IntN(1000)), keyspace.ExpireCond(r.IntN(3))<<2)
				case 8:
					if c := st.Get(k); c != nil {
						c.Mu.Lock()
						payload := c.DumpPayload()
						c.Mu.Unlock()
						err = st.Restore(w, key(), payload, 0, true)
					}
				case 9:
					st.Exec(w, []keyspace.Watch{st.Watch(k)}, func() {
						if _, err := st.Add(w, k, items(fmt.Sprintf("txn%d-%d", g, i), 2), keyspace.AddOptions{Create: &growing}); err != nil {
							t.Errorf("an add in EXEC: %v", err)
						}
						if _, err := st.Rename(w, k, key(), false); err != nil {
							t.Errorf("a rename in EXEC: %v", err)
						}
					})
				}
				if err != nil && !errors.Is(err, keyspace.ErrNoSuchKey) {
					t.Errorf("writer %d, write %d: %v", g, i, err)
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the writers did not finish in 60 s: a deadlock")
	}
	checkCharged(t, st, "after the writes")
	sameSpace(t, "the stream replayed", stateOf(replayInto(t, rec)), stateOf(st))
}
