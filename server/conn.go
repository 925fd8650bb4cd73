package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/acl"
	"github.com/cuckoohash/cuckoo/server/internal/clientmem"
	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/info"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
	"github.com/cuckoohash/cuckoo/server/internal/repl"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// client is one connection's state. Only its goroutine touches it, except
// name and the fields CLIENT LIST reads, which are atomic or set once.
type client struct {
	// ks is the client's side of its writes to the key space: its log
	// position, an EXEC's ops, its scratch (the key space's store.go).
	ks keyspace.Writer

	id      int64
	nc      net.Conn
	wr      *resp.Writer
	created time.Time
	fd      int // for CLIENT LIST; -1 if none
	name    atomic.Pointer[string]
	libName atomic.Pointer[string]
	libVer  atomic.Pointer[string]
	proto   atomic.Int32 // 2 or 3, as HELLO chose
	// lastCmd is the command last run; lastActive the time
	// (unix ns) its request was read.
	lastCmd    atomic.Int32 // a bound.id
	lastActive atomic.Int64
	killed     atomic.Bool // by CLIENT KILL
	noEvict    atomic.Bool
	noTouch    atomic.Bool
	// replyOff mutes every reply (CLIENT REPLY OFF); skipNext the next
	// command's (CLIENT REPLY SKIP).
	replyOff bool
	skipNext bool
	// user is the user the connection authenticated as (nil: not yet);
	// CLIENT LIST and KILL read it from other connections.
	user atomic.Pointer[acl.Ref]
	quit bool
	// monitor, after MONITOR, receives the lines of every command run.
	monitor <-chan []byte
	// inflight is the bytes of dump chunks this pipeline charged: released
	// once its replies are sent.
	inflight uint64

	// The client's state by concern, each a small value of its own type:
	//
	// tx is its transaction: MULTI's queue and WATCH's keys (cmd_multi.go).
	tx transaction
	// sub is its pub/sub: its subscriptions' counts, for readers without
	// the registry's lock, and their delivery from the first subscription
	// on (package pubsub, cmd_pubsub.go).
	sub pubsub.Subscriptions
	// repl is its side of replication, as a replica's link (cmd_repl.go).
	repl replClient
	// cluster is its cluster mode state: ASKING, READONLY (package
	// cluster, cluster.go).
	cluster cluster.Conn
	// mem is what the connection holds, published for the totals and the
	// limits (package clientmem, clientmem.go).
	mem clientmem.Usage

	// logged are the replies, as spans of wr's buffer, of this pipeline's
	// commands that logged an op: if the log cannot take them, these
	// replies become the log's error.
	logged []replySpan
	// ahead are the requests read ahead of the one running (prefetch.go).
	ahead resp.Ahead
}

type replySpan struct{ start, end int }

// replClient is a client's side of replication (cmd_repl.go): link is set by
// REPLCONF and PSYNC from a replica; start once PSYNC has made the
// connection a replica link; isLink is start, for CLIENT LIST and KILL.
type replClient struct {
	link   *repl.Link
	start  bool
	isLink atomic.Bool
}

// mayProceed reports whether cl may run any command, and so send requests of
// any size (package resp).
func (s *Server) mayProceed(cl *client) bool { return cl.user.Load() != nil }

// serveConn reads requests and runs each as soon as it is complete; when no
// complete request is left in the buffer it ends the pipeline (the
// durability barrier, then one flush of every reply) and reads again.
func (s *Server) serveConn(cl *client) {
	defer func() {
		cl.nc.Close()
		s.dropSubscriber(cl)
		s.idle.leave(cl.mem.Total())
		s.cmem.Drop(&cl.mem)
		s.releaseInflight(cl)
		s.mu.Lock()
		delete(s.clients, cl)
		s.mu.Unlock()
		s.conns.Done()
	}()
	lim := readLimits(s.clientLimits())
	rd := resp.NewReader(cl.nc)
	rd.OnResize = func(n int) { s.cmem.SetQbuf(&cl.mem, n) }
	s.armOutput(cl)
	for {
		args, err := s.nextRequest(cl, rd, lim)
		if err != nil {
			// A malformed request: answer what came before it, then the
			// error, and close (as Redis does).
			if s.endPipeline(cl) {
				s.log.Debug("protocol error; closing the connection", "client", cl.id, "err", err)
				cl.wr.WriteError("ERR " + err.Error())
				if s.flush(cl) == nil {
					drainBeforeClose(cl.nc)
				}
			}
			return
		}
		if args == nil {
			if !s.endPipeline(cl) || cl.quit || s.closing.Load() {
				return
			}
			if cl.monitor != nil {
				s.serveMonitor(cl)
				return
			}
			if cl.repl.start {
				s.cmem.BecomeReplica(&cl.mem)
				s.serveReplica(cl)
				return
			}
			if s.store.AOF != nil && s.cfg.SnapshotLogSize >= 0 && s.store.AOF.Size.Load() > s.snapshotThreshold() {
				s.snapshotAsync()
			}
			if !s.readMore(cl, rd, lim) {
				return
			}
			continue
		}
		start, lsn := cl.wr.Len(), cl.ks.LSN
		skip := cl.skipNext
		cl.skipNext = false
		s.exec(cl, args)
		if cl.replyOff || skip {
			cl.wr.Truncate(start) // muted: CLIENT REPLY OFF or SKIP
		} else if cl.ks.LSN != lsn {
			cl.logged = append(cl.logged, replySpan{start, cl.wr.Len()})
		}
		if cl.wr.Len() >= cl.mem.OutCheck() && s.overOutput(cl) {
			return // client-output-buffer-limit: closed, nothing sent
		}
		if cl.quit {
			s.endPipeline(cl)
			return
		}
	}
}

// readMore waits for cl's next requests, within timeout, and reads what
// arrives into rd. It reports false if the client is to be closed: the read
// failed, the pending requests passed the query buffer limit (which it
// logs), or the client was evicted or killed while it waited.
func (s *Server) readMore(cl *client, rd *resp.Reader, lim resp.Limits) bool {
	s.armTimeout(cl)
	cl.mem.SetPending(rd.Buffered())
	err := rd.Fill(lim)
	cl.lastActive.Store(time.Now().UnixNano())
	if err != nil {
		if errors.Is(err, resp.ErrQueryBufferLimit) {
			s.cmem.QueryClosed.Add(1)
			s.log.Warn("closing a client whose pending requests passed the query buffer limit",
				"client", cl.id, "addr", cl.nc.RemoteAddr().String(), "limit", lim.QueryBuffer)
		}
		return false
	}
	if cl.killed.Load() {
		return false // evicted, or killed, while it waited
	}
	s.armOutput(cl)
	return true
}

// armTimeout sets the read deadline of --timeout before a read. Shutdown
// sets every deadline to now after raising closing, so checking closing
// after setting ours never leaves a read blocked past it.
func (s *Server) armTimeout(cl *client) {
	timeout := s.clientLimits().Timeout
	if timeout <= 0 || cl.sub.Any() {
		return // as in Redis, a subscriber may stay silent
	}
	cl.nc.SetReadDeadline(time.Now().Add(timeout))
	if s.closing.Load() {
		cl.nc.SetReadDeadline(time.Now())
	}
}

// endPipeline passes the durability barrier for the writes run since the
// last one and flushes every reply. If the log cannot take the writes, their
// replies are replaced by its error (the changes are in memory but may not
// survive a restart), and the other replies stand. It reports whether the
// connection is still usable.
func (s *Server) endPipeline(cl *client) bool {
	if cl.ks.LSN != 0 {
		// No reply of this pipeline leaves before its writes are as
		// durable as --appendfsync says.
		if err := s.store.AOF.Durable(cl.ks.LSN); err != nil {
			s.log.Error("log commit failed; the pipeline's writes are answered with the error", "client", cl.id, "err", err)
			s.replaceReplies(cl, err)
		}
		cl.ks.LSN = 0
	}
	cl.logged = cl.logged[:0]
	s.cmem.SetMulti(&cl.mem)
	// The replies count as the client's memory while they are written
	// (a client that does not read blocks the flush), then no longer.
	published := cl.wr.Len() >= cl.mem.PublishAt()
	if published {
		s.cmem.SetOutput(&cl.mem, int64(cl.wr.Len()), cl.inflight)
	}
	err := s.flush(cl)
	if published {
		s.cmem.SetOutput(&cl.mem, 0, cl.inflight)
		s.replyWritten(cl)
	}
	s.releaseInflight(cl)
	return err == nil
}

// flush writes the buffered replies; for a connection with a subscriber,
// holding its write lock, with the pushes queued meanwhile after them
// (flushSubscribed).
func (s *Server) flush(cl *client) error {
	if cl.sub.Delivery != nil {
		return s.flushSubscribed(cl)
	}
	return cl.wr.Flush()
}

// releaseInflight gives back the dump chunk bytes cl charged.
func (s *Server) releaseInflight(cl *client) {
	if cl.inflight > 0 {
		s.store.ReleaseChunk(cl.inflight)
		cl.inflight = 0
	}
}

// replaceReplies rewrites the replies of cl's logged commands as err.
func (s *Server) replaceReplies(cl *client, err error) {
	old := bytes.Clone(cl.wr.Bytes())
	cl.wr.Truncate(0)
	at := 0
	for _, sp := range cl.logged {
		cl.wr.WriteRaw(old[at:sp.start])
		s.writeErr(cl, err)
		at = sp.end
	}
	cl.wr.WriteRaw(old[at:])
}

// A connection closed after a protocol error is drained first, for up to
// drainTime and drainBytes.
const (
	drainTime  = 500 * time.Millisecond
	drainBytes = 1 << 20
)

// drainBeforeClose shuts the sending side of nc (the client reads its
// replies to the end), then reads and discards what the client still
// sends, up to drainTime or drainBytes. Closing a socket that holds bytes
// unread makes the kernel answer with a reset, which destroys the replies
// not yet read, the error included: so it was for any pipeline longer
// than the server had read when it met the error. net/http does the same
// before closing a connection it has not read to the end.
func drainBeforeClose(nc net.Conn) {
	if cc, ok := nc.(info.CountingConn); ok {
		nc = cc.Conn
	}
	cw, ok := nc.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	nc.SetReadDeadline(time.Now().Add(drainTime))
	io.CopyN(io.Discard, nc, drainBytes)
}
