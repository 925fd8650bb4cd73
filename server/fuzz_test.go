package server_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/tidwall/redcon"
)

// validRESP reports whether b is one complete RESP reply.
func validRESP(b []byte) bool {
	r := resptest.NewReader(bytes.NewReader(b))
	if _, err := r.ReadReply(); err != nil {
		return false
	}
	_, err := r.Peek()
	return err != nil // nothing after it
}

// FuzzCommands decodes random bytes into argument vectors (lines of
// space-separated words; the first word a command name chosen from the
// table) and runs them: every reply is one valid RESP reply, never a panic.
func FuzzCommands(f *testing.F) {
	for _, s := range []string{
		"CF.RESERVE k 100 BUCKETSIZE 1 EXPANSION 0\nCF.ADD k a\nCF.ADD k a\nCF.INFO k",
		"CF.INSERT k CAPACITY 10 ITEMS a b c\nCF.SCANDUMP k 0\nCF.SCANDUMP k 1",
		"CF.LOADCHUNK j 1 CKCH\nCF.LOADCHUNK j 2 CKCD\nCF.DEL j a",
		"CF.RESERVE k -1\nCF.RESERVE k 99999999999999\nCF.INSERTNX k NOCREATE ITEMS",
		"SCAN 0 MATCH * COUNT 2\nKEYS [\nDEL k\nFLUSHALL\nINFO all\nHELLO 3\nCLIENT SETNAME x",
		"HELLO 3\nCF.ADD k a\nCF.MEXISTS k a b\nCF.INFO k\nCF.INSERT k ITEMS a\nHELLO 2\nCF.DEL k a",
		"MULTI\nCF.ADD k a\nCF.DEL k a\nEXEC\nWATCH k\nMULTI\nFOO\nEXEC\nDISCARD",
		"COMMAND INFO cf.add\nCOMMAND DOCS\nCOMMAND GETKEYS del a b\nCOMMAND LIST FILTERBY ACLCAT cuckoo\nCLIENT INFO\nCLIENT LIST\nTIME",
	} {
		f.Add([]byte(s))
	}
	names := []string{"cf.reserve", "cf.add", "cf.addnx", "cf.insert", "cf.insertnx", "cf.exists", "cf.mexists",
		"cf.count", "cf.del", "cf.info", "cf.compact", "cf.scandump", "cf.loadchunk", "ping", "echo", "select",
		"del", "exists", "type", "keys", "scan", "dbsize", "flushall", "info", "client", "command", "hello", "auth",
		"cf.debug", "multi", "exec", "discard", "watch", "unwatch", "time",
		"acl", "role", "publish", "pubsub", "config", "object", "memory", "ttl", "pexpire", "rename", "dump", "restore", "randomkey"}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := server.NewHarness()
		defer h.Close()   // its sweeper and replication heartbeat stop
		var dump [][]byte // chunks seen, fed back to LOADCHUNK
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			args := bytes.Fields(line)
			if len(args) == 0 {
				continue
			}
			if len(args) > 64 {
				args = args[:64]
			}
			if len(args[0]) == 1 {
				args[0] = []byte(names[int(args[0][0])%len(names)])
			}
			if len(args) == 4 && bytes.EqualFold(args[0], []byte("cf.loadchunk")) && len(dump) > 0 && len(args[3]) == 1 {
				args[3] = dump[int(args[3][0])%len(dump)]
			}
			reply := h.Exec(args)
			if !validRESP(reply) {
				t.Fatalf("%q: invalid reply %q", args, reply)
			}
			if bytes.EqualFold(args[0], []byte("cf.scandump")) {
				if cmd, err := redcon.Parse(reply); err == nil && len(cmd.Args) == 2 {
					dump = append(dump, cmd.Args[1])
				}
			}
		}
	})
}

// FuzzLogReader: any bytes are a log the reader accepts, reports as torn at
// its end, or refuses; never a panic, and never an offset past the data.
func FuzzLogReader(f *testing.F) {
	f.Add(server.AppendRecord(nil, []byte{1, 1, 'k', 100, 4, 20, 1, 7}))
	f.Add(server.AppendRecord(server.AppendRecord(nil, []byte{5}), []byte{2, 1, 'k', 1, 1, 'a'}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		good, _, _ := server.ScanLog(data)
		if good < 0 || good > int64(len(data)) {
			t.Fatalf("good offset %d of %d bytes", good, len(data))
		}
	})
}

// FuzzSnapshotReader: a damaged snapshot is an error, never a panic.
func FuzzSnapshotReader(f *testing.F) {
	f.Add([]byte("CKSNAP01"))
	// A real snapshot of two keys.
	dir := f.TempDir()
	h := server.NewHarnessDir(dir)
	for _, cmd := range []string{"CF.RESERVE a 100 EXPANSION 2", "CF.ADD a x", "CF.ADD b y", "SAVE"} {
		h.Exec(bytesFields(cmd))
	}
	h.Close()
	if b, err := os.ReadFile(filepath.Join(dir, "snapshot.cks")); err == nil {
		f.Add(b)
	} else {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = server.ReadSnapshot(data)
	})
}

func bytesFields(s string) [][]byte { return bytes.Fields([]byte(s)) }
