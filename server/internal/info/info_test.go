package info_test

import (
	"bytes"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/info"
)

func TestHumanBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0B"}, {1023, "1023B"}, {1024, "1.00K"}, {1536, "1.50K"}, {20 << 20, "20.00M"}, {2 << 30, "2.00G"}, {3 << 40, "3.00T"}, {5 << 50, "5.00P"}, {2048 << 50, "2048.00P"}} {
		if got := info.HumanBytes(tc.n); got != tc.want {
			t.Errorf("HumanBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestSections: no argument, all, default and everything ask for the
// default sections; a named section only for itself, in any case; a section
// outside the defaults only when named or with everything.
func TestSections(t *testing.T) {
	args := func(s ...string) [][]byte {
		var out [][]byte
		for _, x := range s {
			out = append(out, []byte(x))
		}
		return out
	}
	for _, tc := range []struct {
		args            []string
		server, filters bool
	}{
		{nil, true, false}, {[]string{"all"}, true, false}, {[]string{"default"}, true, false},
		{[]string{"everything"}, true, true}, {[]string{"SERVER"}, true, false},
		{[]string{"memory"}, false, false}, {[]string{"filters"}, false, true},
	} {
		w := info.NewWriter(args(tc.args...))
		if w.Wants("Server") != tc.server || w.Named("filters") != tc.filters {
			t.Errorf("INFO %v: Wants(Server) %v, Named(filters) %v; want %v, %v", tc.args, w.Wants("Server"), w.Named("filters"), tc.server, tc.filters)
		}
	}
	w := info.NewWriter(args("server", "stats"))
	w.Section("Server", "redis_version", "7.2.0", "tcp_port", 6379, "up", true, "down", false)
	w.Section("Memory", "used_memory", 1)
	w.Section("Stats")
	if want := "# Server\r\nredis_version:7.2.0\r\ntcp_port:6379\r\nup:1\r\ndown:0\r\n\r\n# Stats\r\n"; w.String() != want {
		t.Errorf("INFO server stats: %q, want %q", w.String(), want)
	}
}

func TestRunIDAndCPU(t *testing.T) {
	a, b := info.NewRunID(), info.NewRunID()
	if len(a) != 40 || strings.Trim(a, "0123456789abcdef") != "" || a == b {
		t.Errorf("run ids %q, %q: want two different 40-hex-digit ids", a, b)
	}
	w := info.NewWriter(nil)
	w.CPU()
	if s := w.String(); !strings.HasPrefix(s, "# CPU\r\nused_cpu_sys:") || !strings.Contains(s, "used_cpu_user:") {
		t.Errorf("CPU section: %q", s)
	}
}

func TestCountingConn(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	var in, out atomic.Int64
	c := info.CountingConn{Conn: a, In: &in, Out: &out}
	go func() {
		buf := make([]byte, 5)
		n, _ := b.Read(buf)
		b.Write(bytes.ToUpper(buf[:n]))
	}()
	c.Write([]byte("hello"))
	buf := make([]byte, 5)
	n, _ := c.Read(buf)
	if string(buf[:n]) != "HELLO" || in.Load() != 5 || out.Load() != 5 {
		t.Errorf("read %q, counted in %d out %d; want HELLO, 5, 5", buf[:n], in.Load(), out.Load())
	}
}
