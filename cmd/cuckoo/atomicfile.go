package main

// A file written atomically goes to a temporary file in the same directory,
// which is synced and then renamed over the target, so that the target holds
// either its old contents or all of the new ones. The temporary file must not
// outlive the command: every error path removes it, and so does SIGINT
// (Ctrl-C), SIGTERM or SIGHUP, which would otherwise end the process before
// any deferred call runs (issue 24: an interrupted build left a hidden 1.5 GB
// ".w.cf.tmp..." file). Only SIGKILL, or a crash of the runtime itself, can
// leave one.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// atomicFile is a temporary file that commit installs as path.
//
// While it exists a goroutine waits for SIGINT, SIGTERM and SIGHUP. On one it
// removes the file and ends the process by that same signal, as if it had not
// been caught, so that a shell sees the status it expects of an interrupted
// command (130, 143, 129) and a script stops. It does so at once, whatever the
// command is doing (reading a slow pipe, syncing a large file), holding mu so
// that commit cannot rename the file meanwhile.
type atomicFile struct {
	path string   // the target, the name the user gave
	f    *os.File // the temporary file
	sig  chan os.Signal
	quit chan struct{} // closed by discard: stop waiting for a signal
	done chan struct{} // closed when the waiting goroutine has returned

	mu  sync.Mutex
	tmp string // the temporary file's name; "" once renamed or removed
}

// interruptSignals are the signals that remove the temporary file: Ctrl-C,
// kill's default, and the hangup a closed terminal or SSH session sends. Each
// is caught only if the process was not started with it ignored (nohup, a
// background job of a non-interactive shell): catching it would undo that.
var interruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// createAtomic creates the temporary file for path, in path's directory. Its
// errors name path, not the temporary file.
func createAtomic(path string) (*atomicFile, error) {
	a := &atomicFile{path: path, sig: make(chan os.Signal, 1), quit: make(chan struct{}), done: make(chan struct{})}
	var caught []os.Signal
	for _, s := range interruptSignals {
		if !signal.Ignored(s) {
			caught = append(caught, s)
		}
	}
	// Catch the signals before the file exists, so that there is no moment
	// when it exists and a signal would leave it.
	signal.Notify(a.sig, caught...)
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		signal.Stop(a.sig)
		a.diePending()
		return nil, fmt.Errorf("writing %s: %w", path, cause(err))
	}
	a.f, a.tmp = f, f.Name()
	go a.wait()
	return a, nil
}

// wait removes the file and ends the process on a signal, or returns once
// discard closes quit.
func (a *atomicFile) wait() {
	defer close(a.done)
	select {
	case s := <-a.sig:
		a.mu.Lock() // never unlocked: the process ends
		a.remove()
		die(s)
	case <-a.quit:
	}
}

// remove deletes the temporary file unless it was renamed. The caller holds
// mu.
func (a *atomicFile) remove() {
	if a.tmp == "" {
		return
	}
	// Unix unlinks an open file; Windows needs it closed first. Closing
	// first everywhere would wait for a write or sync in progress.
	if os.Remove(a.tmp) != nil {
		a.f.Close()
		os.Remove(a.tmp)
	}
	a.tmp = ""
}

// diePending ends the process by a signal that arrived before signal.Stop,
// if one did. Stop guarantees that none arrives after it.
func (a *atomicFile) diePending() {
	select {
	case s := <-a.sig:
		die(s)
	default:
	}
}

// discard removes the temporary file, unless commit installed it, and stops
// catching signals. It may be called more than once, and should be deferred
// right after createAtomic. A signal that came just before it ends the process
// (the file gone, or installed complete).
func (a *atomicFile) discard() {
	a.mu.Lock()
	if a.tmp != "" {
		a.f.Close()
		a.remove()
	}
	a.mu.Unlock()
	select {
	case <-a.quit:
		return // discarded already
	default:
	}
	signal.Stop(a.sig)
	close(a.quit)
	<-a.done
	a.diePending()
}

// commit writes w to the temporary file, syncs it and renames it over path,
// then syncs the directory. It returns the number of bytes written. On an
// error the temporary file is removed and path is unchanged; the error names
// path.
func (a *atomicFile) commit(w io.WriterTo) (n int64, err error) {
	defer func() {
		if err != nil {
			a.discard()
			err = fmt.Errorf("writing %s: %w", a.path, cause(err))
		}
	}()
	bw := bufio.NewWriterSize(a.f, 1<<20)
	if n, err = w.WriteTo(bw); err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return 0, err
	}
	if err = a.f.Chmod(0o644); err != nil {
		return 0, err
	}
	if err = a.f.Sync(); err != nil {
		return 0, err
	}
	if err = a.f.Close(); err != nil {
		return 0, err
	}
	a.mu.Lock()
	if err = os.Rename(a.tmp, a.path); err == nil {
		a.tmp = ""
	}
	a.mu.Unlock()
	if err != nil {
		return 0, err
	}
	// Make the rename itself durable. Not every system can sync a directory;
	// the data is written either way.
	if d, err := os.Open(filepath.Dir(a.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return n, nil
}

// writeAtomic writes w to path through an atomicFile. It returns the number
// of bytes written.
func writeAtomic(path string, w io.WriterTo) (int64, error) {
	a, err := createAtomic(path)
	if err != nil {
		return 0, err
	}
	defer a.discard()
	return a.commit(w)
}

// die ends the process by signal s, as the signal would have without a
// handler. Where a process cannot signal itself (Windows), or the signal does
// not end it, it exits with the status a shell gives a command that s ended:
// 128 + the signal's number.
func die(s os.Signal) {
	signal.Reset(s)
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(s) == nil {
		time.Sleep(time.Second) // the signal is on its way
	}
	status := 128 + 2 // SIGINT's number, where os.Interrupt has none
	if n, ok := s.(syscall.Signal); ok {
		status = 128 + int(n)
	}
	os.Exit(status)
}

// cause strips the file names from err (a *PathError or *LinkError of the
// temporary file), leaving what went wrong, for a message that names the
// user's path instead.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
