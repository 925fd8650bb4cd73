package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// These tests damage snapshots and stop the server between the steps of
// installing one (snapshot.go, recover.go): every acknowledged write must
// come back, and every refusal must say what --repair will do.

// dirServer is a server on a data directory, driven in-process.
type dirServer struct {
	t *testing.T
	h *Harness
}

func openDirServer(dir string, repair bool) (*dirServer, error) {
	return openDirServerLog(dir, repair, io.Discard)
}

// openDirServerLog is openDirServer with the server's log written to w.
func openDirServerLog(dir string, repair bool, w io.Writer) (*dirServer, error) {
	s, err := New(Config{Dir: dir, Repair: repair, SnapshotLogSize: -1,
		Logger: slog.New(slog.NewTextHandler(w, nil))})
	if err != nil {
		return nil, err
	}
	return &dirServer{h: newHarnessOn(s)}, nil
}

// newHarnessOn returns a client of s, logged in as the default user (the
// reply is not read: a server without users answers AUTH with an error and
// needs none).
func newHarnessOn(s *Server) *Harness {
	h := &Harness{s: s}
	h.cl = &client{wr: resp.NewWriter(&h.b)}
	h.Exec([][]byte{[]byte("AUTH"), []byte("default"), []byte("-")})
	return h
}

func mustOpen(t *testing.T, dir string, repair bool) *dirServer {
	t.Helper()
	ds, err := openDirServer(dir, repair)
	if err != nil {
		t.Fatal(err)
	}
	ds.t = t
	return ds
}

// do runs a command and returns its raw reply; an error reply fails the
// test.
func (ds *dirServer) do(args ...any) string {
	ds.t.Helper()
	var b [][]byte
	for _, a := range args {
		b = append(b, fmt.Append(nil, a))
	}
	r := string(ds.h.Exec(b))
	if strings.HasPrefix(r, "-") {
		ds.t.Fatalf("%v: %q", args, r)
	}
	return r
}

// closeCrash stops the server as a crash after its last write would: the
// log written, no snapshot.
func (ds *dirServer) closeCrash() {
	ds.t.Helper()
	if err := ds.h.s.CloseWithoutSnapshot(); err != nil {
		ds.t.Fatal(err)
	}
}

// keyState is every key's DUMP payload and deadline: replay rebuilds the
// same filters, so after any recovery that loses nothing they are equal.
func (ds *dirServer) keyState() map[string]string {
	ds.t.Helper()
	out := map[string]string{}
	for k := range ds.h.s.store.All() {
		out[k] = ds.do("DUMP", k) + ds.do("PEXPIRETIME", k)
	}
	return out
}

func sameState(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	for k := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: key %q lost", what, k)
		} else if g != want[k] {
			t.Errorf("%s: key %q differs", what, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: key %q appeared", what, k)
		}
	}
	t.FailNow()
}

// writes adds a round of writes tagged tag: to a growing filter, a fixed
// one, a key with a deadline (reset each round), and a key of its own.
func (ds *dirServer) writes(tag string, deadline time.Time) {
	ds.t.Helper()
	if ds.h.s.store.Len() == 0 {
		ds.do("CF.RESERVE", "grow", 16, "EXPANSION", 2)
		ds.do("CF.RESERVE", "fixed", 512, "EXPANSION", 0)
	}
	for i := range 60 {
		ds.do("CF.ADD", "grow", tag+fmt.Sprint(i))
	}
	for i := range 4 {
		ds.do("CF.ADD", "fixed", tag+fmt.Sprint(i))
		ds.do("CF.ADD", "exp", tag+fmt.Sprint(i))
	}
	ds.do("CF.DEL", "grow", tag+"0")
	ds.do("PEXPIREAT", "exp", deadline.UnixMilli())
	ds.do("CF.ADD", "own-"+tag, tag)
}

// dirFiles returns the data files of dir (not LOCK) by name.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		if e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// putFiles makes dir hold exactly files.
func putFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func names(files map[string][]byte) []string { return slices.Sorted(maps.Keys(files)) }

// twoGenerations writes, saves, writes, saves and writes again, then stops
// as a crash would. The directory then holds snapshot.cks (generation 2),
// snapshot.prev.cks (generation 1) and logs 1 and 2, with acknowledged
// writes in each.
func twoGenerations(t *testing.T) (files map[string][]byte, want map[string]string) {
	dir := t.TempDir()
	ds := mustOpen(t, dir, false)
	deadline := time.Now().Add(24 * time.Hour)
	for i, tag := range []string{"a", "b", "c"} {
		ds.writes(tag, deadline.Add(time.Duration(i)*time.Second))
		if i < 2 {
			ds.do("SAVE")
		}
	}
	want = ds.keyState()
	ds.closeCrash()
	files = dirFiles(t, dir)
	wantNames := []string{keyspace.LogName(1), keyspace.LogName(2), keyspace.SnapName, keyspace.SnapPrev}
	if got := names(files); !slices.Equal(got, wantNames) {
		t.Fatalf("directory holds %v, want %v", got, wantNames)
	}
	return files, want
}

// flipEvery returns the offsets to damage in a file of n bytes: all of
// them, or with -short the first and last 64 and every 13th between.
func flipEvery(n int) []int {
	var out []int
	for i := range n {
		if !testing.Short() || i < 64 || i >= n-64 || i%13 == 0 {
			out = append(out, i)
		}
	}
	return out
}

// TestDamagedSnapshotEveryByte flips each byte of the newest snapshot in
// turn. Without --repair the server refuses, naming the file and saying
// that --repair will load the previous snapshot and its logs, losing
// nothing; with --repair it starts with every key as it was, deadlines
// included, and the damaged file set aside.
func TestDamagedSnapshotEveryByte(t *testing.T) {
	files, want := twoGenerations(t)
	snap := files[keyspace.SnapName]
	t.Logf("snapshot of %d bytes, %d keys", len(snap), len(want))
	dir := t.TempDir()
	newest, prev := filepath.Join(dir, keyspace.SnapName), filepath.Join(dir, keyspace.SnapPrev)
	wantMsg := []string{newest + ": " + keyspace.ErrCorrupt.Error(), "refusing to start",
		fmt.Sprintf("--repair will rename it to %s.damaged, load the previous snapshot %s (generation 1) and replay the logs from generation 1 on, losing nothing acknowledged", newest, prev)}
	for _, i := range flipEvery(len(snap)) {
		bad := slices.Clone(snap)
		bad[i] ^= 0xff
		damaged := maps.Clone(files)
		damaged[keyspace.SnapName] = bad
		putFiles(t, dir, damaged)
		_, err := openDirServer(dir, false)
		if err == nil {
			t.Fatalf("byte %d flipped: the server started", i)
		}
		for _, w := range wantMsg {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("byte %d flipped: %v\nwant it to contain %q", i, err, w)
			}
		}
		ds := mustOpen(t, dir, true)
		sameState(t, fmt.Sprintf("byte %d flipped, --repair", i), ds.keyState(), want)
		ds.closeCrash()
		if b, err := os.ReadFile(newest + ".damaged"); err != nil || string(b) != string(bad) {
			t.Fatalf("byte %d flipped: the damaged snapshot was not kept aside: %v", i, err)
		}
	}
	// The repaired directory goes on: a restart, a snapshot and another
	// restart keep every key.
	ds := mustOpen(t, dir, false)
	sameState(t, "restart after --repair", ds.keyState(), want)
	ds.do("SAVE")
	ds.closeCrash()
	ds = mustOpen(t, dir, false)
	sameState(t, "restart after --repair and SAVE", ds.keyState(), want)
	ds.closeCrash()
}

// TestDamagedFirstSnapshot: a directory's first snapshot has no previous
// one, but the logs from generation 0 on are all there, so --repair replays
// them all and loses nothing.
func TestDamagedFirstSnapshot(t *testing.T) {
	dir := t.TempDir()
	ds := mustOpen(t, dir, false)
	deadline := time.Now().Add(time.Hour)
	ds.writes("a", deadline)
	ds.do("SAVE")
	ds.writes("b", deadline)
	want := ds.keyState()
	ds.closeCrash()
	files := dirFiles(t, dir)
	snap := files[keyspace.SnapName]
	newest := filepath.Join(dir, keyspace.SnapName)
	for _, i := range []int{0, 9, len(snap) / 2, len(snap) - 1} {
		bad := slices.Clone(snap)
		bad[i] ^= 0xff
		files[keyspace.SnapName] = bad
		putFiles(t, dir, files)
		_, err := openDirServer(dir, false)
		w := fmt.Sprintf("there is no previous snapshot: --repair will rename it to %s.damaged, replay every log from generation 0 on (the directory's whole history), losing nothing acknowledged", newest)
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("byte %d flipped: %v\nwant it to contain %q", i, err, w)
		}
		ds := mustOpen(t, dir, true)
		sameState(t, fmt.Sprintf("byte %d flipped, --repair", i), ds.keyState(), want)
		ds.closeCrash()
	}
}

// TestOldLayout: a directory as earlier servers leave it (one snapshot, the
// logs from its generation on) loads; two snapshots later it holds the
// newest, the previous and the logs since the previous. A damaged snapshot
// there has nothing to replace it: --repair keeps what the logs create.
func TestOldLayout(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "snapshot-v3", "snapshot.cks"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	putFiles(t, dir, map[string][]byte{keyspace.SnapName: golden})
	ds := mustOpen(t, dir, false)
	if r := ds.do("CF.EXISTS", "grow", "g1999"); r != ":1\r\n" {
		t.Fatalf("the golden snapshot did not load: %q", r)
	}
	ds.do("CF.ADD", "new", "x")
	ds.closeCrash()
	old := dirFiles(t, dir)

	// Damaged, with no previous generation and logs not from 0.
	bad := slices.Clone(golden)
	bad[len(bad)/2] ^= 0xff
	old[keyspace.SnapName] = bad
	putFiles(t, dir, old)
	newest := filepath.Join(dir, keyspace.SnapName)
	_, err = openDirServer(dir, false)
	w := fmt.Sprintf("there is no previous snapshot: --repair will rename it to %s.damaged, replay the logs there are (generations 1 to 1) alone, losing every key the snapshot held that those logs do not create again", newest)
	if err == nil || !strings.Contains(err.Error(), w) {
		t.Fatalf("%v\nwant it to contain %q", err, w)
	}
	ds = mustOpen(t, dir, true)
	if got := slices.Collect(maps.Keys(ds.keyState())); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("after --repair: keys %v, want [new]", got)
	}
	ds.closeCrash()
	// The recovered keys stand on a snapshot of their own: a plain restart
	// works.
	ds = mustOpen(t, dir, false)
	if r := ds.do("CF.EXISTS", "new", "x"); r != ":1\r\n" {
		t.Fatalf("after --repair and a restart: %q", r)
	}
	ds.closeCrash()

	// Intact, saved twice: the new layout.
	putFiles(t, dir, map[string][]byte{keyspace.SnapName: golden})
	ds = mustOpen(t, dir, false)
	want := ds.keyState()
	ds.do("SAVE")
	ds.do("SAVE")
	ds.closeCrash()
	wantNames := []string{keyspace.LogName(2), keyspace.LogName(3), keyspace.SnapName, keyspace.SnapPrev}
	if got := names(dirFiles(t, dir)); !slices.Equal(got, wantNames) {
		t.Fatalf("directory holds %v, want %v", got, wantNames)
	}
	ds = mustOpen(t, dir, false)
	sameState(t, "after two snapshots", ds.keyState(), want)
	ds.closeCrash()
}

// TestSnapshotInstallCrash stops the server (copies its directory) after
// every step of writing and installing a snapshot, with writes landing
// while it is written: each copy starts with every write acknowledged
// before it, and where it holds two snapshots, a damaged newest one is
// replaced with nothing lost.
func TestSnapshotInstallCrash(t *testing.T) {
	files, _ := twoGenerations(t)
	dir := t.TempDir()
	putFiles(t, dir, files)
	ds := mustOpen(t, dir, false)
	// A second client, for the writes made while the snapshot runs.
	ds2 := &dirServer{t: t, h: newHarnessOn(ds.h.s)}
	type crash struct {
		step  string
		files map[string][]byte
		want  map[string]string
	}
	var crashes []crash
	snapshotAt := func(step string) {
		if err := ds.h.s.store.AOF.Flush(); err != nil {
			t.Fatal(err)
		}
		crashes = append(crashes, crash{step, dirFiles(t, dir), ds2.keyState()})
	}
	entries := 0
	keyspace.TestHookSnapshotEntry = func() {
		entries++
		ds2.do("CF.ADD", "grow", fmt.Sprint("during", entries))
		ds2.do("CF.ADD", "during", entries)
		snapshotAt(fmt.Sprintf("entry %d written", entries))
	}
	keyspace.TestHookInstallStep = func(step string) {
		ds2.do("CF.ADD", "fixed", step)
		snapshotAt(step)
	}
	defer func() { keyspace.TestHookSnapshotEntry, keyspace.TestHookInstallStep = nil, nil }()
	ds.do("SAVE")
	keyspace.TestHookSnapshotEntry, keyspace.TestHookInstallStep = nil, nil
	ds.closeCrash()
	steps := map[string]bool{}
	for _, c := range crashes {
		steps[c.step] = true
	}
	for _, s := range []string{"written", "verified", "demoted", "installed", "logs removed"} {
		if !steps[s] {
			t.Fatalf("no crash after step %q", s)
		}
	}
	for _, c := range crashes {
		putFiles(t, dir, c.files)
		ds := mustOpen(t, dir, false)
		sameState(t, "crash after "+c.step, ds.keyState(), c.want)
		ds.closeCrash()
		snap, ok := c.files[keyspace.SnapName]
		if _, prev := c.files[keyspace.SnapPrev]; !ok || !prev {
			continue
		}
		bad := slices.Clone(snap)
		bad[len(bad)/3] ^= 0xff
		damaged := maps.Clone(c.files)
		damaged[keyspace.SnapName] = bad
		putFiles(t, dir, damaged)
		ds = mustOpen(t, dir, true)
		sameState(t, "crash after "+c.step+", newest damaged, --repair", ds.keyState(), c.want)
		ds.closeCrash()
	}
}

// TestSnapshotVerified: a snapshot that does not read back as written is
// not installed; the newest and previous generations stay as they were.
func TestSnapshotVerified(t *testing.T) {
	files, want := twoGenerations(t)
	dir := t.TempDir()
	putFiles(t, dir, files)
	ds := mustOpen(t, dir, false)
	keyspace.TestHookInstallStep = func(step string) {
		if step != "written" {
			return
		}
		p := filepath.Join(dir, keyspace.SnapTmp)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			return
		}
		b[len(b)/2] ^= 1
		os.WriteFile(p, b, 0o644)
	}
	defer func() { keyspace.TestHookInstallStep = nil }()
	r := string(ds.h.Exec([][]byte{[]byte("SAVE")}))
	if !strings.HasPrefix(r, "-ERR snapshot failed: read back: ") || !strings.Contains(r, "checksum mismatch") {
		t.Fatalf("SAVE of a snapshot damaged on its way to disk: %q", r)
	}
	keyspace.TestHookInstallStep = nil
	after := dirFiles(t, dir)
	for _, name := range []string{keyspace.SnapName, keyspace.SnapPrev} {
		if string(after[name]) != string(files[name]) {
			t.Errorf("%s changed", name)
		}
	}
	if _, ok := after[keyspace.SnapTmp]; ok {
		t.Error("snapshot.tmp left behind")
	}
	ds.do("SAVE")
	ds.closeCrash()
	ds = mustOpen(t, dir, false)
	sameState(t, "after a refused and a good snapshot", ds.keyState(), want)
	ds.closeCrash()
}

// TestLogsWithoutSnapshot: both snapshots gone (deleted, or both damaged),
// the logs from generation 1 on kept. Deleted, the server refuses, naming
// the missing files, not a corrupt record. With --repair, in both cases,
// the logs are replayed alone: every key they create comes back as it was,
// the ops on keys only the snapshot held are skipped, and the warning names
// those keys.
func TestLogsWithoutSnapshot(t *testing.T) {
	files, want := twoGenerations(t)
	kept := map[string]string{"own-b": want["own-b"], "own-c": want["own-c"]}
	lost := `lost="\"exp\" (10 ops skipped), \"fixed\" (8 ops skipped), \"grow\" (122 ops skipped)"`
	for _, c := range []struct {
		what  string
		files func() map[string][]byte
	}{
		{"missing", func() map[string][]byte {
			out := maps.Clone(files)
			delete(out, keyspace.SnapName)
			delete(out, keyspace.SnapPrev)
			return out
		}},
		{"damaged", func() map[string][]byte {
			out := maps.Clone(files)
			for _, name := range []string{keyspace.SnapName, keyspace.SnapPrev} {
				bad := slices.Clone(out[name])
				bad[len(bad)/2] ^= 0xff
				out[name] = bad
			}
			return out
		}},
	} {
		t.Run(c.what, func(t *testing.T) {
			dir := t.TempDir()
			putFiles(t, dir, c.files())
			_, err := openDirServer(dir, false)
			if err == nil {
				t.Fatal("the server started")
			}
			if c.what == "missing" {
				if strings.Contains(err.Error(), "corrupt") || !errors.Is(err, keyspace.ErrNoSnapshot) {
					t.Fatalf("refusal: %v\nwant ErrNoSnapshot, no corrupt record", err)
				}
				wantAll(t, "refusal", err.Error(), fmt.Sprintf("no snapshot under the logs: %s and %s are missing, but the logs start at generation 1 (%s): the keys written before it are only in a snapshot; "+
					"refusing to start: --repair will replay the logs there are (generations 1 to 2) alone, keeping every key they create, "+
					"skipping each op on a key they do not (one the missing snapshot held) and naming those keys, which are lost, and then save a snapshot",
					filepath.Join(dir, keyspace.SnapName), filepath.Join(dir, keyspace.SnapPrev), filepath.Join(dir, keyspace.LogName(1))))
			}
			var logs bytes.Buffer
			ds, err := openDirServerLog(dir, true, &logs)
			if err != nil {
				t.Fatalf("--repair: %v", err)
			}
			ds.t = t
			sameState(t, "--repair", ds.keyState(), kept)
			wantAll(t, "--repair's warnings", logs.String(),
				`msg="--repair: ops on keys that only the missing or damaged snapshot held were skipped; these keys are lost, as is any key the snapshot held that no log touches" keys=3 ops_skipped=140 `+lost)
			for _, name := range []string{keyspace.LogName(1), keyspace.LogName(2)} {
				if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() != int64(len(files[name])) {
					t.Fatalf("--repair cut or removed %s: %v", name, err)
				}
			}
			ds.closeCrash()
			// The kept keys stand on a snapshot now: a plain restart works.
			ds = mustOpen(t, dir, false)
			sameState(t, "restart after --repair", ds.keyState(), kept)
			ds.closeCrash()
		})
	}
}

// TestLogsWithoutSnapshotLives: replayed alone, the logs end the lives of
// keys the missing snapshot held (a DEL, a RENAME away) without naming them
// lost, and a RENAME of such a key onto one the logs created loses that key
// too: it would hold the lost filter.
func TestLogsWithoutSnapshotLives(t *testing.T) {
	dir := t.TempDir()
	ds := mustOpen(t, dir, false)
	ds.do("CF.ADD", "old", "x")
	ds.do("CF.ADD", "old2", "x")
	ds.do("SAVE")
	ds.do("CF.ADD", "dst", "y")
	ds.do("RENAME", "old", "dst")
	ds.do("CF.ADD", "dst", "z")
	ds.do("DEL", "old2")
	ds.do("CF.ADD", "keep", "k")
	want := map[string]string{"keep": ds.keyState()["keep"]}
	ds.closeCrash()
	files := dirFiles(t, dir)
	wantNames := []string{keyspace.LogName(0), keyspace.LogName(1), keyspace.SnapName}
	if got := names(files); !slices.Equal(got, wantNames) {
		t.Fatalf("directory holds %v, want %v", got, wantNames)
	}
	delete(files, keyspace.LogName(0))
	delete(files, keyspace.SnapName)
	putFiles(t, dir, files)
	if _, err := openDirServer(dir, false); !errors.Is(err, keyspace.ErrNoSnapshot) {
		t.Fatalf("without --repair: %v, want ErrNoSnapshot", err)
	}
	var logs bytes.Buffer
	ds, err := openDirServerLog(dir, true, &logs)
	if err != nil {
		t.Fatal(err)
	}
	ds.t = t
	sameState(t, "--repair", ds.keyState(), want)
	wantAll(t, "--repair's warnings", logs.String(), `keys=1 ops_skipped=3 lost="\"dst\" (2 ops skipped)"`)
	ds.closeCrash()
}
