package keyspace_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// RESTORE and RENAME: the writes that put a whole filter under a key.

// restoreFixture is a store holding src (a growing filter of 200 items,
// whose dump the tests restore) and old (a small fixed filter, the key
// restores may replace), with nothing recorded yet.
func restoreFixture(t *testing.T) (*keyspace.Store, *recorder, []byte) {
	t.Helper()
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "src", growing, items("s", 200))
	mustAdd(t, st, w, "old", fixed, items("o", 5))
	rec.reset()
	return st, rec, payloadOf(t, st, "src")
}

func TestRestore(t *testing.T) {
	t.Run("new key", func(t *testing.T) {
		st, rec, payload := restoreFixture(t)
		if err := st.Restore(&keyspace.Writer{}, []byte("new"), payload, hour, false); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(payloadOf(t, st, "new"), payload) {
			t.Error("the restored filter dumps differently")
		}
		if d := st.Peek("new").Deadline.Load(); d != hour {
			t.Errorf("deadline %d, want %d", d, hour)
		}
		if st.Peek("new") == st.Peek("src") {
			t.Error("the restore shares the source's entry")
		}
		if got := rec.kinds(); !slices.Equal(got, []string{"restore"}) {
			t.Errorf("logged %v, want [restore]", got)
		}
		if st.FilterBytes() != sumOfSizes(st) {
			t.Errorf("%d bytes charged, the filters take %d", st.FilterBytes(), sumOfSizes(st))
		}
	})
	t.Run("existing key without replace", func(t *testing.T) {
		st, rec, payload := restoreFixture(t)
		before, old := stateOf(st), st.Peek("old")
		err := st.Restore(&keyspace.Writer{}, []byte("old"), payload, 0, false)
		if !errors.Is(err, keyspace.ErrBusyKey) {
			t.Fatalf("Restore: %v, want ErrBusyKey", err)
		}
		sameSpace(t, "after BUSYKEY", stateOf(st), before)
		if st.Peek("old") != old || len(rec.ops) != 0 {
			t.Errorf("a refused restore replaced the entry or logged %v", rec.kinds())
		}
	})
	t.Run("existing key with replace", func(t *testing.T) {
		st, rec, payload := restoreFixture(t)
		old := st.Peek("old")
		if err := st.Restore(&keyspace.Writer{}, []byte("old"), payload, 0, true); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(payloadOf(t, st, "old"), payload) {
			t.Error("the key does not hold the restored filter")
		}
		if !old.Dead {
			t.Error("the replaced entry is not marked dead: a writer holding it would write to a lost filter")
		}
		if got := rec.kinds(); !slices.Equal(got, []string{"restore"}) {
			t.Errorf("logged %v, want [restore]", got)
		}
		if want := 2 * sizeOf(st, "src"); st.FilterBytes() != want {
			t.Errorf("%d bytes charged, want %d: the replaced filter's bytes are released", st.FilterBytes(), want)
		}
	})
	t.Run("replace clears a deadline", func(t *testing.T) {
		st, _, payload := restoreFixture(t)
		if _, err := st.Expire(nil, []byte("old"), hour, 0); err != nil {
			t.Fatal(err)
		}
		if err := st.Restore(&keyspace.Writer{}, []byte("old"), payload, 0, true); err != nil {
			t.Fatal(err)
		}
		if d := st.Peek("old").Deadline.Load(); d != 0 {
			t.Errorf("deadline %d after a restore with none", d)
		}
		if line := st.KeyspaceLine(2); line != "keys=2,expires=0,avg_ttl=0" {
			t.Errorf("INFO line %q: the replaced filter's deadline is still counted", line)
		}
	})
	t.Run("over an expired key", func(t *testing.T) {
		st, rec, payload := restoreFixture(t)
		waitPast(expireSoon(t, st, "old", 5))
		rec.reset()
		if err := st.Restore(&keyspace.Writer{}, []byte("old"), payload, 0, false); err != nil {
			t.Fatalf("Restore over an expired key: %v; it is gone, so not busy", err)
		}
		if !bytes.Equal(payloadOf(t, st, "old"), payload) {
			t.Error("the key does not hold the restored filter")
		}
		if got := rec.kinds(); !slices.Equal(got, []string{"drop", "restore"}) {
			t.Errorf("logged %v, want [drop restore]", got)
		}
	})
}

// TestRestoreDeadlinePassed: a deadline already passed creates nothing,
// and with replace deletes the key it would replace, as Redis does; what
// the payload built is released either way.
func TestRestoreDeadlinePassed(t *testing.T) {
	past := keyspace.NowMs() - 1000
	t.Run("missing key", func(t *testing.T) {
		st, rec, payload := restoreFixture(t)
		before := stateOf(st)
		if err := st.Restore(&keyspace.Writer{}, []byte("new"), payload, past, false); err != nil {
			t.Fatal(err)
		}
		sameSpace(t, "after a restore already expired", stateOf(st), before)
		if len(rec.ops) != 0 {
			t.Errorf("logged %v", rec.kinds())
		}
	})
	t.Run("replace", func(t *testing.T) {
		st, rec, payload := restoreFixture(t)
		if err := st.Restore(&keyspace.Writer{}, []byte("old"), payload, past, true); err != nil {
			t.Fatal(err)
		}
		if st.Peek("old") != nil {
			t.Error("the key a restore already expired replaces is still there")
		}
		if got := rec.kinds(); !slices.Equal(got, []string{"drop"}) {
			t.Errorf("logged %v, want [drop]", got)
		}
		if st.FilterBytes() != sizeOf(st, "src") {
			t.Errorf("%d bytes charged, want %d (src's alone)", st.FilterBytes(), sizeOf(st, "src"))
		}
	})
	t.Run("existing key without replace", func(t *testing.T) {
		st, rec, payload := restoreFixture(t)
		before := stateOf(st)
		err := st.Restore(&keyspace.Writer{}, []byte("old"), payload, past, false)
		if err != nil && !errors.Is(err, keyspace.ErrBusyKey) {
			t.Fatalf("Restore: %v", err)
		}
		sameSpace(t, "after a restore already expired", stateOf(st), before)
		if len(rec.ops) != 0 {
			t.Errorf("logged %v", rec.kinds())
		}
	})
}

// reframe returns body closed as a dump payload is, with a good version
// and checksum: damage the checksum cannot catch.
func reframe(payload, body []byte) []byte {
	n := len(payload) - 6
	out := append(slices.Clone(body), payload[n:n+2]...) // the version
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crc32.MakeTable(crc32.Castagnoli)))
}

// TestRestoreCorruptPayload: a payload that does not load is refused
// before anything changes: the key keeps its filter, nothing is logged,
// and no byte stays charged, even when the damage is found only after the
// tables were built (a good checksum over a bad body).
func TestRestoreCorruptPayload(t *testing.T) {
	st0, _, good := restoreFixture(t)
	rbW := &keyspace.Writer{}
	mustAdd(t, st0, rbW, "rb", rbGrow, items("r", 100))
	rbPayload := payloadOf(t, st0, "rb")
	body := good[:len(good)-6]
	for _, tc := range []struct {
		name    string
		payload []byte
	}{
		{"empty", nil},
		{"flipped byte", func() []byte { p := slices.Clone(good); p[len(p)/2] ^= 0x10; return p }()},
		{"cut short", good[:len(good)-1]},
		{"bad version", func() []byte {
			p := slices.Clone(body)
			p = append(p, 0xff, 0xff)
			return binary.LittleEndian.AppendUint32(p, crc32.Checksum(p, crc32.MakeTable(crc32.Castagnoli)))
		}()},
		{"trailing byte under a good checksum", reframe(good, append(slices.Clone(body), 0))},
		{"runs cut under a good checksum", reframe(good, body[:len(body)-1])},
		{"redisbloom flipped byte", func() []byte { p := slices.Clone(rbPayload); p[len(p)/2] ^= 0x10; return p }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, rec, _ := restoreFixture(t)
			before := stateOf(st)
			for _, replace := range []bool{false, true} {
				if err := st.Restore(&keyspace.Writer{}, []byte("old"), tc.payload, 0, replace); err == nil {
					t.Fatalf("replace=%v: a corrupt payload was restored", replace)
				}
				if err := st.Restore(&keyspace.Writer{}, []byte("new"), tc.payload, hour, replace); err == nil {
					t.Fatalf("replace=%v: a corrupt payload was restored", replace)
				}
			}
			sameSpace(t, "after refused restores", stateOf(st), before)
			if len(rec.ops) != 0 {
				t.Errorf("logged %v", rec.kinds())
			}
		})
	}
}

// TestRestoreOutOfMemory: a payload whose filter does not fit is refused
// with ErrOOM, charging nothing and changing nothing.
func TestRestoreOutOfMemory(t *testing.T) {
	st, rec, payload := restoreFixture(t)
	before := stateOf(st)
	st.Maxmem.Store(st.FilterBytes() + 16)
	err := st.Restore(&keyspace.Writer{}, []byte("old"), payload, 0, true)
	if !errors.Is(err, keyspace.ErrOOM) {
		t.Fatalf("Restore past maxmemory: %v, want ErrOOM", err)
	}
	sameSpace(t, "after a refused restore", stateOf(st), before)
	if len(rec.ops) != 0 {
		t.Errorf("logged %v", rec.kinds())
	}
}

func TestRename(t *testing.T) {
	// fixture: a (with a deadline and 10 items) and b (no deadline).
	fixture := func(t *testing.T) (*keyspace.Store, *recorder, *keyspace.Entry) {
		st, rec := recorded()
		w := &keyspace.Writer{}
		mustAdd(t, st, w, "a", growing, items("a", 10))
		mustAdd(t, st, w, "b", fixed, items("b", 1))
		if _, err := st.Expire(w, []byte("a"), hour, 0); err != nil {
			t.Fatal(err)
		}
		rec.reset()
		return st, rec, st.Peek("a")
	}
	t.Run("to a new key", func(t *testing.T) {
		st, rec, a := fixture(t)
		moved, err := st.Rename(&keyspace.Writer{}, []byte("a"), []byte("c"), false)
		if err != nil || !moved {
			t.Fatalf("Rename: %v %v", moved, err)
		}
		if st.Peek("a") != nil || st.Peek("c") != a || a.Deadline.Load() != hour {
			t.Error("the filter and its deadline did not move to the new key")
		}
		if got := rec.kinds(); !slices.Equal(got, []string{"rename"}) {
			t.Errorf("logged %v, want [rename]", got)
		}
		if line := st.KeyspaceLine(2); !strings.HasPrefix(line, "keys=2,expires=1,") {
			t.Errorf("INFO line %q: the deadline is counted once", line)
		}
		// The deadline is filed under the new name: expired, the sweeper
		// finds it there.
		waitPast(expireSoon(t, st, "c", 5))
		if n := st.Sweep(time.Now().Add(time.Minute)); n != 1 || st.Peek("c") != nil {
			t.Errorf("the sweeper dropped %d keys; the renamed one is there: %v", n, st.Peek("c") != nil)
		}
	})
	t.Run("over an existing key", func(t *testing.T) {
		st, rec, a := fixture(t)
		b := st.Peek("b")
		moved, err := st.Rename(&keyspace.Writer{}, []byte("a"), []byte("b"), false)
		if err != nil || !moved {
			t.Fatalf("Rename: %v %v", moved, err)
		}
		if st.Peek("b") != a || !b.Dead || st.Len() != 1 {
			t.Error("b's filter was not replaced and retired")
		}
		if st.FilterBytes() != sizeOf(st, "b") {
			t.Errorf("%d bytes charged, want %d: the replaced filter's are released", st.FilterBytes(), sizeOf(st, "b"))
		}
		if got := rec.kinds(); !slices.Equal(got, []string{"rename"}) {
			t.Errorf("logged %v, want [rename]", got)
		}
	})
	t.Run("nx over an existing key", func(t *testing.T) {
		st, rec, _ := fixture(t)
		before := stateOf(st)
		moved, err := st.Rename(&keyspace.Writer{}, []byte("a"), []byte("b"), true)
		if err != nil || moved {
			t.Fatalf("RENAMENX onto an existing key: %v %v, want false", moved, err)
		}
		sameSpace(t, "after RENAMENX refused", stateOf(st), before)
		if len(rec.ops) != 0 {
			t.Errorf("logged %v", rec.kinds())
		}
	})
	t.Run("nx over an expired key", func(t *testing.T) {
		st, rec, a := fixture(t)
		waitPast(expireSoon(t, st, "b", 5))
		rec.reset()
		moved, err := st.Rename(&keyspace.Writer{}, []byte("a"), []byte("b"), true)
		if err != nil || !moved || st.Peek("b") != a {
			t.Fatalf("RENAMENX onto an expired key: %v %v, want it moved", moved, err)
		}
		if got := rec.kinds(); !slices.Equal(got, []string{"drop", "rename"}) {
			t.Errorf("logged %v, want [drop rename]", got)
		}
	})
	t.Run("same key", func(t *testing.T) {
		st, rec, _ := fixture(t)
		for _, nx := range []bool{false, true} {
			moved, err := st.Rename(&keyspace.Writer{}, []byte("a"), []byte("a"), nx)
			if err != nil || moved == nx {
				t.Errorf("RENAME a a (nx=%v): %v %v, want %v", nx, moved, err, !nx)
			}
		}
		if st.Peek("a") == nil || len(rec.ops) != 0 {
			t.Errorf("RENAME a a changed the key or logged %v", rec.kinds())
		}
	})
	t.Run("missing source", func(t *testing.T) {
		st, rec, _ := fixture(t)
		for _, to := range []string{"b", "c", "nobody"} {
			if _, err := st.Rename(&keyspace.Writer{}, []byte("nobody"), []byte(to), false); !errors.Is(err, keyspace.ErrNoSuchKey) {
				t.Errorf("RENAME nobody %s: %v, want ErrNoSuchKey", to, err)
			}
		}
		if st.Len() != 2 || len(rec.ops) != 0 {
			t.Errorf("%d keys, logged %v", st.Len(), rec.kinds())
		}
	})
	t.Run("expired source", func(t *testing.T) {
		st, rec, _ := fixture(t)
		waitPast(expireSoon(t, st, "a", 5))
		rec.reset()
		for _, to := range []string{"a", "c"} {
			if _, err := st.Rename(&keyspace.Writer{}, []byte("a"), []byte(to), false); !errors.Is(err, keyspace.ErrNoSuchKey) {
				t.Errorf("RENAME of an expired key to %s: %v, want ErrNoSuchKey", to, err)
			}
		}
		if st.Peek("a") != nil || st.Peek("c") != nil {
			t.Error("the expired key is still there, or was moved")
		}
		if got := rec.kinds(); !slices.Equal(got, []string{"drop"}) {
			t.Errorf("logged %v, want [drop]", got)
		}
	})
	t.Run("deadlines follow the filter", func(t *testing.T) {
		st, _, _ := fixture(t)
		w := &keyspace.Writer{}
		mustAdd(t, st, w, "c", fixed, items("c", 1))
		if _, err := st.Expire(w, []byte("c"), hour+5000, 0); err != nil {
			t.Fatal(err)
		}
		// b (none) over a (a deadline): the deadline goes with a's filter.
		if _, err := st.Rename(w, []byte("b"), []byte("a"), false); err != nil {
			t.Fatal(err)
		}
		if d := st.Peek("a").Deadline.Load(); d != 0 {
			t.Errorf("a holds b's filter with deadline %d, want none", d)
		}
		if expires, _ := parseLine(t, st.KeyspaceLine(2), 2); expires != 1 {
			t.Errorf("expires=%d after a filter with none replaced one with a deadline, want 1", expires)
		}
		// c (a deadline) over a (none).
		if _, err := st.Rename(w, []byte("c"), []byte("a"), false); err != nil {
			t.Fatal(err)
		}
		if d := st.Peek("a").Deadline.Load(); d != hour+5000 {
			t.Errorf("deadline %d, want c's %d", d, hour+5000)
		}
		before := keyspace.NowMs()
		expires, avg := parseLine(t, st.KeyspaceLine(1), 1)
		if most, least := hour+5000-before, hour+5000-keyspace.NowMs(); expires != 1 || avg > most || avg < least {
			t.Errorf("expires=%d avg_ttl=%d, want 1 and c's time to live, %d to %d", expires, avg, least, most)
		}
	})
	t.Run("a watched destination changes", func(t *testing.T) {
		st, _, _ := fixture(t)
		w := &keyspace.Writer{}
		watch := []keyspace.Watch{st.Watch([]byte("b"))}
		if _, err := st.Rename(&keyspace.Writer{}, []byte("a"), []byte("b"), false); err != nil {
			t.Fatal(err)
		}
		if st.Exec(w, watch, func() { t.Error("EXEC ran") }) {
			t.Error("EXEC ran though a RENAME replaced its watched key")
		}
	})
}

// TestRenamesNeverDeadlock: writers rename among a few keys, each with its
// own view of which filter is at which key (a view goes stale while other
// renames move filters). Two renames that lock the same two filters must
// lock them in one order whatever keys they found them under, or each
// holds one and waits for the other forever. The watchdog turns such a
// wait into a failure instead of a hung test; it bounds no speed.
func TestRenamesNeverDeadlock(t *testing.T) {
	const writers, keys = 4, 4
	renames := 20000
	if testing.Short() {
		renames = 4000
	}
	st := open(t, t.TempDir())
	w := &keyspace.Writer{}
	for k := range keys {
		mustAdd(t, st, w, fmt.Sprint("k", k), growing, items(fmt.Sprint(k), 1))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 7))
				w := &keyspace.Writer{}
				for i := range renames {
					from, to := fmt.Sprint("k", r.IntN(keys)), fmt.Sprint("k", r.IntN(keys))
					if _, err := st.Rename(w, []byte(from), []byte(to), false); err != nil && !errors.Is(err, keyspace.ErrNoSuchKey) {
						t.Errorf("RENAME %s %s: %v", from, to, err)
						return
					}
					if i%4 == 0 { // keep the keys from running out
						k := fmt.Sprint("k", r.IntN(keys))
						if _, err := st.Add(w, []byte(k), items(fmt.Sprint(g, "-", i), 1), keyspace.AddOptions{Create: &growing}); err != nil {
							t.Errorf("add to %s: %v", k, err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("renames still running after a minute: two of them wait on each other's lock")
	}
}
