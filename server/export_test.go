package server

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// Exec runs one command on a fresh in-memory server's client and returns the
// raw RESP reply, for the command fuzzer.
type Harness struct {
	s  *Server
	cl *client
	b  bytes.Buffer
}

func NewHarness() *Harness {
	return newHarness(Config{MaxMemory: 64 << 20})
}

// NewHarnessDir is NewHarness persisting to dir.
func NewHarnessDir(dir string) *Harness { return newHarness(Config{Dir: dir}) }

// NewHarnessCluster is NewHarness in cluster mode, owning every slot
// (--cluster-emulated): every keyed command takes the cluster check.
func NewHarnessCluster() *Harness {
	return newHarness(Config{MaxMemory: 64 << 20, ClusterEnabled: true, ClusterEmulated: true})
}

func newHarness(cfg Config) *Harness {
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(cfg)
	if err != nil {
		panic(err)
	}
	h := &Harness{s: s}
	h.cl = &client{wr: resp.NewWriter(&h.b)}
	s.authDefault(h.cl)
	return h
}

// Close shuts the harness's server down.
func (h *Harness) Close() error { return h.s.Close() }

func (h *Harness) Exec(args [][]byte) []byte {
	h.b.Reset()
	h.s.exec(h.cl, args)
	h.cl.wr.Flush()
	h.s.releaseInflight(h.cl)
	h.cl.quit = false
	return h.b.Bytes()
}

// ScanLog exposes the log reader.
func ScanLog(data []byte) (int64, bool, error) {
	return keyspace.ScanLog("fuzz.log", data, func(b []byte) error {
		_, err := keyspace.DecodeOp(b)
		return err
	})
}

// ReadSnapshot exposes the snapshot reader.
func ReadSnapshot(data []byte) error {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("fuzz-%d.snap", os.Getpid()))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		panic(err)
	}
	defer os.Remove(path)
	_, _, _, err := keyspace.ReadSnapshotFile(path)
	return err
}

// AppendRecord exposes the record framing.
func AppendRecord(b, payload []byte) []byte { return keyspace.AppendRecord(b, payload) }

// CloseWithoutSnapshot stops the server as a crash after its last write
// would: the log is written, no snapshot is taken. Preconditions: no client
// is writing.
func (s *Server) CloseWithoutSnapshot() error {
	s.store.Dirty.Store(0)
	return s.Close()
}

// SetSnapshotEntryHook runs f after each entry a snapshot writes.
func SetSnapshotEntryHook(f func()) { keyspace.TestHookSnapshotEntry = f }

// DisableReadAhead makes the server read one request at a time
// (prefetch.go); call it before Serve.
func (s *Server) DisableReadAhead() { s.noReadAhead = true }

// IdleReleases is the number of times the server returned the memory
// clients left to the OS (release.go).
func (s *Server) IdleReleases() int64 { return s.idle.released.Load() }
