package keyspace

import (
	"os"
	"sync"
	"syscall"
)

// LogFaults makes the log files a server opens fail on command: a disk that
// fills up (writes stop part way with ENOSPC), and fsync, truncate, seek or
// open failing with a given error. The zero state injects nothing.
type LogFaults struct {
	mu sync.Mutex
	// room is how many bytes the log files may still grow by; < 0: no
	// limit. Truncating a file gives its bytes back, as on a real disk.
	room                       int64
	syncErr, truncErr, seekErr error
	openErr                    func(name string) error
	duringWrite                func()
	syncs                      int // fsync calls that reached the file
}

// InjectLogFaults wraps every log file opened until the test ends (cleanup
// is the test's Cleanup). It is for tests only: no server calls it.
// Preconditions: no server or aof of this test is running yet (the hook is
// a package variable).
func InjectLogFaults(cleanup func(func())) *LogFaults {
	lf := &LogFaults{room: -1}
	open := OpenLogFile
	OpenLogFile = func(name string, flag int) (LogFile, error) {
		lf.mu.Lock()
		fail := lf.openErr
		lf.mu.Unlock()
		if fail != nil {
			if err := fail(name); err != nil {
				return nil, err
			}
		}
		f, err := os.OpenFile(name, flag, 0o644)
		if err != nil {
			return nil, err
		}
		return &faultFile{f: f, lf: lf}, nil
	}
	cleanup(func() { OpenLogFile = open })
	return lf
}

// Full lets the log files grow by room more bytes; the write that crosses
// that writes what fits and fails with ENOSPC, as does every later one.
func (lf *LogFaults) Full(room int64) {
	lf.mu.Lock()
	lf.room = room
	lf.mu.Unlock()
}

// Free lifts the limit of Full.
func (lf *LogFaults) Free() { lf.Full(-1) }

// FailSync makes fsync return err (nil: succeed again).
func (lf *LogFaults) FailSync(err error) {
	lf.mu.Lock()
	lf.syncErr = err
	lf.mu.Unlock()
}

// FailTruncate makes truncate return err (nil: succeed again).
func (lf *LogFaults) FailTruncate(err error) {
	lf.mu.Lock()
	lf.truncErr = err
	lf.mu.Unlock()
}

// FailSeek makes seek return err (nil: succeed again).
func (lf *LogFaults) FailSeek(err error) {
	lf.mu.Lock()
	lf.seekErr = err
	lf.mu.Unlock()
}

// FailOpen makes opening a log file return fn(name) when that is not nil.
func (lf *LogFaults) FailOpen(fn func(name string) error) {
	lf.mu.Lock()
	lf.openErr = fn
	lf.mu.Unlock()
}

// DuringWrite makes the next write call fn first, as if another goroutine
// ran while write(2) blocked.
func (lf *LogFaults) DuringWrite(fn func()) {
	lf.mu.Lock()
	lf.duringWrite = fn
	lf.mu.Unlock()
}

// Syncs returns how many fsyncs reached a file.
func (lf *LogFaults) Syncs() int {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	return lf.syncs
}

// faultFile is a log file whose calls go through its LogFaults.
type faultFile struct {
	f  *os.File
	lf *LogFaults
}

func (ff *faultFile) Write(b []byte) (int, error) {
	lf := ff.lf
	lf.mu.Lock()
	fn := lf.duringWrite
	lf.duringWrite = nil
	lf.mu.Unlock()
	if fn != nil {
		fn()
	}
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.room < 0 || int64(len(b)) <= lf.room {
		n, err := ff.f.Write(b)
		if lf.room >= 0 {
			lf.room -= int64(n)
		}
		return n, err
	}
	n, err := ff.f.Write(b[:lf.room])
	lf.room -= int64(n)
	if err == nil {
		err = &os.PathError{Op: "write", Path: ff.f.Name(), Err: syscall.ENOSPC}
	}
	return n, err
}

func (ff *faultFile) Sync() error {
	lf := ff.lf
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.syncErr != nil {
		return &os.PathError{Op: "sync", Path: ff.f.Name(), Err: lf.syncErr}
	}
	lf.syncs++
	return ff.f.Sync()
}

func (ff *faultFile) Truncate(size int64) error {
	lf := ff.lf
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.truncErr != nil {
		return &os.PathError{Op: "truncate", Path: ff.f.Name(), Err: lf.truncErr}
	}
	fi, err := ff.f.Stat()
	if err != nil {
		return err
	}
	if err := ff.f.Truncate(size); err != nil {
		return err
	}
	if lf.room >= 0 && fi.Size() > size {
		lf.room += fi.Size() - size
	}
	return nil
}

func (ff *faultFile) Seek(offset int64, whence int) (int64, error) {
	lf := ff.lf
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.seekErr != nil {
		return 0, &os.PathError{Op: "seek", Path: ff.f.Name(), Err: lf.seekErr}
	}
	return ff.f.Seek(offset, whence)
}

func (ff *faultFile) Close() error { return ff.f.Close() }
