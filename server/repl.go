package server

import (
	"bufio"
	"cmp"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/backlog"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// Replication, the primary's side (repl_replica.go is the replica's).
//
// Protocol. The stream is the ops the log takes, each framed as a log
// record (u32 length, u32 CRC-32C, payload), in the order logOp feeds them;
// an offset counts the stream's bytes. Every op is fed while its writer
// holds the gate read-locked and the key's lock, so per key the stream has
// the log's order, and a holder of the gate exclusively sees a stream that
// ends exactly at the state it sees. The primary keeps the last
// repl-backlog-size bytes (the backlog). A replica sends PSYNC <id> <offset>:
// if id is the primary's replication id (or its previous one, up to the
// offset where it changed) and offset is in the backlog, the primary answers
// +CONTINUE and streams from there; otherwise +FULLRESYNC <id> <offset>, a
// bulk string holding every key (built with the gate held exclusively: the
// copy and the offset are one moment), then the stream from offset. A
// replica acknowledges its offset (REPLCONF ACK) after each batch it
// applied and each second; WAIT counts the acknowledgements.
//
// The linearization point of a write for replication is its feed; of a full
// copy, the gate's exclusive lock.

// replCommands binds this file's commands to their rows of Redis's table, by name.
func replCommands() (b []binding) {
	b = append(b, binding{name: "psync", run: cmdPsync})
	b = append(b, binding{name: "replconf", run: cmdReplconf})
	b = append(b, binding{name: "wait", run: cmdWait})
	b = append(b, binding{name: "role", run: cmdRole})
	b = append(b, binding{name: "replicaof", run: cmdReplicaof})
	b = append(b, binding{name: "slaveof", run: cmdReplicaof})
	return b
}

// defaultBacklog is repl-backlog-size's default, as Redis's.
const defaultBacklog = 1 << 20

// replication is a server's replication state, as primary and as replica.
type replication struct {
	mu   sync.Mutex
	cond *sync.Cond // broadcast on feed, acks, link changes and shutdown

	id   string // master_replid
	id2  string // master_replid2: the id before the last promotion
	off2 int64  // second_repl_offset: id2 valid up to here; -1: none
	// backlog holds the end of the stream; its end is master_repl_offset,
	// the replication position's offset. A full copy in progress pins it
	// at the offset the copy started at until the copy is sent
	// (repl_copy.go), up to pinLimit bytes.
	backlog backlog.Backlog[*replicaLink]
	// active: a backlog is kept, fed since a replica first connected (or
	// a full copy was loaded, or a promotion). Feed reads it without mu on
	// every write, so it stays an atomic here rather than in the backlog.
	active  atomic.Bool
	closing bool

	replicas map[*replicaLink]struct{}
	master   *masterLink // non-nil while this server is a replica

	// INFO's sync_full, sync_partial_ok, sync_partial_err: PSYNCs
	// answered with a copy (after asking to continue, for the last), or
	// continued.
	syncFull, syncPartialOK, syncPartialErr atomic.Int64

	// followed: as a replica, (id, offset) is a position its primary's
	// stream reached (a copy loaded, a continue, or one recovered from the
	// log), so a primary's refusal to continue from it is worth a warning.
	followed bool
	// A replica's INFO master_full_syncs (copies loaded), and the times it
	// found itself parted from its primary and took a full copy:
	// master_position_refused (a PSYNC from a followed position answered
	// with a copy) and master_stream_errors (a stream record that failed
	// its checksum or could not be applied).
	fullSyncs, positionRefused, streamErrors atomic.Int64

	// outputLimit is client-output-buffer-limit replica in force, nil
	// for none (repl_output.go); log says why a link was cut.
	outputLimit func() OutputLimit
	log         *slog.Logger
}

// replicaLink is a replica connected to this primary.
type replicaLink struct {
	cl      *client
	ip      string
	port    int
	state   replicaLinkState // under replication.mu
	ack     atomic.Int64
	lastAck atomic.Int64 // unix milliseconds
	from    int64        // the offset the stream to it starts at
	full    bool         // a full copy first
	// copyNames are the keys a full copy sends (beginCopy).
	copyNames []string
	// Under replication.mu (repl_output.go): softSince is when the
	// link's output first reached the soft limit, zero if it is below;
	// cut is set once the link passed a limit and lost its pin.
	softSince time.Time
	cut       bool
}

// replicaLinkState is where a replica link stands, as INFO's slaveN lines name
// it (state=...): waiting for its full copy to start, receiving it, or
// receiving the stream.
type replicaLinkState int

const (
	linkWaitBgsave replicaLinkState = iota // PSYNC answered, the copy not begun (or a continue not yet sent)
	linkSendBulk                           // the full copy is being sent
	linkOnline                             // the stream is being sent
)

var replicaLinkStateNames = [...]string{linkWaitBgsave: "wait_bgsave", linkSendBulk: "send_bulk", linkOnline: "online"}

func (st replicaLinkState) String() string {
	if st >= 0 && int(st) < len(replicaLinkStateNames) {
		return replicaLinkStateNames[st]
	}
	return "replicaLinkState(" + strconv.Itoa(int(st)) + ")"
}

func newReplication(size int64) *replication {
	if size <= 0 {
		size = defaultBacklog
	}
	r := &replication{id: newRunID(), id2: strings.Repeat("0", 40), off2: -1,
		backlog: backlog.New[*replicaLink](size), replicas: map[*replicaLink]struct{}{}, log: slog.New(slog.DiscardHandler)}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// Feed appends a logged op to the stream, if a replica ever listened: the
// key space's stream (keyspace/aof.go calls it; see the protocol above).
func (r *replication) Feed(payload []byte) {
	if r.active.Load() {
		r.feed(payload)
	}
}

// WithPosition runs fn with the replication id and offset held still.
func (r *replication) WithPosition(fn func(id string, offset int64)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(r.id, r.backlog.End())
}

func (r *replication) feed(payload []byte) {
	r.mu.Lock()
	r.feedLocked(payload)
	r.mu.Unlock()
}

func (r *replication) feedLocked(payload []byte) {
	r.backlog.Append(payload)
	r.limitLinks()
	r.cond.Broadcast()
}

// psyncFrom decides a PSYNC from (id, offset): whether the replica can
// continue from the backlog (the id is this history's, and the offset one
// this primary had, at a record's start, still in the backlog), and if
// not, why the position is one this primary never had, or "" if it may
// have had it (or the id is not this history's). A replica that stands
// where its primary never was applied something the primary did not send.
// Preconditions: mu held.
func (r *replication) psyncFrom(id string, offset int64) (cont bool, neverHad string) {
	// "?" names no history: a replica without a position asks PSYNC ? -1,
	// and a promotion from no position leaves id2 "?".
	if id == "?" || (id != r.id && id != r.id2) {
		return false, ""
	}
	known := id == r.id || (id == r.id2 && offset <= r.off2)
	// Continuing from inside a record would feed the replica the middle
	// of one.
	pos := r.backlog.Locate(offset)
	switch {
	case known && r.active.Load() && pos == backlog.AtRecord:
		return true, ""
	case id == r.id2 && offset > r.off2, id == r.id && pos == backlog.PastEnd:
		return false, "past the end of this primary's stream"
	case r.active.Load() && pos == backlog.InsideRecord:
		return false, "inside a record of this primary's stream"
	}
	return false, ""
}

// PSYNC replid offset: this connection becomes a replica link; the reply and
// the stream are written by serveReplica once the pipeline ends.
func cmdPsync(s *Server, cl *client, a [][]byte) {
	off, ok := integer.Parse(a[2])
	if !ok {
		off = -1
	}
	r := s.repl
	r.mu.Lock()
	if r.master != nil {
		r.mu.Unlock()
		// A replica of a replica is not supported: say so rather than
		// serve a stream this server does not originate.
		s.writeErr(cl, replyErr("ERR this server is a replica: chained replication is not supported; replicate from its primary"))
		return
	}
	link := cl.repl.link
	if link == nil {
		link = &replicaLink{cl: cl}
		link.ip, _, _ = net.SplitHostPort(cl.nc.RemoteAddr().String())
	}
	cont, neverHad := r.psyncFrom(string(a[1]), off)
	link.full = !cont
	switch {
	case !link.full:
		r.syncPartialOK.Add(1)
	case string(a[1]) != "?":
		r.syncPartialErr.Add(1)
		r.syncFull.Add(1)
		if neverHad != "" {
			s.log.Warn("a replica's position was never this primary's; it takes a full copy",
				"replica", cl.nc.RemoteAddr().String(), "replid", printable(a[1], 64), "offset", off, "why", neverHad)
		}
	default:
		r.syncFull.Add(1)
	}
	link.from = off
	if cont {
		// Held from here on: the backlog keeps what the link has to send.
		r.backlog.Pin(link, off)
	}
	link.state = linkWaitBgsave
	r.active.Store(true)
	r.replicas[link] = struct{}{}
	r.mu.Unlock()
	cl.repl.link = link
	cl.repl.start = true
	cl.repl.isLink.Store(true)
}

// REPLCONF listening-port <port> | capa <...> | ack <offset> | getack *
func cmdReplconf(s *Server, cl *client, a [][]byte) {
	if len(a)%2 == 0 {
		s.writeErr(cl, replyErr("ERR syntax error"))
		return
	}
	for i := 1; i < len(a); i += 2 {
		switch strings.ToLower(string(a[i])) {
		case "listening-port":
			p, ok := integer.Parse(a[i+1])
			if !ok || p < 0 || p > 65535 {
				s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
				return
			}
			if cl.repl.link == nil {
				cl.repl.link = &replicaLink{cl: cl}
				cl.repl.link.ip, _, _ = net.SplitHostPort(cl.nc.RemoteAddr().String())
			}
			cl.repl.link.port = int(p)
		case "ip-address":
			if cl.repl.link == nil {
				cl.repl.link = &replicaLink{cl: cl}
			}
			cl.repl.link.ip = string(a[i+1])
		case "capa", "rdb-only", "rdb-filter-only":
		case "ack", "getack":
			return // no reply, as Redis
		default:
			s.writeErr(cl, replyErr(fmt.Sprintf("ERR Unrecognized REPLCONF option: %s", printable(a[i], 64))))
			return
		}
	}
	cl.wr.WriteString("OK")
}

// serveReplica runs a connection that sent PSYNC: the full copy if needed,
// then the stream, while a goroutine reads its acknowledgements.
func (s *Server) serveReplica(cl *client) {
	r := s.repl
	link := cl.repl.link
	gone := make(chan struct{})
	defer func() {
		r.mu.Lock()
		delete(r.replicas, link)
		s.replicaDropped(link)
		r.backlog.Unpin(link)
		r.cond.Broadcast()
		r.mu.Unlock()
		cl.nc.Close()
		<-gone
	}()
	go func() {
		defer close(gone)
		defer func() { r.mu.Lock(); r.cond.Broadcast(); r.mu.Unlock() }()
		s.readAcks(link)
	}()
	w := bufio.NewWriterSize(cl.nc, 64<<10)
	from, err := s.startStream(w, link)
	if err != nil || w.Flush() != nil {
		return
	}
	link.ack.Store(from)
	link.lastAck.Store(time.Now().UnixMilli())
	r.mu.Lock()
	link.state = linkOnline
	r.mu.Unlock()
	s.replicaOnline(link)
	s.sendStream(w, link, from, gone)
}

// readAcks reads what a replica link sends, until the connection fails:
// each REPLCONF ACK <offset> records the link's acknowledgement and wakes
// WAIT and min-replicas-to-write's count.
func (s *Server) readAcks(link *replicaLink) {
	r := s.repl
	rd := resp.NewReader(link.cl.nc)
	lim := readLimits(s.clientLimits())
	for {
		args, err := rd.Next(true, lim)
		if err != nil {
			return
		}
		if args == nil {
			if rd.Fill(lim) != nil {
				return
			}
			continue
		}
		if len(args) == 3 && strings.EqualFold(string(args[0]), "replconf") && strings.EqualFold(string(args[1]), "ack") {
			if off, ok := integer.Parse(args[2]); ok {
				link.ack.Store(off)
				link.lastAck.Store(time.Now().UnixMilli())
				r.mu.Lock()
				r.cond.Broadcast()
				r.mu.Unlock()
				s.replicaAcked()
			}
		}
	}
}

// startStream writes PSYNC's answer to w: +FULLRESYNC and the full copy, or
// +CONTINUE. It answers the offset the stream continues from.
func (s *Server) startStream(w *bufio.Writer, link *replicaLink) (int64, error) {
	r := s.repl
	addr := link.cl.nc.RemoteAddr().String()
	if !link.full {
		r.mu.Lock()
		id := r.id
		r.mu.Unlock()
		fmt.Fprintf(w, "+CONTINUE %s\r\n", id)
		s.log.Info("a replica continues from the backlog", "replica", addr, "offset", link.from)
		return link.from, nil
	}
	id, off := s.beginCopy(link)
	r.mu.Lock()
	link.state = linkSendBulk
	r.mu.Unlock()
	fmt.Fprintf(w, "+FULLRESYNC %s %d\r\n", id, off)
	start := time.Now()
	keys, bytes, err := s.writeCopy(w, link)
	if err != nil {
		return 0, err
	}
	s.log.Info("full copy sent to a replica", "replica", addr, "keys", keys, "bytes", bytes, "offset", off, "took", time.Since(start))
	return off, nil
}

// sendStream writes the stream to link from offset from on, as the backlog
// grows, until the server closes, the replica goes (gone), the link is cut
// for its output, or a write fails.
func (s *Server) sendStream(w *bufio.Writer, link *replicaLink, from int64, gone chan struct{}) {
	r := s.repl
	for {
		r.mu.Lock()
		for r.backlog.End() == from && !r.closing && !isClosed(gone) {
			r.cond.Wait()
		}
		if r.closing || isClosed(gone) {
			r.mu.Unlock()
			return
		}
		data, ok := r.backlog.Since(from)
		r.mu.Unlock()
		if !ok {
			return // cut for its output (limitLinks), which said so
		}
		if _, err := w.Write(data); err != nil || w.Flush() != nil {
			return
		}
		from += int64(len(data))
		r.mu.Lock()
		if !link.cut {
			r.backlog.Pin(link, from) // sent: the backlog may move on to here
		}
		r.mu.Unlock()
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// heartbeat feeds a ping each second while replicas are connected, so that
// they see the link alive and idle offsets still move, until the server
// closes.
func (s *Server) heartbeat() {
	s.every(time.Second, nil, func(time.Time) {
		r := s.repl
		r.mu.Lock()
		if len(r.replicas) > 0 && r.master == nil {
			r.feedLocked([]byte{keyspace.OpReplPing})
		}
		r.mu.Unlock()
		s.countGoodReplicas() // min-replicas-to-write's, once a second as Redis's
	})
}

// WAIT numreplicas timeout: the replicas that acknowledged every write made
// before it, once numreplicas have or timeout ms passed (0: no timeout).
func cmdWait(s *Server, cl *client, a [][]byte) {
	n, ok := integer.Parse(a[1])
	if !ok {
		s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
		return
	}
	ms, ok := integer.Parse(a[2])
	if !ok {
		s.writeErr(cl, replyErr("ERR timeout is not an integer or out of range"))
		return
	}
	if ms < 0 {
		s.writeErr(cl, replyErr("ERR timeout is negative"))
		return
	}
	if s.isReplica() {
		s.writeErr(cl, replyErr("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated."))
		return
	}
	r := s.repl
	r.mu.Lock()
	target := r.backlog.End()
	acked := func() int {
		k := 0
		for l := range r.replicas {
			if l.ack.Load() >= target {
				k++
			}
		}
		return k
	}
	var expired atomic.Bool
	if ms > 0 {
		t := time.AfterFunc(time.Duration(ms)*time.Millisecond, func() {
			expired.Store(true)
			r.mu.Lock()
			r.cond.Broadcast()
			r.mu.Unlock()
		})
		defer t.Stop()
	}
	got := acked()
	for int64(got) < n && !expired.Load() && !r.closing {
		r.cond.Wait()
		got = acked()
	}
	r.mu.Unlock()
	cl.wr.WriteInt(got)
}

// ROLE: the role, the offset and the peers, in Redis's shapes.
func cmdRole(s *Server, cl *client, a [][]byte) {
	st := s.replicationStatus()
	if m := st.primary; m != nil {
		cl.wr.WriteArray(5)
		cl.wr.WriteBulkString("slave")
		cl.wr.WriteBulkString(m.host)
		cl.wr.WriteInt(m.port)
		cl.wr.WriteBulkString(m.state.String())
		cl.wr.WriteInt64(st.offset)
		return
	}
	cl.wr.WriteArray(3)
	cl.wr.WriteBulkString("master")
	cl.wr.WriteInt64(st.offset)
	cl.wr.WriteArray(len(st.replicas))
	for _, l := range st.replicas {
		cl.wr.WriteArray(3)
		cl.wr.WriteBulkString(l.ip)
		cl.wr.WriteBulkString(strconv.Itoa(l.port))
		cl.wr.WriteBulkString(strconv.FormatInt(l.offset, 10))
	}
}

// onlineLinks are the connected replicas, in a stable order. Preconditions:
// mu held.
func (r *replication) onlineLinks() []*replicaLink {
	out := make([]*replicaLink, 0, len(r.replicas))
	for l := range r.replicas {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *replicaLink) int { return cmp.Compare(a.cl.id, b.cl.id) })
	return out
}

// replStatus is the replication state ROLE and INFO's Replication section
// report, taken at one moment (replicationStatus).
type replStatus struct {
	primary  *primaryStatus // as a replica, its link to its primary; nil for a primary
	replicas []replicaStatus
	// goodReplicas is min_slaves_good_slaves, shown if showGood (while
	// both min-replicas settings are set, as Redis shows it).
	goodReplicas int64
	showGood     bool

	id, id2      string // master_replid, master_replid2
	offset, off2 int64  // master_repl_offset, second_repl_offset
	// The backlog: repl_backlog_active, repl_backlog_size,
	// repl_backlog_first_byte_offset, repl_backlog_histlen.
	backlogActive                          bool
	backlogSize, backlogStart, backlogHist int64
}

// primaryStatus is a replica's link to its primary, as ROLE and INFO report
// it.
type primaryStatus struct {
	host  string
	port  int
	state masterLinkState
	// lastIOAgo is the seconds since the primary last sent anything; -1
	// if it never did.
	lastIOAgo int
	syncing   bool // a full copy is being loaded
	priority  int  // slave_priority
	// master_full_syncs, master_position_refused, master_stream_errors
	fullSyncs, positionRefused, streamErrors int64
}

// replicaStatus is a replica connected to this primary, as ROLE and INFO's
// slaveN lines report it.
type replicaStatus struct {
	ip     string
	port   int
	state  replicaLinkState
	offset int64 // the last it acknowledged
	lag    int64 // seconds since its last acknowledgement
}

// replicationStatus takes the replication state as one moment.
func (s *Server) replicationStatus() replStatus {
	r := s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	st := replStatus{id: r.id, id2: r.id2, offset: r.backlog.End(), off2: r.off2,
		backlogActive: r.active.Load(), backlogSize: r.backlog.Size(),
		backlogStart: r.backlog.Start(), backlogHist: r.backlog.Len()}
	if m := r.master; m != nil {
		ps := &primaryStatus{host: m.host, port: m.port, state: m.state.Load(), lastIOAgo: -1,
			syncing: m.syncing.Load(), priority: s.replicaPriority(), fullSyncs: r.fullSyncs.Load(),
			positionRefused: r.positionRefused.Load(), streamErrors: r.streamErrors.Load()}
		if t := m.lastIO.Load(); t > 0 {
			ps.lastIOAgo = int(time.Now().Unix() - t)
		}
		st.primary = ps
	}
	st.goodReplicas, st.showGood = s.goodReplicasShown()
	now := time.Now().UnixMilli()
	for _, l := range r.onlineLinks() {
		st.replicas = append(st.replicas, replicaStatus{ip: l.ip, port: l.port, state: l.state,
			offset: l.ack.Load(), lag: (now - l.lastAck.Load()) / 1000})
	}
	return st
}

// info is INFO's Replication section, with Redis's field names and
// meanings, as Sentinel parses them.
func (st *replStatus) info() []any {
	var kv []any
	if m := st.primary; m != nil {
		up := m.state == primaryConnected
		kv = append(kv, "role", "slave", "master_host", m.host, "master_port", m.port,
			"master_link_status", upDown(up), "master_last_io_seconds_ago", m.lastIOAgo,
			"master_sync_in_progress", b2i(m.syncing), "slave_read_repl_offset", st.offset,
			"slave_repl_offset", st.offset, "slave_priority", m.priority, "slave_read_only", 1,
			"replica_announced", 1, "master_full_syncs", m.fullSyncs,
			"master_position_refused", m.positionRefused, "master_stream_errors", m.streamErrors)
		if !up {
			kv = append(kv, "master_link_down_since_seconds", max(m.lastIOAgo, 0))
		}
	} else {
		kv = append(kv, "role", "master")
	}
	kv = append(kv, "connected_slaves", len(st.replicas))
	if st.showGood {
		kv = append(kv, "min_slaves_good_slaves", st.goodReplicas)
	}
	for i, l := range st.replicas {
		kv = append(kv, fmt.Sprintf("slave%d", i), fmt.Sprintf("ip=%s,port=%d,state=%s,offset=%d,lag=%d",
			l.ip, l.port, l.state, l.offset, l.lag))
	}
	return append(kv, "master_failover_state", "no-failover", "master_replid", st.id, "master_replid2", st.id2,
		"master_repl_offset", st.offset, "second_repl_offset", st.off2,
		"repl_backlog_active", b2i(st.backlogActive), "repl_backlog_size", st.backlogSize,
		"repl_backlog_first_byte_offset", st.backlogStart, "repl_backlog_histlen", st.backlogHist)
}

// upDown is INFO's master_link_status.
func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}
