package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/cuckoohash/cuckoo/server"
)

const serveDescribe = `
Serve cuckoo filters over the Redis protocol: RedisBloom's CF.* commands
(CF.RESERVE, CF.ADD, CF.EXISTS, ...) and the key-space commands clients send.
Every write is logged to --dir before it is answered; with --appendfsync
always, an answered write survives kill -9 and power loss. SIGTERM and SIGINT
stop it gracefully. Try: redis-cli -p 6379 CF.ADD k hello

Sizes in bytes are written as in redis.conf: plain bytes, or with a unit
of any case, k, m, g for 1000, 1000^2, 1000^3 and kb, mb, gb for 1024,
1024^2, 1024^3 (--maxmemory 2gb). Flags are checked, and the address
bound, before the data directory is created or touched.

--config FILE reads the settings from a file in redis.conf's syntax (one
"name value" a line: port, bind, dir, appendfsync, requirepass, maxmemory,
...); flags given on the command line override it, and CONFIG REWRITE
writes the settings in force back to it. Every setting is also a flag of
the same name below; docs/settings.md lists them all.

TLS, with redis.conf's names: --tls-port N serves TLS on the host of --addr
(--tls-addr HOST:PORT instead: :0 picks a free port) with --tls-cert-file
and --tls-key-file; --tls-auth-clients yes (the default) requires a client
certificate signed by a CA of --tls-ca-cert-file, optional verifies one if
given, no asks for none. --port 0 turns the plain port off. Try:
redis-cli --tls --cacert ca.crt --cert client.crt --key client.key -p 6380 PING
Between nodes: --tls-replication (a replica to its primary) and --tls-cluster
(MIGRATE to its target) connect over TLS, verifying the other node against
--tls-ca-cert-file and presenting --tls-client-cert-file (default
--tls-cert-file, which must then allow client authentication too).

Cluster mode: --cluster-enabled speaks the Redis Cluster protocol (slots,
MOVED, ASK, CLUSTER SLOTS/SHARDS/NODES) for cluster clients; the node owns
no slots until CUCKOO.CLUSTER SETCONFIG <json> gives it a topology, which it
keeps in --dir (cluster.json). --cluster-emulated: one node owning every
slot, for a cluster client against a single server. See go doc ./server.`

// gcPercent is the server's GOGC unless the environment sets one.
const gcPercent = 20

// serveOptions are serve's flags, the settings and the listeners'
// addresses, resolved and checked before anything is created.
type serveOptions struct {
	cfg server.Config
	// addr is the plain listener's address, unless plainOff; tlsAddr the TLS
	// listener's, "" for none; metrics the metrics server's, "" for none.
	addr, tlsAddr, metrics string
	// cpuProfile is the file the run's CPU profile is written to, "" for
	// none.
	cpuProfile    string
	plainOff      bool
	port, tlsPort int64 // --port and --tls-port, or the file's
}

// runServe is "cuckoo serve".
func runServe(e *env, args []string) error {
	o, err := parseServeFlags(e, args)
	if err != nil {
		return err
	}
	ls, err := o.listen()
	if err != nil {
		return err
	}
	defer ls.close() // Serve closes them too; this covers the failures before
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stop(log)
	}
	if os.Getenv("GOGC") == "" {
		// The heap is mostly filters: long-lived and free of pointers, so a
		// collection costs little, while Go's default (GOGC=100) lets
		// garbage grow to their size before collecting: resident memory
		// peaked at 2.1x the filters in a soak, 1.3x with 20
		// (bench/cmd/soak).
		debug.SetGCPercent(gcPercent)
	}
	cfg := o.cfg
	cfg.Logger = log
	if o.metrics != "" {
		cfg.Metrics = server.NewMetrics()
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	if ls.metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", cfg.Metrics.Handler())
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go hs.Serve(ls.metrics)
		defer hs.Close()
		log.Info("metrics", "addr", ls.metrics.Addr().String())
	}
	return serveUntilSignal(srv, log, ls, cfg)
}

// startCPUProfile creates file and profiles the process into it until stop,
// which logs what it wrote.
func startCPUProfile(file string) (stop func(*slog.Logger), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("serve: --cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("serve: --cpuprofile %s: %w", file, err)
	}
	return func(log *slog.Logger) {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			log.Error("cpu profile", "file", file, "err", err)
			return
		}
		log.Info("cpu profile written", "file", file)
	}, nil
}

// parseServeFlags parses serve's flags and --config's file into its
// options. Every check comes before anything is created: the data
// directory, a listener.
func parseServeFlags(e *env, args []string) (*serveOptions, error) {
	fs := e.flags(serveDescribe)
	// The listener's flags and the tool's own; every other flag is a
	// setting of the server's table, named as in redis.conf.
	addr := fs.String("addr", "127.0.0.1:6379", "listen address")
	port := countVar(fs, "port", 6379, 0, 65535, "the `port` of --addr; 0: no plain listener, only TLS (--addr HOST:0 picks a free port)")
	tlsPort := countVar(fs, "tls-port", 0, 0, 65535, "serve TLS on this `port`, on the host of --addr (0: no TLS listener)")
	tlsAddr := fs.String("tls-addr", "", "serve TLS on this `address` (HOST:0 picks a free port); overrides --tls-port")
	metrics := fs.String("metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics")
	repair := fs.Bool("repair", false, "start even if a file is damaged or both snapshots are missing: cut a log at its first bad record, replace a damaged snapshot by the previous one and its logs, or replay the logs alone (the refusal says which)")
	confFile := fs.String("config", "", "read the settings from this `file` (redis.conf's syntax); flags given explicitly override it")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this `file` (pprof's format) when the server stops: what cmd/cuckoo/default.pgo, the profile the build optimizes for, is made from (bench/scripts/pgo-profile.sh)")
	settings := server.AddSettingFlags(fs, map[string]string{"dir": "./cuckoo-data"})
	if err := e.parse(fs, args, nil, 0); err != nil {
		return nil, err
	}
	// The flags' values, defaults included; with --config, the file's
	// settings replace them, then the flags given explicitly win again, as
	// redis-server's command line overrides its file.
	o := &serveOptions{cfg: server.Config{Repair: *repair}, addr: *addr, tlsAddr: *tlsAddr, metrics: *metrics,
		cpuProfile: *cpuProfile, port: port.n, tlsPort: tlsPort.n}
	if err := settings.Apply(&o.cfg, false); err != nil {
		return nil, e.usageErrorf("%v", err)
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	// The plain listener is off with port 0 (--port, or the file's
	// without --addr), as in redis.conf.
	o.plainOff = explicit["port"] && o.port == 0
	if *confFile != "" {
		listen, err := server.ReadConfigFile(*confFile, &o.cfg)
		if err != nil {
			return nil, fmt.Errorf("serve: --config: %w", err)
		}
		if err := settings.Apply(&o.cfg, true); err != nil {
			return nil, e.usageErrorf("%v", err)
		}
		o.applyListen(listen, explicit)
	}
	if err := o.resolveAddrs(e, explicit); err != nil {
		return nil, err
	}
	if o.tlsAddr != "" || o.cfg.TLS.CertFile != "" || o.cfg.TLS.KeyFile != "" {
		// The files are read now, so that a missing one stops startup
		// with its name before anything is created; New reads them again.
		if _, err := server.TLSConfig(o.cfg.TLS); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	return o, nil
}

// applyListen takes the config file's bind, port and tls-port where no
// flag gave them.
func (o *serveOptions) applyListen(listen server.Listen, explicit map[string]bool) {
	if !explicit["addr"] && (listen.Bind != "" || listen.Port >= 0) {
		host, port := "127.0.0.1", 6379
		if listen.Bind != "" {
			host = listen.Bind
		}
		if listen.Port >= 0 {
			port = listen.Port
		}
		o.addr = net.JoinHostPort(host, strconv.Itoa(port))
		o.plainOff = o.plainOff || listen.Port == 0 && !explicit["port"]
	}
	if !explicit["tls-port"] && listen.TLSPort >= 0 {
		o.tlsPort = int64(listen.TLSPort)
	}
}

// resolveAddrs puts --port into the plain address and --tls-port into the
// TLS one, and refuses options that name two ports or no listener.
func (o *serveOptions) resolveAddrs(e *env, explicit map[string]bool) error {
	if explicit["port"] && o.port > 0 {
		host, p, err := net.SplitHostPort(o.addr)
		if err != nil {
			return e.usageErrorf("--addr %s: %v", o.addr, err)
		}
		if explicit["addr"] && p != strconv.FormatInt(o.port, 10) {
			// Which one was meant cannot be told: say so rather than
			// listen on one of them.
			return e.usageErrorf("--addr %s and --port %d name two ports: give it once (--addr HOST:PORT, or --port PORT with the host's default)", o.addr, o.port)
		}
		o.addr = net.JoinHostPort(host, strconv.FormatInt(o.port, 10))
	}
	if o.tlsAddr == "" && o.tlsPort > 0 {
		host, _, err := net.SplitHostPort(o.addr)
		if err != nil {
			return e.usageErrorf("--addr %s: %v", o.addr, err)
		}
		o.tlsAddr = net.JoinHostPort(host, strconv.FormatInt(o.tlsPort, 10))
	}
	if o.plainOff && o.tlsAddr == "" {
		return e.usageErrorf("--port 0 turns the plain listener off, and no TLS listener is given (--tls-port): nothing to serve")
	}
	return nil
}

// serveListeners are serve's listeners, nil where off.
type serveListeners struct {
	plain, tls, metrics net.Listener
}

// listen opens o's listeners; on failure it closes those it opened.
func (o *serveOptions) listen() (ls serveListeners, err error) {
	defer func() {
		if err != nil {
			ls.close()
		}
	}()
	if !o.plainOff {
		if ls.plain, err = net.Listen("tcp", o.addr); err != nil {
			return ls, fmt.Errorf("serve: --addr %s: %w", o.addr, err)
		}
	}
	if o.tlsAddr != "" {
		if ls.tls, err = net.Listen("tcp", o.tlsAddr); err != nil {
			return ls, fmt.Errorf("serve: TLS address %s: %w", o.tlsAddr, err)
		}
	}
	if o.metrics != "" {
		if ls.metrics, err = net.Listen("tcp", o.metrics); err != nil {
			return ls, fmt.Errorf("serve: --metrics-addr %s: %w", o.metrics, err)
		}
	}
	return ls, nil
}

func (ls serveListeners) close() {
	for _, l := range []net.Listener{ls.plain, ls.tls, ls.metrics} {
		if l != nil {
			l.Close()
		}
	}
}

// serveUntilSignal serves srv on ls until it shuts down of itself
// (SHUTDOWN) or SIGTERM or SIGINT shuts it down.
func serveUntilSignal(srv *server.Server, log *slog.Logger, ls serveListeners, cfg server.Config) error {
	// The ready line: tests and scripts wait for it. It names addr, the
	// plain listener's address, unless that is off, then tls_addr, the TLS
	// listener's, if any.
	var ready []any
	served, serving := make(chan error, 2), 0
	if ls.plain != nil {
		ready = append(ready, "addr", ls.plain.Addr().String())
		go func() { served <- srv.Serve(ls.plain) }()
		serving++
	}
	if ls.tls != nil {
		ready = append(ready, "tls_addr", ls.tls.Addr().String())
		go func() { served <- srv.ServeTLS(ls.tls) }()
		serving++
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	log.Info("ready to accept connections", append(ready, "dir", cfg.Dir, "appendfsync", cfg.AppendFsync)...)
	select {
	case err := <-served:
		// Serve ends on its own after SHUTDOWN (ErrServerClosed): Close
		// then waits for that shutdown and returns its result.
		cerr := srv.Close()
		if errors.Is(err, server.ErrServerClosed) {
			return cerr
		}
		return err
	case s := <-sig:
		log.Info("shutting down", "signal", s.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	for range serving {
		if err := <-served; err != nil && !errors.Is(err, server.ErrServerClosed) {
			return err
		}
	}
	return nil
}
