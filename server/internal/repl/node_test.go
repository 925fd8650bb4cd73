package repl

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newTestNode is a primary on an empty key space, with the clock c.
func newTestNode(cfg Config, c *clock) *Node {
	if cfg.Store == nil {
		cfg.Store = keyspace.NewStore(0, 1<<30)
	}
	n := New(cfg)
	n.min.now = c.Now
	return n
}

// newTestLink is a link on one end of a pipe; closing it closes the pipe.
func newTestLink(t *testing.T, id int64) *Link {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return NewLink(a, id)
}

// TestAccept: PSYNC's decision as the counters and the pin record it, and
// a replica's refusal.
func TestAccept(t *testing.T) {
	c := &clock{now: time.Unix(1_000_000, 0)}
	n := newTestNode(Config{}, c)
	n.active.Store(true)
	n.Feed([]byte{keyspace.OpReplPing})
	end := n.backlog.End()

	cont := newTestLink(t, 1)
	if why, err := n.Accept(cont, n.id, end); why != "" || err != nil {
		t.Fatalf("a continue: %q, %v", why, err)
	}
	if cont.full || cont.from != end || cont.state != LinkWaitBgsave {
		t.Errorf("a continue's link: full %v, from %d, state %v", cont.full, cont.from, cont.state)
	}
	if at, ok := n.backlog.Pinned(cont); !ok || at != end {
		t.Errorf("a continue pins the backlog at %d, %v; want %d", at, ok, end)
	}

	past := newTestLink(t, 2)
	if why, err := n.Accept(past, n.id, end+1); why != "past the end of this primary's stream" || err != nil {
		t.Errorf("past the end: %q, %v", why, err)
	}
	if !past.full {
		t.Error("past the end: not a full copy")
	}
	if _, ok := n.backlog.Pinned(past); ok {
		t.Error("a full copy pinned the backlog before its copy began")
	}
	if why, err := n.Accept(newTestLink(t, 3), "?", -1); why != "" || err != nil {
		t.Errorf("PSYNC ? -1: %q, %v", why, err)
	}
	if full, ok, bad := n.Syncs(); full != 2 || ok != 1 || bad != 1 {
		t.Errorf("sync_full %d, sync_partial_ok %d, sync_partial_err %d; want 2, 1, 1", full, ok, bad)
	}
	if st := n.Status(); len(st.Replicas) != 3 || st.Replicas[0].State != LinkWaitBgsave {
		t.Errorf("Status's replicas: %+v", st.Replicas)
	}

	n.primary = &primaryLink{host: "h", port: 1}
	if _, err := n.Accept(newTestLink(t, 4), n.id, end); !errors.Is(err, ErrChained) {
		t.Errorf("PSYNC to a replica: %v; want ErrChained", err)
	}
}

// TestWait: WAIT counts the replicas whose acknowledgement reached the
// stream's end when it began; it returns at once when enough have, at the
// timeout, when an acknowledgement brings the count up, or at Stop.
func TestWait(t *testing.T) {
	c := &clock{now: time.Unix(1_000_000, 0)}
	n := newTestNode(Config{}, c)
	n.active.Store(true)
	n.Feed([]byte{keyspace.OpReplPing})
	end := n.backlog.End()
	a, b := newTestLink(t, 1), newTestLink(t, 2)
	n.replicas[a], n.replicas[b] = struct{}{}, struct{}{}
	a.ack.Store(end)
	b.ack.Store(end - 1)

	if got := n.Wait(1, 0); got != 1 {
		t.Errorf("WAIT 1 0 = %d; want 1", got)
	}
	if got := n.Wait(0, 0); got != 1 {
		t.Errorf("WAIT 0 0 = %d; want 1 (the count, at once)", got)
	}
	start := time.Now()
	if got := n.Wait(2, 30*time.Millisecond); got != 1 || time.Since(start) < 30*time.Millisecond {
		t.Errorf("WAIT 2 30 = %d after %v; want 1 after the timeout", got, time.Since(start))
	}

	done := make(chan int)
	go func() { done <- n.Wait(2, 0) }()
	time.Sleep(10 * time.Millisecond)
	b.ack.Store(end) // as readAcks does: store, then broadcast
	n.mu.Lock()
	n.cond.Broadcast()
	n.mu.Unlock()
	if got := <-done; got != 2 {
		t.Errorf("WAIT 2 0 after the acknowledgement = %d; want 2", got)
	}

	// A write after WAIT began is not waited for; one before it is.
	n.Feed([]byte{keyspace.OpReplPing})
	go func() { done <- n.Wait(1, 0) }()
	time.Sleep(10 * time.Millisecond)
	n.Stop()
	if got := <-done; got != 0 {
		t.Errorf("WAIT 1 0 at Stop = %d; want 0", got)
	}
}

// TestMinReplicas: good replicas are the online links whose last
// acknowledgement is at most max-lag old, counted on the test's clock; a
// write may run with enough of them, with either setting 0, or on a
// replica.
func TestMinReplicas(t *testing.T) {
	c := &clock{now: time.Unix(1_000_000, 0)}
	n := newTestNode(Config{}, c)
	t.Cleanup(func() { n.SetMinReplicas(0, 0) }) // stops the expiry timer
	if !n.EnoughReplicas() {
		t.Fatal("with min-replicas-to-write 0 a write was refused")
	}
	if _, shown := n.goodReplicasShown(); shown {
		t.Error("min_slaves_good_slaves shown with the settings off")
	}
	n.SetMinReplicas(2, 10)
	if n.EnoughReplicas() {
		t.Fatal("with no replica, min-replicas-to-write 2 let a write run")
	}

	a, b := newTestLink(t, 1), newTestLink(t, 2)
	a.lastAck.Store(c.Now().UnixMilli())
	b.lastAck.Store(c.Now().Add(-5 * time.Second).UnixMilli())
	n.replicaOnline(a)
	n.replicaOnline(b)
	if good, shown := n.goodReplicasShown(); good != 2 || !shown || !n.EnoughReplicas() {
		t.Fatalf("two fresh replicas: good %d (shown %v), enough %v", good, shown, n.EnoughReplicas())
	}

	// b's acknowledgement is 10 s old: still good, to the millisecond.
	c.Add(5 * time.Second)
	n.countGoodReplicas()
	if n.min.good.Load() != 2 {
		t.Errorf("at max-lag exactly: %d good; want 2", n.min.good.Load())
	}
	c.Add(time.Millisecond)
	n.countGoodReplicas()
	if n.min.good.Load() != 1 || n.EnoughReplicas() {
		t.Errorf("past max-lag: %d good, enough %v; want 1, false", n.min.good.Load(), n.EnoughReplicas())
	}

	// An acknowledgement brings b back (replicaAcked counts again).
	b.lastAck.Store(c.Now().UnixMilli())
	n.replicaAcked()
	if !n.EnoughReplicas() {
		t.Error("after b's acknowledgement a write is refused")
	}
	// A link dropped is counted out at once.
	n.replicaDropped(b)
	if n.min.good.Load() != 1 || n.EnoughReplicas() {
		t.Errorf("after b dropped: %d good, enough %v", n.min.good.Load(), n.EnoughReplicas())
	}
	// Either setting 0 lets writes run; so does being a replica.
	n.SetMinReplicas(2, 0)
	if !n.EnoughReplicas() {
		t.Error("with min-replicas-max-lag 0 a write was refused")
	}
	n.SetMinReplicas(2, 10)
	n.cfg.Store.Replica.Store(true)
	if !n.EnoughReplicas() {
		t.Error("a replica refused a write for want of replicas")
	}
	n.SetMinReplicas(-1, -1)
	if n.min.toWrite.Load() != 0 || n.min.maxLag.Load() != 0 {
		t.Error("negative settings are not 0")
	}
}

// TestOutputLimits: a link whose output (the stream past what it sent)
// reaches the hard limit is cut at once; one at or above the soft limit
// for more than soft-seconds is cut then; one that falls below the soft
// limit starts its time again. A cut link loses its pin and is closed.
func TestOutputLimits(t *testing.T) {
	c := &clock{now: time.Unix(1_000_000, 0)}
	var lim limits.OutputLimit
	n := newTestNode(Config{OutputLimit: func() limits.OutputLimit { return lim }}, c)
	n.active.Store(true)
	attach := func(id int64) *Link {
		l := newTestLink(t, id)
		n.mu.Lock()
		n.replicas[l] = struct{}{}
		n.backlog.Pin(l, n.backlog.End())
		n.mu.Unlock()
		return l
	}
	op := make([]byte, 92) // 100 bytes framed
	feed := func(k int) {
		for range k {
			n.Feed(op)
		}
	}

	t.Run("limit=hard", func(t *testing.T) {
		lim = limits.OutputLimit{Hard: 300}
		l := attach(1)
		feed(2)
		if l.cut {
			t.Fatal("cut below the hard limit")
		}
		feed(1)
		if _, ok := n.backlog.Pinned(l); !l.cut || ok {
			t.Fatalf("at the hard limit: cut %v, pinned %v", l.cut, ok)
		}
		// Nothing reads the pipe: a write returns only once the cut's
		// close (asynchronous: a TLS close may write) closed it.
		if _, err := l.nc.Write([]byte("x")); err == nil {
			t.Error("a cut link's connection is open")
		}
	})

	t.Run("limit=soft", func(t *testing.T) {
		lim = limits.OutputLimit{Soft: 200, SoftSeconds: 1}
		l := attach(2)
		feed(2)
		if l.softSince.IsZero() || l.cut {
			t.Fatalf("at the soft limit: since %v, cut %v", l.softSince, l.cut)
		}
		c.Add(time.Second)
		feed(1)
		if l.cut {
			t.Fatal("cut at soft-seconds exactly")
		}
		// It sends what it had: below the soft limit its time starts again.
		n.mu.Lock()
		n.backlog.Pin(l, n.backlog.End())
		n.mu.Unlock()
		feed(1)
		if !l.softSince.IsZero() {
			t.Fatal("below the soft limit, its time was kept")
		}
		feed(1)
		c.Add(time.Second)
		feed(1)
		if l.cut {
			t.Fatal("cut at soft-seconds exactly, its time started again")
		}
		c.Add(time.Millisecond)
		feed(1)
		if !l.cut {
			t.Fatal("not cut after more than soft-seconds at the soft limit")
		}
	})

	t.Run("limit=none", func(t *testing.T) {
		lim = limits.OutputLimit{}
		l := attach(3)
		feed(50)
		if l.cut {
			t.Fatal("cut with no limit")
		}
		if at, _ := n.backlog.Pinned(l); n.backlog.Start() > at {
			t.Fatal("the backlog dropped what an uncut link still has to send")
		}
	})
}

// TestStateNames: the states' String is the text INFO and ROLE print, and
// a value out of range names its type.
func TestStateNames(t *testing.T) {
	for _, tc := range []struct {
		v    fmt.Stringer
		want string
	}{
		{LinkWaitBgsave, "wait_bgsave"}, {LinkSendBulk, "send_bulk"}, {LinkOnline, "online"},
		{LinkState(3), "LinkState(3)"},
		{PrimaryConnect, "connect"}, {PrimaryConnecting, "connecting"}, {PrimarySync, "sync"}, {PrimaryConnected, "connected"},
		{PrimaryState(-1), "PrimaryState(-1)"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("%T.String() = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestParseHostPort: replicaof's "host port".
func TestParseHostPort(t *testing.T) {
	for in, ok := range map[string]bool{"127.0.0.1 6379": true, "h 1": true, "h 0": false, "h 65536": false, "h": false, "h 1 2": false, "h x": false} {
		if _, _, got := ParseHostPort(in); got != ok {
			t.Errorf("ParseHostPort(%q) ok = %v, want %v", in, got, ok)
		}
	}
}
