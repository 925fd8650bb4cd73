//go:build linux

package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Opcodes, SQE and CQE flags and setup flags, from include/uapi/linux/io_uring.h.
const (
	OpNop    = 0
	OpAccept = 13
	OpClose  = 19
	OpSend   = 26
	OpRecv   = 27

	sqeBufferSelect = 1 << 5 // IOSQE_BUFFER_SELECT

	acceptMultishot = 1 << 0 // IORING_ACCEPT_MULTISHOT, in sqe.ioprio
	recvMultishot   = 1 << 1 // IORING_RECV_MULTISHOT, in sqe.ioprio

	CQEFBuffer  = 1 << 0 // IORING_CQE_F_BUFFER: flags>>16 is the buffer id
	CQEFMore    = 1 << 1 // IORING_CQE_F_MORE: the multishot request stays armed
	cqeBufShift = 16     // IORING_CQE_BUFFER_SHIFT

	setupCQSize       = 1 << 3  // IORING_SETUP_CQSIZE
	setupSubmitAll    = 1 << 7  // IORING_SETUP_SUBMIT_ALL
	setupCoopTaskrun  = 1 << 8  // IORING_SETUP_COOP_TASKRUN
	setupSingleIssuer = 1 << 12 // IORING_SETUP_SINGLE_ISSUER
	setupDeferTaskrun = 1 << 13 // IORING_SETUP_DEFER_TASKRUN

	featSingleMmap = 1 << 0 // IORING_FEAT_SINGLE_MMAP

	enterGetEvents = 1 << 0 // IORING_ENTER_GETEVENTS

	registerPbufRing   = 22 // IORING_REGISTER_PBUF_RING
	unregisterPbufRing = 23 // IORING_UNREGISTER_PBUF_RING

	offSQRing = 0          // IORING_OFF_SQ_RING
	offCQRing = 0x8000000  // IORING_OFF_CQ_RING
	offSQEs   = 0x10000000 // IORING_OFF_SQES
)

// SQE is struct io_uring_sqe (64 bytes), with the unions named for the
// members this package uses.
type SQE struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	OpFlags     uint32 // rw_flags, accept_flags, msg_flags...
	UserData    uint64
	BufGroup    uint16 // buf_index or buf_group
	Personality uint16
	SpliceFdIn  int32
	Addr3       uint64
	_           uint64
}

// CQE is struct io_uring_cqe (16 bytes, rings not set up with CQE32).
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// BufID is the provided buffer the completion used; valid if Flags has CQEFBuffer.
func (c *CQE) BufID() uint16 { return uint16(c.Flags >> cqeBufShift) }

type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// params is struct io_uring_params (120 bytes).
type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqOffsets
	cqOff                                                                  cqOffsets
}

// Ring is one io_uring instance. See the package doc for who may use it.
type Ring struct {
	fd int

	sqMem, cqMem, sqeMem []byte
	sqHead, sqTail       *uint32 // shared with the kernel
	sqMask               uint32
	sqEntries            uint32
	sqes                 []SQE
	sqLocal              uint32 // our tail, published by Submit
	sqFlushed            uint32 // the tail at the last publish

	cqHead, cqTail *uint32 // shared with the kernel
	cqMask         uint32
	cqes           []CQE
}

// ErrUnavailable is returned by New when the kernel refuses io_uring
// (ENOSYS, EPERM from io_uring_disabled or seccomp) or a feature the loop needs.
var ErrUnavailable = errors.New("uring: io_uring unavailable")

// New sets up a ring of entries submission slots and 4*entries completion
// slots for a single issuer. The caller must be locked to its OS thread
// (runtime.LockOSThread) for the life of the ring.
func New(entries uint32) (*Ring, error) {
	p := params{
		flags:     setupCQSize | setupSubmitAll | setupCoopTaskrun | setupSingleIssuer | setupDeferTaskrun,
		cqEntries: 4 * entries,
	}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		if errno == unix.ENOSYS || errno == unix.EPERM || errno == unix.EINVAL {
			return nil, fmt.Errorf("%w: io_uring_setup: %v", ErrUnavailable, errno)
		}
		return nil, fmt.Errorf("uring: io_uring_setup: %w", errno)
	}
	r := &Ring{fd: int(fd)}
	if p.features&featSingleMmap == 0 {
		r.Close()
		return nil, fmt.Errorf("%w: no IORING_FEAT_SINGLE_MMAP", ErrUnavailable)
	}
	sqSize := p.sqOff.array + p.sqEntries*4
	cqSize := p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(CQE{}))
	size := max(sqSize, cqSize)
	var err error
	r.sqMem, err = unix.Mmap(r.fd, offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("uring: mmap rings: %w", err)
	}
	r.cqMem = r.sqMem // IORING_FEAT_SINGLE_MMAP: one mapping holds both rings
	r.sqeMem, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(SQE{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("uring: mmap sqes: %w", err)
	}
	// Safety: the offsets come from the kernel and lie inside the mappings
	// just made, whose lengths were computed from the same offsets; the
	// mappings live until Close.
	r.sqHead = (*uint32)(unsafe.Pointer(&r.sqMem[p.sqOff.head]))
	r.sqTail = (*uint32)(unsafe.Pointer(&r.sqMem[p.sqOff.tail]))
	r.sqMask = *(*uint32)(unsafe.Pointer(&r.sqMem[p.sqOff.ringMask]))
	r.sqEntries = p.sqEntries
	array := unsafe.Slice((*uint32)(unsafe.Pointer(&r.sqMem[p.sqOff.array])), p.sqEntries)
	for i := range array {
		array[i] = uint32(i) // slot i always holds SQE i, as liburing does
	}
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Pointer(&r.cqMem[p.cqOff.head]))
	r.cqTail = (*uint32)(unsafe.Pointer(&r.cqMem[p.cqOff.tail]))
	r.cqMask = *(*uint32)(unsafe.Pointer(&r.cqMem[p.cqOff.ringMask]))
	r.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&r.cqMem[p.cqOff.cqes])), p.cqEntries)
	r.sqLocal = atomic.LoadUint32(r.sqTail)
	r.sqFlushed = r.sqLocal
	return r, nil
}

// Close unmaps the rings and closes the ring's descriptor, which cancels
// every request still in flight.
func (r *Ring) Close() error {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
	}
	if r.sqMem != nil {
		unix.Munmap(r.sqMem)
	}
	r.sqMem, r.cqMem, r.sqeMem = nil, nil, nil
	return unix.Close(r.fd)
}

// GetSQE returns the next free submission slot, zeroed, or nil if the queue
// is full (then Submit, and ask again).
func (r *Ring) GetSQE() *SQE {
	head := atomic.LoadUint32(r.sqHead)
	if r.sqLocal-head >= r.sqEntries {
		return nil
	}
	s := &r.sqes[r.sqLocal&r.sqMask]
	r.sqLocal++
	*s = SQE{}
	return s
}

// Submit publishes the queued SQEs and calls io_uring_enter once, waiting for
// at least wait completions. It returns the number of SQEs the kernel consumed.
// EINTR (a Go preemption signal) is retried.
func (r *Ring) Submit(wait uint32) (int, error) {
	// Publish the tail last: the kernel reads the SQEs written above once it
	// sees the new tail.
	atomic.StoreUint32(r.sqTail, r.sqLocal)
	n := r.sqLocal - r.sqFlushed
	r.sqFlushed = r.sqLocal
	var flags uintptr
	if wait > 0 {
		flags = enterGetEvents
	}
	for {
		got, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), uintptr(wait), flags, 0, 0)
		if errno == unix.EINTR {
			n = 0 // the SQEs were consumed before the wait was interrupted
			continue
		}
		if errno != 0 {
			return 0, fmt.Errorf("uring: io_uring_enter: %w", errno)
		}
		return int(got), nil
	}
}

// Reap calls f for each completion ready now, in order, then hands their
// slots back to the kernel. It returns how many there were. f must not keep
// the *CQE.
func (r *Ring) Reap(f func(*CQE)) int {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail) // the CQEs up to tail are written once tail is seen
	for i := head; i != tail; i++ {
		f(&r.cqes[i&r.cqMask])
	}
	atomic.StoreUint32(r.cqHead, tail) // the kernel may reuse the slots from now
	return int(tail - head)
}

// PrepAcceptMultishot makes s a multishot accept on the listening socket fd:
// one CQE for each connection, res the new descriptor, until a CQE comes
// without CQEFMore.
func (s *SQE) PrepAcceptMultishot(fd int, userData uint64) {
	s.Opcode, s.Fd, s.Ioprio, s.UserData = OpAccept, int32(fd), acceptMultishot, userData
	s.OpFlags = unix.SOCK_CLOEXEC
}

// PrepRecvMultishot makes s a multishot receive on fd into buffers picked
// from the provided-buffer ring group: one CQE for each receive, res the
// length and BufID the buffer, until a CQE comes without CQEFMore (res 0 at
// end of stream, -ENOBUFS when the group ran out of buffers).
func (s *SQE) PrepRecvMultishot(fd int, group uint16, userData uint64) {
	s.Opcode, s.Fd, s.Ioprio, s.UserData = OpRecv, int32(fd), recvMultishot, userData
	s.Flags = sqeBufferSelect
	s.BufGroup = group
}

// PrepSend makes s a send of b on fd. b must stay referenced and unchanged
// until the completion is reaped; res is the count sent, which may be short.
func (s *SQE) PrepSend(fd int, b []byte, userData uint64) {
	s.Opcode, s.Fd, s.UserData = OpSend, int32(fd), userData
	s.Addr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	s.Len = uint32(len(b))
	s.OpFlags = unix.MSG_NOSIGNAL
}

// PrepNop makes s a no-op: one CQE with res 0.
func (s *SQE) PrepNop(userData uint64) {
	s.Opcode, s.UserData = OpNop, userData
}
