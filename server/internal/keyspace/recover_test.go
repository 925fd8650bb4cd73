package keyspace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// Recovery's other paths: a crash at each step of a snapshot's install,
// a damaged first snapshot, keys lost with a missing snapshot, a
// replica's position, transactions nested in a replica's batch, and the
// data directory's lock.

// copyDir copies the regular files of dir into a new temporary directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInstallCrash: a crash at any step of installing a snapshot leaves a
// directory that recovers to the state the snapshot saved, with the
// previous snapshot's logs still there until the last step.
func TestInstallCrash(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	w := &keyspace.Writer{}
	workload(t, st, w, "a")
	snapshot(t, st, dir)
	workload(t, st, w, "b")
	want := stateOf(st)
	gen := st.AOF.Generation()
	copies := map[string]string{}
	keyspace.TestHookInstallStep = func(step string) { copies[step] = copyDir(t, dir) }
	t.Cleanup(func() { keyspace.TestHookInstallStep = nil })
	snapshot(t, st, dir)
	keyspace.TestHookInstallStep = nil
	if st.AOF.Generation() != gen+1 {
		t.Errorf("generation %d after a snapshot, was %d", st.AOF.Generation(), gen)
	}
	steps := []string{"written", "verified", "demoted", "installed", "logs removed"}
	for _, step := range steps {
		if copies[step] == "" {
			t.Fatalf("the install never reached step %q", step)
		}
	}
	if _, err := os.Stat(filepath.Join(copies["demoted"], keyspace.SnapName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after the demotion snapshot.cks is still there: %v", err)
	}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			sameSpace(t, "recovered", stateOf(open(t, copies[step])), want)
		})
	}
	// After the last step only the logs from the previous generation on
	// are kept.
	if _, err := os.Stat(filepath.Join(dir, keyspace.LogName(0))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("log 0 outlived the second snapshot: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, keyspace.LogName(gen))); err != nil {
		t.Errorf("log %d, the previous snapshot's, is gone: %v", gen, err)
	}
}

// TestDamagedFirstSnapshot: with no previous snapshot, a damaged one is
// replaced by every log from generation 0 on, which the first snapshot
// keeps: --repair loses nothing.
func TestDamagedFirstSnapshot(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	w := &keyspace.Writer{}
	workload(t, st, w, "a")
	snapshot(t, st, dir)
	workload(t, st, w, "b")
	want := stateOf(st)
	shut(t, st)
	flipByte(t, filepath.Join(dir, keyspace.SnapName), -1)
	if _, err := openErr(t, dir, false); !errors.Is(err, keyspace.ErrCorrupt) {
		t.Fatalf("recovery: %v, want an error wrapping ErrCorrupt", err)
	}
	st, err := openErr(t, dir, true)
	if err != nil {
		t.Fatalf("--repair: %v", err)
	}
	sameSpace(t, "replayed from generation 0", stateOf(st), want)
}

// TestMissingSnapshotsLoseKeys: with the snapshots gone, --repair replays
// the logs alone: ops on a key only the snapshot held are skipped and the
// key is lost, a key the logs drop and make anew comes back as the logs
// made it, and a key renamed away from a lost one is lost too.
func TestMissingSnapshotsLoseKeys(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	w := &keyspace.Writer{}
	for _, k := range []string{"held", "remade", "renamed"} {
		mustAdd(t, st, w, k, growing, items(k, 5))
	}
	snapshot(t, st, dir)
	snapshot(t, st, dir) // removes log 0
	mustAdd(t, st, w, "held", growing, items("more", 2))
	if _, err := st.Drop(w, []byte("remade")); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, st, w, "remade", fixed, items("anew", 2))
	if _, err := st.Rename(w, []byte("renamed"), []byte("moved"), false); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, st, w, "new", growing, items("new", 3))
	want := stateOf(st)
	shut(t, st)
	for _, name := range []string{keyspace.SnapName, keyspace.SnapPrev} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	st = keyspace.NewStore(0, 1<<30)
	a, err := keyspace.RecoverDir(st, dir, keyspace.FsyncNo, true, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("--repair: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	// The warning names the keys lost, and only those.
	var lost struct {
		Keys int
		Lost string
	}
	for line := range bytes.Lines(logs.Bytes()) {
		if bytes.Contains(line, []byte(`"lost":`)) {
			if err := json.Unmarshal(line, &lost); err != nil {
				t.Fatal(err)
			}
		}
	}
	if lost.Keys != 2 || !strings.Contains(lost.Lost, `"held"`) || !strings.Contains(lost.Lost, `"moved"`) || strings.Contains(lost.Lost, "remade") {
		t.Errorf("the repair named %d keys lost: %s; want held and moved", lost.Keys, lost.Lost)
	}
	for _, k := range []string{"held", "moved"} {
		delete(want.keys, k)
	}
	want.bytes = sizeOf(st, "remade") + sizeOf(st, "new")
	sameSpace(t, "logs alone", stateOf(st), want)
}

// TestReplicaPosition: a replica's snapshot logs its position in its
// primary's stream first in the new generation, and recovery keeps the
// last position replayed; an invalid one reads as none.
func TestReplicaPosition(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	mustAdd(t, st, &keyspace.Writer{}, "k", growing, items("x", 3))
	st.Repl = positioned{"primary-id", 4242}
	st.Replica.Store(true)
	snapshot(t, st, dir)
	shut(t, st)
	st = open(t, dir)
	if st.ReplID != "primary-id" || st.ReplOffset != 4242 {
		t.Fatalf("recovered position %q %d, want primary-id 4242", st.ReplID, st.ReplOffset)
	}
	// A promotion logs an invalid position; it is the last one now.
	st.LockAll()
	err := st.Replay(keyspace.EncodeReplPos("", -1), 0, nil)
	st.UnlockAll()
	if err != nil || st.ReplID != "" || st.ReplOffset != -1 {
		t.Fatalf("an invalid position: %v, %q %d", err, st.ReplID, st.ReplOffset)
	}
	bad := append(keyspace.EncodeReplPos("x", 1), 0)
	if err := st.Replay(bad, 0, nil); err == nil {
		t.Error("a position with a trailing byte replayed")
	}
}

// positioned is a replica's stream held at one position.
type positioned struct {
	id     string
	offset int64
}

func (positioned) Feed([]byte) {}

func (p positioned) WithPosition(fn func(string, int64)) { fn(p.id, p.offset) }

// TestReplayMulti: a transaction's record applies its ops in order; a
// replica's batch may hold a transaction one level down, no deeper; a
// record whose count or length is damaged is refused.
func TestReplayMulti(t *testing.T) {
	create := (&keyspace.Op{Kind: keyspace.OpCreate, Key: []byte("k"), Params: growing}).Encode()
	add := (&keyspace.Op{Kind: keyspace.OpAdd, Key: []byte("k"), Items: items("x", 2)}).Encode()
	drop := (&keyspace.Op{Kind: keyspace.OpDrop, Key: []byte("k")}).Encode()
	txn := keyspace.EncodeMulti([][]byte{create, add})
	for _, tc := range []struct {
		name  string
		rec   []byte
		items int64 // in k afterwards; -1: k absent
		ok    bool
	}{
		{"ops in order", txn, 2, true},
		{"dropped in the same record", keyspace.EncodeMulti([][]byte{create, add, drop}), -1, true},
		{"a transaction in a batch", keyspace.EncodeMulti([][]byte{txn, keyspace.EncodeReplPos("p", 9)}), 2, true},
		{"nested twice", keyspace.EncodeMulti([][]byte{keyspace.EncodeMulti([][]byte{txn})}), -1, false},
		{"count past the record", append([]byte{keyspace.OpMulti, 9}, txn[2:]...), -1, false},
		{"trailing byte", append(slices.Clone(txn), 0), -1, false},
		{"an op out of order", keyspace.EncodeMulti([][]byte{add, create}), -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := keyspace.NewStore(0, 1<<30)
			err := st.Replay(tc.rec, 0, nil)
			if (err == nil) != tc.ok {
				t.Fatalf("Replay: %v, want success %v", err, tc.ok)
			}
			if !tc.ok {
				return
			}
			c := st.Peek("k")
			switch {
			case tc.items < 0 && c != nil:
				t.Error("k is there")
			case tc.items >= 0 && (c == nil || c.Inserted() != tc.items):
				t.Errorf("k holds %v, want %d items", c, tc.items)
			}
		})
	}
}

// TestLockDir: one server at a time on a data directory.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	first, err := keyspace.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := keyspace.LockDir(dir); err == nil {
		second.Close()
		t.Fatal("a second lock on the directory was granted")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := keyspace.LockDir(dir)
	if err != nil {
		t.Fatalf("the lock once released: %v", err)
	}
	again.Close()
}

// TestBothSnapshotsDamaged: with the previous snapshot damaged too and
// the logs before it gone, nothing replaces the newest: startup refuses,
// and --repair sets both aside and replays the logs alone, keeping the
// keys they made and losing those only the snapshots held.
func TestBothSnapshotsDamaged(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	w := &keyspace.Writer{}
	workload(t, st, w, "a")
	snapshot(t, st, dir)
	workload(t, st, w, "b")
	snapshot(t, st, dir) // removes log 0: phase a is in the snapshots only
	workload(t, st, w, "c")
	want := stateOf(st)
	shut(t, st)
	for _, name := range []string{keyspace.SnapName, keyspace.SnapPrev} {
		flipByte(t, filepath.Join(dir, name), 30)
	}
	if _, err := openErr(t, dir, false); !errors.Is(err, keyspace.ErrCorrupt) {
		t.Fatalf("recovery: %v, want an error wrapping ErrCorrupt", err)
	}
	st, err := openErr(t, dir, true)
	if err != nil {
		t.Fatalf("--repair: %v", err)
	}
	for k := range want.keys {
		if k[0] == 'a' {
			delete(want.keys, k)
		}
	}
	want.bytes = sumOfSizes(st)
	sameSpace(t, "logs alone", stateOf(st), want)
	for _, name := range []string{keyspace.SnapName + ".damaged", keyspace.SnapPrev + ".damaged"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("a damaged snapshot was not kept aside: %v", err)
		}
	}
}
