package clientmem

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/limits"
)

// TrackOutput is the least reply, or step of pushes, counted in the totals:
// Redis's static reply buffer is 16 KiB. Smaller changes would cost an
// atomic add on a shared counter for every pipeline and message.
const TrackOutput = 16 << 10

// Usage is one client's published figures (see the package doc). The zero
// value is a client holding nothing. Its atomics may be read by any
// goroutine; the fields below them are its connection's goroutine's own.
type Usage struct {
	qbuf  atomic.Int64 // capacity of the request buffer
	qlen  atomic.Int64 // of it, bytes not yet consumed when the last read began
	obuf  atomic.Int64 // replies being flushed, if at least the publish threshold
	multi atomic.Int64 // a transaction's queued commands
	push  atomic.Int64 // pushes pending or being written, to the byte
	// pushed is push as the totals count it, in steps of TrackOutput;
	// written under the subscriber's lock.
	pushed atomic.Int64
	// softSince is when the output reached its class's soft limit (Unix
	// ns); 0 while below it.
	softSince atomic.Int64
	// replica is set once the connection is a replica's link: its figures
	// count in the replicas' total.
	replica atomic.Bool

	// The connection's goroutine's own:
	charged   int64 // of obuf, the bytes the key space counts already as dump chunks
	multiSeen int64 // multi as last published
	queued    int64 // bytes of the transaction's queued commands
	// outCheck is the reply size at which the server checks the output
	// limits (the smaller nonzero one of the client's class), publishAt
	// the one from which a pipeline's replies are published; both set
	// before each read (Arm).
	outCheck, publishAt int
}

// Total is the client's memory as the totals count it (CLIENT LIST's
// tot-mem but for the pushes' rounding).
func (u *Usage) Total() int64 {
	return u.qbuf.Load() + u.obuf.Load() + u.multi.Load() + u.pushed.Load()
}

// Output is the client's output as its limits see it: the replies being
// written and the pushes, to the byte.
func (u *Usage) Output() int64 { return u.obuf.Load() + u.push.Load() }

// Replies is the client's replies being written, as published.
func (u *Usage) Replies() int64 { return u.obuf.Load() }

// Pushes is the client's pushes pending or being written.
func (u *Usage) Pushes() int64 { return u.push.Load() }

// QueryBuffer is the request buffer's capacity, and of it the bytes not yet
// consumed when the client last waited for more (CLIENT LIST's qbuf).
func (u *Usage) QueryBuffer() (capacity, pending int64) { return u.qbuf.Load(), u.qlen.Load() }

// SetPending publishes the bytes of requests the client has buffered and
// not yet run, as it waits for more.
func (u *Usage) SetPending(n int) { u.qlen.Store(int64(n)) }

// Multi is the bytes of the client's queued transaction, as published at
// its last pipeline's end.
func (u *Usage) Multi() int64 { return u.multi.Load() }

// Queue adds n bytes of a queued command to the transaction, published at
// the pipeline's end (Totals.SetMulti).
func (u *Usage) Queue(n int) { u.queued += int64(n) }

// ClearQueue empties the transaction, published at the pipeline's end.
func (u *Usage) ClearQueue() { u.queued = 0 }

// IsReplica reports whether the figures count in the replicas' total.
func (u *Usage) IsReplica() bool { return u.replica.Load() }

// SoftSince is when the client's output reached its soft limit (the zero
// time if it is not marked as at it).
func (u *Usage) SoftSince() time.Time {
	if ns := u.softSince.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// OutCheck is the reply size from which the server checks the output limits
// (Arm).
func (u *Usage) OutCheck() int { return u.outCheck }

// PublishAt is the reply size from which a pipeline's replies are published
// (Arm): the smaller of OutCheck and TrackOutput.
func (u *Usage) PublishAt() int { return u.publishAt }

// Arm sets OutCheck and PublishAt from lim, the class's limits in force, so
// that a command costs one comparison.
func (u *Usage) Arm(lim limits.OutputLimit) {
	check := int64(math.MaxInt)
	if lim.Hard > 0 {
		check = lim.Hard
	}
	if lim.Soft > 0 {
		check = min(check, lim.Soft)
	}
	u.outCheck = int(min(check, math.MaxInt))
	u.publishAt = min(u.outCheck, TrackOutput)
}
