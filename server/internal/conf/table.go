package conf

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
	"github.com/cuckoohash/cuckoo/server/internal/repl"
	"github.com/cuckoohash/cuckoo/server/internal/settings"
	"github.com/cuckoohash/cuckoo/server/internal/tlsconf"
)

// Live is the running server as the table's rows read it: the few values
// that are the server's, not a Config's. Package server's *Server gives
// them; a row never imports the server.
type Live interface {
	// ListenAddr is the host and port of the listener the server serves
	// (the TLS one if tls): bind, port and tls-port.
	ListenAddr(tls bool) (host, port string)
	// ReplicaOf is replicaof now: "host port" of the primary, or "" on a
	// primary (REPLICAOF changes it at runtime).
	ReplicaOf() string
	// BacklogSize is the bytes of the replication backlog in force
	// (repl-backlog-size).
	BacklogSize() int64
}

// State is what the table reads and writes: a Config, and what a Config
// does not hold.
type State struct {
	// Config is the settings in force, with defaults filled in (NewState).
	Config  Config
	save    string // as given, pairs of numbers; "" turns automatic snapshots off
	bind    string // the file's, for cuckoo serve; a server reports its listener's
	port    int64  // the file's, -1 if none
	tlsPort int64  // the file's, -1 if none
}

// NewState returns the settings of a server started with cfg: Config's
// zero fields take the defaults they mean.
func NewState(cfg Config) State {
	st := State{Config: cfg, save: defaultSave, port: -1, tlsPort: -1}
	if st.Config.ReplicaPriority == 0 {
		st.Config.ReplicaPriority = 100 // Config's zero value (see ReplicaPriority)
	}
	if st.Config.MinReplicasMaxLag == 0 {
		st.Config.MinReplicasMaxLag = repl.DefaultMinReplicasMaxLag // Config's zero value
	}
	st.Config.Limits = cfg.Limits.WithDefaults()
	st.Config.FilterDefaults = cfg.FilterDefaults.WithDefaults()
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

// table is the one table of settings, in the order CONFIG GET, REWRITE,
// the flags and docs/settings.md list them.
var table = settings.Table[Live, State]{
	{Name: "bind", Doc: "the address to listen on (cuckoo serve's flag: --addr)", NoFlag: true, Kind: settings.Bind, Def: "127.0.0.1",
		Get: func(l Live, st *State) string { h, _ := l.ListenAddr(false); return h },
		Set: func(st *State, v settings.Value) { st.bind = v.S }},
	{Name: "port", Doc: "the plain listener's port; 0 turns it off (cuckoo serve's flag: --port, or the port of --addr)", NoFlag: true, Kind: settings.Int, Lo: 0, Hi: 65535, Def: "6379",
		Get: func(l Live, st *State) string { _, p := l.ListenAddr(false); return p },
		Set: func(st *State, v settings.Value) { st.port = v.N }},
	{Name: "tls-port", Doc: "the TLS listener's port; 0 for none (cuckoo serve's flags: --tls-port, --tls-addr)", NoFlag: true, Kind: settings.Int, Lo: 0, Hi: 65535, Def: "0",
		Get: func(l Live, st *State) string { _, p := l.ListenAddr(true); return p },
		Set: func(st *State, v settings.Value) { st.tlsPort = v.N }},
	{Name: "tls-cert-file", Doc: "the server's certificate chain, PEM `file`", Kind: settings.String, Mutable: true, Def: "",
		Get: func(l Live, st *State) string { return st.Config.TLS.CertFile },
		Set: func(st *State, v settings.Value) { st.Config.TLS.CertFile = v.S }},
	{Name: "tls-key-file", Doc: "the private key of tls-cert-file, PEM `file`", Kind: settings.String, Mutable: true, Def: "",
		Get: func(l Live, st *State) string { return st.Config.TLS.KeyFile },
		Set: func(st *State, v settings.Value) { st.Config.TLS.KeyFile = v.S }},
	{Name: "tls-ca-cert-file", Doc: "the CAs that sign clients' certificates, PEM `file`", Kind: settings.String, Mutable: true, Def: "",
		Get: func(l Live, st *State) string { return st.Config.TLS.CACertFile },
		Set: func(st *State, v settings.Value) { st.Config.TLS.CACertFile = v.S }},
	{Name: "tls-auth-clients", Doc: "client certificates: `yes` (required), optional (verified if given) or no (not asked for)", Kind: settings.Enum, Enum: []string{"yes", "no", "optional"}, Mutable: true, Def: "yes",
		Get: func(l Live, st *State) string { return st.Config.TLS.AuthClients.String() },
		Set: func(st *State, v settings.Value) { st.Config.TLS.AuthClients, _ = tlsconf.ParseAuthClients(v.S) }},
	{Name: "tls-client-cert-file", Doc: "the certificate, PEM `file`, presented to other nodes (default tls-cert-file)", Kind: settings.String, Mutable: true, Def: "",
		Get: func(l Live, st *State) string { return st.Config.TLS.ClientCertFile },
		Set: func(st *State, v settings.Value) { st.Config.TLS.ClientCertFile = v.S }},
	{Name: "tls-client-key-file", Doc: "the private key of tls-client-cert-file, PEM `file`", Kind: settings.String, Mutable: true, Def: "",
		Get: func(l Live, st *State) string { return st.Config.TLS.ClientKeyFile },
		Set: func(st *State, v settings.Value) { st.Config.TLS.ClientKeyFile = v.S }},
	{Name: "tls-replication", Doc: "a replica connects to its primary over TLS", Kind: settings.Enum, Enum: []string{"yes", "no"}, Mutable: true, Def: "no",
		Get: func(l Live, st *State) string { return settings.YesNo(st.Config.TLS.Replication) },
		Set: func(st *State, v settings.Value) { st.Config.TLS.Replication = v.S == "yes" }},
	{Name: "tls-cluster", Doc: "MIGRATE connects to its target node over TLS", Kind: settings.Enum, Enum: []string{"yes", "no"}, Mutable: true, Def: "no",
		Get: func(l Live, st *State) string { return settings.YesNo(st.Config.TLS.Cluster) },
		Set: func(st *State, v settings.Value) { st.Config.TLS.Cluster = v.S == "yes" }},
	{Name: "dir", Doc: "data `directory` (snapshot and append-only log); empty for none", Kind: settings.String, Def: "",
		Get: func(l Live, st *State) string { return st.Config.Dir },
		Set: func(st *State, v settings.Value) { st.Config.Dir = v.S }},
	{Name: "appendonly", Doc: "yes whenever dir is set: every write is logged (fixed; no flag)", NoFlag: true, Kind: settings.Enum, Enum: []string{"yes", "no"}, Def: "no",
		Get: func(l Live, st *State) string { return settings.YesNo(st.Config.Dir != "") },
		Set: func(st *State, v settings.Value) {},
		Check: func(v settings.Value) string {
			if v.S == "no" {
				return `every write is logged when dir is set; set dir to "" for no persistence`
			}
			return ""
		}},
	{Name: "appendfsync", Doc: "when the log is flushed to disk: `always` (before each reply), everysec or no", Kind: settings.Enum, Enum: []string{"always", "everysec", "no"}, Def: "everysec",
		Get: func(l Live, st *State) string { return st.Config.AppendFsync.String() },
		Set: func(st *State, v settings.Value) { st.Config.AppendFsync, _ = keyspace.ParseFsync(v.S) }},
	{Name: "save", Doc: "`schedule`: \"\" turns automatic snapshots off; any schedule turns them on (taken when the log passes snapshot-log-size)", Kind: settings.Save, Def: defaultSave,
		Get: func(l Live, st *State) string { return st.save },
		Set: func(st *State, v settings.Value) { st.save = v.S }},
	{Name: "snapshot-log-size", Doc: "snapshot and truncate the log when it exceeds this many `bytes` (-1: never)", Kind: settings.Memory, Lo: -1, Hi: math.MaxInt64, Def: itoa(defaultSnapshotLogSize),
		Get: func(l Live, st *State) string {
			if st.Config.SnapshotLogSize <= 0 {
				return itoa(defaultSnapshotLogSize)
			}
			return itoa(st.Config.SnapshotLogSize)
		},
		Set: func(st *State, v settings.Value) {
			st.Config.SnapshotLogSize = v.N
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
		Get: func(l Live, st *State) string { return "1" },
		Set: func(st *State, v settings.Value) {}},
	{Name: "requirepass", Doc: "the default user's `password`, which clients must AUTH with", Kind: settings.String, Mutable: true, Def: "",
		Get: func(l Live, st *State) string { return st.Config.RequirePass },
		Set: func(st *State, v settings.Value) { st.Config.RequirePass = v.S }},
	{Name: "replicaof", Doc: "start as a replica of this primary: \"`host port`\" (REPLICAOF at runtime)", Kind: settings.String, Def: "",
		Get: func(l Live, st *State) string { return l.ReplicaOf() },
		Set: func(st *State, v settings.Value) { st.Config.ReplicaOf = v.S }},
	{Name: "masteruser", Doc: "the `user` a replica authenticates to its primary as (with masterauth)", Kind: settings.String, Mutable: true, Def: "",
		Get: func(l Live, st *State) string { return st.Config.MasterUser },
		Set: func(st *State, v settings.Value) { st.Config.MasterUser = v.S }},
	{Name: "masterauth", Doc: "the `password` a replica authenticates to its primary with", Kind: settings.String, Mutable: true, Def: "",
		Get: func(l Live, st *State) string { return st.Config.MasterAuth },
		Set: func(st *State, v settings.Value) { st.Config.MasterAuth = v.S }},
	{Name: "repl-backlog-size", Doc: "`bytes` of the replication stream kept for replicas that reconnect", Kind: settings.Memory, Lo: 16 << 10, Hi: math.MaxInt64, Def: itoa(repl.DefaultBacklog),
		Get: func(l Live, st *State) string { return itoa(l.BacklogSize()) },
		Set: func(st *State, v settings.Value) { st.Config.ReplBacklogSize = v.N }},
	{Name: "replica-priority", Doc: "`priority`: Sentinel promotes the replica of lowest priority first; 0: never", Kind: settings.Int, Lo: 0, Hi: math.MaxInt32, Mutable: true, Def: "100",
		Get: func(l Live, st *State) string { return itoa(int64(max(st.Config.ReplicaPriority, 0))) },
		Set: func(st *State, v settings.Value) { st.Config.ReplicaPriority = priorityConfig(v.N) }},
	{Name: "min-replicas-to-write", Alias: "min-slaves-to-write", Doc: "`N`: a primary with fewer good replicas (acknowledged within min-replicas-max-lag seconds) refuses writes with NOREPLICAS; 0: never", Kind: settings.Int, Lo: 0, Hi: math.MaxInt32, Mutable: true, Def: "0",
		Get: func(l Live, st *State) string { return itoa(int64(max(st.Config.MinReplicasToWrite, 0))) },
		Set: func(st *State, v settings.Value) { st.Config.MinReplicasToWrite = int(v.N) }},
	{Name: "min-replicas-max-lag", Alias: "min-slaves-max-lag", Doc: "`seconds`: a replica is good for min-replicas-to-write while its last acknowledgement is at most this old; 0 turns min-replicas-to-write off", Kind: settings.Int, Lo: 0, Hi: math.MaxInt32, Mutable: true, Def: itoa(repl.DefaultMinReplicasMaxLag),
		Get: func(l Live, st *State) string { return itoa(int64(max(st.Config.MinReplicasMaxLag, 0))) },
		Set: func(st *State, v settings.Value) { st.Config.MinReplicasMaxLag = minReplicasConfig(v.N) }},
	{Name: "replica-read-only", Doc: "yes: a replica refuses writes (fixed; no flag)", NoFlag: true, Kind: settings.Enum, Enum: []string{"yes"}, Def: "yes",
		Get: func(l Live, st *State) string { return "yes" },
		Set: func(st *State, v settings.Value) {}},
	{Name: "cluster-enabled", Doc: "cluster mode: the Redis Cluster protocol (slots, MOVED, ASK, CLUSTER SLOTS), with the topology set by CUCKOO.CLUSTER SETCONFIG and kept in dir; starts owning no slots", Kind: settings.Enum, Enum: []string{"yes", "no"}, Def: "no",
		Get: func(l Live, st *State) string {
			return settings.YesNo(st.Config.ClusterEnabled || st.Config.ClusterEmulated)
		},
		Set: func(st *State, v settings.Value) { st.Config.ClusterEnabled = v.S == "yes" }},
	// cluster-emulated is this server's own (--cluster-emulated): without it
	// CONFIG REWRITE of an emulated node would write cluster-enabled alone,
	// and the node would come back owning no slots.
	{Name: "cluster-emulated", Doc: "cluster mode with this node owning all 16384 slots alone, so that cluster clients work against one server", Kind: settings.Enum, Enum: []string{"yes", "no"}, Def: "no",
		Get: func(l Live, st *State) string { return settings.YesNo(st.Config.ClusterEmulated) },
		Set: func(st *State, v settings.Value) { st.Config.ClusterEmulated = v.S == "yes" }},
	{Name: "enable-debug-command", Doc: "DEBUG (RELOAD) is allowed: `no` (refused), yes, or local (from a loopback address)", Kind: settings.Enum, Enum: []string{"no", "yes", "local"}, Def: "no",
		Get: func(l Live, st *State) string { return st.Config.EnableDebugCommand.String() },
		Set: func(st *State, v settings.Value) { st.Config.EnableDebugCommand = ParseDebugCommand(v.S) }},
	{Name: "aclfile", Doc: "the `file` of the users (ACL SETUSER's rules, one user a line): loaded at start if it exists, written by ACL SAVE", Kind: settings.String, Def: "",
		Get: func(l Live, st *State) string { return st.Config.ACLFile },
		Set: func(st *State, v settings.Value) { st.Config.ACLFile = v.S }},
	{Name: "maxclients", Doc: "`N` connections at most", Kind: settings.Int, Lo: 1, Hi: 1_000_000, Mutable: true, Def: itoa(limits.DefaultMaxClients),
		Get: func(l Live, st *State) string { return itoa(int64(st.Config.Limits.MaxClients)) },
		Set: func(st *State, v settings.Value) { st.Config.Limits.MaxClients = int(v.N) }},
	{Name: "timeout", Doc: "close a client idle (or stuck mid-request) for this many `seconds` (0: never)", Kind: settings.Int, Lo: 0, Hi: math.MaxInt32, Mutable: true, Def: "0",
		Get: func(l Live, st *State) string { return itoa(int64(st.Config.Limits.Timeout / time.Second)) },
		Set: func(st *State, v settings.Value) { st.Config.Limits.Timeout = time.Duration(v.N) * time.Second }},
	{Name: "proto-max-bulk-len", Doc: "longest argument of a request, in `bytes`", Kind: settings.Memory, Lo: 1, Hi: math.MaxInt, Mutable: true, Def: itoa(limits.DefaultMaxBulk),
		Get: func(l Live, st *State) string { return itoa(int64(st.Config.Limits.MaxBulk)) },
		Set: func(st *State, v settings.Value) { st.Config.Limits.MaxBulk = int(v.N) }},
	{Name: "max-item-size", Doc: "longest item or key a command takes, in `bytes` (dump chunks: proto-max-bulk-len)", Kind: settings.Memory, Lo: 1, Hi: math.MaxInt, Mutable: true, Def: itoa(limits.DefaultMaxItem),
		Get: func(l Live, st *State) string { return itoa(int64(st.Config.Limits.MaxItem)) },
		Set: func(st *State, v settings.Value) { st.Config.Limits.MaxItem = int(v.N) }},
	{Name: "max-args", Doc: "`N` arguments at most in one request", Kind: settings.Int, Lo: 1, Hi: math.MaxInt32, Mutable: true, Def: itoa(limits.DefaultMaxArgs),
		Get: func(l Live, st *State) string { return itoa(int64(st.Config.Limits.MaxArgs)) },
		Set: func(st *State, v settings.Value) { st.Config.Limits.MaxArgs = int(v.N) }},
	{Name: "client-query-buffer-limit", Doc: "`bytes` of pending requests a client may buffer", Kind: settings.Memory, Lo: 1, Hi: math.MaxInt, Mutable: true, Def: itoa(limits.DefaultQueryBuffer),
		Get: func(l Live, st *State) string { return itoa(int64(st.Config.Limits.QueryBuffer)) },
		Set: func(st *State, v settings.Value) { st.Config.Limits.QueryBuffer = int(v.N) }},
	{Name: "client-output-buffer-limit", Doc: "\"`class hard soft seconds` ...\": a client of the class (normal, replica, pubsub) past hard bytes of pending replies, or past soft for seconds, is closed", Kind: settings.Output, Mutable: true, Def: (&limits.OutputBuffer{}).ConfigGet(),
		Get: func(l Live, st *State) string {
			return (*limits.OutputBuffer)(&st.Config.Limits.OutputBuffer).ConfigGet()
		},
		Set: func(st *State, v settings.Value) { st.Config.Limits.OutputBuffer.Set(v.S) }},
	{Name: "maxmemory-clients", Doc: "`bytes` (or a percentage of maxmemory) all clients may hold together; past it the clients holding the most are closed (0: no limit)", Kind: settings.MemoryPercent, Mutable: true, Def: "0",
		Get: func(l Live, st *State) string { return st.Config.Limits.MaxMemoryClients.String() },
		Set: func(st *State, v settings.Value) { st.Config.Limits.MaxMemoryClients = limits.MemoryOrPercent(v.N) }},
	{Name: "maxmemory", Doc: "`bytes` of filters and clients at most, as redis.conf writes sizes: 100mb, 2gb (0: no limit)", Kind: settings.Memory, Lo: 0, Hi: math.MaxInt64, Mutable: true, Def: "0",
		Get: func(l Live, st *State) string { return itoa(st.Config.MaxMemory) },
		Set: func(st *State, v settings.Value) { st.Config.MaxMemory = v.N }},
	{Name: "max-filter-memory", Doc: "`bytes` one filter may take at most, so that no single command reserves more (0: the machine's memory)", Kind: settings.Memory, Lo: 0, Hi: math.MaxInt64, Def: "0",
		Get: func(l Live, st *State) string { return itoa(st.Config.MaxFilterMemory) },
		Set: func(st *State, v settings.Value) { st.Config.MaxFilterMemory = v.N }},
	{Name: "cf-bucket-size", Doc: "`slots`: BUCKETSIZE of filters created without one; left unset, this server's layout builds 5 slots for a filter CF.RESERVE or CF.INSERT's CAPACITY sizes and 4 for one created at cf-initial-size, RedisBloom's 2", Kind: settings.Int, Lo: 1, Hi: cf.MaxBucketSize, Mutable: true, Def: "2",
		Get:      func(l Live, st *State) string { return itoa(st.Config.FilterDefaults.RangeBucket()) },
		Set:      func(st *State, v settings.Value) { st.Config.FilterDefaults.BucketSize = v.N },
		SetParse: cfSetting("cf-bucket-size", (*cf.Defaults).BucketRange)},
	{Name: "cf-initial-size", Doc: "`items`: CAPACITY of filters CF.ADD and CF.INSERT create (at least twice cf-bucket-size)", Kind: settings.Int, Lo: 4, Hi: cf.MaxCapacity, Mutable: true, Def: itoa(cf.DefaultCapacity),
		Get:      func(l Live, st *State) string { return itoa(st.Config.FilterDefaults.InitialSize) },
		Set:      func(st *State, v settings.Value) { st.Config.FilterDefaults.InitialSize = v.N },
		SetParse: cfSetting("cf-initial-size", (*cf.Defaults).InitialRange)},
	{Name: "cf-expansion-factor", Doc: "`factor`: EXPANSION of filters created without one (0: they never grow)", Kind: settings.Int, Lo: 0, Hi: cf.MaxExpansion, Mutable: true, Def: itoa(cf.DefaultExpansion),
		Get:      func(l Live, st *State) string { return itoa(st.Config.FilterDefaults.Expansion) },
		Set:      func(st *State, v settings.Value) { st.Config.FilterDefaults.Expansion = v.N },
		SetParse: cfSetting("cf-expansion-factor", fixedRange(0, cf.MaxExpansion))},
	{Name: "cf-max-expansions", Doc: "`N`: inserts are refused once a filter has this many sub-filters", Kind: settings.Int, Lo: 1, Hi: 65536, Mutable: true, Def: itoa(cf.DefaultMaxExpansions),
		Get:      func(l Live, st *State) string { return itoa(st.Config.FilterDefaults.MaxExpansions) },
		Set:      func(st *State, v settings.Value) { st.Config.FilterDefaults.MaxExpansions = v.N },
		SetParse: cfSetting("cf-max-expansions", fixedRange(1, 65536))},
	{Name: "cf-layout", Doc: "the layout of filters CF.RESERVE, CF.ADD and CF.INSERT create: `cuckoo` (this server's: smaller, fewer false positives, never loses a kept item) or redisbloom (RedisBloom's, bit for bit: its dumps and DUMP payloads move to and from RedisBloom, and COMMAND DOCS gives the CF commands' complexity in RedisBloom's words)", Kind: settings.Enum, Enum: cf.Layouts, Mutable: true, Def: "cuckoo",
		Get: func(l Live, st *State) string { return st.Config.FilterDefaults.Layout.String() },
		Set: func(st *State, v settings.Value) {
			st.Config.FilterDefaults.Layout = cf.Layout(slices.Index(cf.Layouts, v.S))
		}},
	{Name: "cf-max-iterations", Doc: "`N`: MAXITERATIONS of filters created without one", Kind: settings.Int, Lo: 1, Hi: cf.MaxIterations, Mutable: true, Def: itoa(cf.DefaultMaxIter),
		Get:      func(l Live, st *State) string { return itoa(st.Config.FilterDefaults.MaxIterations) },
		Set:      func(st *State, v settings.Value) { st.Config.FilterDefaults.MaxIterations = v.N },
		SetParse: cfSetting("cf-max-iterations", fixedRange(1, cf.MaxIterations))},
	{Name: "redisbloom-compat", Doc: "the RedisBloom release the CF commands answer as where its replies changed: `8.6` (RedisBloom 8.6.2, built into Redis 8.6.3) or 2.6 (the RedisBloom 2.6.28 module for Redis 7); the differences are listed below", Kind: settings.Enum, Enum: cf.Compats, Mutable: true, Def: cf.Compat86.String(),
		Note: redisbloomCompatNote,
		Get:  func(l Live, st *State) string { return st.Config.FilterDefaults.Compat.String() },
		Set: func(st *State, v settings.Value) {
			st.Config.FilterDefaults.Compat = cf.Compat(slices.Index(cf.Compats, v.S))
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
func cfSetting(name string, rng func(*cf.Defaults) (int64, int64)) func(*State, string) (settings.Value, string, bool) {
	return func(st *State, v string) (settings.Value, string, bool) {
		d := &st.Config.FilterDefaults
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

// priorityConfig is Config.ReplicaPriority for replica-priority n: a
// Config's 0 is the default, so 0 is stored as -1.
func priorityConfig(n int64) int {
	if n == 0 {
		return -1
	}
	return int(n)
}

// minReplicasConfig is Config.MinReplicasMaxLag for min-replicas-max-lag
// n: a Config's 0 is the default, so 0 is stored as -1.
func minReplicasConfig(n int64) int {
	if n == 0 {
		return -1
	}
	return int(n)
}

// check refuses settings that are valid one by one but not together, and
// returns the setting to blame and why.
func (st *State) check() (string, string) {
	d := &st.Config.FilterDefaults
	if d.InitialSize < 2*d.RangeBucket() {
		return "cf-initial-size", fmt.Sprintf("cf-initial-size must be at least twice cf-bucket-size (%d)", 2*d.RangeBucket())
	}
	return "", ""
}

// finish carries save into the Config: "" turns automatic snapshots off.
func (st *State) finish() {
	switch {
	case st.save == "":
		st.Config.SnapshotLogSize = -1
	case st.Config.SnapshotLogSize < 0:
		st.Config.SnapshotLogSize = 0
	}
}
