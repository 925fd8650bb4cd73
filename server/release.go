package server

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// releaseEvery is how often the server checks whether it has gone quiet
// after clients left.
const releaseEvery = time.Second

// Releasing pays when it returns at least releaseMin bytes and at least
// 1/releaseShare of what a collection scans: debug.FreeOSMemory runs a
// whole collection, whose cost grows with the heap it scans (300-800 ms
// with a million keys; the filters, free of pointers, are not scanned),
// and within these bounds a release costs no more collection work per byte
// returned than GOGC=20 spends per byte collected. Below releaseMin the
// resident memory saved is not worth a collection, however small.
const (
	releaseMin   = 256 << 10
	releaseShare = 4
	// connStack is the least a connection's goroutine leaves behind: the
	// smallest stack Go gives a goroutine.
	connStack = 8 << 10
)

// idleRelease decides when the memory clients left behind goes back to the
// OS. A connection's goroutine stack and buffers (4 KiB or more to read
// into, replies) become garbage when it closes, but Go collects only once the
// heap grows by GOGC% and returns freed pages to the OS slowly, so a burst
// of 50 clients adding 10^4 items left cuckoo serve 2.75 MiB larger, 3 s
// after they left, where redis-server, whose allocator purges freed pages
// on its own, grew 0.33 MiB. The server considers a release at the first
// check that finds clients closed since the last consideration and neither
// a command run nor a client closed since the check before: never while it
// is busy, and once for a whole burst of closes, however the checks fall
// in it. It releases if what the clients left plus the free pages the
// runtime holds are worth a collection (worthReleasing).
type idleRelease struct {
	left     atomic.Int64 // bytes the connections closed since the last consideration held
	closed   atomic.Int64 // and their number
	cmds     int64        // commands processed at the last check; the cron's alone
	seen     int64        // closed at the last check; the cron's alone
	released atomic.Int64 // releases made, for the tests
}

// leave records a connection closed that held n bytes of buffers.
func (r *idleRelease) leave(n int64) {
	r.left.Add(n + connStack)
	r.closed.Add(1)
}

// quietAfterCloses reports whether clients closed since the last
// consideration, and neither a command ran nor a client closed since the
// check before, given the commands processed so far; if so, it also
// returns the bytes they left and starts counting afresh.
func (r *idleRelease) quietAfterCloses(cmds int64) (left uint64, ok bool) {
	closed := r.closed.Load()
	quiet := cmds == r.cmds && closed == r.seen
	r.cmds, r.seen = cmds, closed
	if !quiet || closed == 0 {
		return 0, false
	}
	// Closes counted since the Load stay for the next consideration.
	r.seen = r.closed.Add(-closed)
	return uint64(max(r.left.Swap(0), 0)), true
}

// worthReleasing reports whether a release pays (see releaseMin): left is
// what closed connections held, free the heap's free pages not yet
// returned, scan the bytes a collection scans.
func worthReleasing(left, free, scan uint64) bool {
	spare := left + free
	return spare >= releaseMin && spare >= scan/releaseShare
}

// releaseCron returns freed memory to the OS when the server goes quiet
// after clients left and the memory is worth it (see idleRelease).
// debug.FreeOSMemory collects and returns every free page.
func (s *Server) releaseCron() {
	sample := []metrics.Sample{
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/gc/scan/total:bytes"},
	}
	s.every(releaseEvery, nil, func(time.Time) {
		left, ok := s.idle.quietAfterCloses(s.stats.cmds.Load())
		if !ok {
			return
		}
		metrics.Read(sample)
		if worthReleasing(left, sample[0].Value.Uint64(), sample[1].Value.Uint64()) {
			debug.FreeOSMemory()
			s.idle.released.Add(1)
		}
	})
}
