package repl

import (
	"bufio"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/backlog"
	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// The primary's side (replica.go is the replica's). The protocol and the
// linearization points are in doc.go: every op is fed while its writer
// holds the gate read-locked and the key's lock; the linearization point
// of a write for replication is its feed, of a full copy the gate's
// exclusive lock. Node.mu guards the ids, the backlog, the links and the
// primary link; cond is broadcast on feed, acknowledgements, link changes
// and Stop.

// DefaultBacklog is repl-backlog-size's default, as Redis's.
const DefaultBacklog = 1 << 20

// ErrChained is PSYNC's refusal on a replica: chained replication is not
// supported.
var ErrChained = errors.New("ERR this server is a replica: chained replication is not supported; replicate from its primary")

// Config is what a Node needs from the server, passed in by value: Node
// never reaches back into it.
type Config struct {
	Store *keyspace.Store
	Log   *slog.Logger // nil: discard
	// BacklogSize is repl-backlog-size; 0 or less is DefaultBacklog.
	BacklogSize int64
	// OutputLimit is client-output-buffer-limit replica in force; nil for
	// none (output.go).
	OutputLimit func() limits.OutputLimit
	// ReadLimits bounds what a replica link's acknowledgements may send.
	ReadLimits func() resp.Limits
	// Dial connects to a primary at addr within timeout (over TLS if
	// tls-replication says so).
	Dial func(addr string, timeout time.Duration) (net.Conn, error)
	// Auth is masteruser and masterauth in force.
	Auth func() (user, pass string)
	// Priority is replica-priority (INFO's slave_priority).
	Priority func() int
	// ListenPort is the plain listener's port, 0 until there is one:
	// REPLCONF listening-port announces it.
	ListenPort func() int
	// Cluster is the cluster node, nil unless cluster mode is on: a
	// replica takes its primary's topology through it.
	Cluster *cluster.Node
	// Snapshot writes a snapshot: a replica's data directory is made
	// whole with one after a full copy.
	Snapshot func() error
}

// Node is a server's replication state, as primary and as replica.
type Node struct {
	cfg Config
	log *slog.Logger

	mu   sync.Mutex
	cond *sync.Cond // broadcast on feed, acks, link changes and Stop

	id   string // master_replid
	id2  string // master_replid2: the id before the last promotion
	off2 int64  // second_repl_offset: id2 valid up to here; -1: none
	// backlog holds the end of the stream; its end is master_repl_offset,
	// the replication position's offset. A full copy in progress pins it
	// at the offset the copy started at until the copy is sent (copy.go),
	// up to the link's output limit (output.go).
	backlog backlog.Backlog[*Link]
	// active: a backlog is kept, fed since a replica first connected (or
	// a full copy was loaded, or a promotion). Feed reads it without mu on
	// every write, so it stays an atomic here rather than in the backlog.
	active  atomic.Bool
	closing bool

	replicas map[*Link]struct{}
	primary  *primaryLink // non-nil while this server is a replica

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

	min minReplicas // min-replicas-to-write's count (minreplicas.go)
}

// New returns a primary's replication state, with a new replication id and
// no backlog kept until a replica connects.
func New(cfg Config) *Node {
	size := cfg.BacklogSize
	if size <= 0 {
		size = DefaultBacklog
	}
	n := &Node{cfg: cfg, log: cfg.Log, id: newID(), id2: strings.Repeat("0", 40), off2: -1,
		backlog: backlog.New[*Link](size), replicas: map[*Link]struct{}{}}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	n.cond = sync.NewCond(&n.mu)
	n.min.now = time.Now
	return n
}

// newID is a random 40-hex-digit replication id, as Redis's.
func newID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Feed appends a logged op to the stream, if a replica ever listened: the
// key space's stream (keyspace.Store.Repl; see the protocol in doc.go).
func (n *Node) Feed(payload []byte) {
	if n.active.Load() {
		n.mu.Lock()
		n.feedLocked(payload)
		n.mu.Unlock()
	}
}

// WithPosition runs fn with the replication id and offset held still.
func (n *Node) WithPosition(fn func(id string, offset int64)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	fn(n.id, n.backlog.End())
}

func (n *Node) feedLocked(payload []byte) {
	n.backlog.Append(payload)
	n.limitLinks()
	n.cond.Broadcast()
}

// BacklogSize is repl-backlog-size in force.
func (n *Node) BacklogSize() int64 { return n.backlog.Size() }

// Syncs are INFO's sync_full, sync_partial_ok and sync_partial_err.
func (n *Node) Syncs() (full, partialOK, partialErr int64) {
	return n.syncFull.Load(), n.syncPartialOK.Load(), n.syncPartialErr.Load()
}

// psyncFrom decides a PSYNC from (id, offset): whether the replica can
// continue from the backlog (the id is this history's, and the offset one
// this primary had, at a record's start, still in the backlog), and if
// not, why the position is one this primary never had, or "" if it may
// have had it (or the id is not this history's). A replica that stands
// where its primary never was applied something the primary did not send.
// Preconditions: mu held.
func (n *Node) psyncFrom(id string, offset int64) (cont bool, neverHad string) {
	// "?" names no history: a replica without a position asks PSYNC ? -1,
	// and a promotion from no position leaves id2 "?".
	if id == "?" || (id != n.id && id != n.id2) {
		return false, ""
	}
	known := id == n.id || (id == n.id2 && offset <= n.off2)
	// Continuing from inside a record would feed the replica the middle
	// of one.
	pos := n.backlog.Locate(offset)
	switch {
	case known && n.active.Load() && pos == backlog.AtRecord:
		return true, ""
	case id == n.id2 && offset > n.off2, id == n.id && pos == backlog.PastEnd:
		return false, "past the end of this primary's stream"
	case n.active.Load() && pos == backlog.InsideRecord:
		return false, "inside a record of this primary's stream"
	}
	return false, ""
}

// Accept decides the PSYNC <id> <offset> link sent, and makes link one of
// this primary's replicas: a continue pins the backlog at offset from
// now on; otherwise link takes a full copy when Serve runs it. It answers
// ErrChained on a replica, and, for a full copy asked from a position
// this primary never had, why (neverHad), for the caller's warning.
func (n *Node) Accept(link *Link, id string, offset int64) (neverHad string, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.primary != nil {
		// A replica of a replica is not supported: say so rather than
		// serve a stream this server does not originate.
		return "", ErrChained
	}
	cont, neverHad := n.psyncFrom(id, offset)
	link.full = !cont
	switch {
	case !link.full:
		n.syncPartialOK.Add(1)
	case id != "?":
		n.syncPartialErr.Add(1)
		n.syncFull.Add(1)
	default:
		n.syncFull.Add(1)
	}
	link.from = offset
	if cont {
		// Held from here on: the backlog keeps what the link has to send.
		n.backlog.Pin(link, offset)
	}
	link.state = LinkWaitBgsave
	n.active.Store(true)
	n.replicas[link] = struct{}{}
	return neverHad, nil
}

// Serve runs a link that Accept took: the full copy if needed, then the
// stream, while a goroutine reads its acknowledgements, until the link or
// the server closes. It closes the link's connection before it returns.
func (n *Node) Serve(link *Link) {
	gone := make(chan struct{})
	defer func() {
		n.mu.Lock()
		delete(n.replicas, link)
		n.replicaDropped(link)
		n.backlog.Unpin(link)
		n.cond.Broadcast()
		n.mu.Unlock()
		link.nc.Close()
		<-gone
	}()
	go func() {
		defer close(gone)
		defer func() { n.mu.Lock(); n.cond.Broadcast(); n.mu.Unlock() }()
		n.readAcks(link)
	}()
	w := bufio.NewWriterSize(link.nc, 64<<10)
	from, err := n.startStream(w, link)
	if err != nil || w.Flush() != nil {
		return
	}
	link.ack.Store(from)
	link.lastAck.Store(n.min.now().UnixMilli())
	n.mu.Lock()
	link.state = LinkOnline
	n.mu.Unlock()
	n.replicaOnline(link)
	n.sendStream(w, link, from, gone)
}

// readAcks reads what a replica link sends, until the connection fails:
// each REPLCONF ACK <offset> records the link's acknowledgement and wakes
// WAIT and min-replicas-to-write's count.
func (n *Node) readAcks(link *Link) {
	rd := resp.NewReader(link.nc)
	var lim resp.Limits
	if n.cfg.ReadLimits != nil {
		lim = n.cfg.ReadLimits()
	}
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
				link.lastAck.Store(n.min.now().UnixMilli())
				n.mu.Lock()
				n.cond.Broadcast()
				n.mu.Unlock()
				n.replicaAcked()
			}
		}
	}
}

// startStream writes PSYNC's answer to w: +FULLRESYNC and the full copy, or
// +CONTINUE. It answers the offset the stream continues from.
func (n *Node) startStream(w *bufio.Writer, link *Link) (int64, error) {
	addr := link.nc.RemoteAddr().String()
	if !link.full {
		n.mu.Lock()
		id := n.id
		n.mu.Unlock()
		fmt.Fprintf(w, "+CONTINUE %s\r\n", id)
		n.log.Info("a replica continues from the backlog", "replica", addr, "offset", link.from)
		return link.from, nil
	}
	id, off := n.beginCopy(link)
	n.mu.Lock()
	link.state = LinkSendBulk
	n.mu.Unlock()
	fmt.Fprintf(w, "+FULLRESYNC %s %d\r\n", id, off)
	start := time.Now()
	keys, bytes, err := n.writeCopy(w, link)
	if err != nil {
		return 0, err
	}
	n.log.Info("full copy sent to a replica", "replica", addr, "keys", keys, "bytes", bytes, "offset", off, "took", time.Since(start))
	return off, nil
}

// sendStream writes the stream to link from offset from on, as the backlog
// grows, until the server closes, the replica goes (gone), the link is cut
// for its output, or a write fails.
func (n *Node) sendStream(w *bufio.Writer, link *Link, from int64, gone chan struct{}) {
	for {
		n.mu.Lock()
		for n.backlog.End() == from && !n.closing && !isClosed(gone) {
			n.cond.Wait()
		}
		if n.closing || isClosed(gone) {
			n.mu.Unlock()
			return
		}
		data, ok := n.backlog.Since(from)
		n.mu.Unlock()
		if !ok {
			return // cut for its output (limitLinks), which said so
		}
		if _, err := w.Write(data); err != nil || w.Flush() != nil {
			return
		}
		from += int64(len(data))
		n.mu.Lock()
		if !link.cut {
			n.backlog.Pin(link, from) // sent: the backlog may move on to here
		}
		n.mu.Unlock()
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

// Heartbeat feeds a ping while replicas are connected, so that they see
// the link alive and idle offsets still move, and counts the good
// replicas (min-replicas-to-write's, once a second as Redis's). The
// server calls it each second.
func (n *Node) Heartbeat() {
	n.mu.Lock()
	if len(n.replicas) > 0 && n.primary == nil {
		n.feedLocked([]byte{keyspace.OpReplPing})
	}
	n.mu.Unlock()
	n.countGoodReplicas()
}

// Wait is WAIT's count: the replicas that acknowledged every write made
// before it, once want of them have, timeout passed (0: none) or the
// server stops.
func (n *Node) Wait(want int64, timeout time.Duration) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	target := n.backlog.End()
	var expired atomic.Bool
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() {
			expired.Store(true)
			n.mu.Lock()
			n.cond.Broadcast()
			n.mu.Unlock()
		})
		defer t.Stop()
	}
	got := n.acked(target)
	for int64(got) < want && !expired.Load() && !n.closing {
		n.cond.Wait()
		got = n.acked(target)
	}
	return got
}

// acked counts the replicas whose acknowledgement reached target.
// Preconditions: mu held.
func (n *Node) acked(target int64) int {
	k := 0
	for l := range n.replicas {
		if l.ack.Load() >= target {
			k++
		}
	}
	return k
}

// onlineLinks are the connected replicas, in a stable order. Preconditions:
// mu held.
func (n *Node) onlineLinks() []*Link {
	out := make([]*Link, 0, len(n.replicas))
	for l := range n.replicas {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *Link) int { return cmp.Compare(a.id, b.id) })
	return out
}
