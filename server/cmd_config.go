package server

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/config"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
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

func init() {
	handle("config|get", cmdConfigGet)
	handle("config|set", cmdConfigSet)
	handle("config|rewrite", cmdConfigRewrite)
	handle("config|resetstat", cmdConfigResetstat)
	handle("config|help", func(s *Server, cl *client, a [][]byte) { command.WriteHelp(cl.wr, configHelp) })
}

// kind is a setting's type: how its value is read and written.
type kind uint8

const (
	kindInt           kind = iota // a decimal integer in [lo, hi]
	kindMemory                    // bytes in [lo, hi], with redis.conf's units (100mb)
	kindEnum                      // one of enum
	kindString                    // any string
	kindSave                      // "" or pairs of seconds and changes
	kindBind                      // one address
	kindOutput                    // client-output-buffer-limit's classes (OutputBufferLimits)
	kindMemoryPercent             // bytes or a percentage (MemoryOrPercent)
)

// setting is one row of the table.
type setting struct {
	name    string
	kind    kind
	lo, hi  int64
	enum    []string
	mutable bool // CONFIG SET may change it
	// def is the value of a server started with no setting, as CONFIG GET
	// shows it: CONFIG REWRITE appends the setting to a file that lacks it
	// when its value differs, or CONFIG SET changed it.
	def string
	// doc is its line in docs/settings.md and cuckoo serve's -h; a word
	// in backquotes names the value, as package flag reads usage.
	doc string
	// noFlag keeps it off cuckoo serve's flags: the listener's settings,
	// which serve's --addr and --port give, and the fixed ones.
	noFlag bool
	// get returns the value in force, as CONFIG GET shows it.
	get func(s *Server, st *settings) string
	// set applies a checked value to st; check, if not nil, refuses a value
	// of the right type (the text after Redis's " - ").
	set   func(st *settings, v value)
	check func(v value) string
}

// value is a parsed setting: n for numbers, s for strings and enums.
type value struct {
	n int64
	s string
}

// settings are what the table reads and writes: a Config, and what a Config
// does not hold.
type settings struct {
	cfg     Config
	save    string // as given, pairs of numbers; "" turns automatic snapshots off
	bind    string // the file's, for cuckoo serve; a server reports its listener's
	port    int64  // the file's, -1 if none
	tlsPort int64  // the file's, -1 if none
}

// newSettings returns the settings of a server started with cfg: Config's
// zero fields take the defaults they mean.
func newSettings(cfg Config) settings {
	st := settings{cfg: cfg, save: defaultSave, port: -1, tlsPort: -1}
	if st.cfg.ReplicaPriority == 0 {
		st.cfg.ReplicaPriority = 100 // Config's zero value (see ReplicaPriority)
	}
	st.cfg.Limits = cfg.Limits.withDefaults()
	st.cfg.FilterDefaults = cfg.FilterDefaults.withDefaults()
	if st.cfg.AppendFsync == "" {
		st.cfg.AppendFsync = "everysec"
	}
	if st.cfg.TLS.AuthClients == "" {
		st.cfg.TLS.AuthClients = "yes"
	}
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

// yesNo is a boolean setting as redis.conf writes it.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

var settingsTable = []*setting{
	{name: "bind", doc: "the address to listen on (cuckoo serve's flag: --addr)", noFlag: true, kind: kindBind, def: "127.0.0.1",
		get: func(s *Server, st *settings) string { h, _ := s.listenAddr(false); return h },
		set: func(st *settings, v value) { st.bind = v.s }},
	{name: "port", doc: "the plain listener's port; 0 turns it off (cuckoo serve's flag: --port, or the port of --addr)", noFlag: true, kind: kindInt, lo: 0, hi: 65535, def: "6379",
		get: func(s *Server, st *settings) string { _, p := s.listenAddr(false); return p },
		set: func(st *settings, v value) { st.port = v.n }},
	{name: "tls-port", doc: "the TLS listener's port; 0 for none (cuckoo serve's flags: --tls-port, --tls-addr)", noFlag: true, kind: kindInt, lo: 0, hi: 65535, def: "0",
		get: func(s *Server, st *settings) string { _, p := s.listenAddr(true); return p },
		set: func(st *settings, v value) { st.tlsPort = v.n }},
	{name: "tls-cert-file", doc: "the server's certificate chain, PEM `file`", kind: kindString, mutable: true, def: "",
		get: func(s *Server, st *settings) string { return st.cfg.TLS.CertFile },
		set: func(st *settings, v value) { st.cfg.TLS.CertFile = v.s }},
	{name: "tls-key-file", doc: "the private key of tls-cert-file, PEM `file`", kind: kindString, mutable: true, def: "",
		get: func(s *Server, st *settings) string { return st.cfg.TLS.KeyFile },
		set: func(st *settings, v value) { st.cfg.TLS.KeyFile = v.s }},
	{name: "tls-ca-cert-file", doc: "the CAs that sign clients' certificates, PEM `file`", kind: kindString, mutable: true, def: "",
		get: func(s *Server, st *settings) string { return st.cfg.TLS.CACertFile },
		set: func(st *settings, v value) { st.cfg.TLS.CACertFile = v.s }},
	{name: "tls-auth-clients", doc: "client certificates: `yes` (required), optional (verified if given) or no (not asked for)", kind: kindEnum, enum: []string{"yes", "no", "optional"}, mutable: true, def: "yes",
		get: func(s *Server, st *settings) string { return st.cfg.TLS.AuthClients },
		set: func(st *settings, v value) { st.cfg.TLS.AuthClients = v.s }},
	{name: "tls-client-cert-file", doc: "the certificate, PEM `file`, presented to other nodes (default tls-cert-file)", kind: kindString, mutable: true, def: "",
		get: func(s *Server, st *settings) string { return st.cfg.TLS.ClientCertFile },
		set: func(st *settings, v value) { st.cfg.TLS.ClientCertFile = v.s }},
	{name: "tls-client-key-file", doc: "the private key of tls-client-cert-file, PEM `file`", kind: kindString, mutable: true, def: "",
		get: func(s *Server, st *settings) string { return st.cfg.TLS.ClientKeyFile },
		set: func(st *settings, v value) { st.cfg.TLS.ClientKeyFile = v.s }},
	{name: "tls-replication", doc: "a replica connects to its primary over TLS", kind: kindEnum, enum: []string{"yes", "no"}, mutable: true, def: "no",
		get: func(s *Server, st *settings) string { return yesNo(st.cfg.TLS.Replication) },
		set: func(st *settings, v value) { st.cfg.TLS.Replication = v.s == "yes" }},
	{name: "tls-cluster", doc: "MIGRATE connects to its target node over TLS", kind: kindEnum, enum: []string{"yes", "no"}, mutable: true, def: "no",
		get: func(s *Server, st *settings) string { return yesNo(st.cfg.TLS.Cluster) },
		set: func(st *settings, v value) { st.cfg.TLS.Cluster = v.s == "yes" }},
	{name: "dir", doc: "data `directory` (snapshot and append-only log); empty for none", kind: kindString, def: "",
		get: func(s *Server, st *settings) string { return st.cfg.Dir },
		set: func(st *settings, v value) { st.cfg.Dir = v.s }},
	{name: "appendonly", doc: "yes whenever dir is set: every write is logged (fixed; no flag)", noFlag: true, kind: kindEnum, enum: []string{"yes", "no"}, def: "no",
		get: func(s *Server, st *settings) string { return yesNo(st.cfg.Dir != "") },
		set: func(st *settings, v value) {},
		check: func(v value) string {
			if v.s == "no" {
				return `every write is logged when dir is set; set dir to "" for no persistence`
			}
			return ""
		}},
	{name: "appendfsync", doc: "when the log is flushed to disk: `always` (before each reply), everysec or no", kind: kindEnum, enum: []string{"always", "everysec", "no"}, def: "everysec",
		get: func(s *Server, st *settings) string { return st.cfg.AppendFsync },
		set: func(st *settings, v value) { st.cfg.AppendFsync = v.s }},
	{name: "save", doc: "`schedule`: \"\" turns automatic snapshots off; any schedule turns them on (taken when the log passes snapshot-log-size)", kind: kindSave, def: defaultSave,
		get: func(s *Server, st *settings) string { return st.save },
		set: func(st *settings, v value) { st.save = v.s }},
	{name: "snapshot-log-size", doc: "snapshot and truncate the log when it exceeds this many `bytes` (-1: never)", kind: kindMemory, lo: -1, hi: math.MaxInt64, def: itoa(defaultSnapshotLogSize),
		get: func(s *Server, st *settings) string {
			if st.cfg.SnapshotLogSize <= 0 {
				return itoa(defaultSnapshotLogSize)
			}
			return itoa(st.cfg.SnapshotLogSize)
		},
		set: func(st *settings, v value) {
			st.cfg.SnapshotLogSize = v.n
			switch {
			case v.n < 0:
				st.save = "" // never, as save "" says
			case st.save == "":
				st.save = defaultSave // a size turns snapshots on
			}
		},
		check: func(v value) string {
			if v.n == 0 {
				return "give a size (such as 64mb), or -1 for never"
			}
			return ""
		}},
	{name: "databases", doc: "1: the server has one database (fixed; no flag)", noFlag: true, kind: kindInt, lo: 1, hi: 1, def: "1",
		get: func(s *Server, st *settings) string { return "1" },
		set: func(st *settings, v value) {}},
	{name: "requirepass", doc: "the default user's `password`, which clients must AUTH with", kind: kindString, mutable: true, def: "",
		get: func(s *Server, st *settings) string { return st.cfg.RequirePass },
		set: func(st *settings, v value) { st.cfg.RequirePass = v.s }},
	{name: "replicaof", doc: "start as a replica of this primary: \"`host port`\" (REPLICAOF at runtime)", kind: kindString, def: "",
		get: func(s *Server, st *settings) string { return s.replicaOfSetting() },
		set: func(st *settings, v value) { st.cfg.ReplicaOf = v.s }},
	{name: "masteruser", doc: "the `user` a replica authenticates to its primary as (with masterauth)", kind: kindString, mutable: true, def: "",
		get: func(s *Server, st *settings) string { return st.cfg.MasterUser },
		set: func(st *settings, v value) { st.cfg.MasterUser = v.s }},
	{name: "masterauth", doc: "the `password` a replica authenticates to its primary with", kind: kindString, mutable: true, def: "",
		get: func(s *Server, st *settings) string { return st.cfg.MasterAuth },
		set: func(st *settings, v value) { st.cfg.MasterAuth = v.s }},
	{name: "repl-backlog-size", doc: "`bytes` of the replication stream kept for replicas that reconnect", kind: kindMemory, lo: 16 << 10, hi: math.MaxInt64, def: itoa(defaultBacklog),
		get: func(s *Server, st *settings) string { return itoa(s.repl.size) },
		set: func(st *settings, v value) { st.cfg.ReplBacklogSize = v.n }},
	{name: "replica-priority", doc: "`priority`: Sentinel promotes the replica of lowest priority first; 0: never", kind: kindInt, lo: 0, hi: math.MaxInt32, mutable: true, def: "100",
		get: func(s *Server, st *settings) string { return itoa(int64(max(st.cfg.ReplicaPriority, 0))) },
		set: func(st *settings, v value) { st.cfg.ReplicaPriority = priorityConfig(v.n) }},
	{name: "replica-read-only", doc: "yes: a replica refuses writes (fixed; no flag)", noFlag: true, kind: kindEnum, enum: []string{"yes"}, def: "yes",
		get: func(s *Server, st *settings) string { return "yes" },
		set: func(st *settings, v value) {}},
	{name: "cluster-enabled", doc: "cluster mode: the Redis Cluster protocol (slots, MOVED, ASK, CLUSTER SLOTS), with the topology set by CUCKOO.CLUSTER SETCONFIG and kept in dir; starts owning no slots", kind: kindEnum, enum: []string{"yes", "no"}, def: "no",
		get: func(s *Server, st *settings) string { return yesNo(st.cfg.ClusterEnabled || st.cfg.ClusterEmulated) },
		set: func(st *settings, v value) { st.cfg.ClusterEnabled = v.s == "yes" }},
	// cluster-emulated is this server's own (--cluster-emulated): without it
	// CONFIG REWRITE of an emulated node would write cluster-enabled alone,
	// and the node would come back owning no slots.
	{name: "cluster-emulated", doc: "cluster mode with this node owning all 16384 slots alone, so that cluster clients work against one server", kind: kindEnum, enum: []string{"yes", "no"}, def: "no",
		get: func(s *Server, st *settings) string { return yesNo(st.cfg.ClusterEmulated) },
		set: func(st *settings, v value) { st.cfg.ClusterEmulated = v.s == "yes" }},
	{name: "aclfile", doc: "the `file` of the users (ACL SETUSER's rules, one user a line): loaded at start if it exists, written by ACL SAVE", kind: kindString, def: "",
		get: func(s *Server, st *settings) string { return st.cfg.ACLFile },
		set: func(st *settings, v value) { st.cfg.ACLFile = v.s }},
	{name: "maxclients", doc: "`N` connections at most", kind: kindInt, lo: 1, hi: 1_000_000, mutable: true, def: itoa(limits.DefaultMaxClients),
		get: func(s *Server, st *settings) string { return itoa(int64(st.cfg.Limits.MaxClients)) },
		set: func(st *settings, v value) { st.cfg.Limits.MaxClients = int(v.n) }},
	{name: "timeout", doc: "close a client idle (or stuck mid-request) for this many `seconds` (0: never)", kind: kindInt, lo: 0, hi: math.MaxInt32, mutable: true, def: "0",
		get: func(s *Server, st *settings) string { return itoa(int64(st.cfg.Limits.Timeout / time.Second)) },
		set: func(st *settings, v value) { st.cfg.Limits.Timeout = time.Duration(v.n) * time.Second }},
	{name: "proto-max-bulk-len", doc: "longest argument of a request, in `bytes`", kind: kindMemory, lo: 1, hi: math.MaxInt, mutable: true, def: itoa(limits.DefaultMaxBulk),
		get: func(s *Server, st *settings) string { return itoa(int64(st.cfg.Limits.MaxBulk)) },
		set: func(st *settings, v value) { st.cfg.Limits.MaxBulk = int(v.n) }},
	{name: "max-item-size", doc: "longest item or key a command takes, in `bytes` (dump chunks: proto-max-bulk-len)", kind: kindMemory, lo: 1, hi: math.MaxInt, mutable: true, def: itoa(limits.DefaultMaxItem),
		get: func(s *Server, st *settings) string { return itoa(int64(st.cfg.Limits.MaxItem)) },
		set: func(st *settings, v value) { st.cfg.Limits.MaxItem = int(v.n) }},
	{name: "max-args", doc: "`N` arguments at most in one request", kind: kindInt, lo: 1, hi: math.MaxInt32, mutable: true, def: itoa(limits.DefaultMaxArgs),
		get: func(s *Server, st *settings) string { return itoa(int64(st.cfg.Limits.MaxArgs)) },
		set: func(st *settings, v value) { st.cfg.Limits.MaxArgs = int(v.n) }},
	{name: "client-query-buffer-limit", doc: "`bytes` of pending requests a client may buffer", kind: kindMemory, lo: 1, hi: math.MaxInt, mutable: true, def: itoa(limits.DefaultQueryBuffer),
		get: func(s *Server, st *settings) string { return itoa(int64(st.cfg.Limits.QueryBuffer)) },
		set: func(st *settings, v value) { st.cfg.Limits.QueryBuffer = int(v.n) }},
	{name: "client-output-buffer-limit", doc: "\"`class hard soft seconds` ...\": a client of the class (normal, replica, pubsub) past hard bytes of pending replies, or past soft for seconds, is closed", kind: kindOutput, mutable: true, def: (&limits.OutputBuffer{}).ConfigGet(),
		get: func(s *Server, st *settings) string {
			return (*limits.OutputBuffer)(&st.cfg.Limits.OutputBuffer).ConfigGet()
		},
		set: func(st *settings, v value) { st.cfg.Limits.OutputBuffer.Set(v.s) }},
	{name: "maxmemory-clients", doc: "`bytes` (or a percentage of maxmemory) all clients may hold together; past it the clients holding the most are closed (0: no limit)", kind: kindMemoryPercent, mutable: true, def: "0",
		get: func(s *Server, st *settings) string { return st.cfg.Limits.MaxMemoryClients.String() },
		set: func(st *settings, v value) { st.cfg.Limits.MaxMemoryClients = MemoryOrPercent(v.n) }},
	{name: "maxmemory", doc: "`bytes` of filters and clients at most, as redis.conf writes sizes: 100mb, 2gb (0: no limit)", kind: kindMemory, lo: 0, hi: math.MaxInt64, mutable: true, def: "0",
		get: func(s *Server, st *settings) string { return itoa(st.cfg.MaxMemory) },
		set: func(st *settings, v value) { st.cfg.MaxMemory = v.n }},
	{name: "max-filter-memory", doc: "`bytes` one filter may take at most, so that no single command reserves more (0: the machine's memory)", kind: kindMemory, lo: 0, hi: math.MaxInt64, def: "0",
		get: func(s *Server, st *settings) string { return itoa(st.cfg.MaxFilterMemory) },
		set: func(st *settings, v value) { st.cfg.MaxFilterMemory = v.n }},
	{name: "cf-bucket-size", doc: "`slots`: BUCKETSIZE of filters created without one", kind: kindInt, lo: 1, hi: cf.MaxBucketSize, mutable: true, def: "2",
		get: func(s *Server, st *settings) string { return itoa(st.cfg.FilterDefaults.rangeBucket()) },
		set: func(st *settings, v value) { st.cfg.FilterDefaults.BucketSize = v.n }},
	{name: "cf-initial-size", doc: "`items`: CAPACITY of filters CF.ADD and CF.INSERT create (at least twice cf-bucket-size)", kind: kindInt, lo: 4, hi: cf.MaxCapacity, mutable: true, def: itoa(cf.DefaultCapacity),
		get: func(s *Server, st *settings) string { return itoa(st.cfg.FilterDefaults.InitialSize) },
		set: func(st *settings, v value) { st.cfg.FilterDefaults.InitialSize = v.n }},
	{name: "cf-expansion-factor", doc: "`factor`: EXPANSION of filters created without one (0: they never grow)", kind: kindInt, lo: 0, hi: cf.MaxExpansion, mutable: true, def: itoa(cf.DefaultExpansion),
		get: func(s *Server, st *settings) string { return itoa(st.cfg.FilterDefaults.Expansion) },
		set: func(st *settings, v value) { st.cfg.FilterDefaults.Expansion = v.n }},
	{name: "cf-max-expansions", doc: "`N`: inserts are refused once a filter has this many sub-filters", kind: kindInt, lo: 1, hi: 65536, mutable: true, def: itoa(cf.DefaultMaxExpansions),
		get: func(s *Server, st *settings) string { return itoa(st.cfg.FilterDefaults.MaxExpansions) },
		set: func(st *settings, v value) { st.cfg.FilterDefaults.MaxExpansions = v.n }},
	{name: "cf-max-iterations", doc: "`N`: MAXITERATIONS of filters created without one", kind: kindInt, lo: 1, hi: cf.MaxIterations, mutable: true, def: itoa(cf.DefaultMaxIter),
		get: func(s *Server, st *settings) string { return itoa(st.cfg.FilterDefaults.MaxIterations) },
		set: func(st *settings, v value) { st.cfg.FilterDefaults.MaxIterations = v.n }},
}

// defaultSnapshotLogSize is the log size that triggers a snapshot when
// Config.SnapshotLogSize is 0.
const defaultSnapshotLogSize = 64 << 20

func findSetting(name string) *setting {
	for _, x := range settingsTable {
		if x.name == name {
			return x
		}
	}
	return nil
}

// parse reads v as x's value; on failure it returns Redis's reason.
func (x *setting) parse(v string) (value, string) {
	var out value
	switch x.kind {
	case kindInt, kindMemory:
		var ok bool
		if x.kind == kindInt {
			n, err := strconv.ParseInt(v, 10, 64)
			out.n, ok = n, err == nil
		} else if out.n, ok = config.ParseMemory(v); !ok && v == "-1" && x.lo < 0 {
			out.n, ok = -1, true // a size's "never" (snapshot-log-size)
		}
		switch {
		case !ok && x.kind == kindInt:
			return out, "argument couldn't be parsed into an integer"
		case !ok:
			return out, "argument must be a memory value"
		case out.n < x.lo || out.n > x.hi:
			return out, fmt.Sprintf("argument must be between %d and %d inclusive", x.lo, x.hi)
		}
	case kindEnum:
		out.s = strings.ToLower(v)
		found := false
		for _, e := range x.enum {
			found = found || e == out.s
		}
		if !found {
			return out, "argument(s) must be one of the following: " + strings.Join(x.enum, ", ")
		}
	case kindSave:
		f := strings.Fields(v)
		if len(f)%2 != 0 {
			return out, "Invalid save parameters"
		}
		for _, n := range f {
			if _, err := strconv.ParseUint(n, 10, 31); err != nil {
				return out, "Invalid save parameters"
			}
		}
		out.s = strings.Join(f, " ")
	case kindBind:
		if f := strings.Fields(v); len(f) != 1 {
			return out, "this server listens on one address"
		}
		out.s = strings.TrimSpace(v)
	case kindOutput:
		var probe OutputBufferLimits
		if err := probe.Set(v); err != nil {
			return out, err.Error()
		}
		out.s = v
	case kindMemoryPercent:
		var m MemoryOrPercent
		if err := m.Set(v); err != nil {
			return out, err.Error()
		}
		out.n = int64(m)
	default:
		out.s = v
	}
	if x.check != nil {
		if msg := x.check(out); msg != "" {
			return out, msg
		}
	}
	return out, ""
}

// line is x's line in a configuration file for the value v, as CONFIG GET
// shows it.
func (x *setting) line(v string) string {
	switch x.kind {
	case kindMemory:
		if n, ok := config.ParseMemory(v); ok {
			return x.name + " " + config.FormatMemory(n)
		}
	case kindString:
		return x.name + " " + quoted.Quote(v)
	case kindSave:
		if v == "" {
			return `save ""`
		}
	case kindOutput:
		// One line a class, as Redis writes them (with "replica").
		var l limits.OutputBuffer
		if l.Set(v) == nil {
			return x.name + " " + strings.Join(l.Lines(), "\n"+x.name+" ")
		}
	case kindMemoryPercent:
		if n, ok := config.ParseMemory(v); ok {
			return x.name + " " + config.FormatMemory(n)
		}
	}
	return x.name + " " + v
}

// check refuses settings that are valid one by one but not together, and
// returns the setting to blame and why.
func (st *settings) check() (string, string) {
	d := &st.cfg.FilterDefaults
	if d.InitialSize < 2*d.rangeBucket() {
		return "cf-initial-size", fmt.Sprintf("cf-initial-size must be at least twice cf-bucket-size (%d)", 2*d.rangeBucket())
	}
	return "", ""
}

// finish carries save into the Config: "" turns automatic snapshots off.
func (st *settings) finish() {
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
	st      settings        // guarded by mu
	changed map[string]bool // settings CONFIG SET changed; guarded by mu
	pass    atomic.Pointer[string]
	limits  atomic.Pointer[Limits]
}

// initConfig sets the settings in force from cfg; New calls it before
// anything reads them.
func (s *Server) initConfig(cfg Config) {
	s.conf.st = newSettings(cfg)
	s.conf.changed = map[string]bool{}
	s.publish(&s.conf.st)
}

// publish stores the atomics the request paths read from st.
func (s *Server) publish(st *settings) {
	s.store.maxmem.Store(st.cfg.MaxMemory)
	pass := st.cfg.RequirePass
	if old := s.conf.pass.Load(); old == nil || *old != pass {
		// requirepass is the default user's password: set when it
		// changes, so ACL SETUSER default rules stand otherwise.
		s.setDefaultPassword(pass)
	}
	s.conf.pass.Store(&pass)
	lim := st.cfg.Limits.withDefaults()
	s.conf.limits.Store(&lim)
	s.cmem.evictAt.Store(lim.MaxMemoryClients.Bytes(st.cfg.MaxMemory))
	s.wakeCron() // a lower maxmemory-clients evicts at once
	d := st.cfg.FilterDefaults.withDefaults()
	s.cfDefaults.Store(&d)
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

// CONFIG GET pattern [pattern ...]: the settings whose names match any of
// the glob patterns (any case), as a map (RESP2: a flat array).
func cmdConfigGet(s *Server, cl *client, a [][]byte) {
	s.conf.mu.Lock()
	st := s.conf.st
	s.conf.mu.Unlock()
	var out []*setting
	for _, x := range settingsTable {
		for _, p := range a[2:] {
			if match.Match(x.name, strings.ToLower(string(p))) {
				out = append(out, x)
				break
			}
		}
	}
	cl.wr.WriteMap(len(out))
	for _, x := range out {
		cl.wr.WriteBulkString(x.name)
		cl.wr.WriteBulkString(x.get(s, &st))
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
		s.writeErr(cl, replyErr(fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, why)))
	}
	xs := make([]*setting, 0, len(a)/2-1)
	for i := 2; i < len(a); i += 2 {
		name := printable(a[i], 128)
		x := findSetting(strings.ToLower(name))
		switch {
		case x == nil:
			s.writeErr(cl, replyErr(fmt.Sprintf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", name)))
			return
		case !x.mutable:
			failed(name, "can't set immutable config")
			return
		}
		for _, y := range xs {
			if y == x {
				failed(name, "duplicate parameter")
				return
			}
		}
		xs = append(xs, x)
	}
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	next := s.conf.st
	for i, x := range xs {
		v, why := x.parse(string(a[3+2*i]))
		if why != "" {
			failed(x.name, why)
			return
		}
		x.set(&next, v)
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
		s.conf.changed[x.name] = true
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
	lines := make([]config.Setting, len(settingsTable))
	for i, x := range settingsTable {
		v := x.get(s, &s.conf.st)
		lines[i] = config.Setting{Name: x.name, Line: x.line(v), Append: v != x.def || s.conf.changed[x.name]}
	}
	return config.WriteFile(s.cfg.ConfigFile, config.Rewrite(old, lines))
}

// CONFIG RESETSTAT: INFO's stats counters back to zero.
func cmdConfigResetstat(s *Server, cl *client, a [][]byte) {
	for _, c := range []*atomic.Int64{&s.stats.conns, &s.stats.rejected, &s.stats.cmds, &s.stats.errors, &s.stats.hits, &s.stats.misses,
		&s.cmem.evicted, &s.cmem.outputClosed, &s.cmem.queryClosed} {
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
	data, err := os.ReadFile(path)
	if err != nil {
		return Listen{}, err
	}
	ds, err := config.Parse(path, data)
	if err != nil {
		return Listen{}, err
	}
	st := newSettings(*cfg)
	for _, d := range ds {
		x := findSetting(d.Name)
		if x == nil {
			return Listen{}, &config.Error{File: path, Line: d.Line, Msg: fmt.Sprintf("unknown setting '%s'", d.Name)}
		}
		var arg string
		switch {
		case x.kind == kindSave || x.kind == kindBind || x.kind == kindOutput:
			arg = strings.Join(d.Args, " ")
		case len(d.Args) != 1:
			return Listen{}, &config.Error{File: path, Line: d.Line, Msg: fmt.Sprintf("%s: wrong number of arguments (want one value)", d.Name)}
		default:
			arg = d.Args[0]
		}
		v, why := x.parse(arg)
		if why != "" {
			return Listen{}, &config.Error{File: path, Line: d.Line, Msg: fmt.Sprintf("%s: %s", d.Name, why)}
		}
		x.set(&st, v)
	}
	if name, why := st.check(); why != "" {
		return Listen{}, fmt.Errorf("%s: %s: %s", path, name, why)
	}
	st.finish()
	*cfg = st.cfg
	cfg.ConfigFile = path
	return Listen{Bind: st.bind, Port: int(st.port), TLSPort: int(st.tlsPort)}, nil
}
