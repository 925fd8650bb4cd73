package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// A RESP2 client just large enough for the capture: it sends commands as
// arrays of bulk strings and reads the five RESP2 reply types.

// maxBulk bounds one bulk reply. RedisBloom sends a sub-filter in one
// SCANDUMP chunk of at most 16 MiB; the fixtures' filters are far smaller.
const maxBulk = 16 << 20

// maxArray bounds one array reply (CF.MEXISTS of a batch, CF.INSERT of a case).
const maxArray = 1 << 20

// replyError is an error reply ("-..." in RESP2), a value like any other.
type replyError string

func (e replyError) Error() string { return string(e) }

type client struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

func dial(addr string) (*client, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	return &client{conn: conn, r: bufio.NewReader(conn), w: bufio.NewWriter(conn)}, nil
}

func (c *client) Close() error { return c.conn.Close() }

// do sends one command and reads its reply.
func (c *client) do(args ...string) (any, error) {
	replies, err := c.pipeline([][]string{args})
	if err != nil {
		return nil, err
	}
	return replies[0], nil
}

// pipeline sends the commands in batches and reads one reply for each. A
// batch's replies are read before the next batch is sent, so neither side's
// buffers grow without bound.
func (c *client) pipeline(cmds [][]string) ([]any, error) {
	const batch = 512
	replies := make([]any, 0, len(cmds))
	for start := 0; start < len(cmds); start += batch {
		end := min(start+batch, len(cmds))
		for _, args := range cmds[start:end] {
			c.write(args)
		}
		if err := c.w.Flush(); err != nil {
			return nil, err
		}
		for range cmds[start:end] {
			v, err := c.read()
			if err != nil {
				return nil, err
			}
			replies = append(replies, v)
		}
	}
	return replies, nil
}

func (c *client) write(args []string) {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

// read reads one reply: string (simple), replyError, int64, []byte (bulk),
// nil (null bulk or null array) or []any.
func (c *client) read() (any, error) {
	line, err := c.line()
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, errors.New("resp: empty reply line")
	}
	body := string(line[1:])
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return replyError(body), nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("resp: bad integer %q", body)
		}
		return n, nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxBulk {
			return nil, fmt.Errorf("resp: bad bulk length %q", body)
		}
		if n == -1 {
			return nil, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return nil, err
		}
		if string(b[n:]) != "\r\n" {
			return nil, errors.New("resp: bulk string not ended by CRLF")
		}
		return b[:n], nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxArray {
			return nil, fmt.Errorf("resp: bad array length %q", body)
		}
		if n == -1 {
			return nil, nil
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = c.read(); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	return nil, fmt.Errorf("resp: unknown reply type %q", line[0])
}

func (c *client) line() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, errors.New("resp: line not ended by CRLF")
	}
	return line[:len(line)-2], nil
}
