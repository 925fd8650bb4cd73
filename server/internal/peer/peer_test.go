package peer_test

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/peer"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// target is a fake MIGRATE target on 127.0.0.1: each connection it accepts
// reads commands and answers each with the next of its replies. A reply of
// "" answers nothing (the caller times out); one that does not end in a
// newline is cut short: the target hangs up after it. The commands it reads,
// the connections it accepts and those the caller closed go to its
// channels.
type target struct {
	addr    string
	replies chan string
	cmds    chan []string
	closed  chan int // the number of the connection, from 1, that the caller closed
	conns   chan int // the number of each connection accepted
}

func newTarget(t *testing.T) *target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tg := &target{
		addr:    ln.Addr().String(),
		replies: make(chan string, 16),
		cmds:    make(chan []string, 16),
		closed:  make(chan int, 16),
		conns:   make(chan int, 16),
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for n := 1; ; n++ {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			tg.conns <- n
			go tg.serve(n, nc)
		}
	}()
	return tg
}

func (tg *target) serve(n int, nc net.Conn) {
	defer nc.Close()
	lim := resp.Limits{MaxArgs: 16, MaxBulk: 1 << 20, QueryBuffer: 2 << 20}
	rd := resp.NewReader(nc)
	for {
		args, err := rd.Next(true, lim)
		if err == nil && args == nil {
			err = rd.Fill(lim)
			if err == nil {
				continue
			}
		}
		if err != nil {
			tg.closed <- n
			return
		}
		cmd := make([]string, len(args))
		for i, a := range args {
			cmd[i] = string(a)
		}
		tg.cmds <- cmd
		r := <-tg.replies
		io.WriteString(nc, r)
		if r != "" && !strings.HasSuffix(r, "\n") {
			return
		}
	}
}

func (tg *target) key() peer.Key { return peer.Key{Addr: tg.addr} }

func (tg *target) dial() (net.Conn, error) { return net.DialTimeout("tcp", tg.addr, time.Second) }

// take takes a connection to tg from p, failing t if it cannot.
func (tg *target) take(t *testing.T, p *peer.Pool) *peer.Conn {
	t.Helper()
	c, err := p.Take(tg.key(), tg.dial)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// want receives from ch within a second, failing t if nothing comes.
func want[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Second):
		t.Fatalf("no %s within a second", what)
		panic("unreachable")
	}
}

// none fails t if ch receives within a short while.
func none[T any](t *testing.T, ch chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("unexpected %s: %v", what, v)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestCallReplies(t *testing.T) {
	tg := newTarget(t)
	var p peer.Pool
	defer p.CloseAll()
	c := tg.take(t, &p)
	defer c.Close()
	for _, tc := range []struct {
		reply string
		err   string // "" for none
	}{
		{"+OK\r\n", ""},
		{":1\r\n", ""},
		{":0\n", ""}, // a bare newline ends a line too
		{"-BUSYKEY Target key name already exists.\r\n", "ERR Target instance replied with error: BUSYKEY Target key name already exists."},
		{"+OK\r\n", ""}, // in step after an error reply
	} {
		tg.replies <- tc.reply
		err := c.Call(time.Second, []byte("RESTORE-ASKING"), []byte("k"), []byte("0"), []byte("\x00payload\r\n"))
		if got := want(t, tg.cmds, "command"); strings.Join(got, " ") != "RESTORE-ASKING k 0 \x00payload\r\n" {
			t.Fatalf("target read %q", got)
		}
		switch {
		case tc.err == "" && err != nil:
			t.Fatalf("reply %q: %v", tc.reply, err)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Fatalf("reply %q: error %v, want %q", tc.reply, err, tc.err)
		}
		var te peer.TargetError
		if isTarget := errors.As(err, &te); isTarget != (tc.err != "") {
			t.Fatalf("reply %q: a TargetError is %v", tc.reply, isTarget)
		}
		if c.Broken() {
			t.Fatalf("reply %q left the connection broken", tc.reply)
		}
	}
}

func TestCallGarbled(t *testing.T) {
	for _, tc := range []struct{ reply, err string }{
		{"$2\r\nOK\r\n", `IOERR the target answered "$2", not a status or an integer`},
		{"*1\r\n", `IOERR the target answered "*1", not a status or an integer`},
		{"\r\n", `IOERR the target answered "", not a status or an integer`},
		{"OK\x01\r\n", `IOERR the target answered "OK\x01", not a status or an integer`},
		{strings.Repeat("x", 100) + "\r\n", `IOERR the target answered "` + strings.Repeat("x", 64) + `", not a status or an integer`},
	} {
		tg := newTarget(t)
		var p peer.Pool
		c := tg.take(t, &p)
		tg.replies <- tc.reply
		err := c.Call(time.Second, []byte("PING"))
		if err == nil || err.Error() != tc.err {
			t.Fatalf("reply %q: error %v, want %q", tc.reply, err, tc.err)
		}
		if strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("reply %q: the error %q is not one line", tc.reply, err)
		}
		if !c.Broken() {
			t.Fatalf("reply %q left the connection in use", tc.reply)
		}
		p.Put(tg.key(), c) // closes it
		want(t, tg.closed, "close of a broken connection")
		tg.take(t, &p).Close()
		if n := want(t, tg.conns, "connection"); n != 1 {
			t.Fatalf("connection %d before the second", n)
		}
		if n := want(t, tg.conns, "connection"); n != 2 {
			t.Fatalf("the broken connection was taken again (connection %d)", n)
		}
	}
}

func TestCallReadTimeout(t *testing.T) {
	tg := newTarget(t)
	var p peer.Pool
	c := tg.take(t, &p)
	defer c.Close()
	tg.replies <- "" // no answer
	start := time.Now()
	if err := c.Call(50*time.Millisecond, []byte("PING")); err != peer.ErrRead {
		t.Fatalf("error %v, want %v", err, peer.ErrRead)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the read gave up after %v, not 50ms", d)
	}
	if !c.Broken() {
		t.Fatal("a read timeout left the connection in use")
	}
	if got := peer.ErrRead.Error(); got != "IOERR error or timeout reading from target instance" {
		t.Fatalf("ErrRead says %q", got)
	}
}

func TestCallHangUp(t *testing.T) {
	tg := newTarget(t)
	var p peer.Pool
	c := tg.take(t, &p)
	defer c.Close()
	tg.replies <- "+OK" // and hang up mid-line
	if err := c.Call(time.Minute, []byte("PING")); err != peer.ErrRead {
		t.Fatalf("error %v, want %v", err, peer.ErrRead)
	}
	if !c.Broken() {
		t.Fatal("a connection closed mid-reply is still in use")
	}
}

func TestCallWriteTimeout(t *testing.T) {
	// A target that never reads: the caller's write fills the socket's
	// buffers and times out.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			accepted <- nc
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer want(t, accepted, "accepted connection").Close()
	c := peer.NewConn(nc)
	defer c.Close()
	big := make([]byte, 16<<20) // more than loopback's socket buffers hold
	if err := c.Call(100*time.Millisecond, []byte("RESTORE-ASKING"), []byte("k"), []byte("0"), big); err != peer.ErrWrite {
		t.Fatalf("error %v, want %v", err, peer.ErrWrite)
	}
	if !c.Broken() {
		t.Fatal("a write timeout left the connection in use")
	}
	if got := peer.ErrWrite.Error(); got != "IOERR error or timeout writing to target instance" {
		t.Fatalf("ErrWrite says %q", got)
	}
}

func TestPoolReuse(t *testing.T) {
	tg := newTarget(t)
	var p peer.Pool
	defer p.CloseAll()
	c := tg.take(t, &p)
	want(t, tg.conns, "connection")
	p.Put(tg.key(), c)
	if again := tg.take(t, &p); again != c {
		t.Fatal("Take dialed although a connection was put back")
	} else {
		// Taken out, it is the caller's alone: another Take dials.
		other := tg.take(t, &p)
		if other == c {
			t.Fatal("Take handed out a connection already taken")
		}
		want(t, tg.conns, "second connection")
		p.Put(tg.key(), other)
		p.Put(tg.key(), c)
	}
	// The one put back last comes first.
	if again := tg.take(t, &p); again != c {
		t.Fatal("Take did not hand out the connection put back last")
	} else {
		p.Put(tg.key(), again)
	}
	// Over TLS or not, connections to one address are kept apart.
	tls := peer.Key{Addr: tg.addr, TLS: true}
	if c2, err := p.Take(tls, tg.dial); err != nil {
		t.Fatal(err)
	} else if c2 == c {
		t.Fatal("a connection put back for TCP was taken for TLS")
	} else {
		c2.Close()
		want(t, tg.closed, "close of the TLS connection")
	}
	none(t, tg.closed, "close of a pooled connection")
}

func TestPoolIdle(t *testing.T) {
	tg := newTarget(t)
	other := newTarget(t)
	var p peer.Pool
	defer p.CloseAll()
	old := tg.take(t, &p)
	p.Put(tg.key(), old)
	p.Age(peer.Idle - time.Second) // still young enough
	if c := tg.take(t, &p); c != old {
		t.Fatal("a connection idle for less than Idle was dropped")
	}
	p.Put(tg.key(), old)
	p.Age(peer.Idle + time.Second)
	// A Take for any target drops it.
	other.take(t, &p).Close()
	want(t, tg.closed, "close of the idle connection")
	if c := tg.take(t, &p); c == old {
		t.Fatal("a connection idle for longer than Idle was taken again")
	} else {
		c.Close()
	}
}

func TestPoolDialError(t *testing.T) {
	var p peer.Pool
	refused := errors.New("refused")
	c, err := p.Take(peer.Key{Addr: "127.0.0.1:1"}, func() (net.Conn, error) { return nil, refused })
	if err != refused || c != nil {
		t.Fatalf("Take returned %v, %v; want the dial's error", c, err)
	}
	if got := peer.ErrConnect.Error(); got != "IOERR error or timeout connecting to the client" {
		t.Fatalf("ErrConnect says %q", got)
	}
}

func TestPoolCloseAll(t *testing.T) {
	tg := newTarget(t)
	var p peer.Pool
	a, b := tg.take(t, &p), tg.take(t, &p)
	p.Put(tg.key(), a)
	p.Put(tg.key(), b)
	p.CloseAll()
	want(t, tg.closed, "close")
	want(t, tg.closed, "close")
	// The pool is empty and still usable.
	c := tg.take(t, &p)
	if c == a || c == b {
		t.Fatal("a connection was taken after CloseAll")
	}
	p.Put(tg.key(), c)
	p.CloseAll()
	want(t, tg.closed, "close")
	p.CloseAll() // an empty pool
}
