package conf

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
	"github.com/cuckoohash/cuckoo/server/internal/metrics"
	"github.com/cuckoohash/cuckoo/server/internal/tlsconf"
)

// Config configures a server (package server's New). The zero Config is an
// in-memory server with no password and default limits. Each field is a
// setting of the table (table.go) but Repair, ConfigFile, Logger and
// Metrics, which only a program sets.
type Config struct {
	// Dir is the data directory (snapshot and log). Empty: no persistence.
	Dir string
	// AppendFsync is when the log is flushed to disk (appendfsync):
	// keyspace.FsyncEverysec (the zero value), FsyncAlways or FsyncNo.
	AppendFsync keyspace.FsyncMode
	// Repair lets startup go on past damaged files instead of refusing to
	// start: a log is cut at its first bad record, a damaged snapshot is
	// replaced by the previous generation and its logs, and logs with no
	// snapshot under them are replayed alone (see keyspace's doc.go).
	Repair bool
	// RequirePass is the default user's password (Redis's requirepass): if
	// set, every command but AUTH (and HELLO, QUIT) answers NOAUTH until the
	// client authenticates.
	RequirePass string
	// ACLFile, if set, holds the users (ACL SAVE writes it, ACL LOAD reads
	// it): loaded at start, after RequirePass, if it exists.
	ACLFile string
	// ReplicaOf, "host port", makes the server a replica of that primary
	// from the start (REPLICAOF at runtime).
	ReplicaOf string
	// MasterUser and MasterAuth are what a replica authenticates to its
	// primary with (masteruser, masterauth).
	MasterUser, MasterAuth string
	// ReplBacklogSize is the bytes of stream a primary keeps for replicas
	// that reconnect (repl-backlog-size); 0 means 1 MiB.
	ReplBacklogSize int64
	// ReplicaPriority is what INFO reports as slave_priority for Sentinel
	// (replica-priority: the lowest is promoted first, 0 never). 0 means
	// the default, 100; a negative value means 0.
	ReplicaPriority int
	// MinReplicasToWrite is Redis's min-replicas-to-write: a primary with
	// fewer good replicas refuses writes with NOREPLICAS; 0, the default,
	// never refuses.
	MinReplicasToWrite int
	// MinReplicasMaxLag is min-replicas-max-lag: a replica is good while
	// its last acknowledgement is at most this many seconds old. 0 means
	// the default, 10; a negative value means 0, which turns the refusal
	// off, as in Redis.
	MinReplicasMaxLag int
	// MaxMemory bounds the bytes of all filters and of what clients hold
	// (their requests, replies and transactions, as Redis's used_memory
	// counts them; replicas' links aside); 0 means no limit. A write that
	// would exceed it answers "ERR Insufficient memory".
	MaxMemory int64
	// MaxFilterMemory bounds the bytes of one filter, so that no single
	// command (a CF.RESERVE, a CF.LOADCHUNK header) can ask for more than
	// the machine has, even with no MaxMemory. 0 means the machine's
	// physical memory.
	MaxFilterMemory int64
	// SnapshotLogSize is the log size that triggers a snapshot and log
	// truncation; 0 means 64 MiB, negative means only on SAVE and shutdown.
	SnapshotLogSize int64
	// FilterDefaults are the cf-* settings: the parameters of filters
	// created without them; zero fields take RedisBloom's defaults.
	FilterDefaults cf.Defaults
	// Limits bound what one client may send; zero fields take defaults.
	Limits Limits
	// TLS is the tls-* settings the server's ServeTLS serves with; New
	// loads their files if they name a certificate or a key.
	TLS tlsconf.Settings
	// ClusterEnabled turns cluster mode on (cluster-enabled): the Redis
	// Cluster protocol, with the topology set by CUCKOO.CLUSTER SETCONFIG
	// and kept in the data directory's cluster.json (internal/cluster). The node
	// starts owning no slots.
	ClusterEnabled bool
	// ClusterEmulated is cluster mode with this node owning all 16384
	// slots alone, so that cluster clients work against one server.
	ClusterEmulated bool
	// EnableDebugCommand is Redis's enable-debug-command: DebugCommandNo
	// (the zero value: DEBUG is refused), DebugCommandYes, or
	// DebugCommandLocal (from a loopback address only).
	EnableDebugCommand DebugCommand
	// ConfigFile is the file the settings were read from (ReadFile),
	// which CONFIG REWRITE writes back; "" answers it with an error.
	ConfigFile string
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
	// Metrics, if not nil, is updated by the server (package internal/metrics).
	Metrics *metrics.Metrics
}

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
	// defaults, which set no limit for normal clients.
	OutputBuffer OutputBufferLimits
	// MaxMemoryClients bounds the memory of all clients together
	// (maxmemory-clients): requests not yet run, replies not yet sent,
	// transactions queued, messages waiting for a subscriber. Past it the
	// clients holding the most are closed (evicted) until the rest are
	// under it; CLIENT NO-EVICT on exempts one, and replicas are never
	// evicted. 0 means no limit; see limits.MemoryOrPercent for a percentage of
	// MaxMemory.
	MaxMemoryClients limits.MemoryOrPercent
}

// WithDefaults returns l with its zero fields, and its OutputBuffer's nil
// classes, set to their defaults.
func (l Limits) WithDefaults() Limits {
	l.MaxClients = limits.Or(l.MaxClients, limits.DefaultMaxClients)
	l.MaxBulk = limits.Or(l.MaxBulk, limits.DefaultMaxBulk)
	l.QueryBuffer = limits.Or(l.QueryBuffer, limits.DefaultQueryBuffer)
	l.MaxArgs = limits.Or(l.MaxArgs, limits.DefaultMaxArgs)
	l.MaxItem = limits.Or(l.MaxItem, limits.DefaultMaxItem)
	l.OutputBuffer = l.OutputBuffer.WithDefaults()
	return l
}

// OutputBufferLimits are client-output-buffer-limit's classes, as Redis's:
// Normal for ordinary clients, Replica for replicas' links to this primary,
// PubSub for clients with a subscription. A nil class takes Redis's
// default: normal 0 0 0 (no limit), replica 256mb 64mb 60, pubsub 32mb 8mb
// 60.
type OutputBufferLimits limits.OutputBuffer

// Set sets the classes that spec names, as redis.conf and CONFIG SET write
// client-output-buffer-limit: one or more "class hard soft soft-seconds",
// class normal, replica (or slave) or pubsub, sizes with redis.conf's units
// (32mb). The other classes are left as they are; so is every class if
// spec has an error. Set is flag.Value's, so the type can be a flag.
func (l *OutputBufferLimits) Set(spec string) error { return (*limits.OutputBuffer)(l).Set(spec) }

// String is the classes set, as redis.conf writes them: "normal 0 0 0
// pubsub 32mb 8mb 60"; "" if none is.
func (l OutputBufferLimits) String() string { return limits.OutputBuffer(l).String() }

// WithDefaults fills the nil classes with Redis's defaults.
func (l OutputBufferLimits) WithDefaults() OutputBufferLimits {
	return OutputBufferLimits(limits.OutputBuffer(l).WithDefaults())
}

// Get returns class c's limit (limits.ClassNormal, ClassReplica or
// ClassPubSub), Redis's default for a nil one.
func (l *OutputBufferLimits) Get(c int) limits.OutputLimit { return (*limits.OutputBuffer)(l).Get(c) }

// DebugCommand is enable-debug-command: whether DEBUG is allowed. Its
// String is the setting's value.
type DebugCommand int

const (
	DebugCommandNo    DebugCommand = iota // refused (the default)
	DebugCommandYes                       // allowed
	DebugCommandLocal                     // allowed from a loopback address only
)

var debugCommandNames = [...]string{DebugCommandNo: "no", DebugCommandYes: "yes", DebugCommandLocal: "local"}

// String is enable-debug-command's value: no, yes or local.
func (d DebugCommand) String() string {
	if d < 0 || int(d) >= len(debugCommandNames) {
		return "DebugCommand(" + strconv.Itoa(int(d)) + ")"
	}
	return debugCommandNames[d]
}

// ParseDebugCommand reads enable-debug-command's value: no, yes or local;
// anything else is DebugCommandNo (the settings table checks the value
// first).
func ParseDebugCommand(v string) DebugCommand {
	for d, name := range debugCommandNames {
		if v == name {
			return DebugCommand(d)
		}
	}
	return DebugCommandNo
}
