package main

// Black-box tests of a real `cuckoo serve` process against the hostile inputs
// of issue 12: each sends the exact bytes on a raw TCP connection and
// checks that the server (a) answers with Redis's protocol error and closes
// the connection, (b) stays up (a fresh client gets PONG and a CF.ADD/CF.EXISTS
// round trip works after AUTH) and (c) stays within a stated memory or CPU
// bound, read from /proc/<pid>.
//
// Memory bounds are relative to the same process measured idle right after it
// started (VmHWM about 14 MiB, VmPeak about 1.6 GiB of address space on
// linux/amd64 at the time of writing). "+64 MiB resident" is generous: a
// bounded reader holds at most a few buffers of the bytes that actually
// arrived, and Go's heap and stacks for the handful of connections here are
// a few MiB; yet it is far below every failure the issue measured (763 MiB
// to 14 GB resident, 21 GB of address space). A memory watchdog samples
// VmRSS every 10 ms and kills the server with SIGKILL once it passes the
// test's bound (4 GiB when the test states none), so that a server that
// still has the bug does not take the shared machine down with it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/redistest"
	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/redis/go-redis/v9"
)

// The errors the server answers before it closes a connection: Redis's
// texts (since 6.2.6 for the unauthenticated ones).
const (
	errUnauthBulk       = "ERR Protocol error: unauthenticated bulk length"
	errUnauthMultibulk  = "ERR Protocol error: unauthenticated multibulk length"
	errInvalidBulk      = "ERR Protocol error: invalid bulk length"
	errInvalidMultibulk = "ERR Protocol error: invalid multibulk length"
	errBigInline        = "ERR Protocol error: too big inline request"
)

// testPass is the --requirepass of the tests that set one.
const testPass = "secret"

const (
	kiB = 1 << 10
	miB = 1 << 20
	giB = 1 << 30
)

// authMode is how a hostile connection stands with regard to the password.
type authMode struct {
	name string
	pass string // --requirepass; empty: none
	auth bool   // the hostile connection sends AUTH first
}

var authModes = []authMode{
	{"requirepass/unauthenticated", testPass, false},
	{"requirepass/authenticated", testPass, true},
	{"nopass", "", false},
}

// hugeBulkRefusal is what a bulk length beyond --proto-max-bulk-len (or one
// that does not parse) may be answered. An unauthenticated client's is also
// above 16384: the spec answers "unauthenticated bulk length" for that,
// Redis checks the invalid length first; both refuse it, either will do.
func (m authMode) hugeBulkRefusal() []string {
	if m.pass != "" && !m.auth {
		return []string{errUnauthBulk, errInvalidBulk}
	}
	return []string{errInvalidBulk}
}

// hugeCountRefusal is hugeBulkRefusal for a multibulk count beyond the
// argument limit (unauthenticated: also above 10).
func (m authMode) hugeCountRefusal() []string {
	if m.pass != "" && !m.auth {
		return []string{errUnauthMultibulk, errInvalidMultibulk}
	}
	return []string{errInvalidMultibulk}
}

// dial opens a raw connection to the server, authenticated if m says so.
func (m authMode) dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c := resptest.Dial(t, addr)
	if m.auth {
		// Nothing may stay in c's buffer: the test reads nc itself.
		if got := c.Do("AUTH", m.pass); got != "OK" || c.Reader().Buffered() != 0 {
			t.Fatalf("AUTH: %#v, and %d bytes more", got, c.Reader().Buffered())
		}
		c.TCP().SetReadDeadline(time.Time{})
	}
	return c.TCP()
}

// startServe starts `cuckoo serve --addr 127.0.0.1:0 args...` (with
// --requirepass pass if pass is set) and waits for its ready line. Cleanup
// kills it by pid and fails the test if its log shows a panic. Its stderr is
// copied by os/exec, which Wait waits for, so a crash's last words are kept.
func startServe(t *testing.T, pass string, args ...string) *serveProcess {
	t.Helper()
	bin := cuckooBin(t)
	if pass != "" {
		args = append(args, "--requirepass", pass)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	redistest.DieWithTest(cmd)
	w := &lineWriter{log: &syncBuf{}, ready: make(chan string, 1)}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, pid: cmd.Process.Pid, pass: pass, out: w, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		w.flush()
		close(p.exited)
	}()
	p.watch = watchMemory(cmd.Process, p.exited)
	t.Cleanup(func() {
		cmd.Process.Kill() // an error only says it has exited already
		<-p.exited
		if c := p.crash(); c != "" {
			t.Errorf("the server's log shows a crash:\n%s", c)
		}
	})
	select {
	case p.addr = <-w.ready:
	case <-p.exited:
		t.Fatalf("cuckoo serve %q exited before it was ready (%v):\n%s", args, p.waitErr, p.logTail(30))
	case <-time.After(30 * time.Second):
		t.Fatalf("cuckoo serve %q: no ready line after 30 s:\n%s", args, p.logTail(30))
	}
	return p
}

// lineWriter is the server's stderr: it keeps the lines and sends the
// address of the ready line. os/exec calls Write from one goroutine.
type lineWriter struct {
	log     *syncBuf
	ready   chan string
	partial []byte
	sent    bool
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.partial = append(w.partial, b...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		w.log.add(line)
		if m := readyRE.FindStringSubmatch(line); m != nil && !w.sent {
			w.ready <- m[1]
			w.sent = true
		}
	}
}

// flush keeps an unterminated last line; call it after Wait.
func (w *lineWriter) flush() {
	if len(w.partial) > 0 {
		w.log.add(string(w.partial))
		w.partial = nil
	}
}

func (p *serveProcess) logLines() []string {
	b := p.out.log
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.lines)
}

func (p *serveProcess) logTail(n int) string {
	lines := p.logLines()
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// crash returns the log from its first line of a Go crash (panic, fatal
// error, runtime message), a dozen lines of it, or "".
func (p *serveProcess) crash() string {
	lines := p.logLines()
	for i, l := range lines {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "runtime:") {
			return strings.Join(lines[i:min(i+12, len(lines))], "\n")
		}
	}
	return ""
}

// gone describes why the process is not there, waiting a little for it to
// finish exiting (a crashed server's sockets close before it is reaped); ""
// if it is still running.
func (p *serveProcess) gone() string {
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
		return ""
	}
	why := fmt.Sprintf("the server exited (%v)", p.waitErr)
	if k := p.watch.killedWhy(); k != "" {
		why = "the memory watchdog killed the server: " + k
	}
	if c := p.crash(); c != "" {
		why += ":\n" + c
	}
	return why
}

// client returns a go-redis client of the server (authenticating if it has
// a password); it does not retry, and waits up to readTimeout for a reply.
func (p *serveProcess) client(readTimeout time.Duration) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr: p.addr, Password: p.pass, MaxRetries: -1, PoolSize: 1,
		DialTimeout: 10 * time.Second, ReadTimeout: readTimeout, WriteTimeout: 10 * time.Second,
	})
}

var aliveSeq atomic.Int64

// alive checks the server from a fresh client: PING answers PONG, and an
// item CF.ADDed (after AUTH, if the server has a password) is then found.
func (p *serveProcess) alive() error {
	select {
	case <-p.exited:
		return errors.New(p.gone())
	default:
	}
	c := p.client(10 * time.Second)
	defer c.Close()
	ctx := context.Background()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("a fresh client: "+format+"; %s", append(args, orElse(p.gone(), "the server is still running"))...)
	}
	if pong, err := c.Ping(ctx).Result(); err != nil || pong != "PONG" {
		return fail("PING answered %q, %v", pong, err)
	}
	item := fmt.Sprint("item-", aliveSeq.Add(1))
	if added, err := c.CFAdd(ctx, "alive", item).Result(); err != nil || !added {
		return fail("CF.ADD alive %s answered %v, %v", item, added, err)
	}
	if found, err := c.CFExists(ctx, "alive", item).Result(); err != nil || !found {
		return fail("CF.EXISTS alive %s answered %v, %v", item, found, err)
	}
	return nil
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (p *serveProcess) checkAlive(t *testing.T) {
	t.Helper()
	if err := p.alive(); err != nil {
		t.Fatal(err)
	}
}

// procStatus is what /proc/<pid>/status says of a process's memory, in bytes.
type procStatus struct {
	peak int64 // VmPeak: the most address space it has had mapped
	hwm  int64 // VmHWM: its peak resident memory
	rss  int64 // VmRSS: its resident memory now
}

func (s procStatus) String() string {
	return fmt.Sprintf("VmHWM %s, VmRSS %s, VmPeak %s", mib(s.hwm), mib(s.rss), mib(s.peak))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/miB) }

func readStatus(pid int) (procStatus, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procStatus{}, err
	}
	var s procStatus
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v) // "14564 kB"
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return procStatus{}, fmt.Errorf("/proc/%d/status: %q: %v", pid, line, err)
		}
		switch k {
		case "VmPeak":
			s.peak = n * kiB
		case "VmHWM":
			s.hwm = n * kiB
		case "VmRSS":
			s.rss = n * kiB
		}
	}
	if s.rss == 0 {
		return procStatus{}, fmt.Errorf("/proc/%d/status: no VmRSS (the process has exited)", pid)
	}
	return s, nil
}

// status reads the process's memory now; if the watchdog killed it, the
// test fails with the watchdog's last sample.
func (p *serveProcess) status(t *testing.T) procStatus {
	t.Helper()
	s, err := readStatus(p.pid)
	if err != nil {
		t.Fatalf("%v; %s", err, orElse(p.gone(), "the server is still running"))
	}
	return s
}

// memBound bounds a process's memory; a zero field is not checked.
type memBound struct{ hwm, rss, peak int64 }

// checkMem logs the process's memory and fails t if a bound is exceeded.
func (p *serveProcess) checkMem(t *testing.T, what string, b memBound) procStatus {
	t.Helper()
	if k := p.watch.killedWhy(); k != "" {
		t.Fatalf("%s: the memory watchdog killed the server: %s", what, k)
	}
	s := p.status(t)
	t.Logf("%s: %v (bounds: VmHWM %s, VmRSS %s, VmPeak %s)", what, s, bound(b.hwm), bound(b.rss), bound(b.peak))
	if b.hwm > 0 && s.hwm > b.hwm {
		t.Errorf("%s: peak resident memory VmHWM %s exceeds its bound %s", what, mib(s.hwm), mib(b.hwm))
	}
	if b.rss > 0 && s.rss > b.rss {
		t.Errorf("%s: resident memory VmRSS %s exceeds its bound %s", what, mib(s.rss), mib(b.rss))
	}
	if b.peak > 0 && s.peak > b.peak {
		t.Errorf("%s: address space VmPeak %s exceeds its bound %s", what, mib(s.peak), mib(b.peak))
	}
	return s
}

func bound(n int64) string {
	if n == 0 {
		return "-"
	}
	return mib(n)
}

// memWatch samples a process's memory every 10 ms and kills it (SIGKILL)
// once its VmRSS exceeds killAt.
type memWatch struct {
	mu     sync.Mutex
	killAt int64
	killed string // why the watchdog killed the process; "" if it did not
}

func watchMemory(proc *os.Process, exited <-chan struct{}) *memWatch {
	w := &memWatch{killAt: 4 * giB}
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-exited:
				return
			case <-tick.C:
			}
			s, err := readStatus(proc.Pid)
			if err != nil {
				continue
			}
			w.mu.Lock()
			if s.rss > w.killAt && w.killed == "" {
				w.killed = fmt.Sprintf("VmRSS reached %s, past the bound %s (%v)", mib(s.rss), mib(w.killAt), s)
				proc.Kill() // by pid, through os.Process: never a reaped pid's successor
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// setKillAt makes the watchdog kill the process once VmRSS exceeds n.
func (w *memWatch) setKillAt(n int64) {
	w.mu.Lock()
	w.killAt = n
	w.mu.Unlock()
}

func (w *memWatch) killedWhy() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.killed
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// "pid (comm) state ...": comm may hold spaces, so split after its ')'.
	// Field 3 (state) is f[0]; utime and stime are fields 14 and 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("/proc/%d/stat: %v", pid, err)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond // clock ticks: USER_HZ is 100 on Linux
}

// writeRaw writes s, failing t if it cannot within 10 s.
func writeRaw(t *testing.T, nc net.Conn, s string) {
	t.Helper()
	nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(nc, s); err != nil {
		t.Fatalf("write %s: %v", abbrev(s), err)
	}
}

func abbrev(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q... (%d bytes)", s[:60], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// refusal reads what the server sends on nc until it closes the connection,
// for d at most. It accepts exactly one of want as a RESP error line followed
// by the close (any one error line, or none, if want is empty). A reset with
// nothing received is accepted too: a server that closes a socket still
// holding unread request bytes makes the kernel send RST, which may arrive
// as the reply is being read. It returns what happened, for the log.
func refusal(nc net.Conn, d time.Duration, want ...string) (string, error) {
	start := time.Now()
	nc.SetReadDeadline(start.Add(d))
	var got []byte
	buf := make([]byte, 4096)
	for {
		n, err := nc.Read(buf)
		if len(got) < 64*kiB {
			got = append(got, buf[:n]...)
		}
		if err == nil {
			continue
		}
		el := time.Since(start).Round(time.Millisecond)
		reply := string(got)
		ok := slices.ContainsFunc(want, func(w string) bool { return reply == "-"+w+"\r\n" })
		if len(want) == 0 {
			ok = reply == "" || strings.HasPrefix(reply, "-") && strings.Index(reply, "\r\n") == len(reply)-2
		}
		var ne net.Error
		switch {
		case errors.Is(err, io.EOF) && ok:
			return fmt.Sprintf("answered %q and closed after %v", reply, el), nil
		case errors.Is(err, io.EOF):
			return "", fmt.Errorf("the server sent %q and closed the connection (after %v); want one of %q, then the close", reply, el, want)
		case errors.Is(err, syscall.ECONNRESET) && (ok || reply == ""):
			return fmt.Sprintf("answered %q and reset after %v", reply, el), nil
		case errors.As(err, &ne) && ne.Timeout():
			return "", fmt.Errorf("the connection is still open after %v, having received %s; want one of %q, then the close", d, abbrev(reply), want)
		default:
			return "", fmt.Errorf("read after %v, having received %s: %v; want one of %q, then the close", el, abbrev(reply), err, want)
		}
	}
}

// checkRefused is refusal for the test's goroutine.
func checkRefused(t *testing.T, nc net.Conn, d time.Duration, want ...string) {
	t.Helper()
	what, err := refusal(nc, d, want...)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(what)
}

// checkEchoed reads the reply to an ECHO of n bytes of b, the last of which
// is being written, and checks the reader assembled the request whole: the
// reply is the n bytes echoed, or the error refusing an item that long (the
// server bounds items at 64 KiB, after the reader) naming n; then PING on
// the same connection answers PONG, so the request's end was found where it
// is.
func checkEchoed(t *testing.T, nc net.Conn, n int, b byte) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	defer nc.SetReadDeadline(time.Time{})
	rd := resptest.NewReader(nc)
	kind, v, err := rd.ReadKind()
	s, isBulk := v.(string)
	isBulk = isBulk && kind == '$'
	e, isErr := v.(resptest.Error)
	isErr = isErr && kind == '-'
	switch {
	case err != nil:
		t.Fatalf("ECHO of %d bytes: reply %q %.80q, %v", n, kind, v, err)
	case isBulk && len(s) == n:
		if strings.IndexFunc(s, func(r rune) bool { return r != rune(b) }) >= 0 {
			t.Fatalf("ECHO of %d bytes of %q: the reply's data differs", n, b)
		}
	case isErr && strings.Contains(string(e), fmt.Sprintf(" %d bytes", n)):
		t.Logf("ECHO of %d bytes answered -%s", n, e)
	default:
		t.Fatalf("ECHO of %d bytes answered %q %.80q; want the data, or an error naming its length", n, kind, v)
	}
	writeRaw(t, nc, string(resptest.Request("PING")))
	if kind, v, err := rd.ReadKind(); err != nil || kind != '+' || v != "PONG" {
		t.Fatalf("PING after the ECHO of %d bytes, on its connection: %q %#v, %v", n, kind, v, err)
	}
}

// TestHostileBulkLengthHeader: one header with the largest int64 bulk
// length, or one past it, crashed the server (issue 12, item 1). Each is
// refused, the server stays up, and it stays at its idle resident memory
// (+64 MiB, see the file's comment).
func TestHostileBulkLengthHeader(t *testing.T) {
	for _, m := range authModes {
		t.Run(m.name, func(t *testing.T) {
			p := startServe(t, m.pass, "--dir", "")
			base := p.checkMem(t, "idle", memBound{})
			for _, n := range []string{"9223372036854775807", "9223372036854775808"} {
				t.Run("len="+n, func(t *testing.T) {
					nc := m.dial(t, p.addr)
					writeRaw(t, nc, "*2\r\n$4\r\nECHO\r\n$"+n+"\r\n")
					checkRefused(t, nc, 10*time.Second, m.hugeBulkRefusal()...)
					p.checkAlive(t)
				})
			}
			p.checkMem(t, "after both headers", memBound{hwm: base.hwm + 64*miB, rss: base.rss + 64*miB})
		})
	}
}

// TestHostileTrickle: the head of a 50 MB bulk then one byte per write
// (TCP_NODELAY, so about one segment and one server read each) grew the
// server's stack by one frame a read until it overflowed; resident memory
// climbed 20 MB a second (issue 12, item 2). With no password the header is
// valid, and the server must keep reading it in memory proportional to the
// bytes that arrived: unpaced single-byte writes for 3 s send 0.2 to 1.5 MB
// here (the count is logged), so +64 MiB resident is generous, while the
// old reader passed that bound within 1.4 s. Another client's PING keeps
// answering meanwhile; then the rest of the bulk is sent, and the request
// must come out whole (see checkEchoed). An unauthenticated client's same
// header is refused at once.
func TestHostileTrickle(t *testing.T) {
	const head = "*2\r\n$4\r\nECHO\r\n$52428800\r\n"
	const bulk = 52428800
	t.Run("nopass", func(t *testing.T) {
		p := startServe(t, "", "--dir", "")
		base := p.checkMem(t, "idle", memBound{})
		p.watch.setKillAt(base.hwm + 64*miB)
		nc := resptest.Dial(t, p.addr).TCP()
		if err := nc.SetNoDelay(true); err != nil {
			t.Fatal(err)
		}
		writeRaw(t, nc, head)

		// Another client PINGs every 50 ms throughout.
		stop := make(chan struct{})
		var pings int
		var slowest time.Duration
		var pingErr error
		pinged := make(chan struct{})
		go func() {
			defer close(pinged)
			c := p.client(10 * time.Second)
			defer c.Close()
			for {
				t0 := time.Now()
				if err := c.Ping(context.Background()).Err(); err != nil {
					pingErr = err
					return
				}
				pings++
				slowest = max(slowest, time.Since(t0))
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()

		// One byte a write for 3 s (0.5 s with -short), and 20,000 (2,000)
		// writes at least.
		dur, atLeast := 3*time.Second, 20000
		if testing.Short() {
			dur, atLeast = 500*time.Millisecond, 2000
		}
		nc.SetWriteDeadline(time.Now().Add(dur + 30*time.Second))
		one := []byte{'x'}
		start := time.Now()
		sent := 0
		for ; sent < atLeast || time.Since(start) < dur; sent++ {
			if _, err := nc.Write(one); err != nil {
				close(stop)
				<-pinged
				t.Fatalf("write %d of the trickle: %v (a valid request's connection was closed? %s)", sent+1, err, orElse(p.gone(), "the server is still running"))
			}
		}
		el := time.Since(start)
		close(stop)
		<-pinged
		t.Logf("trickled %d single-byte writes in %v (%.0f/s); %d PINGs meanwhile, the slowest %v",
			sent, el.Round(time.Millisecond), float64(sent)/el.Seconds(), pings, slowest.Round(time.Microsecond))
		if pingErr != nil {
			t.Errorf("PING %d during the trickle: %v; %s", pings+1, pingErr, orElse(p.gone(), "the server is still running"))
		}
		p.checkAlive(t)
		p.checkMem(t, "after the trickle", memBound{hwm: base.hwm + 64*miB, rss: base.rss + 64*miB})

		// The rest of the bulk in large writes: the request is whole.
		p.watch.setKillAt(4 * giB)
		go func() {
			chunk := bytes.Repeat(one, 64*kiB)
			nc.SetWriteDeadline(time.Now().Add(60 * time.Second))
			for left := bulk - sent; left > 0; left -= min(left, len(chunk)) {
				if _, err := nc.Write(chunk[:min(left, len(chunk))]); err != nil {
					return // checkEchoed reports what the server did
				}
			}
			io.WriteString(nc, "\r\n")
		}()
		checkEchoed(t, nc, bulk, 'x')
	})
	t.Run("requirepass/unauthenticated", func(t *testing.T) {
		p := startServe(t, testPass, "--dir", "")
		nc := resptest.Dial(t, p.addr).TCP()
		writeRaw(t, nc, head)
		checkRefused(t, nc, 10*time.Second, errUnauthBulk)
		p.checkAlive(t)
	})
}

// TestHostileMultibulkCount: two connections sending the largest int64
// multibulk count and closing left the server spinning at 199% CPU for
// good, deaf to SIGTERM; a count of 10^9 and 10 single bytes cost 3.1 s of
// CPU (issue 12, item 3). The bound: under 0.3 s of CPU over the 2-second
// window after the connections close (1 s with -short), and for the whole
// 10^9 exchange plus that window. An idle server uses next to none; 0.3 s
// leaves room for a GC cycle or two on a noisy machine, and is far below the
// issue's 4 s per 2 s and 3.1 s.
func TestHostileMultibulkCount(t *testing.T) {
	window := 2 * time.Second
	if testing.Short() {
		window = time.Second
	}
	const cpuBound = 300 * time.Millisecond
	for _, m := range authModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each has its own server, and its CPU time is its own
			p := startServe(t, m.pass, "--dir", "")
			t.Run("count=9223372036854775807", func(t *testing.T) {
				for range 2 {
					nc := m.dial(t, p.addr)
					writeRaw(t, nc, "*9223372036854775807\r\n")
					nc.Close()
				}
				c0 := cpuTime(t, p.pid)
				time.Sleep(window) // the measurement window, not a wait for an event
				used := cpuTime(t, p.pid) - c0
				t.Logf("CPU in the %v after two connections sent the count and closed: %v (bound %v)", window, used, cpuBound)
				if used > cpuBound {
					t.Errorf("the server used %v of CPU in the %v after two connections sent *9223372036854775807 and closed; bound %v", used, window, cpuBound)
				}
				nc := m.dial(t, p.addr)
				writeRaw(t, nc, "*9223372036854775807\r\n")
				checkRefused(t, nc, 10*time.Second, m.hugeCountRefusal()...)
				p.checkAlive(t)
			})
			t.Run("count=1000000000/then-10-bytes", func(t *testing.T) {
				c0 := cpuTime(t, p.pid)
				nc := m.dial(t, p.addr)
				if err := nc.SetNoDelay(true); err != nil {
					t.Fatal(err)
				}
				writeRaw(t, nc, "*1000000000\r\n")
				for _, b := range []byte("$4\r\nPING\r\n") {
					if _, err := nc.Write([]byte{b}); err != nil {
						t.Logf("single byte %q: %v (the server has closed the connection)", b, err)
						break
					}
				}
				checkRefused(t, nc, 10*time.Second, m.hugeCountRefusal()...)
				time.Sleep(window) // the measurement window
				used := cpuTime(t, p.pid) - c0
				t.Logf("CPU for the exchange and the %v after it: %v (bound %v)", window, used, cpuBound)
				if used > cpuBound {
					t.Errorf("the server used %v of CPU for *1000000000 and 10 single bytes (and the %v after); bound %v", used, window, cpuBound)
				}
				p.checkAlive(t)
			})
		})
	}
}

// TestHostileReserveOverMaxmemory: CF.RESERVE k1 4294967296 BUCKETSIZE 2
// under --maxmemory 209715200 answered "ERR Insufficient memory" yet grew the
// address space to 21 GB, and the second one took resident memory to 14 GB
// (issue 12, item 4). Both must be refused without allocating the filter:
// resident memory +64 MiB of idle, address space +1 GiB of idle (the Go
// runtime maps arenas as its heap grows; a few MiB of heap here needs far
// less than 1 GiB, and the 4 GiB+ table would need more), watched for 2 s
// after the second refusal (0.5 s with -short), in which the issue saw
// resident memory climb. The server answers as RedisBloom 2.6, whose bound
// on a capacity (2^32 in this layout) lets the command reach the
// memory check; RedisBloom 8.6's, 2^30, would refuse it before.
func TestHostileReserveOverMaxmemory(t *testing.T) {
	p := startServe(t, testPass, "--dir", t.TempDir(), "--maxmemory", "209715200", "--redisbloom-compat", "2.6")
	p.checkAlive(t)
	base := p.checkMem(t, "idle", memBound{})
	b := memBound{hwm: base.hwm + 64*miB, rss: base.rss + 64*miB, peak: base.peak + giB}
	p.watch.setKillAt(b.hwm)
	c := p.client(60 * time.Second)
	defer c.Close()
	ctx := context.Background()
	for i := range 2 {
		t0 := time.Now()
		err := c.Do(ctx, "CF.RESERVE", "k1", "4294967296", "BUCKETSIZE", "2").Err()
		t.Logf("CF.RESERVE k1 4294967296 BUCKETSIZE 2 (%d): %v in %v", i+1, err, time.Since(t0).Round(time.Millisecond))
		if err == nil || !strings.HasPrefix(err.Error(), "ERR Insufficient memory") {
			t.Fatalf("CF.RESERVE k1 4294967296 BUCKETSIZE 2 (%d) answered %v, want an error starting ERR Insufficient memory; %s", i+1, err, orElse(p.gone(), "the server is still running"))
		}
	}
	if n, err := c.Exists(ctx, "k1").Result(); err != nil || n != 0 {
		t.Errorf("EXISTS k1 after the refused reservations: %d, %v; want 0", n, err)
	}
	window := 2 * time.Second
	if testing.Short() {
		window = 500 * time.Millisecond
	}
	time.Sleep(window) // watch memory after the replies; the watchdog samples meanwhile
	p.checkAlive(t)
	p.checkMem(t, "after two refused reservations", b)
}

// TestHostileReserveHugeSave: without --maxmemory, an empty CF.RESERVE big
// 1000000000 peaked at 5 GB resident on SAVE and 8 GB on CF.SCANDUMP big 0,
// which returns only the header chunk (issue 12, item 4). Its table is 2.1 GB
// (CF.INFO's Size, logged), and nothing ever writes to it: its pages are
// never made resident unless the server copies the table. The bound, VmHWM
// under 512 MiB, is a quarter of the table and a tenth of the issue's
// figure, while an idle server is ~14 MiB and a snapshot or dump that
// streams from the table needs buffers of a chunk. SAVE's time and the bytes
// it writes are logged for the lead: a CI budget was ~20 s.
func TestHostileReserveHugeSave(t *testing.T) {
	if testing.Short() {
		t.Skip("reserves a 10^9-item filter and saves it; skipped with -short")
	}
	dir := t.TempDir()
	p := startServe(t, "", "--dir", dir)
	// The reservation's 2.1 GB table is never written, so it is normally
	// not resident; but whether untouched pages stay so is up to the
	// runtime and the kernel (a reused span is zeroed; this machine's
	// memory daemons may fault pages in), and it happened twice in 55 runs
	// that 0.5 GB became resident. What issue 12 is about is SAVE and
	// CF.SCANDUMP: 5 GB and 8 GB on top of the table. So the reservation is
	// only held to its table, and each later step to 512 MiB more than the
	// process had resident before it, with VmHWM reset in between.
	const tableBound = 3 * giB
	const stepBound = 512 * miB
	p.watch.setKillAt(tableBound)
	c := p.client(5 * time.Minute)
	defer c.Close()
	ctx := context.Background()
	step := func(what string, hwmBound int64, args ...any) any {
		t.Helper()
		t0 := time.Now()
		v, err := c.Do(ctx, args...).Result()
		el := time.Since(t0).Round(time.Millisecond)
		if err != nil {
			t.Fatalf("%s: %v after %v; %s", what, err, el, orElse(p.gone(), "the server is still running"))
		}
		p.checkMem(t, fmt.Sprintf("%s (%v)", what, el), memBound{hwm: hwmBound})
		return v
	}
	// resetPeak clears VmHWM (Linux's clear_refs 5) and returns the bound
	// for the next step: resident memory now plus stepBound.
	resetPeak := func() int64 {
		t.Helper()
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.pid), []byte("5"), 0); err != nil {
			t.Fatalf("resetting the peak resident memory: %v", err)
		}
		b := p.status(t).rss + stepBound
		p.watch.setKillAt(b)
		return b
	}
	step("CF.RESERVE big 1000000000", tableBound, "CF.RESERVE", "big", "1000000000")
	if info, err := c.Do(ctx, "CF.INFO", "big").Result(); err == nil {
		t.Logf("CF.INFO big: %v", info)
	}
	step("SAVE", resetPeak(), "SAVE")
	var apparent, allocated int64
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			apparent += fi.Size()
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				allocated += st.Blocks * 512
			}
		}
		return nil
	})
	t.Logf("--dir after SAVE: %d bytes apparent (%s), %d on disk (%s)", apparent, mib(apparent), allocated, mib(allocated))
	if apparent > 16*miB {
		t.Errorf("SAVE of an empty filter wrote %s", mib(apparent))
	}
	v := step("CF.SCANDUMP big 0", resetPeak(), "CF.SCANDUMP", "big", "0")
	if a, ok := v.([]any); !ok || len(a) != 2 {
		t.Errorf("CF.SCANDUMP big 0 answered %T %.200v, want [iterator, data]", v, v)
	} else if s, ok := a[1].(string); ok {
		t.Logf("CF.SCANDUMP big 0: iterator %v, %d bytes of data", a[0], len(s))
	}
	p.checkAlive(t)
}

// TestHostileUnauthenticatedBuffers: ten connections that each sent half of
// a 100 MiB bulk before AUTH raised resident memory from 14 to 763 MiB, for
// good (issue 12, item 6). Each header is refused at once, so resident
// memory, measured while the ten connections are still open, stays within
// +64 MiB of idle, far below the issue's +749 MiB.
func TestHostileUnauthenticatedBuffers(t *testing.T) {
	p := startServe(t, testPass, "--dir", "")
	base := p.checkMem(t, "idle", memBound{})
	const head = "*2\r\n$4\r\nECHO\r\n$104857600\r\n"
	data := bytes.Repeat([]byte{'x'}, 64*kiB)
	var wg sync.WaitGroup
	written := make([]int, 10)
	results := make([]chan error, 10)
	for i := range 10 {
		nc := resptest.Dial(t, p.addr).TCP()
		results[i] = make(chan error, 1)
		go func() { // reads the reply as the data is written
			what, err := refusal(nc, 60*time.Second, errUnauthBulk)
			if err == nil {
				t.Logf("connection %d: %s", i, what)
			}
			results[i] <- err
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(nc, head); err != nil {
				return
			}
			for written[i] < 50*miB {
				n, err := nc.Write(data)
				written[i] += n
				if err != nil {
					return // the server closed the connection, as it should
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("bytes of data each connection could write before the server closed it: %v", written)
	p.checkMem(t, "ten unauthenticated connections holding half of a 100 MiB bulk", memBound{hwm: base.hwm + 64*miB, rss: base.rss + 64*miB})
	for i, r := range results {
		if err := <-r; err != nil {
			t.Errorf("connection %d: %v", i, err)
		}
	}
	p.checkAlive(t)
}

// TestHostileSIGTERMWithPendingRequests: SIGTERM did not stop a server
// spinning on a huge count (issue 12, item 3). With connections each holding
// part of a request (mid-bulk, mid-header, an inline fragment, the huge
// count, and an idle one), SIGTERM must stop the server with exit status 0
// within 10 s (its grace period is 30 s; a server that closes idle and
// half-read connections at once needs well under a second), and the items
// acknowledged before it are there after a restart.
func TestHostileSIGTERMWithPendingRequests(t *testing.T) {
	partials := []string{
		"*2\r\n$4\r\nECHO\r\n$52428800\r\n" + strings.Repeat("x", 1000), // mid-bulk, large
		"*3\r\n$6\r\nCF.ADD\r\n$1\r\nk\r\n$5\r\nhel",                    // mid-bulk, small
		"*3\r\n$6\r\nCF.A",                   // mid-argument
		"*2\r\n",                             // a count only
		"PIN",                                // an inline fragment
		"*9223372036854775807\r\n",           // the huge count
		"*1000000000\r\n$4\r\nPI",            // a large count, then a fragment
		"*2\r\n$4\r\nECHO\r\n$9999999999999", // a bulk length, unterminated
		"",                                   // idle
	}
	for _, m := range []authMode{authModes[0], authModes[2]} {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			p := startServe(t, m.pass, "--dir", dir)
			c := p.client(10 * time.Second)
			ctx := context.Background()
			for i := range 100 {
				if err := c.CFAdd(ctx, "acked", fmt.Sprint(i)).Err(); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()
			for _, s := range partials {
				nc := resptest.Dial(t, p.addr).TCP()
				if s != "" {
					writeRaw(t, nc, s)
				}
			}
			p.checkAlive(t) // a round trip, which lets the server read the fragments
			t0 := time.Now()
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				t.Fatalf("the server is still running 10 s after SIGTERM:\n%s", p.logTail(10))
			}
			t.Logf("exited %v after SIGTERM: %v", time.Since(t0).Round(time.Millisecond), p.waitErr)
			if p.waitErr != nil {
				t.Fatalf("exit after SIGTERM: %v, want status 0:\n%s", p.waitErr, p.logTail(10))
			}
			q := startServe(t, m.pass, "--dir", dir)
			c = q.client(10 * time.Second)
			defer c.Close()
			for i := range 100 {
				if found, err := c.CFExists(ctx, "acked", fmt.Sprint(i)).Result(); err != nil || !found {
					t.Fatalf("after the restart, CF.EXISTS acked %d: %v, %v", i, found, err)
				}
			}
		})
	}
}

// latencies returns the median, 99th percentile and maximum of d, which it sorts.
func latencies(d []time.Duration) (p50, p99, top time.Duration) {
	slices.Sort(d)
	return d[len(d)/2], d[(len(d)*99+99)/100-1], d[len(d)-1]
}

// pingLatencies times n sequential PINGs on one connection.
func pingLatencies(t *testing.T, c *redis.Client, n int) []time.Duration {
	t.Helper()
	d := make([]time.Duration, n)
	for i := range d {
		t0 := time.Now()
		if err := c.Ping(context.Background()).Err(); err != nil {
			t.Fatalf("PING %d: %v", i+1, err)
		}
		d[i] = time.Since(t0)
	}
	return d
}

// TestSlowloris: 2,000 idle connections and 200 that trickle a request one
// byte every 100 ms, none authenticated, while an authenticated client does
// 1,000 sequential PINGs. The bound: PING's median under 10 ms and its 99th
// percentile under 100 ms during the attack. A loopback PING takes ~0.1 ms
// when the server is idle (the figures before the attack are logged beside
// those during it), so these allow for a noisy two-CPU machine shared with
// the 200 trickling goroutines of this test, while a server that serialises
// its clients or stalls on the attackers' reads misses them by far.
func TestSlowloris(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,200 connections; skipped with -short")
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// Go raises the soft limit to the hard one, in this process and in the
	// server; each needs 2,200 descriptors and some.
	if lim.Max < 5000 {
		t.Skipf("the hard RLIMIT_NOFILE is %d; this test needs 5,000", lim.Max)
	}
	p := startServe(t, testPass, "--dir", "")
	c := p.client(10 * time.Second)
	defer c.Close()
	const pings = 1000
	b50, b99, bmax := latencies(pingLatencies(t, c, pings))
	t.Logf("before the attack: PING median %v, p99 %v, max %v", b50, b99, bmax)

	for range 2000 {
		resptest.Dial(t, p.addr)
	}
	const head = "*2\r\n$4\r\nECHO\r\n$10000\r\n" // within the unauthenticated limit
	stop := make(chan struct{})
	var trickling, closed sync.WaitGroup
	var firstErr atomic.Pointer[error]
	trickling.Add(200)
	for range 200 {
		nc := resptest.Dial(t, p.addr).TCP()
		if err := nc.SetNoDelay(true); err != nil {
			t.Fatal(err)
		}
		closed.Add(1)
		go func() {
			defer closed.Done()
			msg := head + strings.Repeat("x", 10000)
			time.Sleep(rand.N(100 * time.Millisecond)) // spread the writes over the period
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				if _, err := nc.Write([]byte{msg[i]}); err != nil {
					err = fmt.Errorf("a trickling connection was closed after %d bytes: %w", i, err)
					firstErr.CompareAndSwap(nil, &err)
					if i < 2 {
						trickling.Done()
					}
					return
				}
				if i == 1 {
					trickling.Done() // two bytes written: trickling
				}
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
	}
	trickling.Wait()
	// The server accepts connections from its backlog at its own pace: wait
	// until it serves all 2,201 (the attack and this client) before timing.
	var info string
	for deadline := time.Now().Add(30 * time.Second); ; {
		var err error
		if info, err = c.Info(context.Background(), "clients").Result(); err != nil {
			t.Fatal(err)
		}
		_, after, ok := strings.Cut(info, "connected_clients:")
		if !ok {
			t.Fatalf("INFO clients has no connected_clients: %q", info)
		}
		if n, _ := strconv.Atoi(strings.Fields(after)[0]); n >= 2201 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("connected_clients is %d 30 s into the attack, want 2,201 (the attack is not in place)", n)
		}
		time.Sleep(50 * time.Millisecond) // polling INFO: the server offers no signal for this
	}
	t.Logf("INFO clients during the attack: %q", strings.TrimSpace(info))
	d50, d99, dmax := latencies(pingLatencies(t, c, pings))
	close(stop)
	closed.Wait()
	t.Logf("during the attack: PING median %v, p99 %v, max %v", d50, d99, dmax)
	if e := firstErr.Load(); e != nil {
		t.Error(*e)
	}
	if d50 > 10*time.Millisecond || d99 > 100*time.Millisecond {
		t.Errorf("PING during the attack: median %v (bound 10 ms), p99 %v (bound 100 ms); before it: median %v, p99 %v", d50, d99, b50, b99)
	}
	p.checkMem(t, "after the attack", memBound{})
	p.checkAlive(t)
}

// TestIdleTimeout: with --timeout 1, a connection that sends nothing and one
// stuck mid-bulk are closed by the server within 5 s ("a few seconds": the
// timeout plus a check period of up to a second, plus slack for a loaded
// machine), and not before 0.9 s (the timeout, less timer slack); a client
// sending PING every 200 ms is not closed meanwhile.
func TestIdleTimeout(t *testing.T) {
	p := startServe(t, "", "--dir", "", "--timeout", "1")
	type result struct {
		after time.Duration
		err   error
	}
	waitClose := func(nc net.Conn, start time.Time) <-chan result {
		r := make(chan result, 1)
		go func() {
			what, err := refusal(nc, 10*time.Second)
			if err == nil && !strings.HasPrefix(what, `answered ""`) {
				err = fmt.Errorf("the server closed an idle connection, but first sent %s", what)
			}
			r <- result{time.Since(start), err}
		}()
		return r
	}
	idle := resptest.Dial(t, p.addr).TCP()
	idleClosed := waitClose(idle, time.Now())
	stuck := resptest.Dial(t, p.addr).TCP()
	writeRaw(t, stuck, "*2\r\n$4\r\nECHO\r\n$100\r\nabc")
	stuckClosed := waitClose(stuck, time.Now())

	pinger := resptest.Dial(t, p.addr)
	results := map[string]result{}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	pingsSent := 0
	for len(results) < 2 || pingsSent < 15 { // 3 s of PINGs at least
		select {
		case r := <-idleClosed:
			results["idle"] = r
			idleClosed = nil
		case r := <-stuckClosed:
			results["stuck mid-bulk"] = r
			stuckClosed = nil
		case <-tick.C:
			pinger.Send("PING")
			pinger.TCP().SetReadDeadline(time.Now().Add(10 * time.Second))
			kind, pong, err := pinger.Reader().ReadKind()
			if err != nil || kind != '+' || pong != "PONG" {
				t.Fatalf("PING %d (one every 200 ms): %q %#v, %v", pingsSent+1, kind, pong, err)
			}
			pingsSent++
		}
	}
	t.Logf("%d PINGs answered, one every 200 ms", pingsSent)
	for what, r := range results {
		t.Logf("%s connection: closed after %v (%v)", what, r.after.Round(time.Millisecond), r.err)
		switch {
		case r.err != nil:
			t.Errorf("%s connection: %v", what, r.err)
		case r.after > 5*time.Second:
			t.Errorf("%s connection: closed after %v, want within 5 s of --timeout 1", what, r.after)
		case r.after < 900*time.Millisecond:
			t.Errorf("%s connection: closed after %v, before --timeout 1 elapsed", what, r.after)
		}
	}
	p.checkAlive(t)
}

// TestHostileProtocolLimits: the rest of the reader's limits, each refused
// with Redis's error and a close: lengths that are negative, not numbers or
// overflow, beyond --proto-max-bulk-len (512 MiB by default, and set
// lower), counts beyond the 1,048,576 arguments, an inline request beyond
// 64 KiB, and a request beyond --client-query-buffer-limit.
func TestHostileProtocolLimits(t *testing.T) {
	send := func(t *testing.T, p *serveProcess, s string, want ...string) {
		t.Helper()
		nc := resptest.Dial(t, p.addr).TCP()
		go func() { // written as the reply is read: the server may close mid-way
			nc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			io.WriteString(nc, s)
		}()
		checkRefused(t, nc, 30*time.Second, want...)
	}
	t.Run("defaults", func(t *testing.T) {
		p := startServe(t, "", "--dir", "")
		base := p.checkMem(t, "idle", memBound{})
		for _, c := range []struct{ name, req, want string }{
			{"bulk=negative", "*2\r\n$4\r\nECHO\r\n$-5\r\n", errInvalidBulk},
			{"bulk=not-a-number", "*2\r\n$4\r\nECHO\r\n$12x\r\n", errInvalidBulk},
			{"bulk=overflow", "*2\r\n$4\r\nECHO\r\n$99999999999999999999\r\n", errInvalidBulk},
			{"bulk=512MiB+1", "*2\r\n$4\r\nECHO\r\n$536870913\r\n", errInvalidBulk},
			{"count=not-a-number", "*12x\r\n", errInvalidMultibulk},
			{"count=overflow", "*99999999999999999999\r\n", errInvalidMultibulk},
			{"count=1048577", "*1048577\r\n", errInvalidMultibulk},
			{"inline=128KiB", strings.Repeat("A", 128*kiB), errBigInline},
		} {
			t.Run(c.name, func(t *testing.T) {
				send(t, p, c.req, c.want)
				p.checkAlive(t)
			})
		}
		p.checkMem(t, "after the malformed requests", memBound{hwm: base.hwm + 64*miB, rss: base.rss + 64*miB})
	})
	t.Run("proto-max-bulk-len=1MiB", func(t *testing.T) {
		p := startServe(t, "", "--dir", "", "--proto-max-bulk-len", "1048576")
		send(t, p, "*2\r\n$4\r\nECHO\r\n$1048577\r\n", errInvalidBulk)
		nc := resptest.Dial(t, p.addr).TCP() // a bulk of exactly the limit is read
		writeRaw(t, nc, "*2\r\n$4\r\nECHO\r\n$1048576\r\n"+strings.Repeat("y", miB)+"\r\n")
		checkEchoed(t, nc, miB, 'y')
		p.checkAlive(t)
	})
	t.Run("client-query-buffer-limit=1MiB", func(t *testing.T) {
		p := startServe(t, "", "--dir", "", "--client-query-buffer-limit", "1048576")
		send(t, p, "*2\r\n$4\r\nECHO\r\n$4194304\r\n"+strings.Repeat("x", 4*miB)) // closed, with any error or none
		p.checkAlive(t)
	})
}
