//go:build unix

package keyspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockName is the file whose exclusive flock marks a data directory as in
// use. Two servers on one directory would each rotate, truncate and delete
// the other's logs, so the second is refused.
const lockName = "LOCK"

// LockDir takes the data directory's lock, or fails at once if another
// process (or another Server in this one) holds it. The lock lasts until the
// returned file is closed, or the process exits.
func LockDir(dir string) (*os.File, error) {
	p := filepath.Join(dir, lockName)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("server: data directory %s is in use by another server (%s is locked)", dir, p)
		}
		return nil, fmt.Errorf("server: locking %s: %w", p, err)
	}
	return f, nil
}
