package keyspace

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests fail the log's file calls (faults.go's InjectLogFaults) and check that
// the log heals without dropping, duplicating or tearing a record.

// logCapture collects a logger's output; the ticker goroutine logs too.
type logCapture struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.Write(p)
}

func (c *logCapture) contains(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Contains(c.b.String(), s)
}

// faultLog is an aof on a fault-injecting file, with the payloads appended
// to its current generation, in order.
type faultLog struct {
	t        *testing.T
	a        *AOF
	lf       *LogFaults
	logs     *logCapture
	dir      string
	payloads [][]byte
	end      uint64 // bytes of the payloads' records
	close    func() error
}

func newFaultLog(t *testing.T, mode FsyncMode) *faultLog {
	t.Helper()
	fl := &faultLog{t: t, dir: t.TempDir(), lf: InjectLogFaults(t.Cleanup), logs: &logCapture{}}
	log := slog.New(slog.NewTextHandler(fl.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := OpenAOF(fl.dir, 0, 0, mode, log)
	if err != nil {
		t.Fatal(err)
	}
	fl.a = a
	fl.close = sync.OnceValue(a.Close)
	t.Cleanup(func() { fl.close() })
	return fl
}

// add appends n records and returns the LSN of the last.
func (fl *faultLog) add(n int) uint64 {
	var lsn uint64
	for range n {
		i := len(fl.payloads)
		// Lengths vary so that a short write stops inside a record.
		p := []byte(fmt.Sprintf("rec-%d-%s", i, strings.Repeat("x", i%37)))
		fl.payloads = append(fl.payloads, p)
		fl.end += uint64(RecordHeader + len(p))
		lsn = fl.a.Append(p)
	}
	return lsn
}

func (fl *faultLog) path(gen uint64) string { return filepath.Join(fl.dir, LogName(gen)) }

// readLog returns the payloads of the whole records in a log file, and its
// size; a torn or damaged record fails the test.
func readLog(t *testing.T, path string) ([][]byte, int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	if _, _, err := ScanLog(path, data, func(b []byte) error {
		got = append(got, bytes.Clone(b))
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return got, int64(len(data))
}

func samePayloads(t *testing.T, got, want [][]byte) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("record %d is %q, want %q", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
}

// check: generation gen's file holds exactly the payloads, in order, and if
// it is the current one, position, size and the LSNs agree with it.
func (fl *faultLog) check(gen uint64) {
	fl.t.Helper()
	a := fl.a
	// wmu keeps the ticker's retries out while the file is read.
	a.wmu.Lock()
	defer a.wmu.Unlock()
	got, size := readLog(fl.t, fl.path(gen))
	samePayloads(fl.t, got, fl.payloads)
	if uint64(size) != fl.end {
		fl.t.Fatalf("file %d bytes, want %d", size, fl.end)
	}
	if gen != a.gen {
		return
	}
	if a.Size.Load() != size || a.Position() != fl.end {
		fl.t.Fatalf("file %d bytes, size %d, position %d", size, a.Size.Load(), a.Position())
	}
	a.Mu.Lock()
	appended := a.appended
	a.Mu.Unlock()
	if w := a.written.Load(); w != appended {
		fl.t.Fatalf("written %d, appended %d", w, appended)
	}
}

// checkPrefix: the current file holds the first n payloads, whole, and
// nothing else.
func (fl *faultLog) checkPrefix(n int) {
	fl.t.Helper()
	a := fl.a
	a.wmu.Lock()
	defer a.wmu.Unlock()
	got, size := readLog(fl.t, fl.path(a.gen))
	samePayloads(fl.t, got, fl.payloads[:n])
	if size != a.Size.Load() {
		fl.t.Fatalf("file %d bytes, size %d", size, a.Size.Load())
	}
}

// wantMisconf: err is the failed log's error, with its cause.
func wantMisconf(t *testing.T, err, cause error) {
	t.Helper()
	if !errors.Is(err, ErrMisconf) || !errors.Is(err, cause) || !strings.HasPrefix(err.Error(), ErrMisconf.Error()+": ") {
		t.Fatalf("error %v, want MISCONF caused by %v", err, cause)
	}
}

// waitFor polls cond until it holds, failing the test after 10s. The ticker
// that heals runs once a second and signals nothing a test can wait on.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fullMidRecord fails the next write part way: 20 bytes fit, which ends
// inside the second of the records add(3) appends.
func (fl *faultLog) fullMidRecord() {
	fl.lf.Full(20)
}

func TestAOFShortWriteHeals(t *testing.T) {
	for _, mode := range []FsyncMode{FsyncAlways, FsyncEverysec, FsyncNo} {
		t.Run("appendfsync="+mode.String(), func(t *testing.T) {
			fl := newFaultLog(t, mode)
			a := fl.a
			if err := a.Durable(fl.add(3)); err != nil {
				t.Fatal(err)
			}
			fl.fullMidRecord()
			lsn := fl.add(3)
			// A record appended while the failing write(2) runs must
			// follow the 3 it holds.
			fl.lf.DuringWrite(func() { fl.add(1) })
			err := a.Durable(lsn)
			wantMisconf(t, err, syscall.ENOSPC)
			if a.Err() == nil || a.Err().Error() != err.Error() {
				t.Fatalf("err() = %v, want %v", a.Err(), err)
			}
			if !fl.logs.contains("append-only log failed") {
				t.Error("the failure was not logged")
			}
			// Cut back to the last whole record; the others are kept.
			fl.checkPrefix(3)
			// Records of commands admitted before the failure follow.
			lsn = fl.add(2)
			if a.Position() != fl.end {
				t.Fatalf("position %d while failed, want %d", a.Position(), fl.end)
			}
			// A retry on a disk still full fails the same way.
			wantMisconf(t, a.Durable(lsn), syscall.ENOSPC)
			fl.checkPrefix(3)

			fl.lf.Free()
			if err := a.Durable(lsn); err != nil {
				t.Fatalf("commit after space was freed: %v", err)
			}
			if a.Err() != nil {
				t.Fatalf("still failed: %v", a.Err())
			}
			if !fl.logs.contains("append-only log writable again") {
				t.Error("the healing was not logged")
			}
			fl.check(0)
			if a.synced.Load() != a.written.Load() {
				t.Errorf("healed but synced %d < written %d", a.synced.Load(), a.written.Load())
			}
			if err := a.Durable(fl.add(1)); err != nil {
				t.Fatal(err)
			}
			fl.check(0)
		})
	}
}

// TestAOFHealsInBackground: with no command issued, the ticker heals the log
// in every mode, fsync included.
func TestAOFHealsInBackground(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the one-second ticker")
	}
	for _, mode := range []FsyncMode{FsyncAlways, FsyncNo} {
		t.Run("appendfsync="+mode.String(), func(t *testing.T) {
			fl := newFaultLog(t, mode)
			a := fl.a
			fl.fullMidRecord()
			wantMisconf(t, a.Durable(fl.add(3)), syscall.ENOSPC)
			syncs := fl.lf.Syncs()
			fl.lf.Free()
			waitFor(t, "the ticker to heal the log", func() bool { return a.Err() == nil })
			fl.check(0)
			if fl.lf.Syncs() == syncs {
				t.Error("healed without an fsync")
			}
		})
	}
}

func TestAOFSyncFailure(t *testing.T) {
	t.Run("appendfsync=always", func(t *testing.T) {
		fl := newFaultLog(t, FsyncAlways)
		a := fl.a
		if err := a.Durable(fl.add(2)); err != nil {
			t.Fatal(err)
		}
		fl.lf.FailSync(syscall.EIO)
		lsn := fl.add(1)
		wantMisconf(t, a.Durable(lsn), syscall.EIO)
		if a.synced.Load() >= lsn {
			t.Fatal("synced past a failed fsync")
		}
		fl.check(0) // the write itself succeeded
		// A failed log is not fsynced outside a retry: a success now
		// would not cover the pages the failed one dropped.
		syncs := fl.lf.Syncs()
		fl.lf.FailSync(nil)
		wantMisconf(t, a.sync(), syscall.EIO)
		if fl.lf.Syncs() != syncs {
			t.Fatal("sync fsynced a failed log")
		}
		fl.lf.FailSync(syscall.EIO)
		// A retry whose write succeeds but whose fsync fails stays failed.
		lsn = fl.add(1)
		wantMisconf(t, a.Durable(lsn), syscall.EIO)
		wantMisconf(t, a.Flush(), syscall.EIO)
		fl.check(0)

		fl.lf.FailSync(nil)
		if err := a.Durable(lsn); err != nil {
			t.Fatalf("commit once fsync works: %v", err)
		}
		if fl.lf.Syncs() == syncs || a.synced.Load() < lsn || a.Err() != nil {
			t.Fatalf("not healed by an fsync: syncs %d, synced %d < %d, err %v", fl.lf.Syncs(), a.synced.Load(), lsn, a.Err())
		}
		fl.check(0)
	})
	t.Run("appendfsync=everysec", func(t *testing.T) {
		if testing.Short() {
			t.Skip("waits for the one-second ticker")
		}
		fl := newFaultLog(t, FsyncEverysec)
		a := fl.a
		fl.lf.FailSync(syscall.EIO)
		// everysec's commit waits for the write only.
		lsn := fl.add(2)
		if err := a.Durable(lsn); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the ticker's fsync to fail", func() bool { return a.Err() != nil })
		wantMisconf(t, a.Err(), syscall.EIO)
		wantMisconf(t, a.Durable(lsn), syscall.EIO)
		fl.lf.FailSync(nil)
		waitFor(t, "the ticker to heal the log", func() bool { return a.Err() == nil })
		if a.synced.Load() < lsn {
			t.Fatalf("healed with synced %d < %d", a.synced.Load(), lsn)
		}
		fl.check(0)
	})
}

// TestAOFCutFails: while the torn bytes of a short write cannot be cut off,
// the log stays failed whatever else succeeds; once the cut works, it heals.
func TestAOFCutFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(*LogFaults, error)
	}{
		{"truncate", (*LogFaults).FailTruncate},
		{"seek", (*LogFaults).FailSeek},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fl := newFaultLog(t, FsyncAlways)
			a := fl.a
			if err := a.Durable(fl.add(2)); err != nil {
				t.Fatal(err)
			}
			good := a.Size.Load()
			tc.fail(fl.lf, syscall.EIO)
			fl.fullMidRecord()
			lsn := fl.add(3)
			wantMisconf(t, a.Durable(lsn), syscall.ENOSPC)
			if !fl.logs.contains("cannot cut the append-only log back to its last whole record") {
				t.Error("the failed cut was not logged")
			}
			fl.lf.Free()
			wantMisconf(t, a.Durable(lsn), syscall.ENOSPC)
			wantMisconf(t, a.Flush(), syscall.ENOSPC)
			wantMisconf(t, a.rotate(1), syscall.ENOSPC)
			if a.gen != 0 || a.Size.Load() != good || a.written.Load() != uint64(good) {
				t.Fatalf("gen %d size %d written %d after failed retries, want 0 %d %d", a.gen, a.Size.Load(), a.written.Load(), good, good)
			}
			tc.fail(fl.lf, nil)
			if err := a.Durable(lsn); err != nil {
				t.Fatalf("commit once the cut works: %v", err)
			}
			fl.check(0)
		})
	}
}

func TestAOFRotateWhileFailed(t *testing.T) {
	fl := newFaultLog(t, FsyncEverysec)
	a := fl.a
	if err := a.Durable(fl.add(2)); err != nil {
		t.Fatal(err)
	}
	fl.fullMidRecord()
	wantMisconf(t, a.Durable(fl.add(3)), syscall.ENOSPC)
	wantMisconf(t, a.rotate(1), syscall.ENOSPC)
	if a.gen != 0 || a.Position() != fl.end {
		t.Fatalf("failed rotate moved to gen %d, position %d", a.gen, a.Position())
	}
	if _, err := os.Stat(fl.path(1)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("failed rotate created %s: %v", fl.path(1), err)
	}
	fl.checkPrefix(2)

	// With space again rotate heals, then rotates.
	fl.lf.Free()
	if err := a.rotate(1); err != nil {
		t.Fatal(err)
	}
	if a.Err() != nil || a.gen != 1 || a.Position() != 0 {
		t.Fatalf("after rotate: err %v, gen %d, position %d", a.Err(), a.gen, a.Position())
	}
	fl.check(0)
	fl.payloads, fl.end = nil, 0
	if err := a.Durable(fl.add(1)); err != nil {
		t.Fatal(err)
	}
	fl.check(1)

	// A failed fsync fails the log and the rotation.
	fl.lf.FailSync(syscall.EIO)
	wantMisconf(t, a.rotate(2), syscall.EIO)
	if a.gen != 1 {
		t.Fatalf("gen %d after a failed rotate", a.gen)
	}
	fl.lf.FailSync(nil)
	if err := a.rotate(2); err != nil {
		t.Fatal(err)
	}
	fl.payloads, fl.end = nil, 0

	// The next file cannot be created: rotate fails, the log does not.
	enospc := &os.PathError{Op: "open", Path: fl.path(3), Err: syscall.ENOSPC}
	fl.lf.FailOpen(func(name string) error {
		if name == fl.path(3) {
			return enospc
		}
		return nil
	})
	if err := a.rotate(3); err != enospc {
		t.Fatalf("rotate: %v, want %v", err, enospc)
	}
	if a.Err() != nil || a.gen != 2 {
		t.Fatalf("after a failed open: err %v, gen %d", a.Err(), a.gen)
	}
	if err := a.Durable(fl.add(2)); err != nil {
		t.Fatal(err)
	}
	fl.check(2)
}

func TestAOFCloseWhileFailed(t *testing.T) {
	t.Run("disk still full", func(t *testing.T) {
		fl := newFaultLog(t, FsyncAlways)
		if err := fl.a.Durable(fl.add(2)); err != nil {
			t.Fatal(err)
		}
		fl.fullMidRecord()
		wantMisconf(t, fl.a.Durable(fl.add(3)), syscall.ENOSPC)
		wantMisconf(t, fl.close(), syscall.ENOSPC)
		if !fl.logs.contains("closing the append-only log while it is failed") {
			t.Error("closing with records unwritten was not logged")
		}
		// What is on disk is whole records: a restart replays them.
		fl.checkPrefix(2)
	})
	t.Run("space freed", func(t *testing.T) {
		fl := newFaultLog(t, FsyncNo)
		fl.fullMidRecord()
		wantMisconf(t, fl.a.Durable(fl.add(3)), syscall.ENOSPC)
		fl.lf.Free()
		if err := fl.close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		fl.check(0)
	})
	t.Run("fsync fails", func(t *testing.T) {
		fl := newFaultLog(t, FsyncNo)
		if err := fl.a.Durable(fl.add(2)); err != nil {
			t.Fatal(err)
		}
		fl.lf.FailSync(syscall.EIO)
		wantMisconf(t, fl.close(), syscall.EIO)
	})
}

func TestOpenAOFErrors(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name string
		fail func(*LogFaults, error)
	}{
		{"open", func(lf *LogFaults, err error) { lf.FailOpen(func(string) error { return err }) }},
		{"truncate", (*LogFaults).FailTruncate},
		{"seek", (*LogFaults).FailSeek},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lf := InjectLogFaults(t.Cleanup)
			tc.fail(lf, syscall.EACCES)
			if _, err := OpenAOF(t.TempDir(), 0, 0, FsyncNo, quiet); !errors.Is(err, syscall.EACCES) {
				t.Fatalf("openAOF: %v, want EACCES", err)
			}
		})
	}
}

// TestAOFFaultStress: writers append and commit while the disk fills and
// empties and fsyncs fail and recover; once healed, the file holds every
// record appended, each once, each writer's in its order. Like the store, a
// writer appends only while err() is nil, and the check races the failure.
func TestAOFFaultStress(t *testing.T) {
	const writers = 4
	perWriter := 300
	if testing.Short() {
		perWriter = 50
	}
	fl := newFaultLog(t, FsyncAlways)
	a := fl.a
	done := make(chan struct{})
	deadline := time.Now().Add(30 * time.Second) // a log that never heals fails, not hangs
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 0; i < perWriter; {
				if a.Err() != nil {
					if time.Now().After(deadline) {
						t.Errorf("writer %d: log still failed after 30s", w)
						return
					}
					_ = a.Durable(0) // drives a retry
					runtime.Gosched()
					continue
				}
				lsn := a.Append([]byte(fmt.Sprintf("w%d-%d", w, i)))
				i++
				_ = a.Durable(lsn) // an error does not lose the record
			}
		})
	}
	faults := 0
	var tg sync.WaitGroup
	tg.Go(func() {
		// wait spins until cond or the writers finish.
		wait := func(cond func() bool) bool {
			for !cond() {
				select {
				case <-done:
					return false
				default:
					runtime.Gosched()
				}
			}
			return true
		}
		for r := 0; ; r++ {
			if r%2 == 0 {
				fl.lf.Full(int64(r * 7 % 150))
			} else {
				fl.lf.FailSync(syscall.EIO)
			}
			if !wait(func() bool { return a.Err() != nil }) {
				return
			}
			faults++
			fl.lf.Free()
			fl.lf.FailSync(nil)
			if !wait(func() bool { return a.Err() == nil }) {
				return
			}
		}
	})
	wg.Wait()
	close(done)
	tg.Wait()
	if t.Failed() {
		return
	}
	fl.lf.Free()
	fl.lf.FailSync(nil)
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := fl.close(); err != nil {
		t.Fatal(err)
	}
	got, _ := readLog(t, fl.path(0))
	next := make([]int, writers)
	for _, p := range got {
		var w, i int
		if _, err := fmt.Sscanf(string(p), "w%d-%d", &w, &i); err != nil {
			t.Fatalf("record %q: %v", p, err)
		}
		if i != next[w] {
			t.Fatalf("writer %d: record %d where %d was due (lost, duplicated or reordered)", w, i, next[w])
		}
		next[w]++
	}
	for w, n := range next {
		if n != perWriter {
			t.Errorf("writer %d: %d records in the log, want %d", w, n, perWriter)
		}
	}
	t.Logf("%d faults injected and healed", faults)
	if faults == 0 {
		t.Error("no fault was hit")
	}
}
