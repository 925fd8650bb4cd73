package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// These tests damage the last log's records. Only a record cut short by
// the end of the last log can be a write that never finished: it is
// dropped with a warning. A complete record that fails its checksum is
// damage wherever it is, the last record included: the server refuses,
// naming the file, the offset and --repair.

// oneLog writes ten items to key k, one record each, and stops as a crash
// would. It returns the directory's files, the log's name and the offset
// of each record.
func oneLog(t *testing.T) (files map[string][]byte, name string, starts []int) {
	t.Helper()
	dir := t.TempDir()
	ds := mustOpen(t, dir, false)
	for i := range 10 {
		ds.do("CF.ADD", "k", fmt.Sprint("item", i))
	}
	ds.closeCrash()
	files = dirFiles(t, dir)
	name = keyspace.LogName(0)
	if got := names(files); !slices.Equal(got, []string{name}) {
		t.Fatalf("directory holds %v, want [%s]", got, name)
	}
	data := files[name]
	for off := 0; off < len(data); off += keyspace.RecordHeader + int(binary.LittleEndian.Uint32(data[off:])) {
		starts = append(starts, off)
	}
	return files, name, starts
}

// items returns which of item0..item9 key k answers CF.EXISTS 1 for.
func (ds *dirServer) items() []int {
	ds.t.Helper()
	var got []int
	for i := range 10 {
		if ds.do("CF.EXISTS", "k", fmt.Sprint("item", i)) == ":1\r\n" {
			got = append(got, i)
		}
	}
	return got
}

func wantAll(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Fatalf("%s: %s\nwant it to contain %q", what, s, w)
		}
	}
}

// TestDamagedLastRecord flips a byte of the last record, in its payload and
// in its checksum: the record is complete, so the write finished and was
// acknowledged. The server refuses to start, naming the file, the offset
// and --repair; with --repair it drops the record and says so.
func TestDamagedLastRecord(t *testing.T) {
	files, name, starts := oneLog(t)
	data := files[name]
	last := starts[len(starts)-1]
	size := len(data) - last
	for _, c := range []struct {
		what string
		at   int
	}{
		{"payload", len(data) - 1},
		{"payload", last + keyspace.RecordHeader + 2},
		{"header checksum", last + 4},
		{"header checksum", last + 7},
	} {
		t.Run(fmt.Sprintf("%s at %d", c.what, c.at), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			bad := slices.Clone(data)
			bad[c.at] ^= 0x40
			putFiles(t, dir, map[string][]byte{name: bad})
			_, err := openDirServer(dir, false)
			if err == nil {
				t.Fatal("the server started")
			}
			wantAll(t, "refusal", err.Error(),
				fmt.Sprintf("%s: corrupt record at offset %d: checksum mismatch in a complete record of %d bytes", path, last, size),
				"refusing to start, as a complete record that fails its checksum is damage, not a write that never finished, and may hold an acknowledged write",
				fmt.Sprintf("restart with --repair to drop the log from offset %d on (%d bytes: the bad record, the file's last)", last, size))
			if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
				t.Fatal("a refused start changed the log")
			}

			var logs bytes.Buffer
			ds, err := openDirServerLog(dir, true, &logs)
			if err != nil {
				t.Fatalf("--repair: %v", err)
			}
			ds.t = t
			wantAll(t, "--repair's warning", logs.String(),
				`msg="--repair: dropping the rest of a damaged log"`,
				fmt.Sprintf("file=%s offset=%d bytes=%d", path, last, size),
				`dropped="`+fmt.Sprintf("%d bytes: the bad record, the file's last", size))
			if got := ds.items(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}) {
				t.Fatalf("after --repair, items %v present, want 0-8", got)
			}
			ds.closeCrash()
			if fi, err := os.Stat(path); err != nil || fi.Size() != int64(last) {
				t.Fatalf("after --repair the log is %v bytes (%v), want %d", fi.Size(), err, last)
			}
		})
	}
}

// TestDamagedMiddleRecord: a damaged record with records after it is
// refused, and the refusal counts what --repair would drop.
func TestDamagedMiddleRecord(t *testing.T) {
	files, name, starts := oneLog(t)
	data := files[name]
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	bad := slices.Clone(data)
	d := len(starts) - 3 // item7's record (the first is k's create)
	bad[starts[d]+keyspace.RecordHeader+1] ^= 1
	putFiles(t, dir, map[string][]byte{name: bad})
	_, err := openDirServer(dir, false)
	if err == nil {
		t.Fatal("the server started")
	}
	wantAll(t, "refusal", err.Error(),
		fmt.Sprintf("%s: corrupt record at offset %d: checksum mismatch", path, starts[d]),
		fmt.Sprintf("restart with --repair to drop the log from offset %d on (%d bytes: the bad record of %d bytes and the %d bytes after it, where 2 records read whole)",
			starts[d], len(data)-starts[d], starts[d+1]-starts[d], len(data)-starts[d+1]))
	ds := mustOpen(t, dir, true)
	if got := ds.items(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("after --repair, items %v present, want 0-6", got)
	}
	ds.closeCrash()
}

// TestCutShortLastRecord cuts the log inside its last record's header and
// inside its payload: a write that never finished. The server starts with
// every record before it and a warning naming the file, the offset and the
// bytes dropped.
func TestCutShortLastRecord(t *testing.T) {
	files, name, starts := oneLog(t)
	data := files[name]
	last := starts[len(starts)-1]
	for _, c := range []struct {
		what   string
		cut    int
		reason string
	}{
		{"header", last + 3, "record header cut short (3 of 8 bytes)"},
		{"payload", len(data) - 1, fmt.Sprintf("record cut short (%d of %d bytes)", len(data)-1-last, len(data)-last)},
	} {
		t.Run(c.what, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			putFiles(t, dir, map[string][]byte{name: data[:c.cut]})
			var logs bytes.Buffer
			ds, err := openDirServerLog(dir, false, &logs)
			if err != nil {
				t.Fatal(err)
			}
			ds.t = t
			wantAll(t, "warning", logs.String(),
				`msg="dropping a record cut short at the end of the last log: a write the server never finished, so its reply was never sent`,
				fmt.Sprintf(`file=%s offset=%d bytes=%d reason="%s"`, path, last, c.cut-last, c.reason))
			if got := ds.items(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}) {
				t.Fatalf("items %v present, want 0-8", got)
			}
			ds.closeCrash()
		})
	}
}
