package repl

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
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// The replica's side (doc.go has the protocol).
//
// ReplicaOf starts a goroutine that connects to the primary, authenticates
// (masteruser, masterauth), announces its listening port, asks PSYNC <id>
// <offset>, and on +FULLRESYNC replaces the whole key space by the copy,
// on +CONTINUE keeps it; then it applies the stream in batches, each with
// the gate held exclusively (lookups, which take no lock, go on; clients'
// writes are refused: READONLY), logs each op to its own log as the
// primary did, feeds its own backlog (so that after a promotion its former
// peers can continue from it), and acknowledges its offset. A broken link
// is retried each second with PSYNC from the offset reached.
//
// Concurrency. The link's goroutine is the only one that moves a
// replica's offset; it changes the key space and the position only with
// the gate held exclusively and after checking, under Node.mu, that its
// link is still the node's (lockForLink), so a link that ReplicaOf or
// Promote replaced changes nothing. A second goroutine sends the
// acknowledgements each second (primaryConn.wmu orders its writes with the
// link's), and a third reads the stream ahead of the batch being applied.

// primaryLink is this server's link to its primary.
type primaryLink struct {
	host  string
	port  int
	state atomic.Int32 // a PrimaryState
	// lastIO is when the primary last sent anything (unix seconds);
	// syncing is set during a full copy.
	lastIO  atomic.Int64
	syncing atomic.Bool
	stop    chan struct{}
	done    chan struct{}

	mu sync.Mutex
	nc net.Conn // the current connection, closed to stop

	// fz holds, after a full copy, each copied key's position, until the
	// stream passes fzEnd, the last (copy.go). Used by the link's
	// goroutine only.
	fz    *keyspace.FuzzyLog
	fzEnd int64
}

func (m *primaryLink) setState(st PrimaryState) { m.state.Store(int32(st)) }

// close stops the link without waiting for its goroutine, which may be
// waiting for the gate an EXEC holds (Sentinel promotes a replica inside
// MULTI/EXEC): the goroutine finds itself stale (current) before it applies
// anything and exits.
func (m *primaryLink) close() {
	close(m.stop)
	m.mu.Lock()
	if m.nc != nil {
		m.nc.Close()
	}
	m.mu.Unlock()
}

// current reports whether m is still the node's link; a stale link's
// goroutine must not change anything. Preconditions: n.mu held.
func (n *Node) current(m *primaryLink) bool { return n.primary == m }

// errStaleLink ends a link's goroutine that ReplicaOf replaced.
var errStaleLink = errors.New("the replication link was replaced")

// lockForLink takes the gate exclusively for a change m brings, unless m was
// replaced (then it takes nothing and answers errStaleLink).
func (n *Node) lockForLink(m *primaryLink) error {
	n.cfg.Store.LockAll()
	n.mu.Lock()
	stale := !n.current(m)
	n.mu.Unlock()
	if stale {
		n.cfg.Store.UnlockAll()
		return errStaleLink
	}
	return nil
}

// Primary is the primary this server replicates, if it is a replica.
func (n *Node) Primary() (host string, port int, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if m := n.primary; m != nil {
		return m.host, m.port, true
	}
	return "", 0, false
}

// ReplicaOf makes the server a replica of host:port, and reports whether it
// already was. The role flips with the gate held exclusively (by the
// caller's EXEC, gateHeld, or taken here), so no client's write is between
// its check (writable) and its log append when it does: such a write
// would move the replica's offset past anything its primary sent.
func (n *Node) ReplicaOf(host string, port int, gateHeld bool) (already bool) {
	n.mu.Lock()
	old := n.primary
	if old != nil && old.host == host && old.port == port {
		n.mu.Unlock()
		return true
	}
	n.mu.Unlock()
	if old != nil {
		old.close()
	}
	m := &primaryLink{host: host, port: port, stop: make(chan struct{}), done: make(chan struct{})}
	m.setState(PrimaryConnect)
	if !gateHeld {
		n.cfg.Store.LockAll()
		defer n.cfg.Store.UnlockAll()
	}
	n.mu.Lock()
	n.primary = m
	n.cfg.Store.Replica.Store(true)
	for l := range n.replicas {
		l.nc.Close() // chained replication is not supported
	}
	n.cond.Broadcast()
	n.mu.Unlock()
	n.log.Info("replica of a primary", "primary", net.JoinHostPort(host, strconv.Itoa(port)))
	go n.runReplica(m)
	return false
}

// Promote makes a replica a primary (REPLICAOF NO ONE): its replication id
// changes, and the old one stays valid up to the offset reached, so the
// other replicas of the old primary continue from this one's backlog. On a
// primary it does nothing.
func (n *Node) Promote() {
	n.mu.Lock()
	m := n.primary
	n.mu.Unlock()
	if m == nil {
		return
	}
	m.close()
	n.logPosition("", -1) // writes as a primary follow: the position no longer describes the data
	n.mu.Lock()
	n.primary = nil
	n.followed = false
	n.id2, n.off2 = n.id, n.backlog.End()
	n.id = newID()
	n.active.Store(true)
	n.cfg.Store.Replica.Store(false)
	n.cond.Broadcast()
	id, id2, off2 := n.id, n.id2, n.off2
	n.mu.Unlock()
	n.log.Info("promoted to primary", "replid", id, "replid2", id2, "offset", off2)
}

// runReplica keeps the link to the primary up until it is closed.
func (n *Node) runReplica(m *primaryLink) {
	defer close(m.done)
	for {
		err := n.syncFromPrimary(m)
		m.setState(PrimaryConnect)
		m.syncing.Store(false)
		select {
		case <-m.stop:
			return
		default:
		}
		n.log.Warn("replication link down; retrying in a second", "primary", net.JoinHostPort(m.host, strconv.Itoa(m.port)), "err", err)
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
func (n *Node) syncFromPrimary(m *primaryLink) error {
	m.setState(PrimaryConnecting)
	c, err := n.dialPrimary(m)
	if err != nil {
		return err
	}
	defer c.nc.Close()
	if err := n.handshake(c); err != nil {
		return err
	}
	if err := n.psync(m, c); err != nil {
		return err
	}
	m.setState(PrimaryConnected)
	m.lastIO.Store(time.Now().Unix())
	return n.followStream(m, c)
}

// primaryConn is a replica's connection to its primary. Requests are
// written whole under wmu (the acknowledgements' goroutine writes too),
// with the server's RESP writer; replies are read a line at a time, each
// within replTimeout.
type primaryConn struct {
	nc  net.Conn
	br  *bufio.Reader
	wmu sync.Mutex
	w   *resp.Writer // under wmu
}

// send writes a request of args.
func (c *primaryConn) send(args ...string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.WriteArray(len(args))
	for _, a := range args {
		c.w.WriteBulkString(a)
	}
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.w.Flush()
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

// dialPrimary connects to m's primary (Config.Dial: over TLS if
// tls-replication says so) and makes the connection m's, which close
// closes; a link closed meanwhile answers an error.
func (n *Node) dialPrimary(m *primaryLink) (*primaryConn, error) {
	nc, err := n.cfg.Dial(net.JoinHostPort(m.host, strconv.Itoa(m.port)), 5*time.Second)
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
	return &primaryConn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), w: resp.NewWriter(nc)}, nil
}

// handshake authenticates to the primary (masteruser, masterauth), checks
// it answers, takes its cluster topology if this is a cluster node, and
// announces this replica's port and capabilities: what comes before PSYNC.
func (n *Node) handshake(c *primaryConn) error {
	var user, pass string
	if n.cfg.Auth != nil {
		user, pass = n.cfg.Auth()
	}
	if pass != "" {
		args := []string{"AUTH", pass}
		if user != "" {
			args = []string{"AUTH", user, pass}
		}
		if err := c.call("+OK", args...); err != nil {
			return err
		}
	}
	if err := c.call("+PONG", "PING"); err != nil {
		return err
	}
	if cn := n.cfg.Cluster; cn != nil && !cn.Emulated() {
		if err := takePrimaryTopology(c, cn); err != nil {
			return err
		}
	}
	if err := c.call("+OK", "REPLCONF", "listening-port", strconv.Itoa(n.announcePort())); err != nil {
		return err
	}
	return c.call("+OK", "REPLCONF", "capa", "psync2")
}

// takePrimaryTopology asks the primary for its cluster topology and has cn
// take it if newer (internal/cluster). A primary that is not a cluster
// node answers an error: there is nothing to take.
func takePrimaryTopology(c *primaryConn, cn *cluster.Node) error {
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
		cn.AdoptPrimary(b[:n])
	}
	return nil
}

// announcePort is the port REPLCONF listening-port announces: the plain
// listener's, once the server has one.
func (n *Node) announcePort() int {
	if n.cfg.ListenPort == nil {
		return 0
	}
	for range 100 {
		if p := n.cfg.ListenPort(); p != 0 {
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0
}

// psync asks the primary to continue from this replica's position, and
// either loads the full copy it answers with or continues (taking the
// primary's new id if it was promoted).
func (n *Node) psync(m *primaryLink, c *primaryConn) error {
	n.mu.Lock()
	id, off, followed := n.id, n.backlog.End(), n.followed
	n.mu.Unlock()
	if err := c.send("PSYNC", id, strconv.FormatInt(off, 10)); err != nil {
		return err
	}
	m.setState(PrimarySync)
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
			n.positionRefused.Add(1)
			why := "the primary's backlog no longer holds it, or it is not a position of the primary's stream"
			if f[1] == id && off > newOff {
				why = "it is past the primary's stream: this replica applied writes its primary never sent"
			}
			n.log.Warn("the primary cannot continue from this replica's position; taking a full copy",
				"replid", id, "offset", off, "primary_replid", f[1], "primary_offset", newOff, "why", why)
		}
		m.syncing.Store(true)
		if err := n.readCopy(m, c.br, c.nc, f[1], newOff); err != nil {
			return err
		}
		m.syncing.Store(false)
		n.fullSyncs.Add(1)
	case len(f) >= 1 && f[0] == "+CONTINUE":
		n.mu.Lock()
		if !n.current(m) {
			n.mu.Unlock()
			return errStaleLink
		}
		if len(f) == 2 && f[1] != id {
			n.id2, n.off2, n.id = n.id, n.backlog.End(), f[1]
		}
		n.followed = true
		n.mu.Unlock()
		n.log.Info("replication continues from the backlog", "offset", off)
	default:
		return fmt.Errorf("PSYNC: the primary answered %q", reply)
	}
	return nil
}

// followStream applies the primary's stream until an error, acknowledging
// the offset reached each second and after each batch.
func (n *Node) followStream(m *primaryLink, c *primaryConn) error {
	ackDone := make(chan struct{})
	defer close(ackDone)
	ack := func() error {
		n.mu.Lock()
		o := n.backlog.End()
		n.mu.Unlock()
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
			return n.parted(b.err)
		}
		m.lastIO.Store(time.Now().Unix())
		if err := n.applyStream(m, b.recs); err != nil {
			if errors.Is(err, errStaleLink) {
				return err
			}
			return n.parted(fmt.Errorf("%w: %w", errBadStream, err))
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

// readRecord reads one stream record and checks its CRC; nc, if not nil,
// gets the read's deadline.
func readRecord(br *bufio.Reader, nc net.Conn) ([]byte, error) {
	if nc != nil {
		nc.SetReadDeadline(time.Now().Add(replTimeout))
	}
	var h [keyspace.RecordHeader]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint32(h[:4])
	if size > keyspace.MaxRecord {
		return nil, fmt.Errorf("%w: a record of %d bytes", errBadStream, size)
	}
	p := make([]byte, size)
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
func (n *Node) parted(err error) error {
	if !errors.Is(err, errBadStream) {
		return err
	}
	n.mu.Lock()
	id, off := n.id, n.backlog.End()
	n.id, n.followed = "?", false
	n.backlog.Reset(-1)
	n.mu.Unlock()
	n.streamErrors.Add(1)
	n.log.Error("the replication stream does not match this replica's data; taking a full copy",
		"replid", id, "offset", off, "err", err)
	return err
}

// applyStream applies a batch of the primary's ops, logs them to this
// server's log, feeds this server's backlog, and makes them as durable as
// appendfsync says.
func (n *Node) applyStream(m *primaryLink, ops [][]byte) error {
	st := n.cfg.Store
	if err := n.lockForLink(m); err != nil {
		return err
	}
	// Only this goroutine moves a replica's offset (its clients cannot
	// write, the heartbeat feeds a primary only), so the ops' offsets are
	// counted here.
	n.mu.Lock()
	at := n.backlog.End()
	n.mu.Unlock()
	logged := make([][]byte, 0, len(ops)+1)
	end := at
	for _, op := range ops {
		// Within a full copy's positions (copy.go) the ops the copy
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
	n.mu.Lock()
	for _, op := range ops {
		n.feedLocked(op)
	}
	id, offset := n.id, n.backlog.End()
	n.mu.Unlock()
	var lsn uint64
	if st.AOF != nil && m.fz == nil {
		// The batch and the position after it, as one record
		// (the key space's position.go).
		lsn = st.AOF.Append(keyspace.EncodeMulti(append(logged, keyspace.EncodeReplPos(id, offset))))
	}
	if m.fz != nil && offset >= m.fzEnd {
		m.fz = nil
		st.UnlockAll()
		return n.copyDone()
	}
	st.UnlockAll()
	if lsn > 0 {
		return st.AOF.Durable(lsn)
	}
	return nil
}

// ParseHostPort reads "host port", as replicaof's setting writes it.
func ParseHostPort(s string) (string, int, bool) {
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

// Stop ends the link to a primary and wakes every replica link and WAIT,
// for the server's shutdown.
func (n *Node) Stop() {
	n.mu.Lock()
	m := n.primary
	n.closing = true
	n.cond.Broadcast()
	n.mu.Unlock()
	if m != nil {
		m.close()
		<-m.done
	}
}

// logPosition appends the replica's position to its log now.
// Preconditions: the gate held exclusively (or no writer exists).
func (n *Node) logPosition(id string, offset int64) uint64 {
	if n.cfg.Store.AOF == nil {
		return 0
	}
	return n.cfg.Store.AOF.Append(keyspace.EncodeReplPos(id, offset))
}

// AdoptPosition starts the replication state from the position recovered
// from the log if the server starts as a replica; otherwise it invalidates
// the position.
func (n *Node) AdoptPosition(replica bool) {
	st := n.cfg.Store
	if st.ReplID == "" {
		return
	}
	if !replica {
		n.logPosition("", -1)
		st.ReplID = ""
		return
	}
	n.mu.Lock()
	n.id = st.ReplID
	n.backlog.Reset(st.ReplOffset)
	n.followed = true
	n.mu.Unlock()
	n.log.Info("replication position recovered", "replid", st.ReplID, "offset", st.ReplOffset)
}

// ShiftOffset moves a replica's offset by bytes and logs the position, as
// a replica that applied a write of its own once did: a position its
// primary's stream never had. The backlog starts again, empty, at the new
// offset. Tests use it to make a diverged replica.
func (n *Node) ShiftOffset(bytes int64) error {
	st := n.cfg.Store
	st.LockAll()
	defer st.UnlockAll()
	n.mu.Lock()
	n.backlog.Reset(n.backlog.End() + bytes)
	id, off := n.id, n.backlog.End()
	n.mu.Unlock()
	if lsn := n.logPosition(id, off); lsn > 0 {
		return st.AOF.Durable(lsn)
	}
	return nil
}
