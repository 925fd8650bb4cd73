package server

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/cuckoohash/cuckoo/server/internal/conf"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// CONFIG GET/SET/REWRITE/RESETSTAT/HELP: each parses its request, calls
// package internal/conf (the one table of settings, each with its Redis
// name, type and range, whether CONFIG SET may change it, how to read it
// and how to apply it) and replies. What the settings in force do to the
// running server is this file's: publish stores them where the requests
// read them.
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
	b = append(b, binding{name: "config|help", run: func(s *Server, cl *client, a [][]byte) { cl.wr.WriteHelp(configHelp) }})
	return b
}

// liveConfig holds the settings of a running server (see the protocol at
// the top of this file).
type liveConfig struct {
	mu      sync.Mutex
	st      conf.State      // guarded by mu
	changed map[string]bool // settings CONFIG SET changed; guarded by mu
	pass    atomic.Pointer[string]
	limits  atomic.Pointer[Limits]
}

// initConfig sets the settings in force from cfg; New calls it before
// anything reads them.
func (s *Server) initConfig(cfg Config) {
	s.conf.st = conf.NewState(cfg)
	s.conf.changed = map[string]bool{}
	s.publish(&s.conf.st)
}

// publish stores the atomics the request paths read from st.
func (s *Server) publish(st *conf.State) {
	s.store.Maxmem.Store(st.Config.MaxMemory)
	pass := st.Config.RequirePass
	if old := s.conf.pass.Load(); old == nil || *old != pass {
		// requirepass is the default user's password: set when it
		// changes, so ACL SETUSER default rules stand otherwise.
		s.setDefaultPassword(pass)
	}
	s.conf.pass.Store(&pass)
	lim := st.Config.Limits.WithDefaults()
	s.conf.limits.Store(&lim)
	s.cmem.SetEvictAt(lim.MaxMemoryClients.Bytes(st.Config.MaxMemory)) // a lower one evicts at once
	// st's defaults were filled in once (conf.NewState): filling them
	// again here would take CONFIG SET cf-expansion-factor 0 for unset.
	d := st.Config.FilterDefaults
	s.cfDefaults.Store(&d)
	s.setMinReplicas(&st.Config)
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

// live is the server as the settings table reads it (conf.Live): the values
// that are the server's, not a Config's. It is a type of its own so that
// these methods are not Server's.
type live Server

func (l *live) ListenAddr(isTLS bool) (host, port string) { return (*Server)(l).listenAddr(isTLS) }
func (l *live) ReplicaOf() string                         { return (*Server)(l).replicaOfSetting() }
func (l *live) BacklogSize() int64                        { return (*Server)(l).repl.BacklogSize() }

// CONFIG GET pattern [pattern ...]: the settings whose names (or aliases)
// match any of the glob patterns (any case), as a map (RESP2: a flat array).
func cmdConfigGet(s *Server, cl *client, a [][]byte) {
	s.conf.mu.Lock()
	st := s.conf.st
	s.conf.mu.Unlock()
	patterns := make([]string, len(a)-2)
	for i, p := range a[2:] {
		patterns[i] = string(p)
	}
	out := conf.Get((*live)(s), &st, patterns)
	cl.wr.WriteMap(len(out))
	for _, p := range out {
		cl.wr.WriteBulkString(p.Name)
		cl.wr.WriteBulkString(p.Value)
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
	pairs := make([]string, len(a)-2)
	for i, arg := range a[2:] {
		if pairs[i] = string(arg); i%2 == 0 {
			pairs[i] = quoted.Printable(arg, 128)
		}
	}
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	next := s.conf.st
	names, err := conf.Set(&next, pairs)
	if err != nil {
		s.writeErr(cl, replyErr("ERR "+err.Error()))
		return
	}
	tlsConf, tlsClient, name, why := s.tls.Reload(names, next.Config.TLS)
	if why != "" {
		s.writeErr(cl, replyErr("ERR "+(&conf.SetError{Name: name, Why: why}).Error()))
		return
	}
	s.conf.st = next
	for _, name := range names {
		s.conf.changed[name] = true
	}
	s.publish(&s.conf.st)
	if tlsConf != nil {
		s.tls.Put(tlsConf, tlsClient, next.Config.TLS.CertFile)
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

// rewriteConfig rewrites Config.ConfigFile in place with the settings in
// force (conf.Rewrite).
func (s *Server) rewriteConfig() error {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	return conf.Rewrite(s.cfg.ConfigFile, (*live)(s), &s.conf.st, func(name string) bool { return s.conf.changed[name] })
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
type Listen = conf.Listen

// ReadConfigFile applies the settings of the file at path, in redis.conf's
// syntax (see package internal/conf), to cfg, and sets cfg.ConfigFile to
// path. It returns the file's bind and port. An unknown setting or a bad
// value is an error naming the file, the line and the setting; cfg is then
// unchanged.
func ReadConfigFile(path string, cfg *Config) (Listen, error) { return conf.ReadFile(path, cfg) }
