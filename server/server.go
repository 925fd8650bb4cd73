package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/acl"
	"github.com/cuckoohash/cuckoo/server/internal/clientmem"
	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/conf"
	"github.com/cuckoohash/cuckoo/server/internal/info"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/monitor"
	"github.com/cuckoohash/cuckoo/server/internal/peer"
	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
	"github.com/cuckoohash/cuckoo/server/internal/repl"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
	"github.com/cuckoohash/cuckoo/server/internal/tlsconf"
)

// Config configures a Server. The zero Config is an in-memory server with no
// password and default limits. Its fields are documented in package
// internal/conf, with the settings they are.
type Config = conf.Config

// FsyncMode is appendfsync: when the log is flushed to disk. Its String is
// the setting's value.
type FsyncMode = keyspace.FsyncMode

// The modes of appendfsync.
const (
	FsyncEverysec = keyspace.FsyncEverysec // once a second (the default)
	FsyncAlways   = keyspace.FsyncAlways   // before each write is answered
	FsyncNo       = keyspace.FsyncNo       // when the operating system writes
)

// atomicEnum is an atomic.Int32 holding a named type's value.
type atomicEnum[T ~int32] struct{ v atomic.Int32 }

func (a *atomicEnum[T]) Load() T   { return T(a.v.Load()) }
func (a *atomicEnum[T]) Store(x T) { a.v.Store(int32(x)) }

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("server: closed")

// Server is a Redis-protocol cuckoo filter server. Create one with New, then
// call Serve with a listener; see the package documentation.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   *keyspace.Store
	cmds    *commandSet // the command table and its handlers (exec.go)
	dir     string
	dirLock *os.File // held while the server owns dir (lockDir)
	metrics *Metrics
	start   time.Time

	mu       sync.Mutex
	lns      map[net.Listener]bool // true for TLS listeners (ServeTLS)
	clients  map[*client]struct{}
	closing  atomic.Bool
	conns    sync.WaitGroup
	nextID   atomic.Int64
	snapMu   sync.Mutex
	snapping atomic.Bool
	lastSave atomic.Int64
	bg       sync.WaitGroup
	closed   chan struct{}
	stopOnce sync.Once
	stopErr  error

	cfDefaults atomic.Pointer[FilterDefaults]
	conf       liveConfig // the settings CONFIG GET and SET read and change (cmd_config.go)
	mon        monitor.Hub[*client]
	ps         pubsub.Registry[*client] // channels and patterns to subscribers (cmd_pubsub.go)
	cmem       *clientmem.Totals        // what clients hold, and its bounds (clientmem.go)
	finalSave  atomicEnum[shutdownSave] // SHUTDOWN's choice (cmd_admin.go)

	repl  *repl.Node    // as primary and as replica (internal/repl; cmd_repl.go)
	users *acl.Registry // the ACL's users (cmd_acl.go)
	// userCatalog is the catalog users' category rules resolve against:
	// the commands' ACL categories under the redisbloom-compat of startup.
	userCatalog *acl.Catalog
	aclLog      *acl.Log

	runID          string      // INFO's run_id
	lastSaveFailed atomic.Bool // INFO's rdb_last_bgsave_status

	tls tlsconf.Live // the TLS configurations in force (tls.go)

	cluster *cluster.Node // nil unless cluster mode is on (internal/cluster); set once, by New
	migrate peer.Pool     // MIGRATE's connections to targets (cluster_migrate.go)
	idle    idleRelease   // when clients' freed memory goes back to the OS (release.go)

	stats struct {
		conns    atomic.Int64 // total connections accepted
		rejected atomic.Int64 // refused: too many clients
		cmds     atomic.Int64
		errors   atomic.Int64
		netIn    atomic.Int64 // bytes read from clients
		netOut   atomic.Int64 // bytes written to clients
		hits     atomic.Int64 // read commands that found their key
		misses   atomic.Int64
	}
	// noReadAhead turns reading ahead off (prefetch.go), for the test
	// that compares replies with and without it.
	noReadAhead bool
}

// New returns a server for cfg. With cfg.Dir it recovers the data directory
// first, and fails if the directory holds damaged data (see doc.go).
func New(cfg Config) (*Server, error) {
	cmds, err := newCommandSet(families())
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if err := cfg.AppendFsync.Check(); err != nil {
		return nil, err
	}
	s := &Server{cmds: cmds,
		cfg:     cfg,
		log:     log,
		store:   keyspace.NewStore(cfg.MaxMemory, maxFilterMemory(cfg.MaxFilterMemory)),
		dir:     cfg.Dir,
		metrics: cfg.Metrics,
		start:   time.Now(),
		runID:   info.NewRunID(),
		lns:     map[net.Listener]bool{},
		clients: map[*client]struct{}{},
		closed:  make(chan struct{}),
	}
	s.cmem = clientmem.New(&s.store.Clients)
	s.lastSave.Store(time.Now().Unix())
	// Users' category rules resolve against the categories of the
	// RedisBloom release in force at startup (redisbloom-compat).
	s.userCatalog = cmds.acl[moduleACL(cfg.FilterDefaults.Compat)]
	s.users = acl.NewRegistry(s.userCatalog)
	s.aclLog = acl.NewLog(aclLogMax)
	s.initConfig(cfg) // sets the default user's password from requirepass
	if err := s.loadUsers(); err != nil {
		return nil, err
	}
	s.tls.Log = s.log
	if err := s.tls.Init(cfg.TLS); err != nil {
		return nil, err
	}
	if cfg.Dir != "" {
		if err := s.openDir(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.ClusterEnabled || cfg.ClusterEmulated {
		if err := s.initCluster(cfg); err != nil {
			if s.store.AOF != nil {
				s.store.AOF.Close()
				s.dirLock.Close()
			}
			return nil, err
		}
	}
	if s.metrics != nil {
		s.attachMetrics(s.metrics)
	}
	s.startExpiry()
	s.repl = s.newRepl(cfg)
	s.store.Repl = s.repl
	go s.heartbeat()
	go s.clientsCron()
	go s.releaseCron()
	s.repl.AdoptPosition(cfg.ReplicaOf != "")
	if cfg.ReplicaOf != "" {
		host, port, ok := repl.ParseHostPort(cfg.ReplicaOf)
		if !ok {
			return nil, fmt.Errorf("server: replicaof %q: want \"host port\"", cfg.ReplicaOf)
		}
		s.repl.ReplicaOf(host, port, false)
	}
	return s, nil
}

// openDir takes the data directory, cfg.Dir: it locks it (keyspace.LockDir),
// recovers the key space from it and opens its log.
func (s *Server) openDir(cfg Config) error {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return err
	}
	lock, err := keyspace.LockDir(cfg.Dir)
	if err != nil {
		return err
	}
	a, err := keyspace.RecoverDir(s.store, cfg.Dir, cfg.AppendFsync, cfg.Repair, s.log)
	if err != nil {
		lock.Close()
		return err
	}
	s.dirLock = lock
	if s.metrics != nil {
		a.OnSync = s.metrics.ObserveFsync
	}
	s.store.AOF = a
	return nil
}

// ListenAndServe listens on the TCP address addr and serves.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Serve accepts connections on ln and serves each in its own goroutine until
// Shutdown or Close; it then returns ErrServerClosed. ln is closed on return.
// A connection that is a *tls.Conn has its handshake run first, in its own
// goroutine, within a bound (tls.go); ServeTLS serves plain listeners over
// TLS.
func (s *Server) Serve(ln net.Listener) error { return s.serve(ln, false) }

// serve is Serve; isTLS marks ln as ServeTLS's, the tls-port.
func (s *Server) serve(ln net.Listener, isTLS bool) error {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.lns[ln] = isTLS
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
		ln.Close()
	}()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("accept", "err", err, "retry in", delay)
				time.Sleep(delay) // backoff on EMFILE and the like, as net/http does
				continue
			}
			return err
		}
		delay = 0
		s.stats.conns.Add(1)
		cl, tc := s.newClient(nc)
		admitted, err := s.admit(cl, tc)
		if err != nil {
			return err
		}
		if admitted {
			go s.startConn(cl, tc)
		}
	}
}

// newClient is the client of an accepted connection, nc, and nc's TLS
// connection if it is one.
func (s *Server) newClient(nc net.Conn) (*client, *tls.Conn) {
	tc, _ := nc.(*tls.Conn)
	fd := connFD(nc)
	if tc != nil {
		fd = connFD(tc.NetConn())
	}
	nc = info.CountingConn{Conn: nc, In: &s.stats.netIn, Out: &s.stats.netOut}
	cl := &client{id: s.nextID.Add(1), nc: nc, fd: fd, wr: resp.NewWriter(nc), created: time.Now()}
	// A client that connects while no password is set stays
	// authenticated if CONFIG SET sets one later, as in Redis.
	s.authDefault(cl)
	cl.proto.Store(2)
	cl.lastCmd.Store(-1)
	cl.lastActive.Store(cl.created.UnixNano())
	return cl, tc
}

// admit counts cl among the server's clients and reports true, unless
// maxclients are connected: then cl is answered an error and closed (over
// TLS, tc, once its handshake ran, on a goroutine of its own), and admit
// reports false. A server closing answers ErrServerClosed.
func (s *Server) admit(cl *client, tc *tls.Conn) (bool, error) {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		cl.nc.Close()
		return false, ErrServerClosed
	}
	if len(s.clients) >= s.clientLimits().MaxClients {
		s.mu.Unlock()
		s.stats.rejected.Add(1)
		cl.wr.WriteError("ERR max number of clients reached")
		if tc == nil {
			cl.wr.Flush()
			cl.nc.Close()
			return false, nil
		}
		// The write runs the handshake: not in the accepting loop.
		go func() {
			cl.nc.SetDeadline(time.Now().Add(handshakeTimeout))
			cl.wr.Flush()
			cl.nc.Close()
		}()
		return false, nil
	}
	s.clients[cl] = struct{}{}
	s.conns.Add(1)
	s.mu.Unlock()
	return true, nil
}

// startConn serves an admitted client, after its TLS handshake if tc;
// a failed handshake closes it.
func (s *Server) startConn(cl *client, tc *tls.Conn) {
	if tc == nil || s.handshake(cl, tc) {
		s.serveConn(cl)
		return
	}
	cl.nc.Close()
	s.mu.Lock()
	delete(s.clients, cl)
	s.mu.Unlock()
	s.conns.Done()
}

func (s *Server) snapshotThreshold() int64 {
	if s.cfg.SnapshotLogSize == 0 {
		return 64 << 20
	}
	return s.cfg.SnapshotLogSize
}

// snapshotAsync starts a snapshot unless one is running, and reports
// whether it did.
func (s *Server) snapshotAsync() bool {
	if !s.snapping.CompareAndSwap(false, true) {
		return false
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.snapping.Store(false)
		if err := s.snapshot(); err != nil {
			s.log.Error("snapshot failed", "err", err)
		}
	}()
	return true
}

// Shutdown stops the server gracefully: it closes the listeners, lets every
// connection finish the pipeline it is running (its replies are sent), closes
// idle connections, then writes and fsyncs the log and a snapshot. If ctx ends
// first, the remaining connections are closed abruptly, and the log is still
// flushed. Shutdown returns when the data is on disk.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.shutdown(ctx) })
	return s.stopErr
}

// Close is Shutdown with no grace period.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return s.Shutdown(ctx)
}

func (s *Server) shutdown(ctx context.Context) error {
	s.repl.Stop()
	s.mu.Lock()
	s.closing.Store(true)
	for ln := range s.lns {
		ln.Close()
	}
	// A connection blocked in a read wakes with a timeout and exits; one
	// running commands finishes them, flushes, then sees closing.
	for cl := range s.clients {
		cl.nc.SetReadDeadline(time.Now())
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.conns.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.mu.Lock()
		for cl := range s.clients {
			cl.nc.Close()
		}
		s.mu.Unlock()
		<-done
	}
	s.bg.Wait()
	s.migrate.CloseAll()
	close(s.closed)
	if s.store.AOF == nil {
		return nil
	}
	var err error
	save := s.finalSave.Load()
	if save != saveNever && (s.store.Dirty.Load() > 0 || save == saveAlways) && s.store.AOF.Err() == nil {
		if serr := s.snapshot(); serr != nil {
			s.log.Error("snapshot at shutdown failed; the log still holds every write", "err", serr)
		}
	}
	if cerr := s.store.AOF.Close(); cerr != nil {
		err = cerr
	}
	s.dirLock.Close() // the directory is free for another server
	s.log.Info("server stopped", "keys", s.store.Len())
	return err
}

// filterDefaults returns the cf-* settings in force; CONFIG SET replaces
// them as a whole.
func (s *Server) filterDefaults() *FilterDefaults { return s.cfDefaults.Load() }

// Pid is the process id INFO reports.
var pid = os.Getpid()

// every runs fn each period, and at once whenever wake receives (nil: never),
// until the server closes. The server's background tasks run so (expiry's
// sweeper, replication's heartbeat, the clients' limits), as Redis's run
// from its serverCron.
func (s *Server) every(period time.Duration, wake <-chan struct{}, fn func(now time.Time)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case now := <-t.C:
			fn(now)
		case <-wake:
			fn(time.Now())
		}
	}
}

// startExpiry runs the sweeper, and the coarse clock OBJECT IDLETIME reads,
// until the server closes.
func (s *Server) startExpiry() {
	go s.every(keyspace.SweepEvery, nil, func(now time.Time) {
		s.store.Clock.Store(now.Unix())
		if !s.store.Replica.Load() {
			s.store.Sweep(now.Add(keyspace.SweepBudget))
		}
	})
}

// snapshot writes a snapshot, verifies and installs it, and removes the logs
// no snapshot needs any more. Only one runs at a time (snapMu). It refuses to
// start while the log is failing: the rotation needs it.
func (s *Server) snapshot() error {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	if s.store.AOF == nil {
		return errors.New("ERR persistence is off (no --dir)")
	}
	start := time.Now()
	n, size, gen, err := s.store.Snapshot(s.dir)
	s.lastSaveFailed.Store(err != nil)
	if err != nil {
		return err
	}
	s.lastSave.Store(time.Now().Unix())
	s.log.Info("snapshot written", "keys", n, "bytes", size, "generation", gen, "took", time.Since(start))
	return nil
}
