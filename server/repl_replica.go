package server

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// Replication, the replica's side (repl.go has the protocol).
//
// REPLICAOF host port starts a goroutine that connects to the primary,
// authenticates (masteruser, masterauth), announces its listening port,
// asks PSYNC <id> <offset>, and on +FULLRESYNC replaces the whole key space
// by the copy, on +CONTINUE keeps it; then it applies the stream in batches,
// each with the gate held exclusively (lookups, which take no lock, go on;
// clients' writes are refused: READONLY), logs each op to its own log as
// the primary did, feeds its own backlog (so that after a promotion its
// former peers can continue from it), and acknowledges its offset. A broken
// link is retried each second with PSYNC from the offset reached.

// masterLink is this server's link to its primary.
type masterLink struct {
	host  string
	port  int
	state atomicEnum[masterLinkState]
	// lastIO is when the primary last sent anything (unix seconds);
	// syncing is set during a full copy.
	lastIO  atomic.Int64
	syncing atomic.Bool
	stop    chan struct{}
	done    chan struct{}

	mu sync.Mutex
	nc net.Conn // the current connection, closed to stop

	// fz holds, after a full copy, each copied key's position, until the
	// stream passes fzEnd, the last (repl_copy.go). Used by the link's
	// goroutine only.
	fz    *keyspace.FuzzyLog
	fzEnd int64
}

// masterLinkState is where a replica's link to its primary stands, as ROLE
// names it: waiting to connect (or retry), connecting and shaking hands,
// waiting for the PSYNC's answer and loading a full copy, or following the
// stream.
type masterLinkState int32

const (
	primaryConnect    masterLinkState = iota // not connected: about to, or waiting to retry
	primaryConnecting                        // dialling, then the handshake
	primarySync                              // PSYNC sent: its answer, then a full copy if one
	primaryConnected                         // following the stream
)

var masterLinkStateNames = [...]string{primaryConnect: "connect", primaryConnecting: "connecting", primarySync: "sync", primaryConnected: "connected"}

func (st masterLinkState) String() string {
	if st >= 0 && int(st) < len(masterLinkStateNames) {
		return masterLinkStateNames[st]
	}
	return "masterLinkState(" + strconv.Itoa(int(st)) + ")"
}

// close stops the link without waiting for its goroutine, which may be
// waiting for the gate an EXEC holds (Sentinel promotes a replica inside
// MULTI/EXEC): the goroutine finds itself stale (current) before it applies
// anything and exits.
func (m *masterLink) close() {
	close(m.stop)
	m.mu.Lock()
	if m.nc != nil {
		m.nc.Close()
	}
	m.mu.Unlock()
}

// current reports whether m is still the server's link; a stale link's
// goroutine must not change anything. Preconditions: r.mu held.
func (r *replication) current(m *masterLink) bool { return r.master == m }

// errStaleLink ends a link's goroutine that REPLICAOF replaced.
var errStaleLink = errors.New("the replication link was replaced")

// lockForLink takes the gate exclusively for a change m brings, unless m was
// replaced (then it takes nothing and answers errStaleLink).
func (s *Server) lockForLink(m *masterLink) error {
	s.store.LockAll()
	s.repl.mu.Lock()
	stale := !s.repl.current(m)
	s.repl.mu.Unlock()
	if stale {
		s.store.UnlockAll()
		return errStaleLink
	}
	return nil
}

// isReplica reports whether the server is a replica now.
func (s *Server) isReplica() bool { return s.store.Replica.Load() }

// REPLICAOF host port | REPLICAOF NO ONE (and SLAVEOF).
func cmdReplicaof(s *Server, cl *client, a [][]byte) {
	if strings.EqualFold(string(a[1]), "no") && strings.EqualFold(string(a[2]), "one") {
		s.promote()
		cl.wr.WriteString("OK")
		return
	}
	port, ok := integer.Parse(a[2])
	if !ok || port < 0 || port > 65535 {
		s.writeErr(cl, replyErr("ERR Invalid master port"))
		return
	}
	if s.replicaOf(cl, string(a[1]), int(port)) {
		cl.wr.WriteString("OK Already connected to specified master")
		return
	}
	cl.wr.WriteString("OK")
}

// replicaOf makes the server a replica of host:port, and reports whether it
// already was. The role flips with the gate held exclusively (by cl's EXEC,
// or taken here), so no client's write is between its check (writable) and
// its log append when it does: such a write would move the replica's
// offset past anything its primary sent.
func (s *Server) replicaOf(cl *client, host string, port int) (already bool) {
	r := s.repl
	r.mu.Lock()
	old := r.master
	if old != nil && old.host == host && old.port == port {
		r.mu.Unlock()
		return true
	}
	r.mu.Unlock()
	if old != nil {
		old.close()
	}
	m := &masterLink{host: host, port: port, stop: make(chan struct{}), done: make(chan struct{})}
	m.state.Store(primaryConnect)
	if cl == nil || !cl.ks.InExec() {
		s.store.LockAll()
		defer s.store.UnlockAll()
	}
	r.mu.Lock()
	r.master = m
	s.store.Replica.Store(true)
	for l := range r.replicas {
		l.cl.nc.Close() // chained replication is not supported
	}
	r.cond.Broadcast()
	r.mu.Unlock()
	s.log.Info("replica of a primary", "primary", net.JoinHostPort(host, strconv.Itoa(port)))
	go s.runReplica(m)
	return false
}

// promote makes a replica a primary (REPLICAOF NO ONE): its replication id
// changes, and the old one stays valid up to the offset reached, so the
// other replicas of the old primary continue from this one's backlog.
func (s *Server) promote() {
	r := s.repl
	r.mu.Lock()
	m := r.master
	r.mu.Unlock()
	if m == nil {
		return
	}
	m.close()
	s.logPosition("", -1) // writes as a primary follow: the position no longer describes the data
	r.mu.Lock()
	r.master = nil
	r.followed = false
	r.id2, r.off2 = r.id, r.backlog.End()
	r.id = newRunID()
	r.active.Store(true)
	s.store.Replica.Store(false)
	r.cond.Broadcast()
	r.mu.Unlock()
	s.log.Info("promoted to primary", "replid", r.id, "replid2", r.id2, "offset", r.off2)
}

// runReplica keeps the link to the primary up until it is closed.
func (s *Server) runReplica(m *masterLink) {
	defer close(m.done)
	for {
		err := s.syncFromPrimary(m)
		m.state.Store(primaryConnect)
		m.syncing.Store(false)
		select {
		case <-m.stop:
			return
		default:
		}
		s.log.Warn("replication link down; retrying in a second", "primary", net.JoinHostPort(m.host, strconv.Itoa(m.port)), "err", err)
		select {
		case <-m.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// replTimeout closes a link on which the primary sent nothing for this
// long (Redis's repl-timeout); the primary pings each second.
const replTimeout = 60 * time.Second

// syncFromPrimary runs one connection to the primary: handshake, copy or
// continue, then the stream until an error.
func (s *Server) syncFromPrimary(m *masterLink) error {
	m.state.Store(primaryConnecting)
	c, err := s.dialPrimary(m)
	if err != nil {
		return err
	}
	defer c.nc.Close()
	if err := s.handshakePrimary(c); err != nil {
		return err
	}
	if err := s.psync(m, c); err != nil {
		return err
	}
	m.state.Store(primaryConnected)
	m.lastIO.Store(time.Now().Unix())
	return s.followStream(m, c)
}

// primaryConn is a replica's connection to its primary. Requests are
// written whole under wmu (the acknowledgements' goroutine writes too);
// replies are read a line at a time, each within replTimeout.
type primaryConn struct {
	nc  net.Conn
	br  *bufio.Reader
	wmu sync.Mutex
}

// send writes a request of args.
func (c *primaryConn) send(args ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := io.WriteString(c.nc, b.String())
	return err
}

// line reads a reply's line, without its CRLF.
func (c *primaryConn) line() (string, error) {
	c.nc.SetReadDeadline(time.Now().Add(replTimeout))
	l, err := c.br.ReadString('\n')
	return strings.TrimRight(l, "\r\n"), err
}

// call sends a request of args and wants a reply that starts with want.
func (c *primaryConn) call(want string, args ...string) error {
	if err := c.send(args...); err != nil {
		return err
	}
	l, err := c.line()
	if err != nil {
		return err
	}
	if !strings.HasPrefix(l, want) {
		return fmt.Errorf("%s: the primary answered %q", args[0], l)
	}
	return nil
}

// dialPrimary connects to m's primary (over TLS if tls-replication says
// so) and makes the connection m's, which close closes; a link closed
// meanwhile answers an error.
func (s *Server) dialPrimary(m *masterLink) (*primaryConn, error) {
	useTLS, _ := s.nodeTLS()
	nc, err := s.dialNode(net.JoinHostPort(m.host, strconv.Itoa(m.port)), useTLS, 5*time.Second)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-m.stop:
		nc.Close()
		return nil, errors.New("stopped")
	default:
	}
	m.nc = nc
	return &primaryConn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}, nil
}

// handshakePrimary authenticates to the primary (masteruser, masterauth), checks
// it answers, takes its cluster topology if this is a cluster node, and
// announces this replica's port and capabilities: what comes before PSYNC.
func (s *Server) handshakePrimary(c *primaryConn) error {
	cfg := s.replConfig()
	if cfg.pass != "" {
		args := []string{"AUTH", cfg.pass}
		if cfg.user != "" {
			args = []string{"AUTH", cfg.user, cfg.pass}
		}
		if err := c.call("+OK", args...); err != nil {
			return err
		}
	}
	if err := c.call("+PONG", "PING"); err != nil {
		return err
	}
	if s.cluster != nil && !s.cluster.Emulated() {
		if err := s.takePrimaryTopology(c); err != nil {
			return err
		}
	}
	if err := c.call("+OK", "REPLCONF", "listening-port", strconv.Itoa(s.announcePort())); err != nil {
		return err
	}
	return c.call("+OK", "REPLCONF", "capa", "psync2")
}

// takePrimaryTopology asks the primary for its cluster topology and takes
// it if newer (internal/cluster). A primary that is not a cluster node answers an
// error: there is nothing to take.
func (s *Server) takePrimaryTopology(c *primaryConn) error {
	if err := c.send("CUCKOO.CLUSTER", "GETCONFIG"); err != nil {
		return err
	}
	l, err := c.line()
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(l, "$")); err == nil && l[0] == '$' && n >= 0 && n <= cluster.MaxConfigJSON {
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.br, b); err != nil {
			return err
		}
		s.cluster.AdoptPrimary(b[:n])
	}
	return nil
}

// psync asks the primary to continue from this replica's position, and
// either loads the full copy it answers with or continues (taking the
// primary's new id if it was promoted).
func (s *Server) psync(m *masterLink, c *primaryConn) error {
	r := s.repl
	r.mu.Lock()
	id, off, followed := r.id, r.backlog.End(), r.followed
	r.mu.Unlock()
	if err := c.send("PSYNC", id, strconv.FormatInt(off, 10)); err != nil {
		return err
	}
	m.state.Store(primarySync)
	reply, err := c.line()
	if err != nil {
		return err
	}
	switch f := strings.Fields(reply); {
	case len(f) == 3 && f[0] == "+FULLRESYNC":
		newOff, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("PSYNC: %q", reply)
		}
		if followed {
			r.positionRefused.Add(1)
			why := "the primary's backlog no longer holds it, or it is not a position of the primary's stream"
			if f[1] == id && off > newOff {
				why = "it is past the primary's stream: this replica applied writes its primary never sent"
			}
			s.log.Warn("the primary cannot continue from this replica's position; taking a full copy",
				"replid", id, "offset", off, "primary_replid", f[1], "primary_offset", newOff, "why", why)
		}
		m.syncing.Store(true)
		if err := s.readCopy(m, c.br, c.nc, f[1], newOff); err != nil {
			return err
		}
		m.syncing.Store(false)
		r.fullSyncs.Add(1)
	case len(f) >= 1 && f[0] == "+CONTINUE":
		r.mu.Lock()
		if !r.current(m) {
			r.mu.Unlock()
			return errStaleLink
		}
		if len(f) == 2 && f[1] != id {
			r.id2, r.off2, r.id = r.id, r.backlog.End(), f[1]
		}
		r.followed = true
		r.mu.Unlock()
		s.log.Info("replication continues from the backlog", "offset", off)
	default:
		return fmt.Errorf("PSYNC: the primary answered %q", reply)
	}
	return nil
}

// followStream applies the primary's stream until an error, acknowledging
// the offset reached each second and after each batch.
func (s *Server) followStream(m *masterLink, c *primaryConn) error {
	r := s.repl
	ackDone := make(chan struct{})
	defer close(ackDone)
	ack := func() error {
		r.mu.Lock()
		o := r.backlog.End()
		r.mu.Unlock()
		return c.send("REPLCONF", "ACK", strconv.FormatInt(o, 10))
	}
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ackDone:
				return
			case <-t.C:
				ack()
			}
		}
	}()
	if err := ack(); err != nil {
		return err
	}
	// One goroutine reads and checks the records while this one applies
	// the batch before: the primary's socket drains while a batch is
	// applied.
	batches := make(chan streamBatch, 1)
	go readStream(c.br, c.nc, batches, ackDone)
	for b := range batches {
		if b.err != nil {
			return s.parted(b.err)
		}
		m.lastIO.Store(time.Now().Unix())
		if err := s.applyStream(m, b.recs); err != nil {
			if errors.Is(err, errStaleLink) {
				return err
			}
			return s.parted(fmt.Errorf("%w: %w", errBadStream, err))
		}
		if err := ack(); err != nil {
			return err
		}
	}
	return errors.New("the stream ended")
}

// streamBatch is the records readStream read at once, or the error that
// ended the stream.
type streamBatch struct {
	recs [][]byte
	err  error
}

// A batch holds the gate once and is logged as one record; maxBatch and
// maxBatchBytes bound it, so that a replica acknowledges (and its lookups
// see) the stream in small steps: what a batch holds is lag the primary
// reports.
const (
	maxBatch      = 1024
	maxBatchBytes = 256 << 10
)

// readStream reads the primary's records into batches, each what arrived
// together (one record, then those already buffered, up to maxBatch), until
// an error, which it sends last; it stops when done closes.
func readStream(br *bufio.Reader, nc net.Conn, out chan<- streamBatch, done <-chan struct{}) {
	defer close(out)
	send := func(b streamBatch) bool {
		select {
		case out <- b:
			return b.err == nil
		case <-done:
			return false
		}
	}
	for {
		p, err := readRecord(br, nc)
		if err != nil {
			send(streamBatch{err: err})
			return
		}
		batch, size := [][]byte{p}, len(p)
		for len(batch) < maxBatch && size < maxBatchBytes && br.Buffered() >= keyspace.RecordHeader {
			h, _ := br.Peek(keyspace.RecordHeader)
			if br.Buffered() < keyspace.RecordHeader+int(binary.LittleEndian.Uint32(h)) {
				break
			}
			p, err := readRecord(br, nc)
			if err != nil {
				send(streamBatch{recs: batch})
				send(streamBatch{err: err})
				return
			}
			batch, size = append(batch, p), size+len(p)
		}
		if !send(streamBatch{recs: batch}) {
			return
		}
	}
}

// errBadStream is a stream that does not fit this replica's position or
// data: a record too long or failing its checksum, or one that cannot be
// applied.
var errBadStream = errors.New("the primary's stream does not match this replica")

// readRecord reads one stream record and checks its CRC.
func readRecord(br *bufio.Reader, nc net.Conn) ([]byte, error) {
	nc.SetReadDeadline(time.Now().Add(replTimeout))
	var h [keyspace.RecordHeader]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(h[:4])
	if n > keyspace.MaxRecord {
		return nil, fmt.Errorf("%w: a record of %d bytes", errBadStream, n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		return nil, err
	}
	if keyspace.RecordCRC(h[:4], p) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, fmt.Errorf("%w: a record fails its checksum", errBadStream)
	}
	return p, nil
}

// parted handles err, which ended the stream: if it says the stream does
// not match the replica (errBadStream), the replica forgets its position,
// so that the next PSYNC takes a full copy, and says so; a network error
// keeps the position, to continue from it.
func (s *Server) parted(err error) error {
	if !errors.Is(err, errBadStream) {
		return err
	}
	r := s.repl
	r.mu.Lock()
	id, off := r.id, r.backlog.End()
	r.id, r.followed = "?", false
	r.backlog.Reset(-1)
	r.mu.Unlock()
	r.streamErrors.Add(1)
	s.log.Error("the replication stream does not match this replica's data; taking a full copy",
		"replid", id, "offset", off, "err", err)
	return err
}

// applyStream applies a batch of the primary's ops, logs them to this
// server's log, feeds this server's backlog, and makes them as durable as
// appendfsync says.
func (s *Server) applyStream(m *masterLink, ops [][]byte) error {
	st, r := s.store, s.repl
	if err := s.lockForLink(m); err != nil {
		return err
	}
	// Only this goroutine moves a replica's offset (its clients cannot
	// write, the heartbeat feeds a primary only), so the ops' offsets are
	// counted here.
	r.mu.Lock()
	at := r.backlog.End()
	r.mu.Unlock()
	logged := make([][]byte, 0, len(ops)+1)
	end := at
	for _, op := range ops {
		// Within a full copy's positions (repl_copy.go) the ops the copy
		// holds are skipped and nothing is logged.
		if len(op) > 0 && op[0] != keyspace.OpReplPing {
			if m.fz == nil || end >= m.fzEnd {
				logged = append(logged, op)
			}
			st.Dirty.Add(1)
		}
		end += int64(keyspace.RecordHeader + len(op))
	}
	if err := st.ReplayStream(ops, at, m.fz, m.fzEnd, 4*runtime.GOMAXPROCS(0)); err != nil {
		st.UnlockAll()
		return err
	}
	r.mu.Lock()
	for _, op := range ops {
		r.feedLocked(op)
	}
	id, offset := r.id, r.backlog.End()
	r.mu.Unlock()
	var lsn uint64
	if st.AOF != nil && m.fz == nil {
		// The batch and the position after it, as one record
		// (the key space's position.go).
		lsn = st.AOF.Append(keyspace.EncodeMulti(append(logged, keyspace.EncodeReplPos(id, offset))))
	}
	if m.fz != nil && offset >= m.fzEnd {
		m.fz = nil
		st.UnlockAll()
		return s.copyDone()
	}
	st.UnlockAll()
	if lsn > 0 {
		return st.AOF.Commit(lsn)
	}
	return nil
}

// announcePort is the port REPLCONF listening-port announces: the plain
// listener's, once Serve has one.
func (s *Server) announcePort() int {
	for range 100 {
		if p := s.tcpPort(false); p != 0 {
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0
}

// parseHostPort reads "host port", as replicaof's setting writes it.
func parseHostPort(s string) (string, int, bool) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return "", 0, false
	}
	p, err := strconv.Atoi(f[1])
	if err != nil || p <= 0 || p > 65535 {
		return "", 0, false
	}
	return f[0], p, true
}

// stopReplication ends the link to a primary and wakes every replica link
// and WAIT, for Shutdown.
func (s *Server) stopReplication() {
	r := s.repl
	r.mu.Lock()
	m := r.master
	r.closing = true
	r.cond.Broadcast()
	r.mu.Unlock()
	if m != nil {
		m.close()
		<-m.done
	}
}

// replAuth is what a replica authenticates to its primary with.
type replAuth struct{ user, pass string }

// replConfig is the masteruser and masterauth in force.
func (s *Server) replConfig() replAuth {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	return replAuth{user: s.conf.st.Config.MasterUser, pass: s.conf.st.Config.MasterAuth}
}

// replicaOfSetting is replicaof's value now: "host port" of the primary, or
// "" for a primary (CONFIG REWRITE writes it, as Sentinel expects).
func (s *Server) replicaOfSetting() string {
	s.repl.mu.Lock()
	defer s.repl.mu.Unlock()
	if m := s.repl.master; m != nil {
		return m.host + " " + strconv.Itoa(m.port)
	}
	return ""
}

// replicaPriority is INFO's slave_priority.
func (s *Server) replicaPriority() int {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	return max(s.conf.st.Config.ReplicaPriority, 0)
}

// logPosition appends the replica's position to its log now.
// Preconditions: the gate held exclusively (or no writer exists).
func (s *Server) logPosition(id string, offset int64) uint64 {
	if s.store.AOF == nil {
		return 0
	}
	return s.store.AOF.Append(keyspace.EncodeReplPos(id, offset))
}

// adoptPosition starts the replication state from the recovered position if
// the server starts as a replica; otherwise it invalidates the position.
func (s *Server) adoptPosition(replica bool) {
	st, r := s.store, s.repl
	if st.ReplID == "" {
		return
	}
	if !replica {
		s.logPosition("", -1)
		st.ReplID = ""
		return
	}
	r.mu.Lock()
	r.id = st.ReplID
	r.backlog.Reset(st.ReplOffset)
	r.followed = true
	r.mu.Unlock()
	s.log.Info("replication position recovered", "replid", st.ReplID, "offset", st.ReplOffset)
}
