// Package resp is the server's side of the Redis protocol: a request reader
// that checks every size a client announces where the bytes arrive, before
// anything is allocated for them, and a reply writer that buffers a
// pipeline's replies for one write, in RESP2 or, after HELLO 3, RESP3.
// Requests are the same in both protocols; only replies differ.
//
// # Reading
//
// A Reader keeps the bytes received and not yet consumed, and the state of
// the request being parsed: how many arguments it announced, the offsets of
// those already complete, where parsing resumes. Next parses only bytes it
// has not parsed before and returns a complete request, or nil when more
// must arrive; Fill reads once. So a request split into one-byte reads costs
// linear time and constant stack, and the buffer grows by doubling as bytes
// arrive, never by what a header announces: memory stays within twice what
// the client sent, and within Limits.QueryBuffer. It starts at 4 KiB, which
// a client of single requests or short pipelines never outgrows.
//
// Limits are Redis's: a client that must still authenticate may send at most
// 10 arguments of 16 KiB (Redis 6.2.6 on); any other at most Limits.MaxArgs
// arguments of Limits.MaxBulk bytes. A malformed or oversized request is a
// ProtocolError with Redis's text; the server answers it and closes the
// connection. Inline requests (a line of words, as telnet sends) follow
// Redis's quoting rules and are bounded at 64 KiB.
//
// Invariants: the arguments Next returns alias the buffer until the next
// Fill, the only call that moves or drops bytes; a request is never parsed
// twice.
//
// It may import internal/quoted (inline requests' quoting) and nothing else
// of the server's; package server imports it.
//
// # Limits at the door
//
// Every size a client announces is checked when its header arrives, before
// anything is allocated for it, as Redis does (the server's Limits, this
// package's Reader): a client that must
// still authenticate may send at most 10 arguments of 16 KiB; any other at
// most MaxArgs arguments of MaxBulk bytes (proto-max-bulk-len), and at most
// QueryBuffer bytes pending (client-query-buffer-limit). Buffers grow by
// doubling as bytes arrive, never by what a header announces, and parsing
// resumes where it stopped, so a request trickled one byte at a time costs
// linear time, constant stack and memory in proportion to what arrived.
// Items and keys are held to MaxItem; dump chunks (CF.LOADCHUNK's data) only
// to MaxBulk. The server's Timeout closes a connection silent for that long; its Shutdown
// wakes every blocked read, so it completes whatever requests are half-read.
package resp
