package pubsub

// Delivery's protocol. A publisher never writes to a subscriber's
// connection. Under the registry's read lock, Deliver appends the encoded
// message to the subscriber's pending buffer (Delivery.mu, held for the
// append only) and wakes the subscriber's push goroutine, which takes the
// whole buffer and writes it to the connection while holding Delivery.wmu.
// The connection's own goroutine holds wmu too while it flushes a
// pipeline's replies (Flush), so a push never lands inside a reply. Buffers
// are written whole, in the order they were taken, and a publisher appends
// under the lock, so a subscriber receives one publisher's messages in its
// PUBLISH order.
//
// Linearization points. A message is delivered, for the limits and the
// totals, when Deliver's append releases mu; it reaches the client when
// the write of its buffer returns. A Delivery is dead from the release of
// the mu that set dead (over its limit, a failed write, Close): no push is
// taken after it.
//
// Hold, set by a (P|S)SUBSCRIBE before it registers anything, keeps pushes
// pending until the pipeline's replies, the confirmation among them, are
// flushed; Flush then clears it and writes them. So no message of a
// channel reaches a client before its subscription's confirmation.

import (
	"io"
	"sync"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/clientmem"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
)

// maxIdlePushBuf is the largest write buffer a subscriber keeps between
// writes; a larger one (a burst) is left to the collector.
const maxIdlePushBuf = 64 << 10

// Delivery is a subscriber's side of its connection: the pushes pending,
// the goroutine that writes them, and the write lock the connection's
// flush shares. It is made at a connection's first subscription and kept
// until the connection ends (Close).
type Delivery struct {
	conn   io.WriteCloser
	mem    *clientmem.Usage
	totals *clientmem.Totals

	// wmu is held across every write to the connection once it has a
	// Delivery: by the push goroutine and by the connection's flush.
	wmu   sync.Mutex
	spare []byte // a written buffer, to reuse; with wmu held

	// mu guards the fields below; publishers hold it only to append.
	mu       sync.Mutex
	pending  []byte // encoded pushes not yet taken
	inflight int    // bytes taken and being written
	hold     bool   // pushes wait for the pipeline's flush
	dead     bool   // over the limit or the connection failed: drop pushes

	wake   chan struct{} // capacity 1: pending is not empty
	done   chan struct{} // closed when the connection ends
	exited chan struct{} // closed by the push goroutine
}

// NewDelivery returns the delivery of a connection, conn, whose figures are
// mem, counted in totals, and starts its push goroutine. With conn nil (an
// in-process client) it writes nothing and starts nothing.
func NewDelivery(conn io.WriteCloser, mem *clientmem.Usage, totals *clientmem.Totals) *Delivery {
	d := &Delivery{conn: conn, mem: mem, totals: totals,
		wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	if conn != nil {
		go d.pushLoop()
	} else {
		close(d.exited)
	}
	return d
}

// Hold keeps the pushes pending until the next Flush: a (P|S)SUBSCRIBE
// calls it before it registers anything.
func (d *Delivery) Hold() {
	d.mu.Lock()
	d.hold = true
	d.mu.Unlock()
}

// Deliver queues msg, one encoded message (Registry.Publish's deliver),
// unless the client's output with it, out bytes (its pushes and its replies
// being written), passes lim, its client-output-buffer-limit's pubsub class,
// at now (clientmem's Check): then the pending messages are dropped, the
// Delivery is dead (it drops every push from then on) and Deliver reports
// closed, once: the caller closes the connection. Never blocks on the
// connection.
func (d *Delivery) Deliver(msg []byte, lim limits.OutputLimit, now time.Time) (out int64, closed bool) {
	d.mu.Lock()
	if d.dead {
		d.mu.Unlock()
		return 0, false
	}
	out = int64(len(d.pending)+d.inflight+len(msg)) + d.mem.Replies()
	if d.mem.Check(lim, out, now).Over() {
		d.dead, d.pending = true, nil
		d.totals.SetPush(d.mem, int64(d.inflight))
		d.mu.Unlock()
		return out, true
	}
	d.pending = append(d.pending, msg...)
	d.totals.SetPush(d.mem, int64(len(d.pending)+d.inflight))
	hold := d.hold
	d.mu.Unlock()
	if !hold {
		select {
		case d.wake <- struct{}{}:
		default: // already woken
		}
	}
	return out, false
}

// pushLoop writes the pending pushes whenever woken, until the connection
// ends.
func (d *Delivery) pushLoop() {
	defer close(d.exited)
	for {
		select {
		case <-d.wake:
		case <-d.done:
			return
		}
		d.wmu.Lock()
		err := d.drain()
		d.wmu.Unlock()
		if err != nil {
			d.conn.Close() // the connection's goroutine sees it and ends
		}
	}
}

// drain writes the pending pushes, buffer by buffer, until none are left or
// hold is set. wmu must be held.
func (d *Delivery) drain() error {
	for {
		d.mu.Lock()
		if d.hold || d.dead || len(d.pending) == 0 {
			d.mu.Unlock()
			return nil
		}
		buf := d.pending
		d.pending, d.spare = d.spare, nil
		d.inflight = len(buf)
		d.mu.Unlock()
		_, err := d.conn.Write(buf)
		d.mu.Lock()
		d.inflight = 0
		if err != nil {
			d.dead, d.pending = true, nil
		}
		d.totals.SetPush(d.mem, int64(len(d.pending)))
		d.mu.Unlock()
		if err != nil {
			return err
		}
		if cap(buf) <= maxIdlePushBuf {
			d.spare = buf[:0]
		}
	}
}

// Flush is the connection's flush of a pipeline's replies (flush writes
// them): the replies, then the pushes held back or queued meanwhile, with
// the write lock held so the push goroutine writes nothing in between.
func (d *Delivery) Flush(flush func() error) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	err := flush()
	d.mu.Lock()
	d.hold = false
	d.mu.Unlock()
	if err != nil {
		return err
	}
	if d.conn == nil {
		return nil
	}
	return d.drain()
}

// Close ends the delivery when its connection ends (the connection is
// closed already, so a write in progress fails): pending pushes are
// dropped, the push goroutine exits, and the pushes are taken off the
// totals. The caller takes the subscriber out of the registry first
// (Registry.Leave), so that no Deliver follows.
func (d *Delivery) Close() {
	d.mu.Lock()
	d.dead, d.pending = true, nil
	d.mu.Unlock()
	close(d.done)
	<-d.exited
	d.mu.Lock()
	d.totals.SetPush(d.mem, 0)
	d.mu.Unlock()
}
