package keyspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the append-only log: the record format, the writer with its
// group commit, and the reader that recovers from a torn tail.
//
// Record format, little-endian:
//
//	u32 length of the payload
//	u32 CRC-32C (Castagnoli) of the four length bytes and the payload
//	    payload (an op, see ops.go)
//
// Protocol. Three positions, in bytes appended since the process started,
// only ever grow: appended (records in buf or the file), written (records
// handed to write(2)) and synced (records covered by a completed fsync), with
// synced <= written <= appended. A write command appends its record under the
// key's writer lock and remembers appended as its LSN; when its connection has
// run every command of the pipeline it calls commit(lsn) before the replies
// are flushed. commit writes buf out if written < lsn (one write(2) takes
// every connection's records appended so far) and, with appendfsync always,
// fsyncs unless synced >= lsn already. fsyncs are serialised by smu; a
// goroutine that waited for smu finds that the fsync before it usually
// covered its record too: that is the group commit, one fsync for every
// record written before it started. The reply is sent after commit returns,
// so with always an acknowledged write is on disk.
//
// Failure and healing. A write(2) or fsync that fails puts the log in the
// failed state: failed holds the MISCONF error, which err() returns without a
// lock and the store answers to every write command (store.writable), so no
// new record is appended. Nothing already appended is dropped: those records
// are ops applied in memory. A failed write's records go back to the front of
// buf, ahead of any that commands admitted before the failure appended since,
// and if the write stopped part way the file is cut back (truncate and seek)
// to size, the end of its last whole record, so no torn record is ever
// followed by another; while that cut fails, torn stays set and the log stays
// failed. written, synced and size move only on success, so position() is the
// same as if nothing had failed.
//
// A retry (heal) runs from the ticker goroutine once a second in every mode,
// and from every flush, commit and rotate while failed. Holding wmu and smu,
// it redoes the cut if torn, writes buf, fsyncs whatever the mode, and then
// clears failed: that store is the linearization point of healing. Every
// record appended before it is written and fsynced, once and in append order;
// every write command admitted after it appends behind them. Every call to
// fail holds wmu or smu, so no failure can slip in between and be lost.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	RecordHeader = 8
	// MaxRecord bounds a record's payload. A longer length field is
	// corruption, never a torn tail.
	MaxRecord = 1 << 30
)

// ErrCorrupt is wrapped by every error reading a damaged log or snapshot.
var ErrCorrupt = errors.New("server: corrupt data")

// FsyncMode is appendfsync: when the log is flushed to disk. The zero
// value is the default, everysec.
type FsyncMode int

const (
	FsyncEverysec FsyncMode = iota // once a second
	FsyncAlways                    // before each write is answered
	FsyncNo                        // when the operating system writes
)

var fsyncNames = [...]string{FsyncEverysec: "everysec", FsyncAlways: "always", FsyncNo: "no"}

// ParseFsync reads appendfsync's value; "" is everysec.
func ParseFsync(s string) (FsyncMode, error) {
	if s == "" {
		return FsyncEverysec, nil
	}
	for m, name := range fsyncNames {
		if s == name {
			return FsyncMode(m), nil
		}
	}
	return 0, fsyncError(s)
}

// Check answers an error, with ParseFsync's text, if m is not a mode.
func (m FsyncMode) Check() error {
	if m < 0 || int(m) >= len(fsyncNames) {
		return fsyncError(m.String())
	}
	return nil
}

func fsyncError(s string) error {
	return fmt.Errorf("server: appendfsync %q: want always, everysec or no", s)
}

// String is appendfsync's value, as CONFIG GET and INFO write it.
func (m FsyncMode) String() string {
	if m < 0 || int(m) >= len(fsyncNames) {
		return "FsyncMode(" + strconv.Itoa(int(m)) + ")"
	}
	return fsyncNames[m]
}

// Generation is the current log generation, for INFO (gen is guarded by
// wmu; rotate changes it).
func (a *AOF) Generation() uint64 {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	return a.gen
}

// AppendRecord appends the framed payload to b.
func AppendRecord(b, payload []byte) []byte {
	// The header is written in b, not in an array of its own, which the
	// checksum's indirect call would move to the heap.
	n := len(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, RecordCRC(b[n:n+4], payload))
	return append(b, payload...)
}

// RecordCRC is a record's checksum: CRC-32C of its length field and its
// payload.
func RecordCRC(length, payload []byte) uint32 {
	return crc32.Update(crc32.Update(0, castagnoli, length), castagnoli, payload)
}

// LogName is the file of log generation gen.
func LogName(gen uint64) string { return fmt.Sprintf("appendonly.%016x.log", gen) }

// LogFile is an open log file: an *os.File, or a test's fault injector.
type LogFile interface {
	Write(b []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
	Close() error
}

// OpenLogFile opens a log file for writing. Tests replace it to inject
// faults.
var OpenLogFile = func(name string, flag int) (LogFile, error) {
	f, err := os.OpenFile(name, flag, 0o644)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return f, nil
}

// AOF is the log writer.
type AOF struct {
	dir  string
	Mode FsyncMode
	log  *slog.Logger
	// onSync, if set, is told the duration of every fsync (metrics).
	OnSync func(time.Duration)
	// snapGen is the generation of the newest snapshot installed or loaded,
	// if hasSnap: when the next one is installed it becomes the previous
	// generation, and the logs before it go (snapshot.go). Guarded by the
	// server's snapMu, set by recoverDir before the server runs.
	snapGen uint64
	hasSnap bool

	Mu sync.Mutex // guards buf, spare, appended and genStart
	// buf holds the records appended and not yet written, in append order
	// (but for those a write(2) in progress holds). spare is the array of
	// the last buffer written, emptied, which the next write gives to buf,
	// so that appends between writes do not allocate; one larger than
	// maxSpare is dropped instead.
	buf, spare []byte
	appended   uint64
	// genStart is appended when the current generation's file began (its
	// offset 0), so appended-genStart is the offset of the next record.
	genStart uint64

	wmu  sync.Mutex // guards f, gen, size and torn; held across write(2)
	f    LogFile
	gen  uint64
	Size atomic.Int64 // bytes in the current file, written
	// torn: a write stopped part way and cutting the file back to size
	// failed, so bytes of a torn record may follow size.
	torn bool

	smu     sync.Mutex // one fsync at a time; rotation and healing hold it too
	written atomic.Uint64
	synced  atomic.Uint64

	// failed is the error of the write or fsync that failed the log, nil
	// while it is healthy (see the protocol above).
	failed atomic.Pointer[error]
	done   chan struct{}
	wg     sync.WaitGroup
}

// OpenAOF opens generation gen for appending at offset size (the end of its
// valid records).
func OpenAOF(dir string, gen uint64, size int64, mode FsyncMode, log *slog.Logger) (*AOF, error) {
	f, err := OpenLogFile(filepath.Join(dir, LogName(gen)), os.O_CREATE|os.O_WRONLY)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	// The positions start at the file's size, so that appended-genStart is
	// a record's offset in the file (see position).
	a := &AOF{dir: dir, Mode: mode, log: log, f: f, gen: gen, done: make(chan struct{}), appended: uint64(size)}
	a.Size.Store(size)
	a.written.Store(uint64(size))
	a.synced.Store(uint64(size))
	a.wg.Add(1)
	go a.ticker()
	return a, nil
}

// ticker runs once a second: the fsync of everysec, and in every mode the
// retry of a failed log, which must heal even if no command arrives (a
// refused write does not commit).
func (a *AOF) ticker() {
	defer a.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-a.done:
			return
		case <-t.C:
			switch {
			case a.Mode == FsyncEverysec:
				if err := a.Flush(); err == nil {
					_ = a.sync()
				}
			case a.Err() != nil:
				_ = a.Flush() // heals
			}
		}
	}
}

// Err returns the error that stops the log, if it is failed.
func (a *AOF) Err() error {
	if p := a.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// fail puts the log in the failed state, unless it is already, and returns
// the error err() returns. Preconditions: wmu or smu held.
func (a *AOF) fail(err error) error {
	e := fmt.Errorf("%w: %w", ErrMisconf, err)
	if a.failed.CompareAndSwap(nil, &e) {
		a.log.Error("append-only log failed; writes refused until a retry succeeds", "err", err)
	} else {
		a.log.Debug("append-only log retry failed", "err", err)
	}
	return a.Err()
}

// Append adds a record and returns its LSN: the log position commit must
// reach for it to be written.
func (a *AOF) Append(payload []byte) uint64 {
	a.Mu.Lock()
	a.buf = AppendRecord(a.buf, payload)
	a.appended += uint64(RecordHeader + len(payload))
	lsn := a.appended
	a.Mu.Unlock()
	return lsn
}

// Position returns the offset in the current generation's file at which the
// next record will start. A caller holding a key's writer lock gets a
// position that every op of that key logged so far lies before, and every
// later one at or after (snapshot.go).
func (a *AOF) Position() uint64 {
	a.Mu.Lock()
	defer a.Mu.Unlock()
	return a.appended - a.genStart
}

// Flush writes every record appended so far to the file; if the log is
// failed, it retries (heal), which fsyncs too.
func (a *AOF) Flush() error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	return a.flushLocked()
}

// flushLocked is flush. Preconditions: wmu held.
func (a *AOF) flushLocked() error {
	if a.Err() != nil {
		return a.healLocked()
	}
	return a.writeLocked()
}

// maxSpare bounds the buffer kept between writes: a burst of large records
// does not stay allocated.
const maxSpare = 1 << 20

// writeLocked writes buf. If the write fails, buf keeps every record (see
// the protocol) and the log fails. Preconditions: wmu held.
func (a *AOF) writeLocked() error {
	a.Mu.Lock()
	buf, target := a.buf, a.appended
	if len(buf) == 0 {
		a.Mu.Unlock()
		return nil
	}
	a.buf, a.spare = a.spare, nil
	a.Mu.Unlock()
	n, err := a.f.Write(buf)
	if err == nil {
		a.Size.Add(int64(len(buf)))
		a.written.Store(target)
		if cap(buf) <= maxSpare {
			a.Mu.Lock()
			a.spare = buf[:0]
			a.Mu.Unlock()
		}
		return nil
	}
	a.Mu.Lock()
	a.buf = append(buf, a.buf...) // nothing else refers to buf's array
	a.Mu.Unlock()
	ferr := a.fail(err)
	if n > 0 {
		a.torn = true
		if err := a.cutLocked(); err != nil {
			a.log.Error("cannot cut the append-only log back to its last whole record; it stays failed until a retry can",
				"file", filepath.Join(a.dir, LogName(a.gen)), "offset", a.Size.Load(), "err", err)
		}
	}
	return ferr
}

// cutLocked truncates the file to size, dropping the bytes a failed write
// left after the last whole record, and clears torn. Preconditions: wmu
// held, torn set.
func (a *AOF) cutLocked() error {
	size := a.Size.Load()
	if err := a.f.Truncate(size); err != nil {
		return err
	}
	// Without O_APPEND the next write goes to the offset, not the end.
	if _, err := a.f.Seek(size, io.SeekStart); err != nil {
		return err
	}
	a.torn = false
	return nil
}

// healLocked retries a failed log: it cuts off a torn record left by an
// earlier failure, writes buf and fsyncs; on success the log is writable
// again. Preconditions: wmu held.
func (a *AOF) healLocked() error {
	if a.torn {
		if err := a.cutLocked(); err != nil {
			a.log.Debug("append-only log retry: cannot cut back the torn record yet", "err", err)
			return a.Err()
		}
	}
	if err := a.writeLocked(); err != nil {
		return err
	}
	a.smu.Lock()
	defer a.smu.Unlock()
	target := a.written.Load()
	if err := a.fsync(); err != nil {
		return a.fail(err)
	}
	a.synced.Store(target)
	a.failed.Store(nil) // healed: the linearization point
	a.log.Info("append-only log writable again", "file", filepath.Join(a.dir, LogName(a.gen)), "size", a.Size.Load())
	return nil
}

// fsync syncs the file and reports its duration. Preconditions: smu held.
func (a *AOF) fsync() error {
	start := time.Now()
	if err := a.f.Sync(); err != nil {
		return err
	}
	if a.OnSync != nil {
		a.OnSync(time.Since(start))
	}
	return nil
}

// sync fsyncs the file, covering every record written before it starts.
//
// A failed fsync fails the log although the writes succeeded: the kernel may
// have dropped the dirty pages it could not write back (Linux marks them
// clean) and reports that only once, so a later fsync can succeed without
// them. Hence sync never fsyncs a failed log, and only a heal, whose own
// write and fsync both succeed, ends the failure. Records covered by the
// failed fsync are not rewritten (their bytes have left buf): as with Redis,
// a crash after healing may find them missing, which startup reports as
// damage in the middle of the log.
func (a *AOF) sync() error {
	a.smu.Lock()
	defer a.smu.Unlock()
	if err := a.Err(); err != nil {
		return err
	}
	target := a.written.Load()
	if a.synced.Load() >= target {
		return nil
	}
	if err := a.fsync(); err != nil {
		return a.fail(err)
	}
	a.synced.Store(target)
	return nil
}

// Durable makes the records up to lsn as durable as the mode promises: written
// to the OS (every mode), and fsynced with always. It returns nil only then;
// a failed log is retried first.
func (a *AOF) Durable(lsn uint64) error {
	if a.written.Load() < lsn || a.Err() != nil {
		if err := a.Flush(); err != nil {
			return err
		}
	}
	if a.Mode == FsyncAlways && a.synced.Load() < lsn {
		return a.sync()
	}
	return nil
}

// rotate writes and fsyncs the current file and starts generation gen. A
// failed log is retried first; if it still fails, or the new file cannot be
// created, rotate returns the error and the current generation goes on.
// Preconditions: no append runs concurrently (the store's gate is held).
func (a *AOF) rotate(gen uint64) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if err := a.flushLocked(); err != nil {
		return err
	}
	a.smu.Lock()
	defer a.smu.Unlock()
	if err := a.fsync(); err != nil {
		return a.fail(err)
	}
	a.synced.Store(a.written.Load())
	// The current file is whole and synced: failing to start the next one
	// does not fail the log.
	name := filepath.Join(a.dir, LogName(gen))
	f, err := OpenLogFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC)
	if err != nil {
		return err
	}
	if err := syncDir(a.dir); err != nil {
		f.Close()
		os.Remove(name) // empty, and no snapshot names its generation
		return err
	}
	a.f.Close()
	a.f, a.gen = f, gen
	a.Size.Store(0)
	a.Mu.Lock()
	a.genStart = a.appended // buf is empty: flushLocked took it, and no append runs
	a.Mu.Unlock()
	return nil
}

// Close writes, fsyncs and closes the log; a failed log gets one last retry.
// Preconditions: no append or commit runs concurrently.
func (a *AOF) Close() error {
	close(a.done)
	a.wg.Wait()
	err := a.Flush()
	if err == nil {
		err = a.sync()
	}
	if err != nil {
		a.Mu.Lock()
		lost := len(a.buf)
		a.Mu.Unlock()
		a.log.Error("closing the append-only log while it is failed: its last records may not be on disk", "unwritten_bytes", lost, "err", err)
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// logError is a bad record in a log file.
type logError struct {
	File   string
	Offset int64
	Reason string
	// Short: the record is cut short by the end of the file (a header of
	// fewer than RecordHeader bytes, or fewer payload bytes than its length
	// promises): a write that did not finish, if the log is the last one.
	Short bool
	// Next is the offset just past the bad record when the record is
	// complete (its length read and that many bytes there), else 0.
	Next int64
	// Op: the record read whole but its op did not decode or apply.
	Op bool
}

func (e *logError) Error() string {
	return fmt.Sprintf("%s: corrupt record at offset %d: %s", e.File, e.Offset, e.Reason)
}

func (e *logError) Unwrap() error { return ErrCorrupt }

// ScanLog calls apply for each record of data, a log file's contents, in
// order. It returns the offset just past the last good record, and:
//
//   - nil when every byte was a good record;
//   - a *logError with torn set when the bad bytes are a record cut short
//     by the end of the data: a header of fewer than RecordHeader bytes, or
//     a length that runs past the end. Only such a record, at the end of
//     the last log, can be a write that never finished;
//   - a *logError, torn not set, when a complete record fails its checksum
//     (wherever it is, the last record included: its length says N bytes
//     and N bytes are there, so the write finished and the bytes changed
//     since) or a length exceeds MaxRecord: damage.
//
// A record whose length field is damaged to promise more bytes than the
// data holds reads as cut short: nothing tells the two apart.
//
// An error apply returns stops the scan and is returned as is.
func ScanLog(name string, data []byte, apply func([]byte) error) (good int64, torn bool, err error) {
	off := 0
	for off < len(data) {
		rest := data[off:]
		if len(rest) < RecordHeader {
			return int64(off), true, &logError{File: name, Offset: int64(off), Short: true,
				Reason: fmt.Sprintf("record header cut short (%d of %d bytes)", len(rest), RecordHeader)}
		}
		n := binary.LittleEndian.Uint32(rest)
		if n > MaxRecord {
			return int64(off), false, &logError{File: name, Offset: int64(off),
				Reason: fmt.Sprintf("record length %d exceeds %d", n, MaxRecord)}
		}
		end := RecordHeader + int(n)
		if end > len(rest) {
			return int64(off), true, &logError{File: name, Offset: int64(off), Short: true,
				Reason: fmt.Sprintf("record cut short (%d of %d bytes)", len(rest), end)}
		}
		if RecordCRC(rest[:4], rest[RecordHeader:end]) != binary.LittleEndian.Uint32(rest[4:]) {
			return int64(off), false, &logError{File: name, Offset: int64(off), Next: int64(off + end),
				Reason: fmt.Sprintf("checksum mismatch in a complete record of %d bytes", end)}
		}
		if err := apply(rest[RecordHeader:end]); err != nil {
			return int64(off), false, err
		}
		off += end
	}
	return int64(off), false, nil
}

// wholeRecords counts the records at the start of data that read whole
// (complete, checksum good), up to the first that does not.
func wholeRecords(data []byte) int {
	n := 0
	ScanLog("", data, func([]byte) error { n++; return nil })
	return n
}
