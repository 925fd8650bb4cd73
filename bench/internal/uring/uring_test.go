//go:build linux

package uring

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestABISizes checks the structs against the kernel header's sizes.
func TestABISizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"io_uring_sqe", unsafe.Sizeof(SQE{}), 64},
		{"io_uring_cqe", unsafe.Sizeof(CQE{}), 16},
		{"io_uring_params", unsafe.Sizeof(params{}), 120},
		{"io_uring_buf_reg", unsafe.Sizeof(bufReg{}), 40},
		{"io_uring_buf", unsafe.Sizeof(ringBuf{}), 16},
		{"sqe.user_data offset", unsafe.Offsetof(SQE{}.UserData), 32},
		{"sqe.buf_group offset", unsafe.Offsetof(SQE{}.BufGroup), 40},
		{"sqe.addr3 offset", unsafe.Offsetof(SQE{}.Addr3), 48},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, c.got, c.want)
		}
	}
}

func newRing(t *testing.T, entries uint32) *Ring {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	r, err := New(entries)
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestNops fills the submission queue past its size with no-ops, submitting
// when full, and checks every completion arrives once with its user data.
func TestNops(t *testing.T) {
	r := newRing(t, 8)
	const n = 100
	seen := make(map[uint64]bool)
	reap := func(c *CQE) {
		if c.Res != 0 || seen[c.UserData] {
			t.Errorf("cqe %d: res %d, seen before %v", c.UserData, c.Res, seen[c.UserData])
		}
		seen[c.UserData] = true
	}
	for i := range uint64(n) {
		s := r.GetSQE()
		if s == nil {
			if _, err := r.Submit(0); err != nil {
				t.Fatal(err)
			}
			r.Reap(reap)
			s = r.GetSQE()
		}
		s.PrepNop(i)
	}
	for len(seen) < n {
		if _, err := r.Submit(1); err != nil {
			t.Fatal(err)
		}
		r.Reap(reap)
	}
}

// TestRecvMultishot sends several messages over a socket pair and checks a
// single multishot receive delivers them in provided buffers, that recycled
// buffers are reused, and that end of stream ends the request.
func TestRecvMultishot(t *testing.T) {
	r := newRing(t, 8)
	br, err := r.RegisterBufRing(1, 2, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	r.GetSQE().PrepRecvMultishot(fds[0], 1, 7)
	var got []byte
	ended := false
	for i := range 5 { // more messages than buffers: recycling must work
		msg := []byte{'a' + byte(i), 'b' + byte(i)}
		if _, err := unix.Write(fds[1], msg); err != nil {
			t.Fatal(err)
		}
		want := len(got) + len(msg)
		for len(got) < want {
			if _, err := r.Submit(1); err != nil {
				t.Fatal(err)
			}
			r.Reap(func(c *CQE) {
				if c.UserData != 7 || c.Res <= 0 || c.Flags&CQEFBuffer == 0 || c.Flags&CQEFMore == 0 {
					t.Fatalf("cqe: %+v", *c)
				}
				got = append(got, br.Buf(c.BufID())[:c.Res]...)
				br.Recycle(c.BufID())
			})
			br.Publish()
		}
	}
	if string(got) != "abbccddeef" {
		t.Errorf("received %q", got)
	}
	unix.Close(fds[1])
	for !ended {
		if _, err := r.Submit(1); err != nil {
			t.Fatal(err)
		}
		r.Reap(func(c *CQE) {
			if c.Res != 0 || c.Flags&CQEFMore != 0 {
				t.Fatalf("cqe at end of stream: %+v", *c)
			}
			ended = true
		})
	}
}

// TestSend sends a buffer and reads it from the other end of a socket pair.
func TestSend(t *testing.T) {
	r := newRing(t, 4)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	msg := []byte("+PONG\r\n")
	r.GetSQE().PrepSend(fds[0], msg, 3)
	if _, err := r.Submit(1); err != nil {
		t.Fatal(err)
	}
	if n := r.Reap(func(c *CQE) {
		if c.UserData != 3 || int(c.Res) != len(msg) {
			t.Errorf("cqe: %+v", *c)
		}
	}); n != 1 {
		t.Fatalf("%d completions, want 1", n)
	}
	buf := make([]byte, 16)
	n, err := unix.Read(fds[1], buf)
	if err != nil || string(buf[:n]) != string(msg) {
		t.Errorf("read %q, %v", buf[:n], err)
	}
}
