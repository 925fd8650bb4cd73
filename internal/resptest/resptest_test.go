package resptest_test

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/resptest"
)

func TestRequest(t *testing.T) {
	for _, c := range []struct {
		args []any
		want string
	}{
		{nil, "*0\r\n"},
		{[]any{"PING"}, "*1\r\n$4\r\nPING\r\n"},
		{[]any{"SET", []byte("k\r\n"), ""}, "*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$0\r\n\r\n"},
		{[]any{"RESTORE", "k", 0, int64(-12)}, "*4\r\n$7\r\nRESTORE\r\n$1\r\nk\r\n$1\r\n0\r\n$3\r\n-12\r\n"},
	} {
		if got := string(resptest.Request(c.args...)); got != c.want {
			t.Errorf("Request(%q) = %q, want %q", c.args, got, c.want)
		}
	}
	if got := string(resptest.AppendRequest([]byte("x"), resptest.Args("a", "bc")...)); got != "x*2\r\n$1\r\na\r\n$2\r\nbc\r\n" {
		t.Errorf("AppendRequest after x = %q", got)
	}
	if got := resptest.Args([]byte("a")); !reflect.DeepEqual(got, []any{[]byte("a")}) {
		t.Errorf("Args of a []byte = %#v", got)
	}
}

// read reads all of s's replies.
func read(s string) ([]any, error) {
	r := resptest.NewReader(strings.NewReader(s))
	var out []any
	for {
		v, err := r.ReadReply()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
}

// TestReadReply reads each type of RESP2 and RESP3.
func TestReadReply(t *testing.T) {
	big1, _ := new(big.Int).SetString("-3492890328409238509324850943850943825024385", 10)
	for _, c := range []struct {
		name, in string
		want     any
	}{
		{"simple", "+OK\r\n", "OK"},
		{"simple/empty", "+\r\n", ""},
		{"simple/long", "+" + strings.Repeat("x", 200<<10) + "\r\n", strings.Repeat("x", 200<<10)},
		{"error", "-ERR unknown command 'X'\r\n", resptest.Error("ERR unknown command 'X'")},
		{"blob error", "!22\r\nSYNTAX invalid\r\nsyntax\r\n", resptest.Error("SYNTAX invalid\r\nsyntax")},
		{"integer", ":-42\r\n", int64(-42)},
		{"integer/max", ":9223372036854775807\r\n", int64(math.MaxInt64)},
		{"bulk", "$5\r\nhe\r\nl\r\n", "he\r\nl"},
		{"bulk/empty", "$0\r\n\r\n", ""},
		{"bulk/null", "$-1\r\n", nil},
		{"array", "*3\r\n:1\r\n$1\r\na\r\n*1\r\n+b\r\n", []any{int64(1), "a", []any{"b"}}},
		{"array/empty", "*0\r\n", []any{}},
		{"array/null", "*-1\r\n", nil},
		{"null", "_\r\n", nil},
		{"boolean/true", "#t\r\n", true},
		{"boolean/false", "#f\r\n", false},
		{"double", ",1.5e3\r\n", 1500.0},
		{"double/inf", ",-inf\r\n", math.Inf(-1)},
		{"big number", "(-3492890328409238509324850943850943825024385\r\n", big1},
		{"verbatim", "=15\r\ntxt:Some string\r\n", resptest.Verbatim{Format: "txt", Text: "Some string"}},
		{"map", "%2\r\n+first\r\n:1\r\n$6\r\nsecond\r\n#f\r\n", resptest.Map{{"first", int64(1)}, {"second", false}}},
		{"set", "~3\r\n+a\r\n:1\r\n_\r\n", resptest.Set{"a", int64(1), nil}},
		{"push", ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$2\r\nhi\r\n", resptest.Push{"message", "c", "hi"}},
		{"attribute", "|1\r\n+ttl\r\n:3600\r\n*2\r\n:1\r\n:2\r\n",
			resptest.Attribute{Attrs: resptest.Map{{"ttl", int64(3600)}}, Reply: []any{int64(1), int64(2)}}},
		{"nested", "%1\r\n~1\r\n*0\r\n>1\r\n%0\r\n", resptest.Map{{resptest.Set{[]any{}}, resptest.Push{resptest.Map{}}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := read(c.in)
			if err != nil || len(got) != 1 {
				t.Fatalf("read %q = %#v, %v; want one reply", c.in, got, err)
			}
			if b, ok := c.want.(*big.Int); ok {
				if g, _ := got[0].(*big.Int); g == nil || g.Cmp(b) != 0 {
					t.Errorf("read %q = %#v, want %v", c.in, got[0], b)
				}
				return
			}
			if !reflect.DeepEqual(got[0], c.want) {
				t.Errorf("read %q = %#v, want %#v", c.in, got[0], c.want)
			}
		})
	}
}

// TestReadRaw: bytes after a reply that are not RESP are read as they are.
func TestReadRaw(t *testing.T) {
	r := resptest.NewReader(strings.NewReader("+FULLRESYNC id 0\r\n\x04\x00\r"))
	if v, err := r.ReadReply(); v != "FULLRESYNC id 0" || err != nil {
		t.Fatalf("ReadReply = %#v, %v", v, err)
	}
	if r.Buffered() != 3 {
		t.Errorf("Buffered = %d, want 3", r.Buffered())
	}
	if b, err := io.ReadAll(r); string(b) != "\x04\x00\r" || err != nil {
		t.Errorf("the bytes after = %q, %v", b, err)
	}
}

func TestReadNaN(t *testing.T) {
	got, err := read(",nan\r\n")
	if f, ok := got[0].(float64); err != nil || !ok || !math.IsNaN(f) {
		t.Errorf("read ,nan = %#v, %v", got, err)
	}
}

// TestReadMalformed: every malformation is an error wrapping ErrMalformed,
// never a panic or a value.
func TestReadMalformed(t *testing.T) {
	for _, in := range []string{
		"\r\n",     // empty line
		"+OK\n",    // no \r
		"?x\r\n",   // unknown type
		":12a\r\n", // integer
		":\r\n",    // integer, empty
		":9223372036854775808\r\n",
		"#x\r\n",                                 // boolean
		"_x\r\n",                                 // null with a body
		",1.2.3\r\n",                             // double
		"(12x\r\n",                               // big number
		"$x\r\n",                                 // length
		"$-2\r\n",                                // length below -1
		"!-1\r\n",                                // a null blob error
		"=-1\r\n",                                // a null verbatim
		"*-2\r\n",                                // count
		"%-1\r\n",                                // a null map
		"~-1\r\n",                                // a null set
		">-1\r\n",                                // a null push
		"|-1\r\n",                                // a null attribute
		"$3\r\nabcd\r\n",                         // longer than its length
		"$3\r\nab\r\n\r\n",                       // not followed by \r\n
		"=3\r\ntxt\r\n",                          // verbatim without its format
		"=5\r\ntxtab\r\n",                        // verbatim, no colon
		"$999999999999\r\n",                      // longer than any string a server sends
		"*1\r\n?\r\n",                            // an unknown type inside an array
		strings.Repeat("*1\r\n", 100) + ":1\r\n", // nested too deep
		"+a\rb\r\n",                              // a \r inside a line
		":+1\r\n",                                // a sign that Redis never sends
		"$+1\r\na\r\n",
	} {
		got, err := read(in)
		if !errors.Is(err, resptest.ErrMalformed) || len(got) != 0 {
			t.Errorf("read %.40q = %#v, %v; want no reply and ErrMalformed", in, got, err)
		}
	}
}

// TestReadTruncated: a stream that ends inside a reply is
// io.ErrUnexpectedEOF, one that ends between replies io.EOF.
func TestReadTruncated(t *testing.T) {
	for _, in := range []string{"+OK", "$5\r\nab", "$2\r\nab", "*2\r\n:1\r\n", "%1\r\n+k\r\n", "|1\r\n+a\r\n:1\r\n", ">1\r\n"} {
		r := resptest.NewReader(strings.NewReader(in))
		if v, err := r.ReadReply(); err != io.ErrUnexpectedEOF {
			t.Errorf("read %q = %#v, %v; want io.ErrUnexpectedEOF", in, v, err)
		}
	}
	r := resptest.NewReader(strings.NewReader(":1\r\n"))
	r.ReadReply()
	if _, err := r.ReadReply(); err != io.EOF {
		t.Errorf("read after the last reply: %v, want io.EOF", err)
	}
	if _, err := r.Peek(); err != io.EOF {
		t.Errorf("peek after the last reply: %v, want io.EOF", err)
	}
}

func TestErrorType(t *testing.T) {
	var err error = resptest.Error("WRONGTYPE x")
	if err.Error() != "WRONGTYPE x" || fmt.Sprint(err) != "WRONGTYPE x" {
		t.Errorf("Error = %q", err)
	}
}

// serve answers each request on a loopback listener with fn's bytes, or
// closes the connection when fn returns "".
func serve(t *testing.T, fn func(args []string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				r := resptest.NewReader(nc)
				for {
					v, err := r.ReadReply() // a request is an array of bulk strings
					req, ok := v.([]any)
					if err != nil || !ok {
						return
					}
					args := make([]string, len(req))
					for i, a := range req {
						args[i], _ = a.(string)
					}
					out := fn(args)
					if out == "" {
						return
					}
					io.WriteString(nc, out)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestConn(t *testing.T) {
	addr := serve(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "PING":
			return "+PONG\r\n"
		case "ECHO":
			return fmt.Sprintf("$%d\r\n%s\r\n", len(args[1]), args[1])
		case "SUB":
			return ">2\r\n+message\r\n+x\r\n"
		}
		return "-ERR unknown command '" + args[0] + "'\r\n"
	})
	c := resptest.Dial(t, addr)
	if got := c.Do("PING"); got != "PONG" {
		t.Errorf("PING = %#v", got)
	}
	if got := c.Do("ECHO", []byte("a\r\nb")); got != "a\r\nb" {
		t.Errorf("ECHO = %#v", got)
	}
	if got := c.Do("NOPE"); got != resptest.Error("ERR unknown command 'NOPE'") {
		t.Errorf("NOPE = %#v", got)
	}
	got := c.Pipeline([]any{"ECHO", "1"}, []any{"PING"}, []any{"ECHO", 22})
	if !reflect.DeepEqual(got, []any{"1", "PONG", "22"}) {
		t.Errorf("pipeline = %#v", got)
	}
	c.Send("SUB")
	c.Send("ECHO", "e")
	if kind, v := c.ReadKind(); kind != '>' || !reflect.DeepEqual(v, resptest.Push{"message", "x"}) {
		t.Errorf("SUB = %q %#v", kind, v)
	}
	if kind, v := c.ReadKind(); kind != '$' || v != "e" {
		t.Errorf("ECHO = %q %#v", kind, v)
	}
	c.SendRaw([]byte("*1\r\n$4\r\nPING\r\n"))
	if got := c.Read(); got != "PONG" {
		t.Errorf("PING by hand = %#v", got)
	}
	if c.TCP() == nil || c.Reader().Buffered() != 0 {
		t.Errorf("TCP() %v, %d bytes buffered", c.TCP(), c.Reader().Buffered())
	}
}

// TestConnFails: a malformed reply fails the test, and so does a closed
// connection.
func TestConnFails(t *testing.T) {
	addr := serve(t, func(args []string) string {
		if args[0] == "BAD" {
			return "?\r\n"
		}
		return ""
	})
	for _, cmd := range []string{"BAD", "CLOSE"} {
		ft := &fatalT{TB: t}
		c := resptest.Dial(ft, addr)
		done := make(chan struct{})
		go func() { // Fatal ends the goroutine, as it ends a test's
			defer close(done)
			c.Do(cmd)
		}()
		<-done
		if !strings.Contains(ft.msg, "resptest: read") {
			t.Errorf("%s: failed with %q", cmd, ft.msg)
		}
	}
}

// fatalT records Fatalf's message and ends the goroutine, as testing.T
// does.
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Helper() {}

func (f *fatalT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestSprint(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{"OK", "OK"},
		{nil, "<nil>"},
		{int64(-3), "-3"},
		{resptest.Error("ERR x"), "-ERR x"},
		{[]any{int64(1), resptest.Error("ERR x"), nil, "a b"}, "[1 -ERR x <nil> a b]"},
		{resptest.Map{{"k", []any{true}}, {int64(2), 1.5}}, "[[k [true]] [2 1.5]]"},
		{resptest.Set{"a"}, "[a]"},
		{resptest.Push{"message", "c", resptest.Error("E")}, "[message c -E]"},
		{resptest.Verbatim{Format: "txt", Text: "hi"}, "txt:hi"},
		{resptest.Attribute{Attrs: resptest.Map{{"a", int64(1)}}, Reply: "r"}, "|[[a 1]] r"},
		{big.NewInt(7), "7"},
	} {
		if got := resptest.Sprint(c.v); got != c.want {
			t.Errorf("Sprint(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestReadKind(t *testing.T) {
	r := resptest.NewReader(strings.NewReader("$2\r\nab\r\n-ERR x\r\n"))
	if kind, v, err := r.ReadKind(); kind != '$' || v != "ab" || err != nil {
		t.Errorf("ReadKind = %q %#v, %v", kind, v, err)
	}
	if kind, v, err := r.ReadKind(); kind != '-' || v != resptest.Error("ERR x") || err != nil {
		t.Errorf("ReadKind = %q %#v, %v", kind, v, err)
	}
	if kind, v, err := r.ReadKind(); kind != 0 || v != nil || err != io.EOF {
		t.Errorf("ReadKind at the end = %q %#v, %v", kind, v, err)
	}
}
