//go:build linux

package uring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bufReg is struct io_uring_buf_reg (40 bytes).
type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// ringBuf is struct io_uring_buf (16 bytes). The ring's tail is the resv
// field of its first entry (struct io_uring_buf_ring).
type ringBuf struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

// BufRing is a provided-buffer ring: count buffers of size bytes each, in
// one anonymous mapping, that the kernel picks from for receives in its
// group.
type BufRing struct {
	ring    *Ring
	group   uint16
	size    int
	mask    uint16
	tail    uint16 // our tail, published by Publish
	entries []ringBuf
	ringMem []byte
	bufMem  []byte
}

// RegisterBufRing registers a provided-buffer ring of count buffers (a power
// of two, at most 32768) of size bytes each as group, with every buffer
// handed to the kernel.
func (r *Ring) RegisterBufRing(group uint16, count, size int) (*BufRing, error) {
	if count <= 0 || count > 1<<15 || count&(count-1) != 0 {
		return nil, fmt.Errorf("uring: buffer ring of %d entries: not a power of two up to 32768", count)
	}
	ringMem, err := unix.Mmap(-1, 0, count*int(unsafe.Sizeof(ringBuf{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("uring: mmap buffer ring: %w", err)
	}
	bufMem, err := unix.Mmap(-1, 0, count*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		unix.Munmap(ringMem)
		return nil, fmt.Errorf("uring: mmap buffers: %w", err)
	}
	b := &BufRing{
		ring: r, group: group, size: size, mask: uint16(count - 1),
		// Safety: ringMem is page-aligned and holds count entries; it lives until Close.
		entries: unsafe.Slice((*ringBuf)(unsafe.Pointer(&ringMem[0])), count),
		ringMem: ringMem, bufMem: bufMem,
	}
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&ringMem[0]))), ringEntries: uint32(count), bgid: group}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	if errno != 0 {
		unix.Munmap(ringMem)
		unix.Munmap(bufMem)
		if errno == unix.EINVAL {
			return nil, fmt.Errorf("%w: IORING_REGISTER_PBUF_RING: %v", ErrUnavailable, errno)
		}
		return nil, fmt.Errorf("uring: IORING_REGISTER_PBUF_RING: %w", errno)
	}
	for i := range count {
		b.Recycle(uint16(i))
	}
	b.Publish()
	return b, nil
}

// Buf returns buffer id's memory, all size bytes of it.
func (b *BufRing) Buf(id uint16) []byte {
	off := int(id) * b.size
	return b.bufMem[off : off+b.size : off+b.size]
}

// Recycle queues buffer id to be handed back to the kernel at the next Publish.
// The caller must be done with its bytes.
func (b *BufRing) Recycle(id uint16) {
	e := &b.entries[b.tail&b.mask]
	e.addr = uint64(uintptr(unsafe.Pointer(&b.bufMem[int(id)*b.size])))
	e.len = uint32(b.size)
	e.bid = id
	b.tail++
}

// Publish hands the recycled buffers to the kernel.
func (b *BufRing) Publish() {
	// Safety: the tail is the resv field of entry 0 (offset 14), a uint16
	// the kernel reads with smp_load_acquire; the entries written by
	// Recycle become visible with it. Go has no 16-bit atomic store, so
	// store the aligned 32-bit word holding bid and resv, keeping bid.
	word := (*uint32)(unsafe.Pointer(&b.entries[0].bid))
	atomic.StoreUint32(word, uint32(b.entries[0].bid)|uint32(b.tail)<<16)
}

// Close unregisters the ring and unmaps its memory. The ring's receives must
// be finished.
func (b *BufRing) Close() error {
	reg := bufReg{bgid: b.group}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(b.ring.fd), unregisterPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	unix.Munmap(b.ringMem)
	unix.Munmap(b.bufMem)
	if errno != 0 {
		return fmt.Errorf("uring: IORING_UNREGISTER_PBUF_RING: %w", errno)
	}
	return nil
}
