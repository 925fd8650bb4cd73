package server

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/config"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
	"github.com/cuckoohash/cuckoo/server/internal/repl"
	"github.com/cuckoohash/cuckoo/server/internal/settings"
	"github.com/cuckoohash/cuckoo/server/internal/tlsconf"
	"github.com/tidwall/match"
)

// CONFIG GET/SET/REWRITE/RESETSTAT/HELP, and the configuration file of
// cuckoo serve --config: one table of settings (settingsTable), each with its
// Redis name, type and range, whether CONFIG SET may change it, how to read
// it and how to apply it.
//
// Protocol. The settings in force are conf.st, guarded by conf.mu, which
// also serialises CONFIG SET and CONFIG REWRITE. The paths that read a
// setting on every request do not take conf.mu: each reads an atomic that
// publish stores after conf.st changes (the password, the client limits,
// store.maxmem, cfDefaults). A CONFIG SET of several settings is all or
// none: every value is checked before any is applied, and then each atomic
// is stored in turn, so a concurrent request may see some of the new values
// a moment before the others.

// configCommands binds this file's commands to their rows of Redis's table, by name.
func configCommands() (b []binding) {
	b = append(b, binding{name: "config|get", run: cmdConfigGet})
	b = append(b, binding{name: "config|set", run: cmdConfigSet})
	b = append(b, binding{name: "config|rewrite", run: cmdConfigRewrite})
	b = append(b, binding{name: "config|resetstat", run: cmdConfigResetstat})
	b = append(b, binding{name: "config|help", run: func(s *Server, cl *client, a [][]byte) { command.WriteHelp(cl.wr, configHelp) }})
	return b
}

// setting is one row of the table (package internal/settings: its kinds,
// parsing, lines and flags), bound to a server and its settings.
type setting = settings.Setting[*Server, configState]

// configState is what the table reads and writes: a Config, and what a
// Config does not hold.
type configState struct {
	cfg     Config
	save    string // as given, pairs of numbers; "" turns automatic snapshots off
	bind    string // the file's, for cuckoo serve; a server reports its listener's
	port    int64  // the file's, -1 if none
	tlsPort int64  // the file's, -1 if none
}

// newConfigState returns the settings of a server started with cfg: Config's
// zero fields take the defaults they mean.
func newConfigState(cfg Config) configState {
	st := configState{cfg: cfg, save: defaultSave, port: -1, tlsPort: -1}
	if st.cfg.ReplicaPriority == 0 {
		st.cfg.ReplicaPriority = 100 // Config's zero value (see ReplicaPriority)
	}
	if st.cfg.MinReplicasMaxLag == 0 {
		st.cfg.MinReplicasMaxLag = repl.DefaultMinReplicasMaxLag // Config's zero value
	}
	st.cfg.Limits = cfg.Limits.withDefaults()
	st.cfg.FilterDefaults = cfg.FilterDefaults.WithDefaults()
	if cfg.SnapshotLogSize < 0 {
		st.save = ""
	}
	return st
}

// defaultSave is Redis 7's save schedule. This server snapshots when its log
// passes snapshot-log-size, not on a schedule: save only turns that on (any
// schedule) or off ("").
const defaultSave = "3600 1 300 100 60 10000"

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

var settingsTable = settings.Table[*Server, configState]{
	{Name: "bind", Doc: "the address to listen on (cuckoo serve's flag: --addr)", NoFlag: true, Kind: settings.Bind, Def: "127.0.0.1",
		Get: func(s *Server, st *configState) string { h, _ := s.listenAddr(false); return h },
		Set: func(st *configState, v settings.Value) { st.bind = v.S }},
	{Name: "port", Doc: "the plain listener's port; 0 turns it off (cuckoo serve's flag: --port, or the port of --addr)", NoFlag: true, Kind: settings.Int, Lo: 0, Hi: 65535, Def: "6379",
		Get: func(s *Server, st *configState) string { _, p := s.listenAddr(false); return p },
		Set: func(st *configState, v settings.Value) { st.port = v.N }},
	{Name: "tls-port", Doc: "the TLS listener's port; 0 for none (cuckoo serve's flags: --tls-port, --tls-addr)", NoFlag: true, Kind: settings.Int, Lo: 0, Hi: 65535, Def: "0",
		Get: func(s *Server, st *configState) string { _, p := s.listenAddr(true); return p },
		Set: func(st *configState, v settings.Value) { st.tlsPort = v.N }},
	{Name: "tls-cert-file", Doc: "the server's certificate chain, PEM `file`", Kind: settings.String, Mutable: true, Def: "",
		Get: func(s *Server, st *configState) string { return st.cfg.TLS.CertFile },
		Set: func(st *configState, v settings.Value) { st.cfg.TLS.CertFile = v.S }},
	{Name: "tls-key-file", Doc: "the private key of tls-cert-file, PEM `file`", Kind: settings.String, Mutable: true, Def: "",
		Get: func(s *Server, st *configState) string { return st.cfg.TLS.KeyFile },
		Set: func(st *configState, v settings.Value) { st.cfg.TLS.KeyFile = v.S }},
	{Name: "tls-ca-cert-file", Doc: "the CAs that sign clients' certificates, PEM `file`", Kind: settings.String, Mutable: true, Def: "",
		Get: func(s *Server, st *configState) string { return st.cfg.TLS.CACertFile },
		Set: func(st *configState, v settings.Value) { st.cfg.TLS.CACertFile = v.S }},
	{Name: "tls-auth-clients", Doc: "client certificates: `yes` (required), optional (verified if given) or no (not asked for)", Kind: settings.Enum, Enum: []string{"yes", "no", "optional"}, Mutable: true, Def: "yes",
		Get: func(s *Server, st *configState) string { return st.cfg.TLS.AuthClients.String() },
		Set: func(st *configState, v settings.Value) { st.cfg.TLS.AuthClients, _ = tlsconf.ParseAuthClients(v.S) }},
	{Name: "tls-client-cert-file", Doc: "the certificate, PEM `file`, presented to other nodes (default tls-cert-file)", Kind: settings.String, Mutable: true, Def: "",
		Get: func(s *Server, st *configState) string { return st.cfg.TLS.ClientCertFile },
		Set: func(st *configState, v settings.Value) { st.cfg.TLS.ClientCertFile = v.S }},
	{Name: "tls-client-key-file", Doc: "the private key of tls-client-cert-file, PEM `file`", Kind: settings.String, Mutable: true, Def: "",
		Get: func(s *Server, st *configState) string { return st.cfg.TLS.ClientKeyFile },
		Set: func(st *configState, v settings.Value) { st.cfg.TLS.ClientKeyFile = v.S }},
	{Name: "tls-replication", Doc: "a replica connects to its primary over TLS", Kind: settings.Enum, Enum: []string{"yes", "no"}, Mutable: true, Def: "no",
		Get: func(s *Server, st *configState) string { return settings.YesNo(st.cfg.TLS.Replication) },
		Set: func(st *configState, v settings.Value) { st.cfg.TLS.Replication = v.S == "yes" }},
	{Name: "tls-cluster", Doc: "MIGRATE connects to its target node over TLS", Kind: settings.Enum, Enum: []string{"yes", "no"}, Mutable: true, Def: "no",
		Get: func(s *Server, st *configState) string { return settings.YesNo(st.cfg.TLS.Cluster) },
		Set: func(st *configState, v settings.Value) { st.cfg.TLS.Cluster = v.S == "yes" }},
	{Name: "dir", Doc: "data `directory` (snapshot and append-only log); empty for none", Kind: settings.String, Def: "",
		Get: func(s *Server, st *configState) string { return st.cfg.Dir },
		Set: func(st *configState, v settings.Value) { st.cfg.Dir = v.S }},
	{Name: "appendonly", Doc: "yes whenever dir is set: every write is logged (fixed; no flag)", NoFlag: true, Kind: settings.Enum, Enum: []string{"yes", "no"}, Def: "no",
		Get: func(s *Server, st *configState) string { return settings.YesNo(st.cfg.Dir != "") },
		Set: func(st *configState, v settings.Value) {},
		Check: func(v settings.Value) string {
			if v.S == "no" {
				return `every write is logged when dir is set; set dir to "" for no persistence`
			}
			return ""
		}},
	{Name: "appendfsync", Doc: "when the log is flushed to disk: `always` (before each reply), everysec or no", Kind: settings.Enum, Enum: []string{"always", "everysec", "no"}, Def: "everysec",
		Get: func(s *Server, st *configState) string { return st.cfg.AppendFsync.String() },
		Set: func(st *configState, v settings.Value) { st.cfg.AppendFsync, _ = keyspace.ParseFsync(v.S) }},
	{Name: "save", Doc: "`schedule`: \"\" turns automatic snapshots off; any schedule turns them on (taken when the log passes snapshot-log-size)", Kind: settings.Save, Def: defaultSave,
		Get: func(s *Server, st *configState) string { return st.save },
		Set: func(st *configState, v settings.Value) { st.save = v.S }},
	{Name: "snapshot-log-size", Doc: "snapshot and truncate the log when it exceeds this many `bytes` (-1: never)", Kind: settings.Memory, Lo: -1, Hi: math.MaxInt64, Def: itoa(defaultSnapshotLogSize),
		Get: func(s *Server, st *configState) string {
			if st.cfg.SnapshotLogSize <= 0 {
				return itoa(defaultSnapshotLogSize)
			}
			return itoa(st.cfg.SnapshotLogSize)
		},
		Set: func(st *configState, v settings.Value) {
			st.cfg.SnapshotLogSize = v.N
			switch {
			case v.N < 0:
				st.save = "" // never, as save "" says
			case st.save == "":
				st.save = defaultSave // a size turns snapshots on
			}
		},
		Check: func(v settings.Value) string {
			if v.N == 0 {
				return "give a size (such as 64mb), or -1 for never"
			}
			return ""
		}},
	{Name: "databases", Doc: "1: the server has one database (fixed; no flag)", NoFlag: true, Kind: settings.Int, Lo: 1, Hi: 1, Def: "1",
		Get: func(s *Server, st *configState) string { return "1" },
		Set: func(st *configState, v settings.Value) {}},
	{Name: "requirepass", Doc: "the default user's `password`, which clients must AUTH with", Kind: settings.String, Mutable: true, Def: "",
		Get: func(s *Server, st *configState) string { return st.cfg.RequirePass },
		Set: func(st *configState, v settings.Value) { st.cfg.RequirePass = v.S }},
	{Name: "replicaof", Doc: "start as a replica of this primary: \"`host port`\" (REPLICAOF at runtime)", Kind: settings.String, Def: "",
		Get: func(s *Server, st *configState) string { return s.replicaOfSetting() },
		Set: func(st *configState, v settings.Value) { st.cfg.ReplicaOf = v.S }},
	{Name: "masteruser", Doc: "the `user` a replica authenticates to its primary as (with masterauth)", Kind: settings.String, Mutable: true, Def: "",
		Get: func(s *Server, st *configState) string { return st.cfg.MasterUser },
		Set: func(st *configState, v settings.Value) { st.cfg.MasterUser = v.S }},
	{Name: "masterauth", Doc: "the `password` a replica authenticates to its primary with", Kind: settings.String, Mutable: true, Def: "",
		Get: func(s *Server, st *configState) string { return st.cfg.MasterAuth },
		Set: func(st *configState, v settings.Value) { st.cfg.MasterAuth = v.S }},
	{Name: "repl-backlog-size", Doc: "`bytes` of the replication stream kept for replicas that reconnect", Kind: settings.Memory, Lo: 16 << 10, Hi: math.MaxInt64, Def: itoa(repl.DefaultBacklog),
		Get: func(s *Server, st *configState) string { return itoa(s.repl.BacklogSize()) },
		Set: func(st *configState, v settings.Value) { st.cfg.ReplBacklogSize = v.N }},
	{Name: "replica-priority", Doc: "`priority`: Sentinel promotes the replica of lowest priority first; 0: never", Kind: settings.Int, Lo: 0, Hi: math.MaxInt32, Mutable: true, Def: "100",
		Get: func(s *Server, st *configState) string { return itoa(int64(max(st.cfg.ReplicaPriority, 0))) },
		Set: func(st *configState, v settings.Value) { st.cfg.ReplicaPriority = priorityConfig(v.N) }},
	{Name: "min-replicas-to-write", Alias: "min-slaves-to-write", Doc: "`N`: a primary with fewer good replicas (acknowledged within min-replicas-max-lag seconds) refuses writes with NOREPLICAS; 0: never", Kind: settings.Int, Lo: 0, Hi: math.MaxInt32, Mutable: true, Def: "0",
		Get: func(s *Server, st *configState) string { return itoa(int64(max(st.cfg.MinReplicasToWrite, 0))) },
		Set: func(st *configState, v settings.Value) { st.cfg.MinReplicasToWrite = int(v.N) }},
	{Name: "min-replicas-max-lag", Alias: "min-slaves-max-lag", Doc: "`seconds`: a replica is good for min-replicas-to-write while its last acknowledgement is at most this old; 0 turns min-replicas-to-write off", Kind: settings.Int, Lo: 0, Hi: math.MaxInt32, Mutable: true, Def: itoa(repl.DefaultMinReplicasMaxLag),
		Get: func(s *Server, st *configState) string { return itoa(int64(max(st.cfg.MinReplicasMaxLag, 0))) },
		Set: func(st *configState, v settings.Value) { st.cfg.MinReplicasMaxLag = minReplicasConfig(v.N) }},
	{Name: "replica-read-only", Doc: "yes: a replica refuses writes (fixed; no flag)", NoFlag: true, Kind: settings.Enum, Enum: []string{"yes"}, Def: "yes",
		Get: func(s *Server, st *configState) string { return "yes" },
		Set: func(st *configState, v settings.Value) {}},
	{Name: "cluster-enabled", Doc: "cluster mode: the Redis Cluster protocol (slots, MOVED, ASK, CLUSTER SLOTS), with the topology set by CUCKOO.CLUSTER SETCONFIG and kept in dir; starts owning no slots", Kind: settings.Enum, Enum: []string{"yes", "no"}, Def: "no",
		Get: func(s *Server, st *configState) string {
			return settings.YesNo(st.cfg.ClusterEnabled || st.cfg.ClusterEmulated)
		},
		Set: func(st *configState, v settings.Value) { st.cfg.ClusterEnabled = v.S == "yes" }},
	// cluster-emulated is this server's own (--cluster-emulated): without it
	// CONFIG REWRITE of an emulated node would write cluster-enabled alone,
	// and the node would come back owning no slots.
	{Name: "cluster-emulated", Doc: "cluster mode with this node owning all 16384 slots alone, so that cluster clients work against one server", Kind: settings.Enum, Enum: []string{"yes", "no"}, Def: "no",
		Get: func(s *Server, st *configState) string { return settings.YesNo(st.cfg.ClusterEmulated) },
		Set: func(st *configState, v settings.Value) { st.cfg.ClusterEmulated = v.S == "yes" }},
	{Name: "enable-debug-command", Doc: "DEBUG (RELOAD) is allowed: `no` (refused), yes, or local (from a loopback address)", Kind: settings.Enum, Enum: []string{"no", "yes", "local"}, Def: "no",
		Get: func(s *Server, st *configState) string { return st.cfg.EnableDebugCommand.String() },
		Set: func(st *configState, v settings.Value) { st.cfg.EnableDebugCommand = parseDebugCommand(v.S) }},
	{Name: "aclfile", Doc: "the `file` of the users (ACL SETUSER's rules, one user a line): loaded at start if it exists, written by ACL SAVE", Kind: settings.String, Def: "",
		Get: func(s *Server, st *configState) string { return st.cfg.ACLFile },
		Set: func(st *configState, v settings.Value) { st.cfg.ACLFile = v.S }},
	{Name: "maxclients", Doc: "`N` connections at most", Kind: settings.Int, Lo: 1, Hi: 1_000_000, Mutable: true, Def: itoa(limits.DefaultMaxClients),
		Get: func(s *Server, st *configState) string { return itoa(int64(st.cfg.Limits.MaxClients)) },
		Set: func(st *configState, v settings.Value) { st.cfg.Limits.MaxClients = int(v.N) }},
	{Name: "timeout", Doc: "close a client idle (or stuck mid-request) for this many `seconds` (0: never)", Kind: settings.Int, Lo: 0, Hi: math.MaxInt32, Mutable: true, Def: "0",
		Get: func(s *Server, st *configState) string { return itoa(int64(st.cfg.Limits.Timeout / time.Second)) },
		Set: func(st *configState, v settings.Value) { st.cfg.Limits.Timeout = time.Duration(v.N) * time.Second }},
	{Name: "proto-max-bulk-len", Doc: "longest argument of a request, in `bytes`", Kind: settings.Memory, Lo: 1, Hi: math.MaxInt, Mutable: true, Def: itoa(limits.DefaultMaxBulk),
		Get: func(s *Server, st *configState) string { return itoa(int64(st.cfg.Limits.MaxBulk)) },
		Set: func(st *configState, v settings.Value) { st.cfg.Limits.MaxBulk = int(v.N) }},
	{Name: "max-item-size", Doc: "longest item or key a command takes, in `bytes` (dump chunks: proto-max-bulk-len)", Kind: settings.Memory, Lo: 1, Hi: math.MaxInt, Mutable: true, Def: itoa(limits.DefaultMaxItem),
		Get: func(s *Server, st *configState) string { return itoa(int64(st.cfg.Limits.MaxItem)) },
		Set: func(st *configState, v settings.Value) { st.cfg.Limits.MaxItem = int(v.N) }},
	{Name: "max-args", Doc: "`N` arguments at most in one request", Kind: settings.Int, Lo: 1, Hi: math.MaxInt32, Mutable: true, Def: itoa(limits.DefaultMaxArgs),
		Get: func(s *Server, st *configState) string { return itoa(int64(st.cfg.Limits.MaxArgs)) },
		Set: func(st *configState, v settings.Value) { st.cfg.Limits.MaxArgs = int(v.N) }},
	{Name: "client-query-buffer-limit", Doc: "`bytes` of pending requests a client may buffer", Kind: settings.Memory, Lo: 1, Hi: math.MaxInt, Mutable: true, Def: itoa(limits.DefaultQueryBuffer),
		Get: func(s *Server, st *configState) string { return itoa(int64(st.cfg.Limits.QueryBuffer)) },
		Set: func(st *configState, v settings.Value) { st.cfg.Limits.QueryBuffer = int(v.N) }},
	{Name: "client-output-buffer-limit", Doc: "\"`class hard soft seconds` ...\": a client of the class (normal, replica, pubsub) past hard bytes of pending replies, or past soft for seconds, is closed", Kind: settings.Output, Mutable: true, Def: (&limits.OutputBuffer{}).ConfigGet(),
		Get: func(s *Server, st *configState) string {
			return (*limits.OutputBuffer)(&st.cfg.Limits.OutputBuffer).ConfigGet()
		},
		Set: func(st *configState, v settings.Value) { st.cfg.Limits.OutputBuffer.Set(v.S) }},
	{Name: "maxmemory-clients", Doc: "`bytes` (or a percentage of maxmemory) all clients may hold together; past it the clients holding the most are closed (0: no limit)", Kind: settings.MemoryPercent, Mutable: true, Def: "0",
		Get: func(s *Server, st *configState) string { return st.cfg.Limits.MaxMemoryClients.String() },
		Set: func(st *configState, v settings.Value) { st.cfg.Limits.MaxMemoryClients = MemoryOrPercent(v.N) }},
	{Name: "maxmemory", Doc: "`bytes` of filters and clients at most, as redis.conf writes sizes: 100mb, 2gb (0: no limit)", Kind: settings.Memory, Lo: 0, Hi: math.MaxInt64, Mutable: true, Def: "0",
		Get: func(s *Server, st *configState) string { return itoa(st.cfg.MaxMemory) },
		Set: func(st *configState, v settings.Value) { st.cfg.MaxMemory = v.N }},
	{Name: "max-filter-memory", Doc: "`bytes` one filter may take at most, so that no single command reserves more (0: the machine's memory)", Kind: settings.Memory, Lo: 0, Hi: math.MaxInt64, Def: "0",
		Get: func(s *Server, st *configState) string { return itoa(st.cfg.MaxFilterMemory) },
		Set: func(st *configState, v settings.Value) { st.cfg.MaxFilterMemory = v.N }},
	{Name: "cf-bucket-size", Doc: "`slots`: BUCKETSIZE of filters created without one; left unset, this server's layout builds 5 slots for a filter CF.RESERVE or CF.INSERT's CAPACITY sizes and 4 for one created at cf-initial-size, RedisBloom's 2", Kind: settings.Int, Lo: 1, Hi: cf.MaxBucketSize, Mutable: true, Def: "2",
		Get:      func(s *Server, st *configState) string { return itoa(st.cfg.FilterDefaults.RangeBucket()) },
		Set:      func(st *configState, v settings.Value) { st.cfg.FilterDefaults.BucketSize = v.N },
		SetParse: cfSetting("cf-bucket-size", (*cf.Defaults).BucketRange)},
	{Name: "cf-initial-size", Doc: "`items`: CAPACITY of filters CF.ADD and CF.INSERT create (at least twice cf-bucket-size)", Kind: settings.Int, Lo: 4, Hi: cf.MaxCapacity, Mutable: true, Def: itoa(cf.DefaultCapacity),
		Get:      func(s *Server, st *configState) string { return itoa(st.cfg.FilterDefaults.InitialSize) },
		Set:      func(st *configState, v settings.Value) { st.cfg.FilterDefaults.InitialSize = v.N },
		SetParse: cfSetting("cf-initial-size", (*cf.Defaults).InitialRange)},
	{Name: "cf-expansion-factor", Doc: "`factor`: EXPANSION of filters created without one (0: they never grow)", Kind: settings.Int, Lo: 0, Hi: cf.MaxExpansion, Mutable: true, Def: itoa(cf.DefaultExpansion),
		Get:      func(s *Server, st *configState) string { return itoa(st.cfg.FilterDefaults.Expansion) },
		Set:      func(st *configState, v settings.Value) { st.cfg.FilterDefaults.Expansion = v.N },
		SetParse: cfSetting("cf-expansion-factor", fixedRange(0, cf.MaxExpansion))},
	{Name: "cf-max-expansions", Doc: "`N`: inserts are refused once a filter has this many sub-filters", Kind: settings.Int, Lo: 1, Hi: 65536, Mutable: true, Def: itoa(cf.DefaultMaxExpansions),
		Get:      func(s *Server, st *configState) string { return itoa(st.cfg.FilterDefaults.MaxExpansions) },
		Set:      func(st *configState, v settings.Value) { st.cfg.FilterDefaults.MaxExpansions = v.N },
		SetParse: cfSetting("cf-max-expansions", fixedRange(1, 65536))},
	{Name: "cf-layout", Doc: "the layout of filters CF.RESERVE, CF.ADD and CF.INSERT create: `cuckoo` (this server's: smaller, fewer false positives, never loses a kept item) or redisbloom (RedisBloom's, bit for bit: its dumps and DUMP payloads move to and from RedisBloom, and COMMAND DOCS gives the CF commands' complexity in RedisBloom's words)", Kind: settings.Enum, Enum: cf.Layouts, Mutable: true, Def: "cuckoo",
		Get: func(s *Server, st *configState) string { return st.cfg.FilterDefaults.Layout.String() },
		Set: func(st *configState, v settings.Value) {
			st.cfg.FilterDefaults.Layout = cf.Layout(slices.Index(cf.Layouts, v.S))
		}},
	{Name: "cf-max-iterations", Doc: "`N`: MAXITERATIONS of filters created without one", Kind: settings.Int, Lo: 1, Hi: cf.MaxIterations, Mutable: true, Def: itoa(cf.DefaultMaxIter),
		Get:      func(s *Server, st *configState) string { return itoa(st.cfg.FilterDefaults.MaxIterations) },
		Set:      func(st *configState, v settings.Value) { st.cfg.FilterDefaults.MaxIterations = v.N },
		SetParse: cfSetting("cf-max-iterations", fixedRange(1, cf.MaxIterations))},
	{Name: "redisbloom-compat", Doc: "the RedisBloom release the CF commands answer as where its replies changed: `8.6` (RedisBloom 8.6.2, built into Redis 8.6.3) or 2.6 (the RedisBloom 2.6.28 module for Redis 7); the differences are listed below", Kind: settings.Enum, Enum: cf.Compats, Mutable: true, Def: cf.Compat86.String(),
		Note: redisbloomCompatNote,
		Get:  func(s *Server, st *configState) string { return st.cfg.FilterDefaults.Compat.String() },
		Set: func(st *configState, v settings.Value) {
			st.cfg.FilterDefaults.Compat = cf.Compat(slices.Index(cf.Compats, v.S))
		}},
}

// redisbloomCompatNote is redisbloom-compat's paragraph in docs/settings.md.
const redisbloomCompatNote = `Where RedisBloom 8 changed a reply, the CF commands answer as the release
redisbloom-compat names, in either cf-layout; filters, their dumps and their
DUMP payloads are the same under both. Under 2.6 (RedisBloom 2.6.28), against
8.6 (RedisBloom 8.6.2, the default):

- CF.RESERVE's BUCKETSIZE, MAXITERATIONS and EXPANSION out of range:
  ` + "`BUCKETSIZE: value must be an integer between 1 and 255, inclusive.`" + ` against
  ` + "`BUCKETSIZE: value must be in the range [1, 255]`" + `; under 8.6 BUCKETSIZE's bound
  is also half of cf-initial-size, when that is below 510.
- CF.RESERVE's and CF.INSERT's capacity: ` + "`Capacity must be at least (BucketSize * 2)`" + `
  and no upper bound (in the redisbloom layout; 2^32 in cuckoo's), against
  ` + "`Capacity must be in the range [2 * BUCKETSIZE, 1073741824]`" + ` (CF.INSERT:
  ` + "`[cf-bucket-size * 2, 1073741824]`" + `): 8.6 creates no filter above 2^30 items.
  A larger filter made before (by RedisBloom 2.6, or here under 2.6) still
  loads from DUMP, CF.LOADCHUNK, snapshots and logs, and answers as any other.
- CONFIG SET of cf-bucket-size, cf-initial-size, cf-max-iterations,
  cf-expansion-factor and cf-max-expansions: under 8.6 as RedisBloom 8's module
  settings (` + "``Value for `cf-bucket-size` must be in the range [1, 255]``" + `,
  ` + "``Invalid value for `cf-initial-size` ``" + ` for what is not an integer as Redis
  reads one, cf-initial-size within [2 × cf-bucket-size, 2^30], cf-bucket-size
  at most half of cf-initial-size); under 2.6, which has no such settings, as
  this table's ranges and Redis's own texts say. Flags and --config files keep
  to the table's ranges under both.
- ACL categories (COMMAND INFO, COMMAND LIST, ACL CAT): under 8.6 a CF command
  is in the categories RedisBloom 8 names for it alone (CF.ADD in @write and
  @cuckoo, CF.EXISTS not in @fast), as Redis 8 lists a module's; under 2.6 also
  in those its flags imply (@slow, @fast), as Redis 7 adds them. Users'
  category rules (ACL SETUSER +@slow) resolve as the setting was at startup.
- RESTORE of a RedisBloom payload whose CRC-64 is 0 (a checksum not
  computed, which Redis 8 writes only between its own nodes): read under 8.6,
  as Redis 8 reads it, and refused under 2.6 with
  ` + "`ERR DUMP payload version or checksum are wrong`" + `, as Redis 7.0 refuses it.
  Payloads of RDB versions 11 to 13 (Redis 7.2 to 8.6) are read under both,
  where Redis 7.0 refuses them, so that filters move from any of them.
- CF.LOADCHUNK of a header whose filter cannot be allocated:
  ` + "`Couldn't create filter!`" + ` under both (RedisBloom 2.6.28 aborts).`

// cfSetting reads a CONFIG SET of a cf-* setting as RedisBloom 8 does
// (redisbloom-compat 8.6): as Redis reads an integer ("+1" and "01" are
// not), within the range rng gives from the settings in force, with its
// texts. Under 2.6, which has no such settings, Parse reads it.
func cfSetting(name string, rng func(*cf.Defaults) (int64, int64)) func(*configState, string) (settings.Value, string, bool) {
	return func(st *configState, v string) (settings.Value, string, bool) {
		d := &st.cfg.FilterDefaults
		if d.Compat == cf.Compat26 {
			return settings.Value{}, "", false
		}
		n, ok := integer.Parse([]byte(v))
		lo, hi := rng(d)
		if !ok || n < lo || n > hi {
			return settings.Value{}, cf.SettingText(name, lo, hi, ok), true
		}
		return settings.Value{N: n}, "", true
	}
}

// fixedRange is a range for cfSetting that no other setting moves.
func fixedRange(lo, hi int64) func(*cf.Defaults) (int64, int64) {
	return func(*cf.Defaults) (int64, int64) { return lo, hi }
}

// defaultSnapshotLogSize is the log size that triggers a snapshot when
// Config.SnapshotLogSize is 0.
const defaultSnapshotLogSize = 64 << 20

// check refuses settings that are valid one by one but not together, and
// returns the setting to blame and why.
func (st *configState) check() (string, string) {
	d := &st.cfg.FilterDefaults
	if d.InitialSize < 2*d.RangeBucket() {
		return "cf-initial-size", fmt.Sprintf("cf-initial-size must be at least twice cf-bucket-size (%d)", 2*d.RangeBucket())
	}
	return "", ""
}

// finish carries save into the Config: "" turns automatic snapshots off.
func (st *configState) finish() {
	switch {
	case st.save == "":
		st.cfg.SnapshotLogSize = -1
	case st.cfg.SnapshotLogSize < 0:
		st.cfg.SnapshotLogSize = 0
	}
}

// liveConfig holds the settings of a running server (see the protocol at
// the top of this file).
type liveConfig struct {
	mu      sync.Mutex
	st      configState     // guarded by mu
	changed map[string]bool // settings CONFIG SET changed; guarded by mu
	pass    atomic.Pointer[string]
	limits  atomic.Pointer[Limits]
}

// initConfig sets the settings in force from cfg; New calls it before
// anything reads them.
func (s *Server) initConfig(cfg Config) {
	s.conf.st = newConfigState(cfg)
	s.conf.changed = map[string]bool{}
	s.publish(&s.conf.st)
}

// publish stores the atomics the request paths read from st.
func (s *Server) publish(st *configState) {
	s.store.Maxmem.Store(st.cfg.MaxMemory)
	pass := st.cfg.RequirePass
	if old := s.conf.pass.Load(); old == nil || *old != pass {
		// requirepass is the default user's password: set when it
		// changes, so ACL SETUSER default rules stand otherwise.
		s.setDefaultPassword(pass)
	}
	s.conf.pass.Store(&pass)
	lim := st.cfg.Limits.withDefaults()
	s.conf.limits.Store(&lim)
	s.cmem.SetEvictAt(lim.MaxMemoryClients.Bytes(st.cfg.MaxMemory)) // a lower one evicts at once
	// st's defaults were filled in once (newConfigState): filling them
	// again here would take CONFIG SET cf-expansion-factor 0 for unset.
	d := st.cfg.FilterDefaults
	s.cfDefaults.Store(&d)
	s.setMinReplicas(&st.cfg)
}

// clientLimits are the client limits in force. maxclients applies to the
// next connection accepted, timeout to the next read, proto-max-bulk-len and
// client-query-buffer-limit to the connections made after they change,
// client-output-buffer-limit to each connection's next read (and at once to
// the clients clientsCron checks), maxmemory-clients at once.
func (s *Server) clientLimits() *Limits { return s.conf.limits.Load() }

// listenAddr returns the host and port of a listener Serve (or ServeTLS,
// if isTLS) is serving. With none of that kind the port is "0" (off) if the
// server serves the other kind, the default otherwise (6379, or 0 for TLS),
// and the host is the other's or 127.0.0.1.
func (s *Server) listenAddr(isTLS bool) (host, port string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	host, port = "127.0.0.1", "6379"
	for ln, t := range s.lns {
		h, p, err := net.SplitHostPort(ln.Addr().String())
		switch {
		case err != nil:
		case t == isTLS:
			return h, p
		default:
			host, port = h, "0"
		}
	}
	if isTLS {
		port = "0"
	}
	return host, port
}

// CONFIG GET pattern [pattern ...]: the settings whose names (or aliases)
// match any of the glob patterns (any case), as a map (RESP2: a flat array).
func cmdConfigGet(s *Server, cl *client, a [][]byte) {
	s.conf.mu.Lock()
	st := s.conf.st
	s.conf.mu.Unlock()
	type named struct {
		name string
		x    *setting
	}
	var out []named
	for _, x := range settingsTable {
		// A setting is listed under each of its names that a pattern
		// matches, as Redis 7 lists min-replicas-to-write and
		// min-slaves-to-write.
		for _, name := range []string{x.Name, x.Alias} {
			for _, p := range a[2:] {
				if name != "" && match.Match(name, strings.ToLower(string(p))) {
					out = append(out, named{name, x})
					break
				}
			}
		}
	}
	cl.wr.WriteMap(len(out))
	for _, n := range out {
		cl.wr.WriteBulkString(n.name)
		cl.wr.WriteBulkString(n.x.Get(s, &st))
	}
}

// CONFIG SET name value [name value ...]: all or none, as Redis 7 does. The
// names are checked first (unknown, immutable, given twice), then the
// values, then the settings together; only then is anything applied.
func cmdConfigSet(s *Server, cl *client, a [][]byte) {
	if len(a)%2 != 0 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'config|set' command"))
		return
	}
	failed := func(name, why string) {
		s.writeErr(cl, replyErr("ERR "+(&settings.SetError{Name: name, Why: why}).Error()))
	}
	pairs := make([]string, len(a)-2)
	for i, arg := range a[2:] {
		if pairs[i] = string(arg); i%2 == 0 {
			pairs[i] = printable(arg, 128)
		}
	}
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	next := s.conf.st
	xs, err := settingsTable.Change(&next, pairs)
	if err != nil {
		s.writeErr(cl, replyErr("ERR "+err.Error()))
		return
	}
	if name, why := next.check(); why != "" {
		failed(name, why)
		return
	}
	tlsConf, tlsClient, name, why := s.reloadTLS(xs, &next)
	if why != "" {
		failed(name, why)
		return
	}
	s.conf.st = next
	for _, x := range xs {
		s.conf.changed[x.Name] = true
	}
	s.publish(&s.conf.st)
	if tlsConf != nil {
		s.setTLS(tlsConf, tlsClient, next.cfg.TLS.CertFile)
	}
	cl.wr.WriteString("OK")
}

// CONFIG REWRITE: the settings in force back into the configuration file
// (see rewriteConfig).
func cmdConfigRewrite(s *Server, cl *client, a [][]byte) {
	if s.cfg.ConfigFile == "" {
		s.writeErr(cl, replyErr("ERR The server is running without a config file"))
		return
	}
	if err := s.rewriteConfig(); err != nil {
		s.log.Error("CONFIG REWRITE failed", "file", s.cfg.ConfigFile, "err", err)
		s.writeErr(cl, replyErr("ERR Rewriting config file: "+err.Error()))
		return
	}
	cl.wr.WriteString("OK")
}

// rewriteConfig rewrites Config.ConfigFile in place (package config's
// Rewrite): each setting's first line gets the value in force, its other
// lines go, comments and other lines stay; the settings the file lacks are
// appended when their values differ from the defaults or CONFIG SET changed
// them. The file is replaced atomically; a missing one is created.
func (s *Server) rewriteConfig() error {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	old, err := os.ReadFile(s.cfg.ConfigFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	lines := settingsTable.Lines(s, &s.conf.st, func(name string) bool { return s.conf.changed[name] })
	return config.WriteFile(s.cfg.ConfigFile, config.Rewrite(old, lines))
}

// CONFIG RESETSTAT: INFO's stats counters back to zero.
func cmdConfigResetstat(s *Server, cl *client, a [][]byte) {
	for _, c := range []*atomic.Int64{&s.stats.conns, &s.stats.rejected, &s.stats.cmds, &s.stats.errors, &s.stats.hits, &s.stats.misses,
		&s.cmem.Evicted, &s.cmem.OutputClosed, &s.cmem.QueryClosed} {
		c.Store(0)
	}
	cl.wr.WriteString("OK")
}

var configHelp = []string{
	"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET <pattern> [<pattern> ...]",
	"    The settings whose names match a glob pattern, with their values.",
	"SET <name> <value> [<name> <value> ...]",
	"    Change settings of the running server: all of them, or none if one fails.",
	"RESETSTAT",
	"    Set INFO's statistics back to zero.",
	"REWRITE",
	"    Write the settings in force back into the file given to --config.",
	"HELP",
	"    Print this help.",
}

// Listen is the address a configuration file gives cuckoo serve, which a
// Config does not hold.
type Listen struct {
	Bind    string // "" if the file has no bind
	Port    int    // -1 if the file has no port; 0 turns the plain listener off
	TLSPort int    // -1 if the file has no tls-port; 0 is no TLS listener
}

// ReadConfigFile applies the settings of the file at path, in redis.conf's
// syntax (see "Configuration" in the package documentation), to cfg, and sets
// cfg.ConfigFile to path. It returns the file's bind and port. An unknown
// setting or a bad value is an error naming the file, the line and the
// setting; cfg is then unchanged.
func ReadConfigFile(path string, cfg *Config) (Listen, error) {
	st := newConfigState(*cfg)
	if err := settingsTable.ReadFile(path, &st); err != nil {
		return Listen{}, err
	}
	if name, why := st.check(); why != "" {
		return Listen{}, fmt.Errorf("%s: %s: %s", path, name, why)
	}
	st.finish()
	*cfg = st.cfg
	cfg.ConfigFile = path
	return Listen{Bind: st.bind, Port: int(st.port), TLSPort: int(st.tlsPort)}, nil
}
