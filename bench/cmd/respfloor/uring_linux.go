package main

import (
	"fmt"
	"log"
	"net"
	"net/netip"
	"runtime"
	"sync"

	"github.com/cuckoohash/cuckoo/bench/internal/uring"
	"github.com/tidwall/redcon"
	"golang.org/x/sys/unix"
)

// The uring loop: one ring a loop, each with its own SO_REUSEPORT listener,
// on a goroutine locked to its thread. A loop turn is one io_uring_enter
// that submits every send queued since the last turn and waits for a
// completion, then reaps every completion ready:
//
//   - a multishot accept gives each new connection a multishot receive into
//     the loop's provided-buffer ring;
//   - a receive parses every complete command in the buffer (joined to what
//     was left of the connection's last receive), appends the replies to the
//     connection's output and hands the buffer back;
//   - a send completion frees the connection to send what gathered since.
//
// After the reaping, each connection with output and no send in flight gets
// one send, so a turn's replies leave in the next turn's one io_uring_enter.

const (
	uringEntries   = 1024 // submission slots; completions are 4x
	uringBufs      = 1024 // provided buffers a loop
	uringBufSize   = 4096
	uringBufGroup  = 0
	kindAccept     = 1
	kindRecv       = 2
	kindSend       = 3
	userDataKindSh = 56
)

// uconn is one connection's state in its loop.
type uconn struct {
	fd      int
	in      []byte // an incomplete command left from the last receive
	out     []byte // replies gathered since the last send was queued
	sending []byte // the bytes of the send in flight; nil if none
	spare   []byte // the last sent buffer, reused for the next replies
	queued  bool   // in the loop's list of connections with output
	closing bool   // close once the receive and the send are done
	recving bool   // the multishot receive is armed
	args    [][]byte
}

type uringLoop struct {
	ring    *uring.Ring
	bufs    *uring.BufRing
	lfd     int
	conns   map[int]*uconn
	pending []*uconn // connections with output to send at the end of the turn
}

func userData(kind uint64, fd int) uint64 { return kind<<userDataKindSh | uint64(uint32(fd)) }

// listenReusePort opens a listening TCP socket on addr with SO_REUSEPORT,
// so that each loop has its own and the kernel spreads connections.
func listenReusePort(addr netip.AddrPort) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, o := range []int{unix.SO_REUSEADDR, unix.SO_REUSEPORT} {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, o, 1); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Listen(fd, 4096); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// serveUring serves addr (IPv4) with loops io_uring loops. ready, if not
// nil, is called with the bound address once every loop is listening.
func serveUring(addr string, loops int, ready func(net.Addr)) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return fmt.Errorf("uring: listen address %q: want an IPv4 address and port", addr)
	}
	errs := make(chan error, loops)
	var started sync.WaitGroup
	for i := range loops {
		lfd, err := listenReusePort(ap)
		if err != nil {
			return err
		}
		if i == 0 && ap.Port() == 0 { // the others share the port the first was given
			sa, err := unix.Getsockname(lfd)
			if err != nil {
				return err
			}
			ap = netip.AddrPortFrom(ap.Addr(), uint16(sa.(*unix.SockaddrInet4).Port))
		}
		started.Add(1)
		go func() { errs <- runUringLoop(lfd, started.Done) }()
	}
	started.Wait()
	if ready != nil {
		ready(net.TCPAddrFromAddrPort(ap))
	}
	return <-errs
}

// runUringLoop runs one loop on listening socket lfd until a ring error.
// It calls started once the ring is set up (or failed to be).
func runUringLoop(lfd int, started func()) error {
	runtime.LockOSThread() // SINGLE_ISSUER and DEFER_TASKRUN: this thread reaps
	defer runtime.UnlockOSThread()
	ring, err := uring.New(uringEntries)
	if err != nil {
		started()
		return err
	}
	defer ring.Close()
	bufs, err := ring.RegisterBufRing(uringBufGroup, uringBufs, uringBufSize)
	if err != nil {
		started()
		return err
	}
	l := &uringLoop{ring: ring, bufs: bufs, lfd: lfd, conns: make(map[int]*uconn)}
	l.sqe().PrepAcceptMultishot(lfd, userData(kindAccept, lfd))
	started()
	for {
		if _, err := ring.Submit(1); err != nil {
			return err
		}
		ring.Reap(l.complete)
		bufs.Publish()
		for _, c := range l.pending {
			c.queued = false
			l.send(c)
		}
		clear(l.pending)
		l.pending = l.pending[:0]
	}
}

// sqe returns a free submission slot, submitting what is queued if the
// queue is full.
func (l *uringLoop) sqe() *uring.SQE {
	for {
		if s := l.ring.GetSQE(); s != nil {
			return s
		}
		if _, err := l.ring.Submit(0); err != nil {
			log.Print(err)
		}
	}
}

func (l *uringLoop) complete(c *uring.CQE) {
	fd := int(int32(uint32(c.UserData)))
	switch c.UserData >> userDataKindSh {
	case kindAccept:
		if c.Res >= 0 {
			cn := &uconn{fd: int(c.Res), recving: true}
			l.conns[cn.fd] = cn
			l.sqe().PrepRecvMultishot(cn.fd, uringBufGroup, userData(kindRecv, cn.fd))
		} else {
			log.Print("uring: accept: ", unix.Errno(-c.Res))
		}
		if c.Flags&uring.CQEFMore == 0 {
			l.sqe().PrepAcceptMultishot(l.lfd, userData(kindAccept, l.lfd))
		}
	case kindRecv:
		cn := l.conns[fd]
		if c.Flags&uring.CQEFBuffer != 0 {
			id := c.BufID()
			if c.Res > 0 && cn != nil && !cn.closing {
				l.receive(cn, l.bufs.Buf(id)[:c.Res])
			}
			l.bufs.Recycle(id)
		}
		if cn == nil || c.Flags&uring.CQEFMore != 0 {
			return
		}
		if c.Res == -int32(unix.ENOBUFS) && !cn.closing {
			l.sqe().PrepRecvMultishot(fd, uringBufGroup, userData(kindRecv, fd)) // re-arm
			return
		}
		if c.Res > 0 && !cn.closing { // the kernel ended the multishot early
			l.sqe().PrepRecvMultishot(fd, uringBufGroup, userData(kindRecv, fd))
			return
		}
		cn.recving = false // end of stream, an error, or closing
		l.close(cn)
	case kindSend:
		cn := l.conns[fd]
		if cn == nil {
			return
		}
		if c.Res < 0 {
			cn.sending, cn.out = nil, nil
			l.shut(cn)
			return
		}
		if rest := cn.sending[c.Res:]; len(rest) > 0 { // a short send: send the rest first
			cn.sending = rest
			l.sqe().PrepSend(cn.fd, rest, userData(kindSend, cn.fd))
			return
		}
		cn.spare, cn.sending = cn.sending[:0], nil
		if len(cn.out) > 0 {
			l.queue(cn)
		} else if cn.closing {
			l.close(cn)
		}
	}
}

// receive parses every complete command in b, after what was left in cn.in,
// and gathers the replies in cn.out.
func (l *uringLoop) receive(cn *uconn, b []byte) {
	if len(cn.in) > 0 {
		cn.in = append(cn.in, b...)
		b = cn.in
	}
	n0 := len(cn.out)
	for {
		complete, args, _, rest, err := redcon.ReadNextCommand(b, cn.args[:0])
		if err != nil {
			cn.out = append(cn.out, "-ERR "+err.Error()+"\r\n"...)
			cn.in = cn.in[:0]
			l.queue(cn)
			l.shut(cn) // answer the protocol error, then close
			return
		}
		if !complete {
			break
		}
		cn.args, b = args, rest
		cn.out = appendReply(cn.out, args)
	}
	cn.in = append(cn.in[:0], b...) // b may alias cn.in; append copies forward
	if len(cn.out) > n0 {
		l.queue(cn)
	}
}

// queue marks cn to send its output at the end of the turn.
func (l *uringLoop) queue(cn *uconn) {
	if !cn.queued {
		cn.queued = true
		l.pending = append(l.pending, cn)
	}
}

// send queues one send of cn's output if none is in flight. The sent bytes
// stay referenced by cn.sending until the send completes.
func (l *uringLoop) send(cn *uconn) {
	if cn.sending != nil || len(cn.out) == 0 {
		return
	}
	cn.sending, cn.out, cn.spare = cn.out, cn.spare, nil
	l.sqe().PrepSend(cn.fd, cn.sending, userData(kindSend, cn.fd))
}

// shut stops cn's receive (shutdown makes it complete) and closes it once
// its last send is done.
func (l *uringLoop) shut(cn *uconn) {
	if !cn.closing {
		cn.closing = true
		unix.Shutdown(cn.fd, unix.SHUT_RD)
	}
	l.close(cn)
}

// close closes cn once nothing is in flight on it and its last replies are
// sent, so that no completion for its descriptor can arrive after the number
// is reused.
func (l *uringLoop) close(cn *uconn) {
	cn.closing = true
	if cn.recving || cn.sending != nil || len(cn.out) > 0 {
		return
	}
	delete(l.conns, cn.fd)
	unix.Close(cn.fd)
}
