// Package monitor is MONITOR's fan-out: the clients in MONITOR mode, each
// with a bounded queue of lines, and each command's line in Redis's form.
//
// Protocol. A command's goroutine formats its line and offers it to every
// monitor's queue under the hub's lock, never blocking: a monitor whose
// queue is full is dropped (its queue closed) and reported to the caller,
// who closes its connection, so a slow monitor never slows the server. The
// monitor's own goroutine writes what its queue holds; a closed queue ends
// it. Len is read on every command without the lock, so that with no
// monitor the cost is one atomic load.
//
// It imports only internal/quoted (Redis's sdscatrepr) and the standard
// library; package server imports it.
package monitor

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// Queue bounds the lines waiting for one monitor; a monitor that falls this
// far behind is dropped rather than slowing the server.
const Queue = 4096

// Hub is the monitors, by a handle of the server's (C: its connection).
type Hub[C comparable] struct {
	mu  sync.Mutex
	chs map[C]chan []byte
	n   atomic.Int64 // len(chs)
}

// Len is the number of monitors; no lock.
func (h *Hub[C]) Len() int64 { return h.n.Load() }

// Add makes c a monitor and returns its queue.
func (h *Hub[C]) Add(c C) <-chan []byte {
	ch := make(chan []byte, Queue)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.chs == nil {
		h.chs = map[C]chan []byte{}
	}
	h.chs[c] = ch
	h.n.Store(int64(len(h.chs)))
	return ch
}

// Remove drops c, closing its queue, if it is a monitor.
func (h *Hub[C]) Remove(c C) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeLocked(c)
}

func (h *Hub[C]) removeLocked(c C) {
	if ch, ok := h.chs[c]; ok {
		delete(h.chs, c)
		close(ch)
		h.n.Store(int64(len(h.chs)))
	}
}

// Feed offers line to every monitor, and calls behind, with the hub's lock
// held, for each one whose queue was full: it is removed already.
func (h *Hub[C]) Feed(line []byte, behind func(C)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c, ch := range h.chs {
		select {
		case ch <- line:
		default:
			h.removeLocked(c)
			behind(c)
		}
	}
}

// Line is a command's line as Redis's MONITOR writes it: the time with
// microseconds, the database and the client's address, and each argument
// quoted as sdscatrepr quotes it.
func Line(now time.Time, addr string, args [][]byte) []byte {
	line := make([]byte, 0, 64)
	line = append(line, '+')
	line = strconv.AppendInt(line, now.Unix(), 10)
	line = append(line, '.')
	us := strconv.Itoa(now.Nanosecond() / 1000)
	line = append(line, "000000"[len(us):]...)
	line = append(line, us...)
	line = append(line, " [0 "...)
	line = append(line, addr...)
	line = append(line, ']')
	for _, a := range args {
		line = append(line, ' ')
		line = append(line, quoted.Quote(string(a))...)
	}
	return append(line, '\r', '\n')
}
