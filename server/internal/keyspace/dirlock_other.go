//go:build !unix

package keyspace

import (
	"os"
	"path/filepath"
)

const lockName = "LOCK"

// LockDir only creates the lock file where flock is unavailable: two
// servers on one data directory are not detected there.
func LockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
}
