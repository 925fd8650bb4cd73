// Package info builds the text of INFO: its sections of "name:value" lines,
// which sections a request asks for, and the fields whose form is Redis's
// whatever the figure (the *_human sizes, the CPU times, the run id). The
// figures are the server's: it measures them and hands them in.
//
// It imports only the standard library; package server imports it.
package info

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
)

// Writer builds INFO's text.
type Writer struct {
	sb   strings.Builder
	want map[string]bool
	all  bool
}

// NewWriter returns a writer of the sections args (INFO's arguments after
// its name) ask for: none, "all", "everything" or "default" ask for the
// default sections.
func NewWriter(args [][]byte) *Writer {
	w := &Writer{want: map[string]bool{}}
	for _, x := range args {
		w.want[strings.ToLower(string(x))] = true
	}
	w.all = len(w.want) == 0 || w.want["all"] || w.want["everything"] || w.want["default"]
	return w
}

// Wants reports whether the request asks for section, one of the default
// sections.
func (w *Writer) Wants(section string) bool {
	return w.all || w.want[strings.ToLower(section)]
}

// Named reports whether the request names section itself (or
// "everything"): for the sections not in the default set.
func (w *Writer) Named(section string) bool {
	return w.want[strings.ToLower(section)] || w.want["everything"]
}

// Section writes section name with its fields, kv as name, value pairs, if
// the request wants it. A bool is written 1 or 0, as INFO writes flags.
func (w *Writer) Section(name string, kv ...any) {
	if !w.Wants(name) {
		return
	}
	if w.sb.Len() > 0 {
		w.sb.WriteString("\r\n")
	}
	fmt.Fprintf(&w.sb, "# %s\r\n", name)
	for i := 0; i+1 < len(kv); i += 2 {
		v := kv[i+1]
		if b, ok := v.(bool); ok {
			v = 0
			if b {
				v = 1
			}
		}
		fmt.Fprintf(&w.sb, "%s:%v\r\n", kv[i], v)
	}
}

// String is the text written.
func (w *Writer) String() string { return w.sb.String() }

// CPU writes the CPU section: the process's system and user time.
func (w *Writer) CPU() {
	if !w.Wants("cpu") {
		return
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	secs := func(t syscall.Timeval) string {
		return fmt.Sprintf("%d.%06d", t.Sec, t.Usec)
	}
	w.Section("CPU", "used_cpu_sys", secs(ru.Stime), "used_cpu_user", secs(ru.Utime))
}

// HumanBytes writes n as Redis's *_human fields do: 1.50K, 20.00M, 2.00G.
func HumanBytes(n int64) string {
	const unit = 1024.0
	f := float64(n)
	for _, suffix := range []string{"B", "K", "M", "G", "T", "P"} {
		if f < unit || suffix == "P" {
			if suffix == "B" {
				return fmt.Sprintf("%dB", n)
			}
			return fmt.Sprintf("%.2f%s", f, suffix)
		}
		f /= unit
	}
	return ""
}

// NewRunID is a random 40-hex-digit identifier of a process's run, as
// Redis's run_id.
func NewRunID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// CountingConn counts the bytes a connection reads and writes into In and
// Out, for INFO's total_net_input_bytes and total_net_output_bytes.
type CountingConn struct {
	net.Conn
	In, Out *atomic.Int64
}

func (c CountingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.In.Add(int64(n))
	return n, err
}

func (c CountingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.Out.Add(int64(n))
	return n, err
}
