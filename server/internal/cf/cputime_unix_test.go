//go:build unix

package cf

import (
	"syscall"
	"time"
)

// cpuTime returns the processor time the process has used, user and
// system: a benchmark on a machine shared with other work reports it beside
// ns/op, which counts the time other processes held the cores too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
