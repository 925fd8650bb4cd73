package keyspace_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// These tests write through the typed calls to a store on a data
// directory, stop it, and recover the directory into a fresh store: every
// key must come back with the same dump, deadline, item counts and bytes
// charged, whether the state stands on the logs alone, on a snapshot, or
// on a snapshot taken while writes went on before and after it.

// hour is a deadline far enough ahead that no test sees it pass.
var hour = keyspace.NowMs() + 3600_000

// workload makes every kind of write on keys named with tag: creates of
// each shape, adds that grow a filter, deletes, deadlines set and
// cleared, a rename that moves a deadline, a restore, a load by chunks, a
// drop, a compact and a transaction.
func workload(t *testing.T, st *keyspace.Store, w *keyspace.Writer, tag string) {
	t.Helper()
	k := func(name string) string { return tag + ":" + name }
	mustAdd(t, st, w, k("grow"), growing, items(tag, 300)) // several doublings
	if err := st.Reserve(w, []byte(k("fixed")), &fixed); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, st, w, k("fixed"), fixed, items("f", 20))
	mustAdd(t, st, w, k("rb"), rbGrow, items("rb", 200))
	for _, it := range items("f", 5) {
		if ok, err := st.DeleteItem(w, []byte(k("fixed")), it); err != nil || !ok {
			t.Fatalf("delete %q: %v %v", it, ok, err)
		}
	}
	for _, it := range items("rb", 150) {
		if ok, err := st.DeleteItem(w, []byte(k("rb")), it); err != nil || !ok {
			t.Fatalf("delete %q: %v %v", it, ok, err)
		}
	}
	if _, err := st.Compact(w, []byte(k("rb"))); err != nil {
		t.Fatal(err)
	}
	// Deadlines: one kept, one cleared, one moved by a rename.
	for _, name := range []string{"grow", "fixed", "rb"} {
		if ok, err := st.Expire(w, []byte(k(name)), hour+int64(len(name)), 0); err != nil || !ok {
			t.Fatalf("expire %s: %v %v", name, ok, err)
		}
	}
	if ok, err := st.Persist(w, []byte(k("fixed"))); err != nil || !ok {
		t.Fatalf("persist: %v %v", ok, err)
	}
	if ok, err := st.Rename(w, []byte(k("rb")), []byte(k("moved")), false); err != nil || !ok {
		t.Fatalf("rename: %v %v", ok, err)
	}
	// A restore of grow's dump, with its own deadline, over a key that
	// exists.
	mustAdd(t, st, w, k("restored"), fixed, items("old", 3))
	if err := st.Restore(w, []byte(k("restored")), payloadOf(t, st, k("grow")), hour+7, true); err != nil {
		t.Fatal(err)
	}
	loadByChunks(t, st, w, k("fixed"), k("loaded"))
	// A key made and dropped, and one dropped by a deadline passed.
	mustAdd(t, st, w, k("gone"), growing, items("g", 3))
	if ok, err := st.Drop(w, []byte(k("gone"))); err != nil || !ok {
		t.Fatalf("drop: %v %v", ok, err)
	}
	mustAdd(t, st, w, k("expired"), growing, items("e", 3))
	if ok, err := st.Expire(w, []byte(k("expired")), 1, 0); err != nil || !ok {
		t.Fatalf("expire in the past: %v %v", ok, err)
	}
	if !st.Exec(w, nil, func() {
		mustAdd(t, st, w, k("txn"), growing, items("t", 4))
		if _, err := st.DeleteItem(w, []byte(k("grow")), items(tag, 1)[0]); err != nil {
			t.Error(err)
		}
	}) {
		t.Fatal("EXEC without WATCH did not run")
	}
}

// loadByChunks copies from's filter into to as CF.SCANDUMP and
// CF.LOADCHUNK do.
func loadByChunks(t *testing.T, st *keyspace.Store, w *keyspace.Writer, from, to string) {
	t.Helper()
	c := st.Peek(from)
	var chunks [][]byte
	var iters []int64
	c.Mu.Lock()
	for iter := int64(0); ; {
		next, chunk := c.ScanDump(iter)
		if chunk == nil {
			break
		}
		chunks, iters = append(chunks, chunk), append(iters, next)
		iter = next
	}
	c.Mu.Unlock()
	if len(chunks) < 2 {
		t.Fatalf("the dump of %q has %d chunks, want a header and data", from, len(chunks))
	}
	for i := range chunks {
		if err := st.LoadChunk(w, []byte(to), iters[i], chunks[i]); err != nil {
			t.Fatalf("chunk %d at %d: %v", i, iters[i], err)
		}
	}
}

func TestRecoverRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		// run writes to st on dir, snapshotting where it likes.
		run func(t *testing.T, st *keyspace.Store, dir string)
	}{
		{"logs alone", func(t *testing.T, st *keyspace.Store, dir string) {
			workload(t, st, &keyspace.Writer{}, "a")
		}},
		{"snapshot last", func(t *testing.T, st *keyspace.Store, dir string) {
			workload(t, st, &keyspace.Writer{}, "a")
			if n := snapshot(t, st, dir); n != st.Len() {
				t.Errorf("snapshot wrote %d keys, the store holds %d", n, st.Len())
			}
		}},
		{"snapshot mid-way", func(t *testing.T, st *keyspace.Store, dir string) {
			w := &keyspace.Writer{}
			workload(t, st, w, "a")
			snapshot(t, st, dir)
			// Changes to keys the snapshot holds, and new keys.
			mustAdd(t, st, w, "a:grow", growing, items("after", 50))
			if _, err := st.Rename(w, []byte("a:moved"), []byte("b:moved"), false); err != nil {
				t.Fatal(err)
			}
			workload(t, st, w, "b")
		}},
		{"two snapshots", func(t *testing.T, st *keyspace.Store, dir string) {
			w := &keyspace.Writer{}
			workload(t, st, w, "a")
			snapshot(t, st, dir)
			workload(t, st, w, "b")
			snapshot(t, st, dir)
			workload(t, st, w, "c")
		}},
		{"flushall in the log", func(t *testing.T, st *keyspace.Store, dir string) {
			w := &keyspace.Writer{}
			workload(t, st, w, "a")
			if err := st.FlushAll(w); err != nil {
				t.Fatal(err)
			}
			workload(t, st, w, "b")
		}},
		{"flushall after a snapshot", func(t *testing.T, st *keyspace.Store, dir string) {
			w := &keyspace.Writer{}
			workload(t, st, w, "a")
			snapshot(t, st, dir)
			if err := st.FlushAll(w); err != nil {
				t.Fatal(err)
			}
			workload(t, st, w, "b")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st := open(t, dir)
			tc.run(t, st, dir)
			want := stateOf(st)
			if len(want.keys) == 0 {
				t.Fatal("the workload left no key")
			}
			shut(t, st)
			sameSpace(t, "recovered", stateOf(open(t, dir)), want)
		})
	}
}

// TestRecoverTwice: a recovered store takes writes and recovers again,
// its log going on from where recovery left it.
func TestRecoverTwice(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	w := &keyspace.Writer{}
	workload(t, st, w, "a")
	shut(t, st)
	st = open(t, dir)
	workload(t, st, w, "b")
	if _, err := st.Rename(w, []byte("a:grow"), []byte("b:grow"), false); err != nil {
		t.Fatal(err)
	}
	want := stateOf(st)
	shut(t, st)
	sameSpace(t, "recovered twice", stateOf(open(t, dir)), want)
}

// logPath is the newest log in dir.
func logPath(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "appendonly.*.log"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no log in %s: %v", dir, err)
	}
	return m[len(m)-1]
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// twoPhases writes phase a, stops, writes phase b (starting at offset
// split of the log) and stops: it returns the state after a and after b.
func twoPhases(t *testing.T, dir string) (split int64, afterA, afterB space) {
	t.Helper()
	st := open(t, dir)
	w := &keyspace.Writer{}
	workload(t, st, w, "a")
	afterA = stateOf(st)
	shut(t, st)
	split = fileSize(t, logPath(t, dir))
	st = open(t, dir)
	workload(t, st, w, "b")
	afterB = stateOf(st)
	shut(t, st)
	return split, afterA, afterB
}

// TestTornLastRecord: a record cut short by the end of the last log is a
// write that never finished: dropped, the file cut back, the rest kept.
func TestTornLastRecord(t *testing.T) {
	rec := keyspace.AppendRecord(nil, (&keyspace.Op{Kind: keyspace.OpAdd, Key: []byte("a:grow"), Items: items("torn", 3)}).Encode())
	for _, tc := range []struct {
		name string
		tail []byte
	}{
		{"header cut", rec[:keyspace.RecordHeader-3]},
		{"payload cut", rec[:len(rec)-1]},
		{"length only", rec[:4]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st := open(t, dir)
			workload(t, st, &keyspace.Writer{}, "a")
			want := stateOf(st)
			shut(t, st)
			path := logPath(t, dir)
			good := fileSize(t, path)
			appendFile(t, path, tc.tail)
			st = open(t, dir)
			sameSpace(t, "after a torn record", stateOf(st), want)
			if got := fileSize(t, path); got != good {
				t.Errorf("log of %d bytes after recovery, want it cut back to %d", got, good)
			}
			// The log goes on from the good end: a write and a restart.
			mustAdd(t, st, &keyspace.Writer{}, "a:grow", growing, items("next", 2))
			want = stateOf(st)
			shut(t, st)
			sameSpace(t, "after the next write", stateOf(open(t, dir)), want)
		})
	}
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// flipByte inverts the byte at off of path.
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(data))
	}
	data[off] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedRecord: a complete record that fails its checksum is refused
// wherever it is, the last record of the last log included; --repair cuts
// the log at it, keeping the records before it.
func TestDamagedRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		// at is the byte to flip, from the split between the phases (or
		// from the end, if negative).
		at    func(split int64) int64
		first bool // the damage is phase b's first record: repair keeps phase a
	}{
		{"first record of a run", func(split int64) int64 { return split + keyspace.RecordHeader }, true},
		{"checksum field", func(split int64) int64 { return split + 5 }, true},
		{"last record", func(int64) int64 { return -1 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			split, afterA, afterB := twoPhases(t, dir)
			path := logPath(t, dir)
			size := fileSize(t, path)
			off := tc.at(split)
			flipByte(t, path, off)

			if _, err := openErr(t, dir, false); !errors.Is(err, keyspace.ErrCorrupt) {
				t.Fatalf("recovery of a damaged log: %v, want an error wrapping ErrCorrupt", err)
			}
			if got := fileSize(t, path); got != size {
				t.Fatalf("a refused recovery changed the log: %d bytes, was %d", got, size)
			}
			st, err := openErr(t, dir, true)
			if err != nil {
				t.Fatalf("--repair: %v", err)
			}
			got := stateOf(st)
			if tc.first {
				sameSpace(t, "repaired", got, afterA)
				if n := fileSize(t, path); n != split {
					t.Errorf("repaired log of %d bytes, want it cut at %d", n, split)
				}
				return
			}
			// The last record (the transaction) is lost, and only it.
			if n := fileSize(t, path); n >= size || n <= split {
				t.Errorf("repaired log of %d bytes, want it cut between %d and %d", n, split, size)
			}
			if _, ok := got.keys["b:txn"]; ok {
				t.Error("the damaged last record was applied")
			}
			delete(afterB.keys, "b:txn")
			// The transaction's delete from b:grow is lost too.
			g, w := got.keys["b:grow"], afterB.keys["b:grow"]
			if g.inserted != w.inserted+1 || g.deleted != w.deleted-1 {
				t.Errorf("b:grow: %d items inserted and %d deleted, want %d and %d", g.inserted, g.deleted, w.inserted+1, w.deleted-1)
			}
			afterB.keys["b:grow"] = g
			afterB.bytes = sumOfSizes(st)
			sameSpace(t, "repaired", got, afterB)
		})
	}
}

// TestDamagedLength: a length beyond MaxRecord cannot be a torn write,
// even at the end of the last log: refused, and repair drops the rest.
func TestDamagedLength(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	workload(t, st, &keyspace.Writer{}, "a")
	want := stateOf(st)
	shut(t, st)
	path := logPath(t, dir)
	good := fileSize(t, path)
	header := binary.LittleEndian.AppendUint32(nil, keyspace.MaxRecord+1)
	appendFile(t, path, append(header, 0, 0, 0, 0)) // a whole header, its checksum aside
	if _, err := openErr(t, dir, false); !errors.Is(err, keyspace.ErrCorrupt) {
		t.Fatalf("recovery: %v, want an error wrapping ErrCorrupt", err)
	}
	st, err := openErr(t, dir, true)
	if err != nil {
		t.Fatalf("--repair: %v", err)
	}
	sameSpace(t, "repaired", stateOf(st), want)
	if n := fileSize(t, path); n != good {
		t.Errorf("repaired log of %d bytes, want %d", n, good)
	}
}

// TestRecordThatDoesNotApply: a record whose checksum holds but whose op
// cannot apply (an add to a key that never existed) is damage too.
func TestRecordThatDoesNotApply(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	workload(t, st, &keyspace.Writer{}, "a")
	want := stateOf(st)
	shut(t, st)
	path := logPath(t, dir)
	good := fileSize(t, path)
	bad := (&keyspace.Op{Kind: keyspace.OpAdd, Key: []byte("never made"), Items: items("x", 1)}).Encode()
	after := (&keyspace.Op{Kind: keyspace.OpDrop, Key: []byte("a:grow")}).Encode()
	appendFile(t, path, keyspace.AppendRecord(keyspace.AppendRecord(nil, bad), after))
	if _, err := openErr(t, dir, false); !errors.Is(err, keyspace.ErrCorrupt) {
		t.Fatalf("recovery: %v, want an error wrapping ErrCorrupt", err)
	}
	st, err := openErr(t, dir, true)
	if err != nil {
		t.Fatalf("--repair: %v", err)
	}
	// The drop after the bad record is cut with it.
	sameSpace(t, "repaired", stateOf(st), want)
	if n := fileSize(t, path); n != good {
		t.Errorf("repaired log of %d bytes, want %d", n, good)
	}
}

// TestDamagedSnapshot: a flipped byte in the newest snapshot refuses
// startup; --repair loads the previous snapshot and the logs since it,
// losing nothing, and keeps the damaged file aside.
func TestDamagedSnapshot(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	w := &keyspace.Writer{}
	workload(t, st, w, "a")
	snapshot(t, st, dir)
	workload(t, st, w, "b")
	snapshot(t, st, dir)
	workload(t, st, w, "c")
	want := stateOf(st)
	shut(t, st)
	newest := filepath.Join(dir, keyspace.SnapName)
	flipByte(t, newest, 40)

	if _, err := openErr(t, dir, false); !errors.Is(err, keyspace.ErrCorrupt) {
		t.Fatalf("recovery: %v, want an error wrapping ErrCorrupt", err)
	}
	st, err := openErr(t, dir, true)
	if err != nil {
		t.Fatalf("--repair: %v", err)
	}
	sameSpace(t, "repaired from the previous snapshot", stateOf(st), want)
	if _, err := os.Stat(newest + ".damaged"); err != nil {
		t.Errorf("the damaged snapshot was not kept aside: %v", err)
	}
}

// TestMissingSnapshots: logs that start after generation 0 with neither
// snapshot there refuse startup with ErrNoSnapshot; --repair replays the
// logs alone, keeping the keys they create whole, and saves a snapshot.
func TestMissingSnapshots(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	w := &keyspace.Writer{}
	workload(t, st, w, "a")
	snapshot(t, st, dir)
	snapshot(t, st, dir) // the second removes log 0
	workload(t, st, w, "b")
	want := stateOf(st)
	shut(t, st)
	if _, err := os.Stat(filepath.Join(dir, keyspace.LogName(0))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("log 0 is still there after two snapshots: %v", err)
	}
	for _, name := range []string{keyspace.SnapName, keyspace.SnapPrev} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := openErr(t, dir, false); !errors.Is(err, keyspace.ErrNoSnapshot) {
		t.Fatalf("recovery: %v, want an error wrapping ErrNoSnapshot", err)
	}
	st, err := openErr(t, dir, true)
	if err != nil {
		t.Fatalf("--repair: %v", err)
	}
	// Phase a's keys were only in the snapshots: lost. Phase b's are
	// made in the logs, whole.
	for k := range want.keys {
		if k[0] == 'a' {
			delete(want.keys, k)
		}
	}
	want.bytes = sumOfSizes(st)
	sameSpace(t, "logs alone", stateOf(st), want)
	if _, err := os.Stat(filepath.Join(dir, keyspace.SnapName)); err != nil {
		t.Errorf("--repair saved no snapshot: %v", err)
	}
	// The snapshot it saved stands: the next start needs no --repair.
	shut(t, st)
	sameSpace(t, "restarted after the repair", stateOf(open(t, dir)), want)
}

// TestSnapshotRefusedWhileLogFailed: a snapshot needs the log's rotation,
// so it is refused with MISCONF while the log cannot write, and so are
// writes; once the disk has room the log heals and both go through.
func TestSnapshotRefusedWhileLogFailed(t *testing.T) {
	lf := keyspace.InjectLogFaults(t.Cleanup)
	dir := t.TempDir()
	st := open(t, dir)
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "k", growing, items("x", 3))
	if err := st.AOF.Durable(w.LSN); err != nil {
		t.Fatal(err)
	}
	lf.Full(5)
	mustAdd(t, st, w, "k", growing, items("y", 3)) // in memory, not on disk
	if err := st.AOF.Durable(w.LSN); !errors.Is(err, keyspace.ErrMisconf) {
		t.Fatalf("commit on a full disk: %v, want MISCONF", err)
	}
	if _, err := st.Add(w, []byte("k"), items("z", 1), keyspace.AddOptions{}); !errors.Is(err, keyspace.ErrMisconf) {
		t.Fatalf("a write while the log is failed: %v, want MISCONF", err)
	}
	if err := st.Reserve(w, []byte("new"), &growing); !errors.Is(err, keyspace.ErrMisconf) {
		t.Fatalf("a create while the log is failed: %v, want MISCONF", err)
	}
	if st.Peek("new") != nil {
		t.Fatal("a refused create made its key")
	}
	if _, _, _, err := st.Snapshot(dir); !errors.Is(err, keyspace.ErrMisconf) {
		t.Fatalf("snapshot while the log is failed: %v, want MISCONF", err)
	}
	lf.Free()
	if err := st.AOF.Durable(w.LSN); err != nil {
		t.Fatalf("commit once there is room: %v", err)
	}
	mustAdd(t, st, w, "k", growing, items("z", 1))
	snapshot(t, st, dir)
	want := stateOf(st)
	if got := want.keys["k"].inserted; got != 7 {
		t.Fatalf("%d items in k, want 7", got)
	}
	shut(t, st)
	sameSpace(t, "recovered after healing", stateOf(open(t, dir)), want)
}

// TestReplaceFromPayload: a replica's full copy installs each key from its
// dump unlogged and uncharged against the limit; DropExcept removes the
// keys the copy did not hold.
func TestReplaceFromPayload(t *testing.T) {
	src, _ := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, src, w, "a", growing, items("a", 100))
	mustAdd(t, src, w, "b", rbGrow, items("b", 100))
	dst, rec := recorded()
	mustAdd(t, dst, w, "b", fixed, items("old", 1))
	mustAdd(t, dst, w, "stale", fixed, items("old", 1))
	rec.reset()
	dst.Maxmem.Store(1) // a copy is never refused for memory
	dst.LockAll()
	for k, d := range map[string]int64{"a": hour, "b": 0} {
		if err := dst.ReplaceFromPayload([]byte(k), d, payloadOf(t, src, k)); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	if n := dst.DropExcept(map[string]uint64{"a": 0, "b": 0}); n != 1 {
		t.Errorf("DropExcept dropped %d keys, want 1", n)
	}
	dst.UnlockAll()
	if len(rec.ops) != 0 {
		t.Errorf("the copy logged %v", rec.kinds())
	}
	want := stateOf(src)
	a := want.keys["a"]
	a.deadline = hour
	want.keys["a"] = a
	sameSpace(t, "copied", stateOf(dst), want)
	if dst.Peek("stale") != nil {
		t.Error("a key the copy did not hold is still there")
	}
	// A payload that does not check is refused.
	bad := payloadOf(t, src, "a")
	bad[len(bad)/2] ^= 1
	charged := dst.FilterBytes()
	dst.LockAll()
	err := dst.ReplaceFromPayload([]byte("c"), 0, bad)
	dst.UnlockAll()
	if err == nil || dst.Peek("c") != nil {
		t.Fatalf("a damaged payload: %v, key made: %v", err, dst.Peek("c") != nil)
	}
	if got := dst.FilterBytes(); got != charged {
		t.Errorf("a refused payload left %d bytes charged, was %d", got, charged)
	}
}

// TestTornRecordInEarlierLog: a record cut short is a write that never
// finished only at the end of the last log; in a log before it, later
// writes followed, so it is damage: refused, and --repair cuts it.
func TestTornRecordInEarlierLog(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	w := &keyspace.Writer{}
	workload(t, st, w, "a")
	snapshot(t, st, dir) // log 1 begins
	workload(t, st, w, "b")
	want := stateOf(st)
	shut(t, st)
	// Without the snapshot the logs from generation 0 are the whole
	// state, and both are replayed.
	if err := os.Remove(filepath.Join(dir, keyspace.SnapName)); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, keyspace.LogName(0))
	good := fileSize(t, first)
	appendFile(t, first, []byte{200, 0, 0, 0, 1, 2})
	if _, err := openErr(t, dir, false); !errors.Is(err, keyspace.ErrCorrupt) {
		t.Fatalf("recovery: %v, want an error wrapping ErrCorrupt", err)
	}
	st, err := openErr(t, dir, true)
	if err != nil {
		t.Fatalf("--repair: %v", err)
	}
	sameSpace(t, "repaired", stateOf(st), want)
	if n := fileSize(t, first); n != good {
		t.Errorf("log 0 of %d bytes after the repair, want %d", n, good)
	}
}

// TestWriterLSN: a write raises its writer's LSN to its record's end, and
// the record reaches the file only at Durable, which the connection calls
// before it sends the replies.
func TestWriterLSN(t *testing.T) {
	dir := t.TempDir()
	st := open(t, dir)
	path := logPath(t, dir)
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "k", growing, items("x", 1))
	if w.LSN == 0 || w.LSN != st.AOF.Position() {
		t.Fatalf("LSN %d after a write, the log's position %d", w.LSN, st.AOF.Position())
	}
	lsn := w.LSN
	if _, err := st.Add(w, []byte("k"), items("x", 1), keyspace.AddOptions{NX: true}); err != nil {
		t.Fatal(err)
	}
	if w.LSN != lsn {
		t.Errorf("a write that logged nothing moved the LSN from %d to %d", lsn, w.LSN)
	}
	if n := fileSize(t, path); n != 0 {
		t.Fatalf("%d bytes in the log before any commit", n)
	}
	if err := st.AOF.Durable(w.LSN); err != nil {
		t.Fatal(err)
	}
	if n := fileSize(t, path); n != int64(lsn) {
		t.Errorf("%d bytes in the log after the commit, want %d", n, lsn)
	}
	// The server's own writes (nil) wait for nothing but are logged.
	if _, err := st.Expire(nil, []byte("k"), hour, 0); err != nil {
		t.Fatal(err)
	}
	if st.AOF.Position() <= lsn || w.LSN != lsn {
		t.Errorf("the server's write: position %d, client LSN %d (was %d)", st.AOF.Position(), w.LSN, lsn)
	}
	if st.Dirty.Load() != 3 {
		t.Errorf("%d ops since the last snapshot, want 3", st.Dirty.Load())
	}
	// A transaction's record is logged when EXEC's commands have run: the
	// client's LSN covers it, so EXEC's reply waits for all of them.
	lsn = w.LSN
	st.Exec(w, nil, func() {
		mustAdd(t, st, w, "k", growing, items("in exec", 2))
		if w.LSN != lsn {
			t.Errorf("a write inside EXEC moved the LSN from %d to %d before the transaction was logged", lsn, w.LSN)
		}
	})
	if w.LSN != st.AOF.Position() || st.Dirty.Load() != 4 {
		t.Errorf("after EXEC: LSN %d, the log's position %d, %d ops dirty (want 4: one record)", w.LSN, st.AOF.Position(), st.Dirty.Load())
	}
	snapshot(t, st, dir)
	if st.Dirty.Load() != 0 {
		t.Errorf("%d ops dirty after a snapshot", st.Dirty.Load())
	}
}
