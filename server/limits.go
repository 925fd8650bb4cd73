package server

import (
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/limits"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// The client limits' values, their syntax and defaults are package
// internal/limits; this file gives them their public names in Config.

// Limits bound what one client can make the server do. A request beyond a
// limit is refused before anything is allocated for it; none of them crashes
// or stalls the server. The names in parentheses are Redis's settings.
type Limits struct {
	// MaxClients is the most connections served at once; more are answered
	// "ERR max number of clients reached" and closed (maxclients). 0 means
	// 10000.
	MaxClients int
	// MaxBulk is the longest argument a request may carry, checked when its
	// length arrives (proto-max-bulk-len); a longer one is a protocol
	// error that closes the connection. 0 means 512 MiB.
	MaxBulk int
	// QueryBuffer is the most bytes of unconsumed requests one client may
	// have buffered (client-query-buffer-limit); past it the connection is
	// closed. 0 means 1 GiB.
	QueryBuffer int
	// MaxArgs is the most arguments of one request; more is a protocol
	// error. 0 means 1<<20.
	MaxArgs int
	// MaxItem is the longest item or key a command takes; a longer one is
	// answered with an error. Dump chunks (CF.LOADCHUNK's data) are bounded
	// by MaxBulk only. 0 means 64 KiB.
	MaxItem int
	// Timeout closes a connection that sent nothing for this long, idle or
	// in the middle of a request (timeout). 0 means never.
	Timeout time.Duration
	// OutputBuffer bounds the replies a client has not read yet, by class
	// of client (client-output-buffer-limit); its nil classes take Redis's
	// defaults, which set no limit for normal clients (clientmem.go).
	OutputBuffer OutputBufferLimits
	// MaxMemoryClients bounds the memory of all clients together
	// (maxmemory-clients): requests not yet run, replies not yet sent,
	// transactions queued, messages waiting for a subscriber. Past it the
	// clients holding the most are closed (evicted) until the rest are
	// under it; CLIENT NO-EVICT on exempts one, and replicas are never
	// evicted. 0 means no limit; see MemoryOrPercent for a percentage of
	// MaxMemory.
	MaxMemoryClients MemoryOrPercent
}

func (l Limits) withDefaults() Limits {
	l.MaxClients = limits.Or(l.MaxClients, limits.DefaultMaxClients)
	l.MaxBulk = limits.Or(l.MaxBulk, limits.DefaultMaxBulk)
	l.QueryBuffer = limits.Or(l.QueryBuffer, limits.DefaultQueryBuffer)
	l.MaxArgs = limits.Or(l.MaxArgs, limits.DefaultMaxArgs)
	l.MaxItem = limits.Or(l.MaxItem, limits.DefaultMaxItem)
	l.OutputBuffer = l.OutputBuffer.withDefaults()
	return l
}

func (l Limits) read() resp.Limits {
	return resp.Limits{MaxArgs: l.MaxArgs, MaxBulk: l.MaxBulk, QueryBuffer: l.QueryBuffer}
}

// OutputLimit is client-output-buffer-limit for one class of clients: a
// client whose replies not yet sent reach Hard bytes, or stay at Soft bytes
// or more for longer than SoftSeconds, is closed. A size of 0 is no such
// limit.
type OutputLimit = limits.OutputLimit

// OutputBufferLimits are client-output-buffer-limit's classes, as Redis's:
// Normal for ordinary clients, Replica for replicas' links to this primary,
// PubSub for clients with a subscription. A nil class takes Redis's
// default: normal 0 0 0 (no limit), replica 256mb 64mb 60, pubsub 32mb 8mb
// 60.
type OutputBufferLimits limits.OutputBuffer

// The client classes of client-output-buffer-limit, in Redis's order.
const (
	classNormal  = limits.ClassNormal
	classReplica = limits.ClassReplica
	classPubSub  = limits.ClassPubSub
)

// Set sets the classes that spec names, as redis.conf and CONFIG SET write
// client-output-buffer-limit: one or more "class hard soft soft-seconds",
// class normal, replica (or slave) or pubsub, sizes with redis.conf's units
// (32mb). The other classes are left as they are; so is every class if
// spec has an error. Set is flag.Value's, so the type can be a flag.
func (l *OutputBufferLimits) Set(spec string) error { return (*limits.OutputBuffer)(l).Set(spec) }

// String is the classes set, as redis.conf writes them: "normal 0 0 0
// pubsub 32mb 8mb 60"; "" if none is.
func (l OutputBufferLimits) String() string { return limits.OutputBuffer(l).String() }

// withDefaults fills the nil classes with Redis's defaults.
func (l OutputBufferLimits) withDefaults() OutputBufferLimits {
	return OutputBufferLimits(limits.OutputBuffer(l).WithDefaults())
}

// get returns class c's limit, Redis's default for a nil one.
func (l *OutputBufferLimits) get(c int) OutputLimit { return (*limits.OutputBuffer)(l).Get(c) }

// MemoryOrPercent is maxmemory-clients's value: bytes, or a negative -p
// for p percent of MaxMemory, written "p%" (Redis keeps it the same way).
// A percentage of no MaxMemory is no limit.
type MemoryOrPercent = limits.MemoryOrPercent

// maxFilterMemory returns Config.MaxFilterMemory, or the physical memory for
// 0 (limits.MaxFilterMemory).
func maxFilterMemory(configured int64) uint64 { return limits.MaxFilterMemory(configured) }

// residentBytes returns the process's resident memory, or fallback where
// it cannot be read (limits.ResidentBytes).
func residentBytes(fallback uint64) uint64 { return limits.ResidentBytes(fallback) }
