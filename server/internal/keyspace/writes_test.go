package keyspace_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// The typed writes' contracts beyond one key's change: EXEC with WATCH,
// MIGRATE, CF.LOADCHUNK, DEBUG RELOAD, and a replica's refusal.

// replayInto applies the recorded ops to a fresh store, as a replica or a
// restart would, and returns it.
func replayInto(t *testing.T, rec *recorder) *keyspace.Store {
	t.Helper()
	st := keyspace.NewStore(0, 1<<30)
	for i, op := range rec.ops {
		if err := st.Replay(op, 0, nil); err != nil {
			t.Fatalf("replaying record %d: %v", i, err)
		}
	}
	return st
}

func TestExecWatch(t *testing.T) {
	// setup: a store with a and b, and the writer w of the client that
	// runs EXEC.
	setup := func(t *testing.T) (*keyspace.Store, *recorder, *keyspace.Writer) {
		st, rec := recorded()
		w := &keyspace.Writer{}
		mustAdd(t, st, w, "a", growing, items("a", 3))
		mustAdd(t, st, w, "b", growing, items("b", 3))
		return st, rec, w
	}
	for _, tc := range []struct {
		name    string
		watch   []string
		between func(t *testing.T, st *keyspace.Store) // another client's writes after WATCH
		runs    bool
	}{
		{"nothing watched", nil, func(t *testing.T, st *keyspace.Store) {
			mustAdd(t, st, &keyspace.Writer{}, "a", growing, items("other", 1))
		}, true},
		{"unchanged", []string{"a", "b"}, func(*testing.T, *keyspace.Store) {}, true},
		{"another key changed", []string{"a"}, func(t *testing.T, st *keyspace.Store) {
			mustAdd(t, st, &keyspace.Writer{}, "b", growing, items("other", 1))
		}, true},
		{"missing and still missing", []string{"c"}, func(*testing.T, *keyspace.Store) {}, true},
		{"item added", []string{"b", "a"}, func(t *testing.T, st *keyspace.Store) {
			mustAdd(t, st, &keyspace.Writer{}, "a", growing, items("other", 1))
		}, false},
		{"item deleted", []string{"a"}, func(t *testing.T, st *keyspace.Store) {
			st.DeleteItem(&keyspace.Writer{}, []byte("a"), items("a", 1)[0])
		}, false},
		{"deadline set", []string{"a"}, func(t *testing.T, st *keyspace.Store) {
			st.Expire(&keyspace.Writer{}, []byte("a"), hour, 0)
		}, false},
		{"dropped", []string{"a"}, func(t *testing.T, st *keyspace.Store) {
			st.Drop(&keyspace.Writer{}, []byte("a"))
		}, false},
		{"dropped and made again", []string{"a"}, func(t *testing.T, st *keyspace.Store) {
			st.Drop(&keyspace.Writer{}, []byte("a"))
			mustAdd(t, st, &keyspace.Writer{}, "a", growing, items("a", 3))
		}, false},
		{"missing then made", []string{"c"}, func(t *testing.T, st *keyspace.Store) {
			st.Reserve(&keyspace.Writer{}, []byte("c"), &growing)
		}, false},
		{"renamed away", []string{"a"}, func(t *testing.T, st *keyspace.Store) {
			st.Rename(&keyspace.Writer{}, []byte("a"), []byte("c"), false)
		}, false},
		{"restored over", []string{"b"}, func(t *testing.T, st *keyspace.Store) {
			st.Restore(&keyspace.Writer{}, []byte("b"), payloadOf(t, st, "a"), 0, true)
		}, false},
		{"flushed", []string{"b"}, func(t *testing.T, st *keyspace.Store) {
			st.FlushAll(&keyspace.Writer{})
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, rec, w := setup(t)
			var watched []keyspace.Watch
			for _, k := range tc.watch {
				watched = append(watched, st.Watch([]byte(k)))
			}
			if len(watched) > 0 && watched[0].Key() != tc.watch[0] {
				t.Fatalf("Watch(%q).Key() = %q", tc.watch[0], watched[0].Key())
			}
			tc.between(t, st)
			rec.reset()
			before := stateOf(st)
			ran := false
			ok := st.Exec(w, watched, func() {
				ran = true
				if !w.InExec() {
					t.Error("InExec is false inside EXEC")
				}
				mustAdd(t, st, w, "b", growing, items("txn", 2))
				mustAdd(t, st, w, "d", fixed, items("txn", 1))
			})
			if ok != tc.runs || ran != tc.runs {
				t.Fatalf("Exec reported %v and ran %v; want %v", ok, ran, tc.runs)
			}
			if w.InExec() {
				t.Error("InExec is still true after EXEC")
			}
			if !tc.runs {
				sameSpace(t, "after an aborted EXEC", stateOf(st), before)
				if len(rec.ops) != 0 {
					t.Errorf("an aborted EXEC logged %v", rec.kinds())
				}
				return
			}
			// One record, which replays to the transaction's effect.
			if got := rec.kinds(); !slices.Equal(got, []string{"multi"}) {
				t.Fatalf("EXEC logged %v, want one transaction record", got)
			}
			base := keyspace.NewStore(0, 1<<30)
			for k, s := range before.keys {
				base.LockAll()
				if err := base.ReplaceFromPayload([]byte(k), s.deadline, s.payload); err != nil {
					t.Fatal(err)
				}
				base.UnlockAll()
			}
			if err := base.Replay(rec.ops[0], 0, nil); err != nil {
				t.Fatalf("replaying the transaction: %v", err)
			}
			sameSpace(t, "the transaction replayed", stateOf(base), stateOf(st))
		})
	}
}

// TestExecRecords: a transaction that logs one op logs it as it is, one
// that logs none logs nothing; the writes inside it take no gate of their
// own, FLUSHALL and RELOAD included (they would deadlock).
func TestExecRecords(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "a", growing, items("a", 3))
	rec.reset()
	if !st.Exec(w, nil, func() {}) || len(rec.ops) != 0 {
		t.Fatalf("an empty EXEC logged %v", rec.kinds())
	}
	st.Exec(w, nil, func() {
		if res, err := st.Add(w, []byte("a"), items("a", 1), keyspace.AddOptions{NX: true}); err != nil || res[0].Status != keyspace.Present {
			t.Errorf("CF.ADDNX in EXEC: %v %v", res, err)
		}
	})
	if len(rec.ops) != 0 {
		t.Fatalf("an EXEC that changed nothing logged %v", rec.kinds())
	}
	st.Exec(w, nil, func() {
		if _, err := st.Expire(w, []byte("a"), hour, 0); err != nil {
			t.Error(err)
		}
	})
	if got := rec.kinds(); !slices.Equal(got, []string{"expire"}) {
		t.Fatalf("an EXEC of one op logged %v, want [expire]", got)
	}
	rec.reset()
	st.Exec(w, nil, func() {
		if n, err := st.Reload(w); n != 1 || err != nil {
			t.Errorf("DEBUG RELOAD in EXEC: %d %v", n, err)
		}
		if err := st.FlushAll(w); err != nil {
			t.Error(err)
		}
		mustAdd(t, st, w, "b", growing, items("b", 1))
	})
	if got := rec.kinds(); !slices.Equal(got, []string{"multi"}) {
		t.Fatalf("logged %v, want one transaction", got)
	}
	if st.Len() != 1 || st.Peek("a") != nil {
		t.Errorf("after FLUSHALL and an add in EXEC: %d keys", st.Len())
	}
}

func TestMigrate(t *testing.T) {
	setup := func(t *testing.T) (*keyspace.Store, *recorder) {
		st, rec := recorded()
		w := &keyspace.Writer{}
		mustAdd(t, st, w, "k", growing, items("k", 50))
		mustAdd(t, st, w, "forever", growing, items("f", 5))
		if _, err := st.Expire(w, []byte("k"), keyspace.NowMs()+10_000, 0); err != nil {
			t.Fatal(err)
		}
		rec.reset()
		return st, rec
	}
	for _, keep := range []bool{true, false} {
		name := "move"
		if keep {
			name = "copy"
		}
		t.Run(name, func(t *testing.T) {
			st, rec := setup(t)
			want := payloadOf(t, st, "k")
			d := st.Peek("k").Deadline.Load()
			sent := 0
			before := keyspace.NowMs()
			err := st.Migrate(&keyspace.Writer{}, []byte("k"), keep, func(c *keyspace.Entry, ttl int64) error {
				sent++
				if c.Mu.TryLock() {
					c.Mu.Unlock()
					t.Error("send got the entry unlocked")
				}
				if most, least := d-before, d-keyspace.NowMs(); ttl > most || ttl < least {
					t.Errorf("ttl %d, want the deadline less the clock, %d to %d", ttl, least, most)
				}
				if !slices.Equal(c.DumpPayload(), want) {
					t.Error("send got another filter")
				}
				return nil
			})
			if err != nil || sent != 1 {
				t.Fatalf("Migrate: %v, sent %d times", err, sent)
			}
			if keep {
				if st.Peek("k") == nil || len(rec.ops) != 0 {
					t.Errorf("MIGRATE COPY dropped the key or logged %v", rec.kinds())
				}
				return
			}
			if st.Peek("k") != nil {
				t.Error("the key is still there after MIGRATE")
			}
			if got := rec.kinds(); !slices.Equal(got, []string{"drop"}) {
				t.Errorf("logged %v, want [drop]", got)
			}
			if st.FilterBytes() != sizeOf(st, "forever") {
				t.Errorf("%d bytes charged, want the other key's %d", st.FilterBytes(), sizeOf(st, "forever"))
			}
			if line := st.KeyspaceLine(1); line != "keys=1,expires=0,avg_ttl=0" {
				t.Errorf("INFO line %q: the moved key's deadline is still counted", line)
			}
		})
	}
	t.Run("no deadline", func(t *testing.T) {
		st, _ := setup(t)
		err := st.Migrate(&keyspace.Writer{}, []byte("forever"), true, func(_ *keyspace.Entry, ttl int64) error {
			if ttl != 0 {
				t.Errorf("ttl %d for a key with no deadline, want 0", ttl)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("send fails", func(t *testing.T) {
		st, rec := setup(t)
		before := stateOf(st)
		broken := errors.New("connection reset")
		err := st.Migrate(&keyspace.Writer{}, []byte("k"), false, func(*keyspace.Entry, int64) error { return broken })
		if !errors.Is(err, broken) {
			t.Fatalf("Migrate: %v, want send's error", err)
		}
		sameSpace(t, "after a failed send", stateOf(st), before)
		if len(rec.ops) != 0 {
			t.Errorf("logged %v", rec.kinds())
		}
	})
	notSent := func(t *testing.T) func(*keyspace.Entry, int64) error {
		return func(*keyspace.Entry, int64) error {
			t.Error("send was called")
			return nil
		}
	}
	t.Run("missing key", func(t *testing.T) {
		st, _ := setup(t)
		if err := st.Migrate(&keyspace.Writer{}, []byte("nobody"), false, notSent(t)); err != nil {
			t.Errorf("Migrate of a missing key: %v, want nil", err)
		}
	})
	t.Run("expired key", func(t *testing.T) {
		st, rec := setup(t)
		waitPast(expireSoon(t, st, "k", 5))
		rec.reset()
		if err := st.Migrate(&keyspace.Writer{}, []byte("k"), true, notSent(t)); err != nil {
			t.Errorf("Migrate of an expired key: %v, want nil", err)
		}
		if st.Peek("k") != nil {
			t.Error("the expired key was not dropped")
		}
		if got := rec.kinds(); !slices.Equal(got, []string{"drop"}) {
			t.Errorf("logged %v, want [drop]", got)
		}
	})
	t.Run("loading key", func(t *testing.T) {
		st, rec := setup(t)
		header := headerOf(t, st, "forever")
		if err := st.LoadChunk(&keyspace.Writer{}, []byte("loading"), 1, header); err != nil {
			t.Fatal(err)
		}
		rec.reset()
		if err := st.Migrate(&keyspace.Writer{}, []byte("loading"), false, notSent(t)); !errors.Is(err, keyspace.ErrLoading) {
			t.Errorf("Migrate of a key with a load pending: %v, want ErrLoading", err)
		}
		if st.Peek("loading") == nil || len(rec.ops) != 0 {
			t.Errorf("the refused MIGRATE dropped the key or logged %v", rec.kinds())
		}
	})
}

// chunksOf returns key's dump as CF.SCANDUMP gives it: each chunk and
// the iterator CF.LOADCHUNK takes it at.
func chunksOf(t *testing.T, st *keyspace.Store, key string) (chunks [][]byte, iters []int64) {
	t.Helper()
	c := st.Peek(key)
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for iter := int64(0); ; {
		next, chunk := c.ScanDump(iter)
		if chunk == nil {
			return chunks, iters
		}
		chunks, iters = append(chunks, chunk), append(iters, next)
		iter = next
	}
}

// headerOf is the first chunk of key's dump, which creates a key.
func headerOf(t *testing.T, st *keyspace.Store, key string) []byte {
	t.Helper()
	chunks, _ := chunksOf(t, st, key)
	return chunks[0]
}

// TestLoadChunk: the header creates the key, in this server's layout
// with a load pending, during which every write but its chunks is
// refused with ErrLoading; the last chunk makes it the dumped filter, in
// both layouts. Each accepted chunk is logged.
func TestLoadChunk(t *testing.T) {
	for _, p := range []cf.Params{growing, rbGrow} {
		t.Run(p.Layout.String(), func(t *testing.T) { testLoadChunk(t, p) })
	}
}

func testLoadChunk(t *testing.T, p cf.Params) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "src", p, items("s", 500))
	chunks, iters := chunksOf(t, st, "src")
	if len(chunks) < 2 {
		t.Fatalf("%d chunks, want a header and data", len(chunks))
	}
	if iters[0] != 1 {
		t.Fatalf("the header's iterator is %d, want 1", iters[0])
	}
	rec.reset()
	if err := st.LoadChunk(w, []byte("dst"), iters[1], chunks[1]); err != keyspace.ErrNotFound {
		t.Errorf("a data chunk before the header: %v, want ErrNotFound", err)
	}
	if err := st.LoadChunk(w, []byte("dst"), -1, chunks[1]); err != keyspace.ErrNotFound {
		t.Errorf("a negative iterator on a missing key: %v, want ErrNotFound", err)
	}
	if err := st.LoadChunk(w, []byte("src"), 1, chunks[0]); !errors.Is(err, keyspace.ErrItemExists) {
		t.Errorf("a header over an existing key: %v, want ErrItemExists", err)
	}
	if err := st.LoadChunk(w, []byte("dst"), 1, chunks[0]); err != nil {
		t.Fatal(err)
	}
	if err := st.LoadChunk(w, []byte("dst"), -5, chunks[1]); !errors.Is(err, cf.ErrBadChunk) {
		t.Errorf("a negative iterator: %v, want cf.ErrBadChunk", err)
	}
	if p.Layout == cf.LayoutRedisBloom {
		// RedisBloom's layout has no load pending: writes between the
		// chunks are taken, as RedisBloom takes them (cf's rb.go). A
		// deadline's change leaves the filter's data to the chunks.
		if _, err := st.Expire(w, []byte("dst"), hour, 0); err != nil {
			t.Errorf("EXPIRE between RedisBloom chunks: %v", err)
		}
		if _, err := st.Persist(w, []byte("dst")); err != nil {
			t.Errorf("PERSIST between RedisBloom chunks: %v", err)
		}
	} else {
		refused := []struct {
			name string
			err  error
		}{
			{"add", func() error {
				_, err := st.Add(w, []byte("dst"), items("x", 1), keyspace.AddOptions{Create: &growing})
				return err
			}()},
			{"delete", func() error { _, err := st.DeleteItem(w, []byte("dst"), []byte("x")); return err }()},
			{"compact", func() error { _, err := st.Compact(w, []byte("dst")); return err }()},
			{"expire", func() error { _, err := st.Expire(w, []byte("dst"), hour, 0); return err }()},
			{"persist", func() error { _, err := st.Persist(w, []byte("dst")); return err }()},
		}
		for _, r := range refused {
			if !errors.Is(r.err, keyspace.ErrLoading) {
				t.Errorf("%s during a load: %v, want ErrLoading", r.name, r.err)
			}
		}
	}
	for i := 1; i < len(chunks); i++ {
		if err := st.LoadChunk(w, []byte("dst"), iters[i], chunks[i]); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	if !slices.Equal(payloadOf(t, st, "dst"), payloadOf(t, st, "src")) {
		t.Error("the loaded filter dumps differently from its source")
	}
	kinds := slices.DeleteFunc(rec.kinds(), func(k string) bool { return k == "expire" || k == "persist" })
	if len(kinds) != len(chunks) || slices.ContainsFunc(kinds, func(k string) bool { return k != "chunk" }) {
		t.Errorf("logged %v, want %d chunks", rec.kinds(), len(chunks))
	}
	checkCharged(t, st, "after the load")
	mustAdd(t, st, w, "dst", p, items("after", 1)) // writable again
	// A load's records replay to the same filter.
	sameSpace(t, "the load replayed", stateOf(replayInto(t, rec)), space{
		keys: map[string]keyState{"dst": stateOf(st).keys["dst"]}, bytes: sizeOf(st, "dst")})
}

// TestLoadDropped: a key with a load pending may be dropped, releasing
// what its header charged.
func TestLoadDropped(t *testing.T) {
	st, _ := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "src", growing, items("s", 500))
	if err := st.LoadChunk(w, []byte("dst"), 1, headerOf(t, st, "src")); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.Drop(w, []byte("dst")); !ok || err != nil {
		t.Fatalf("DEL of a key with a load pending: %v %v", ok, err)
	}
	if st.FilterBytes() != sizeOf(st, "src") {
		t.Errorf("%d bytes charged, want the source's %d", st.FilterBytes(), sizeOf(st, "src"))
	}
}

// TestReload: DEBUG RELOAD rebuilds every key from its dump, with its
// deadline, logging nothing; a key with a load pending is left as it is.
func TestReload(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "a", growing, items("a", 300))
	mustAdd(t, st, w, "b", rbGrow, items("b", 300))
	mustAdd(t, st, w, "c", fixed, items("c", 30))
	if _, err := st.Expire(w, []byte("b"), hour, 0); err != nil {
		t.Fatal(err)
	}
	if err := st.LoadChunk(w, []byte("loading"), 1, headerOf(t, st, "a")); err != nil {
		t.Fatal(err)
	}
	loading := st.Peek("loading")
	before, entries := stateOf(st), map[string]*keyspace.Entry{}
	for k, c := range st.All() {
		entries[k] = c
	}
	rec.reset()
	n, err := st.Reload(w)
	if err != nil || n != 3 {
		t.Fatalf("Reload: %d keys, %v; want 3", n, err)
	}
	sameSpace(t, "reloaded", stateOf(st), before)
	for _, k := range []string{"a", "b", "c"} {
		if st.Peek(k) == entries[k] || !entries[k].Dead {
			t.Errorf("key %q was not rebuilt", k)
		}
	}
	if st.Peek("loading") != loading {
		t.Error("the key with a load pending was rebuilt")
	}
	if len(rec.ops) != 0 {
		t.Errorf("RELOAD logged %v", rec.kinds())
	}
	if line := st.KeyspaceLine(4); !strings.HasPrefix(line, "keys=4,expires=1,") {
		t.Errorf("INFO line %q after RELOAD", line)
	}
}

// TestReplicaRefusesWrites: on a replica every write is refused with
// ErrReadonly before it changes or logs anything; reads go on, and its
// primary's ops, replayed, still apply.
func TestReplicaRefusesWrites(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "a", growing, items("a", 10))
	mustAdd(t, st, w, "b", fixed, items("b", 3))
	header := headerOf(t, st, "a")
	payload := payloadOf(t, st, "a")
	st.Replica.Store(true)
	rec.reset()
	before := stateOf(st)
	writes := map[string]func() error{
		"add": func() error {
			_, err := st.Add(w, []byte("a"), items("x", 1), keyspace.AddOptions{})
			return err
		},
		"add creating": func() error {
			_, err := st.Add(w, []byte("new"), items("x", 1), keyspace.AddOptions{Create: &growing})
			return err
		},
		"reserve":     func() error { return st.Reserve(w, []byte("new"), &growing) },
		"delete item": func() error { _, err := st.DeleteItem(w, []byte("a"), items("a", 1)[0]); return err },
		"compact":     func() error { _, err := st.Compact(w, []byte("b")); return err },
		"load chunk":  func() error { return st.LoadChunk(w, []byte("new"), 1, header) },
		"expire":      func() error { _, err := st.Expire(w, []byte("a"), hour, 0); return err },
		"expire past": func() error { _, err := st.Expire(w, []byte("a"), 1, 0); return err },
		"persist":     func() error { _, err := st.Persist(w, []byte("a")); return err },
		"rename":      func() error { _, err := st.Rename(w, []byte("a"), []byte("z"), false); return err },
		"restore":     func() error { return st.Restore(w, []byte("new"), payload, 0, false) },
		"restore past": func() error {
			return st.Restore(w, []byte("a"), payload, 1, true)
		},
		"drop":     func() error { _, err := st.Drop(w, []byte("a")); return err },
		"flushall": func() error { return st.FlushAll(w) },
		"migrate": func() error {
			return st.Migrate(w, []byte("a"), false, func(*keyspace.Entry, int64) error { return nil })
		},
	}
	for name, write := range writes {
		if err := write(); !errors.Is(err, keyspace.ErrReadonly) {
			t.Errorf("%s on a replica: %v, want ErrReadonly", name, err)
		}
	}
	sameSpace(t, "after refused writes", stateOf(st), before)
	if len(rec.ops) != 0 {
		t.Errorf("a replica logged %v", rec.kinds())
	}
	if c := st.Get([]byte("a")); c == nil || !c.Exists(items("a", 1)[0]) {
		t.Error("a replica's lookup does not find an item")
	}
	// The primary's stream still applies, and the role's end lifts it.
	st.LockAll()
	err := st.Replay((&keyspace.Op{Kind: keyspace.OpAdd, Key: []byte("a"), Items: items("primary", 2)}).Encode(), 0, nil)
	st.UnlockAll()
	if err != nil || st.Peek("a").Inserted() != 12 {
		t.Errorf("the primary's add: %v, %d items", err, st.Peek("a").Inserted())
	}
	st.Replica.Store(false)
	if _, err := st.Drop(w, []byte("a")); err != nil {
		t.Errorf("a write once no longer a replica: %v", err)
	}
}

// TestExecWatchExpiry: as in Redis (multi.c's isWatchedKeyExpired and
// touchWatchedKey), a watched key whose deadline passes between WATCH and
// EXEC is a change, whether or not it was dropped yet; one already
// expired at WATCH was absent then, and its drop is no change.
func TestExecWatchExpiry(t *testing.T) {
	for _, tc := range []struct {
		name       string
		expiredAt  bool // the deadline passed before WATCH
		drop, make bool // swept before EXEC; made again before EXEC
		runs       bool
	}{
		{name: "expires after WATCH", runs: false},
		{name: "expires after WATCH and is swept", drop: true, runs: false},
		{name: "expired at WATCH", expiredAt: true, runs: true},
		{name: "expired at WATCH and swept", expiredAt: true, drop: true, runs: true},
		{name: "expired at WATCH and made again", expiredAt: true, make: true, runs: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := recorded()
			w := &keyspace.Writer{}
			mustAdd(t, st, w, "k", growing, items("k", 3))
			// Far enough ahead that WATCH comes first, on a loaded machine.
			d := expireSoon(t, st, "k", 150)
			if tc.expiredAt {
				waitPast(d)
			}
			watched := []keyspace.Watch{st.Watch([]byte("k"))}
			waitPast(d)
			if tc.drop {
				if n := st.Sweep(time.Now().Add(time.Minute)); n != 1 {
					t.Fatalf("the sweep dropped %d keys, want 1", n)
				}
			}
			if tc.make {
				mustAdd(t, st, &keyspace.Writer{}, "k", growing, items("new", 1))
			}
			ran := st.Exec(w, watched, func() {})
			if ran != tc.runs {
				t.Fatalf("EXEC ran: %v, want %v", ran, tc.runs)
			}
		})
	}
}
