// Package uring is the smallest io_uring there can be for respfloor's loop,
// written over golang.org/x/sys/unix to the kernel's documented ABI
// (include/uapi/linux/io_uring.h): one submission queue, one completion queue,
// and provided-buffer rings registered with IORING_REGISTER_PBUF_RING.
//
// Why not a module: none of the Go io_uring modules considered
// (github.com/pawelgaczynski/giouring, github.com/iceber/iouring-go,
// github.com/godzie44/go-uring) is served by the module proxy this project
// builds from (each answers 403), and the loop needs only a handful of
// operations: multishot accept, multishot receive into a provided-buffer ring,
// send, and one io_uring_enter that both submits and waits.
//
// Terminology, as in the kernel's header:
//   - SQ: the submission queue. The application writes SQEs at its tail and
//     publishes the tail; the kernel consumes them from the head during
//     io_uring_enter.
//   - CQ: the completion queue. The kernel writes CQEs at its tail; the
//     application reads them from the head and publishes the head.
//   - A provided-buffer ring (BufRing): buffers the kernel picks from when a
//     receive carries IOSQE_BUFFER_SELECT. The CQE names the buffer it used
//     (flags>>16); the application hands it back with Recycle and Publish.
//
// A Ring is owned by one goroutine locked to its OS thread (the ring is set
// up with IORING_SETUP_SINGLE_ISSUER and IORING_SETUP_DEFER_TASKRUN, which
// require that completions are reaped by the thread that submits).
//
// All shared queue memory is mmap'd from the kernel, never the Go heap. A
// buffer given to a send is Go memory: the caller keeps it referenced and
// unchanged until the send's completion is reaped (the Go heap does not move
// objects, so its address stays valid).
package uring
