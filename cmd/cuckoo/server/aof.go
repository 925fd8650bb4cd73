package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	recordHeader = 8
	// maxRecord bounds a record's payload. A longer length field is
	// corruption, never a torn tail.
	maxRecord = 1 << 30
)

// ErrCorrupt is wrapped by every error reading a damaged log or snapshot.
var ErrCorrupt = errors.New("server: corrupt data")

// fsyncMode is --appendfsync.
type fsyncMode int

const (
	fsyncEverysec fsyncMode = iota
	fsyncAlways
	fsyncNo
)

func parseFsync(s string) (fsyncMode, error) {
	switch s {
	case "", "everysec":
		return fsyncEverysec, nil
	case "always":
		return fsyncAlways, nil
	case "no":
		return fsyncNo, nil
	}
	return 0, fmt.Errorf("server: appendfsync %q: want always, everysec or no", s)
}

func (m fsyncMode) String() string {
	return [...]string{"everysec", "always", "no"}[m]
}

// appendRecord appends the framed payload to b.
func appendRecord(b, payload []byte) []byte {
	var h [recordHeader]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(len(payload)))
	crc := crc32.Update(0, castagnoli, h[0:4])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(h[4:], crc)
	return append(append(b, h[:]...), payload...)
}

// logName is the file of log generation gen.
func logName(gen uint64) string { return fmt.Sprintf("appendonly.%016x.log", gen) }

// aof is the log writer.
type aof struct {
	dir  string
	mode fsyncMode
	log  *slog.Logger
	// onSync, if set, is told the duration of every fsync (metrics).
	onSync func(time.Duration)

	mu       sync.Mutex // guards buf, appended and genStart
	buf      []byte
	appended uint64
	// genStart is appended when the current generation's file began (its
	// offset 0), so appended-genStart is the offset of the next record.
	genStart uint64

	wmu  sync.Mutex // guards f, gen and size; held across write(2)
	f    *os.File
	gen  uint64
	size atomic.Int64 // bytes in the current file, written

	smu     sync.Mutex // one fsync at a time; rotation holds it too
	written atomic.Uint64
	synced  atomic.Uint64

	failed atomic.Pointer[error] // the first write or fsync error: no more writes
	done   chan struct{}
	wg     sync.WaitGroup
}

// openAOF opens generation gen for appending at offset size (the end of its
// valid records).
func openAOF(dir string, gen uint64, size int64, mode fsyncMode, log *slog.Logger) (*aof, error) {
	f, err := os.OpenFile(filepath.Join(dir, logName(gen)), os.O_CREATE|os.O_WRONLY, 0o644)
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
	a := &aof{dir: dir, mode: mode, log: log, f: f, gen: gen, done: make(chan struct{}), appended: uint64(size)}
	a.size.Store(size)
	a.written.Store(uint64(size))
	a.synced.Store(uint64(size))
	if mode == fsyncEverysec {
		a.wg.Add(1)
		go a.everysec()
	}
	return a, nil
}

func (a *aof) everysec() {
	defer a.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-a.done:
			return
		case <-t.C:
			if err := a.flush(); err == nil {
				_ = a.sync()
			}
		}
	}
}

// err returns the error that stopped the log, if any.
func (a *aof) err() error {
	if p := a.failed.Load(); p != nil {
		return *p
	}
	return nil
}

func (a *aof) fail(err error) error {
	err = fmt.Errorf("MISCONF Errors writing to the append-only log: %v", err)
	a.failed.CompareAndSwap(nil, &err)
	a.log.Error("append-only log failed; writes refused", "err", err)
	return a.err()
}

// append adds a record and returns its LSN: the log position commit must
// reach for it to be written.
func (a *aof) append(payload []byte) uint64 {
	a.mu.Lock()
	a.buf = appendRecord(a.buf, payload)
	a.appended += uint64(recordHeader + len(payload))
	lsn := a.appended
	a.mu.Unlock()
	return lsn
}

// position returns the offset in the current generation's file at which the
// next record will start. A caller holding a key's writer lock gets a
// position that every op of that key logged so far lies before, and every
// later one at or after (snapshot.go).
func (a *aof) position() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.appended - a.genStart
}

// flush writes every record appended so far to the file.
func (a *aof) flush() error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	return a.flushLocked()
}

func (a *aof) flushLocked() error {
	if err := a.err(); err != nil {
		return err
	}
	a.mu.Lock()
	buf, target := a.buf, a.appended
	a.buf = nil
	a.mu.Unlock()
	if len(buf) == 0 {
		return nil
	}
	if _, err := a.f.Write(buf); err != nil {
		return a.fail(err)
	}
	a.size.Add(int64(len(buf)))
	a.written.Store(target)
	return nil
}

// sync fsyncs the file, covering every record written before it starts.
func (a *aof) sync() error {
	a.smu.Lock()
	defer a.smu.Unlock()
	target := a.written.Load()
	if a.synced.Load() >= target {
		return a.err()
	}
	start := time.Now()
	if err := a.f.Sync(); err != nil {
		return a.fail(err)
	}
	if a.onSync != nil {
		a.onSync(time.Since(start))
	}
	a.synced.Store(target)
	return nil
}

// commit makes the records up to lsn as durable as the mode promises: written
// to the OS (every mode), and fsynced with always.
func (a *aof) commit(lsn uint64) error {
	if a.written.Load() < lsn {
		if err := a.flush(); err != nil {
			return err
		}
	}
	if a.mode == fsyncAlways && a.synced.Load() < lsn {
		return a.sync()
	}
	return a.err()
}

// rotate writes and fsyncs the current file and starts generation gen.
// Preconditions: no append runs concurrently (the store's gate is held).
func (a *aof) rotate(gen uint64) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if err := a.flushLocked(); err != nil {
		return err
	}
	a.smu.Lock()
	defer a.smu.Unlock()
	if err := a.f.Sync(); err != nil {
		return a.fail(err)
	}
	a.synced.Store(a.written.Load())
	f, err := os.OpenFile(filepath.Join(a.dir, logName(gen)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return a.fail(err)
	}
	if err := syncDir(a.dir); err != nil {
		f.Close()
		return a.fail(err)
	}
	a.f.Close()
	a.f, a.gen = f, gen
	a.size.Store(0)
	a.mu.Lock()
	a.genStart = a.appended // buf is empty: flushLocked took it, and no append runs
	a.mu.Unlock()
	return nil
}

// close writes, fsyncs and closes the log.
func (a *aof) close() error {
	close(a.done)
	a.wg.Wait()
	err := a.flush()
	if err == nil {
		a.written.Store(a.appended)
		err = a.sync()
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

// logError is a damaged record in a log file.
type logError struct {
	File   string
	Offset int64
	Reason string
}

func (e *logError) Error() string {
	return fmt.Sprintf("%s: corrupt record at offset %d: %s", e.File, e.Offset, e.Reason)
}

func (e *logError) Unwrap() error { return ErrCorrupt }

// scanLog calls apply for each record of data, a log file's contents, in
// order. It returns the offset just past the last good record, and:
//
//   - nil when every byte was a good record;
//   - a *logError with torn set when the bad bytes are a torn final record: a
//     record whose length runs past the end of the data, or whose checksum
//     fails and which ends exactly at the end (a write cut short);
//   - a *logError when a record with data after it is damaged, or a length
//     exceeds maxRecord: corruption in the middle.
//
// An error apply returns stops the scan and is returned as is.
func scanLog(name string, data []byte, apply func([]byte) error) (good int64, torn bool, err error) {
	off := 0
	for off < len(data) {
		rest := data[off:]
		if len(rest) < recordHeader {
			return int64(off), true, &logError{name, int64(off), fmt.Sprintf("torn record header (%d of %d bytes)", len(rest), recordHeader)}
		}
		n := binary.LittleEndian.Uint32(rest)
		if n > maxRecord {
			return int64(off), false, &logError{name, int64(off), fmt.Sprintf("record length %d exceeds %d", n, maxRecord)}
		}
		end := recordHeader + int(n)
		if end > len(rest) {
			return int64(off), true, &logError{name, int64(off), fmt.Sprintf("torn record (%d of %d bytes)", len(rest), end)}
		}
		crc := crc32.Update(0, castagnoli, rest[:4])
		crc = crc32.Update(crc, castagnoli, rest[recordHeader:end])
		if crc != binary.LittleEndian.Uint32(rest[4:]) {
			return int64(off), end == len(rest), &logError{name, int64(off), "checksum mismatch"}
		}
		if err := apply(rest[recordHeader:end]); err != nil {
			return int64(off), false, err
		}
		off += end
	}
	return int64(off), false, nil
}
