package peer

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// Errors of Dial's failure and of Call, in Redis's words (its MIGRATE says
// "the client" for the target when connecting fails).
var (
	ErrConnect = errors.New("IOERR error or timeout connecting to the client")
	ErrWrite   = errors.New("IOERR error or timeout writing to target instance")
	ErrRead    = errors.New("IOERR error or timeout reading from target instance")
)

// TargetError is an error reply from the target, without its '-'. The
// connection is still in step with the target.
type TargetError string

func (e TargetError) Error() string { return "ERR Target instance replied with error: " + string(e) }

// Conn is a connection to a target.
type Conn struct {
	nc     net.Conn
	br     *bufio.Reader
	w      *resp.Writer
	used   time.Time // when it was last Put
	broken bool
}

// NewConn wraps nc, a connection just made to a target.
func NewConn(nc net.Conn) *Conn {
	return &Conn{nc: nc, br: bufio.NewReader(nc), w: resp.NewWriter(nc)}
}

// Broken says whether a call failed in a way that leaves c out of step with
// the target: it must not be used again.
func (c *Conn) Broken() bool { return c.broken }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Call sends one command, args, and reads its one-line reply (a status or an
// integer) within timeout, the write and the read together. An error reply
// is a TargetError; ErrWrite, ErrRead and a reply of another kind leave c
// Broken.
func (c *Conn) Call(timeout time.Duration, args ...[]byte) error {
	c.w.WriteArray(len(args))
	for _, a := range args {
		c.w.WriteBulk(a)
	}
	c.nc.SetDeadline(time.Now().Add(timeout))
	if err := c.w.Flush(); err != nil {
		c.broken = true
		return ErrWrite
	}
	line, err := c.br.ReadString('\n')
	if err != nil {
		c.broken = true
		return ErrRead
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "+"), strings.HasPrefix(line, ":"): // a status, or DEL's and PEXPIRE's count
		return nil
	case strings.HasPrefix(line, "-"):
		return TargetError(line[1:])
	}
	c.broken = true
	// %q keeps the reply on one line; its precision cuts what is quoted.
	return fmt.Errorf("IOERR the target answered %.64q, not a status or an integer", line)
}
