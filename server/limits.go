package server

import (
	"github.com/cuckoohash/cuckoo/server/internal/conf"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// The client limits' values, their syntax and defaults are package
// internal/limits, their place in a Config package internal/conf; this
// file gives them their public names.

// Limits bound what one client can make the server do (package
// internal/conf documents each).
type Limits = conf.Limits

// readLimits is the part of l a connection's request reader checks.
func readLimits(l *Limits) resp.Limits {
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
type OutputBufferLimits = conf.OutputBufferLimits

// The client classes of client-output-buffer-limit, in Redis's order.
const (
	classNormal  = limits.ClassNormal
	classReplica = limits.ClassReplica
	classPubSub  = limits.ClassPubSub
)

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
