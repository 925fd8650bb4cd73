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

// runServe is "cuckoo serve".
func runServe(e *env, args []string) error {
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
	settings := server.AddSettingFlags(fs, map[string]string{"dir": "./cuckoo-data"})
	if err := e.parse(fs, args, nil, 0); err != nil {
		return err
	}
	// Every check comes before anything is created: the data directory,
	// a listener. The flags' values, defaults included; with --config, the
	// file's settings replace them, then the flags given explicitly win
	// again, as redis-server's command line overrides its file.
	cfg := server.Config{Repair: *repair}
	if err := settings.Apply(&cfg, false); err != nil {
		return e.usageErrorf("%v", err)
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	// The plain listener is off with port 0 (--port, or the file's
	// without --addr), as in redis.conf.
	plainOff := explicit["port"] && port.n == 0
	if *confFile != "" {
		listen, err := server.ReadConfigFile(*confFile, &cfg)
		if err != nil {
			return fmt.Errorf("serve: --config: %w", err)
		}
		if err := settings.Apply(&cfg, true); err != nil {
			return e.usageErrorf("%v", err)
		}
		if !explicit["addr"] && (listen.Bind != "" || listen.Port >= 0) {
			host, port := "127.0.0.1", 6379
			if listen.Bind != "" {
				host = listen.Bind
			}
			if listen.Port >= 0 {
				port = listen.Port
			}
			*addr = net.JoinHostPort(host, strconv.Itoa(port))
			plainOff = plainOff || listen.Port == 0 && !explicit["port"]
		}
		if !explicit["tls-port"] && listen.TLSPort >= 0 {
			tlsPort.n = int64(listen.TLSPort)
		}
	}
	if explicit["port"] && port.n > 0 {
		host, p, err := net.SplitHostPort(*addr)
		if err != nil {
			return e.usageErrorf("--addr %s: %v", *addr, err)
		}
		if explicit["addr"] && p != strconv.FormatInt(port.n, 10) {
			// Which one was meant cannot be told: say so rather than
			// listen on one of them.
			return e.usageErrorf("--addr %s and --port %d name two ports: give it once (--addr HOST:PORT, or --port PORT with the host's default)", *addr, port.n)
		}
		*addr = net.JoinHostPort(host, strconv.FormatInt(port.n, 10))
	}
	if *tlsAddr == "" && tlsPort.n > 0 {
		host, _, err := net.SplitHostPort(*addr)
		if err != nil {
			return e.usageErrorf("--addr %s: %v", *addr, err)
		}
		*tlsAddr = net.JoinHostPort(host, strconv.FormatInt(tlsPort.n, 10))
	}
	if plainOff && *tlsAddr == "" {
		return e.usageErrorf("--port 0 turns the plain listener off, and no TLS listener is given (--tls-port): nothing to serve")
	}
	if *tlsAddr != "" || cfg.TLS.CertFile != "" || cfg.TLS.KeyFile != "" {
		// The files are read now, so that a missing one stops startup
		// with its name before anything is created; New reads them again.
		if _, err := server.TLSConfig(cfg.TLS); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	var ln, tln net.Listener
	if !plainOff {
		var err error
		if ln, err = net.Listen("tcp", *addr); err != nil {
			return fmt.Errorf("serve: --addr %s: %w", *addr, err)
		}
		defer ln.Close() // Serve closes it too; this covers the failures before
	}
	if *tlsAddr != "" {
		var err error
		if tln, err = net.Listen("tcp", *tlsAddr); err != nil {
			return fmt.Errorf("serve: TLS address %s: %w", *tlsAddr, err)
		}
		defer tln.Close()
	}
	var mln net.Listener
	if *metrics != "" {
		var err error
		if mln, err = net.Listen("tcp", *metrics); err != nil {
			return fmt.Errorf("serve: --metrics-addr %s: %w", *metrics, err)
		}
		defer mln.Close()
	}
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	if os.Getenv("GOGC") == "" {
		// The heap is mostly filters: long-lived and free of pointers, so a
		// collection costs little, while Go's default (GOGC=100) lets
		// garbage grow to their size before collecting: resident memory
		// peaked at 2.1x the filters in a soak, 1.3x with 20
		// (bench/cmd/soak).
		debug.SetGCPercent(gcPercent)
	}
	cfg.Logger = log
	if *metrics != "" {
		cfg.Metrics = server.NewMetrics()
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	if mln != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", cfg.Metrics.Handler())
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go hs.Serve(mln)
		defer hs.Close()
		log.Info("metrics", "addr", mln.Addr().String())
	}
	// The ready line: tests and scripts wait for it. It names addr, the
	// plain listener's address, unless that is off, then tls_addr, the TLS
	// listener's, if any.
	var ready []any
	served, serving := make(chan error, 2), 0
	if ln != nil {
		ready = append(ready, "addr", ln.Addr().String())
		go func() { served <- srv.Serve(ln) }()
		serving++
	}
	if tln != nil {
		ready = append(ready, "tls_addr", tln.Addr().String())
		go func() { served <- srv.ServeTLS(tln) }()
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
