// Package resptest is the RESP client of the tests: it encodes requests as
// a client sends them (an array of bulk strings), reads one reply of any
// RESP2 or RESP3 type into a Go value (see Reader.ReadReply), and dials a
// server on loopback with deadlines, failing the test on an I/O error.
//
// A test that sends malformed bytes on purpose writes them itself
// (Conn.SendRaw) and still reads the replies here. Nothing here is for use
// outside tests.
package resptest

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

// AppendRequest appends args to dst as one request: an array of bulk
// strings. An argument is a string, a []byte, or anything else as fmt's %v
// prints it (an int's decimal digits).
func AppendRequest(dst []byte, args ...any) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		var b []byte
		switch a := a.(type) {
		case string:
			dst = appendBulk(dst, a)
			continue
		case []byte:
			b = a
		default:
			b = fmt.Append(nil, a)
		}
		dst = appendBulk(dst, b)
	}
	return dst
}

func appendBulk[S string | []byte](dst []byte, s S) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// Request returns args as one request (see AppendRequest).
func Request(args ...any) []byte {
	return AppendRequest(nil, args...)
}

// Args returns args as the []any that Request and Conn.Do take.
func Args[S ~string | ~[]byte](args ...S) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a
	}
	return out
}

// Timeout bounds each dial, write and read of a Conn unless its Timeout
// field says otherwise.
const Timeout = 10 * time.Second

// Conn is a connection to a server for one test: requests out, replies in.
// Every method fails the test (t.Fatal) on an I/O error or a malformed
// reply, and Cleanup closes the connection.
type Conn struct {
	// Timeout bounds each write and each read, from its start.
	Timeout time.Duration

	t  testing.TB
	nc *net.TCPConn
	r  *Reader
}

// Dial connects to addr (such as a server's 127.0.0.1:port) within
// Timeout.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, Timeout)
	if err != nil {
		t.Fatalf("resptest: dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &Conn{Timeout: Timeout, t: t, nc: nc.(*net.TCPConn), r: NewReader(nc)}
}

// TCP returns the connection itself, for a test that sets socket options or
// reads bytes itself (then, not through c, which buffers what it reads).
func (c *Conn) TCP() *net.TCPConn { return c.nc }

// Reader returns c's reader, for a test that expects an error from it.
func (c *Conn) Reader() *Reader { return c.r }

// SendRaw writes b as it is: a request assembled by hand, or bytes that are
// not RESP.
func (c *Conn) SendRaw(b []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(c.Timeout))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("resptest: write: %v", err)
	}
}

// Send writes args as one request, without reading its reply.
func (c *Conn) Send(args ...any) {
	c.t.Helper()
	c.SendRaw(Request(args...))
}

// SendAll writes the requests in one write, pipelined, without reading
// their replies.
func (c *Conn) SendAll(reqs ...[]any) {
	c.t.Helper()
	var b []byte
	for _, args := range reqs {
		b = AppendRequest(b, args...)
	}
	c.SendRaw(b)
}

// Read reads one reply (see Reader.ReadReply for its Go types).
func (c *Conn) Read() any {
	c.t.Helper()
	_, v := c.ReadKind()
	return v
}

// ReadKind reads one reply and returns its type byte too: '+' and '$'
// both give a string, '*' and '>' a []any and a Push.
func (c *Conn) ReadKind() (byte, any) {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(c.Timeout))
	kind, v, err := c.r.ReadKind()
	if err != nil {
		c.t.Fatalf("resptest: read: %v", err)
	}
	return kind, v
}

// Do sends args as one request and reads one reply.
func (c *Conn) Do(args ...any) any {
	c.t.Helper()
	c.Send(args...)
	return c.Read()
}

// Pipeline sends the requests in one write and reads as many replies.
func (c *Conn) Pipeline(reqs ...[]any) []any {
	c.t.Helper()
	c.SendAll(reqs...)
	out := make([]any, len(reqs))
	for i := range out {
		out[i] = c.Read()
	}
	return out
}
