package server

import (
	"bytes"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/acl"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
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
	// A transaction: inMulti after MULTI; the queued commands (nqueued
	// their count, for CLIENT LIST); multiErr if one was refused; txn
	// while EXEC runs them. watched are the keys WATCH recorded.
	inMulti  atomic.Bool
	queued   [][][]byte
	nqueued  atomic.Int32
	multiErr bool
	watched  []keyspace.Watch
	watching atomic.Int32
	// monitor, after MONITOR, receives the lines of every command run.
	monitor chan []byte
	// sub is the pub/sub state, from the first subscription on
	// (cmd_pubsub.go); nsub, npsub and nssub count the channels, patterns
	// and shard channels subscribed to, as the registry (Server.ps)
	// reports them at each change, for readers without its lock.
	sub                *subscriber
	nsub, npsub, nssub atomic.Int32
	// replLink is set by REPLCONF and PSYNC from a replica; replStart once
	// PSYNC has made the connection a replica link (cmd_repl.go).
	replLink      *repl.Link
	replStart     bool
	isReplicaLink atomic.Bool // replStart, for CLIENT LIST and KILL
	// inflight is the bytes of dump chunks this pipeline charged: released
	// once its replies are sent.
	inflight uint64
	// mem is what the connection holds, published for the totals and the
	// limits (clientmem.go).
	mem clientMem
	// asking is set by ASKING for the next command only; readonly by
	// READONLY until READWRITE: reads on a replica node (cluster.go).
	asking, readonly bool
	// logged are the replies, as spans of wr's buffer, of this pipeline's
	// commands that logged an op: if the log cannot take them, these
	// replies become the log's error.
	logged []replySpan
	// ahead are the requests read ahead of the one running (prefetch.go).
	ahead ahead
}

type replySpan struct{ start, end int }

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
		s.dropClientMem(cl)
		s.releaseInflight(cl)
		s.mu.Lock()
		delete(s.clients, cl)
		s.mu.Unlock()
		s.conns.Done()
	}()
	lim := s.clientLimits().read()
	rd := resp.NewReader(cl.nc)
	rd.OnResize = func(n int) { s.setQbuf(cl, n) }
	s.armOutput(cl)
	for {
		args, err := s.nextRequest(cl, rd, lim)
		if err != nil {
			// A malformed request: answer what came before it, then the
			// error, and close (as Redis does).
			if s.endPipeline(cl) {
				s.log.Debug("protocol error; closing the connection", "client", cl.id, "err", err)
				cl.wr.WriteError("ERR " + err.Error())
				s.flush(cl)
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
			if cl.replStart {
				s.becomeReplica(cl)
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
		if cl.wr.Len() >= cl.mem.outCheck && s.overOutput(cl) {
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
	cl.mem.qlen.Store(int64(rd.Buffered()))
	err := rd.Fill(lim)
	cl.lastActive.Store(time.Now().UnixNano())
	if err != nil {
		if errors.Is(err, resp.ErrQueryBufferLimit) {
			s.cmem.queryClosed.Add(1)
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
	if timeout <= 0 || cl.sub != nil && cl.subscribed() {
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
		if err := s.store.AOF.Commit(cl.ks.LSN); err != nil {
			s.log.Error("log commit failed; the pipeline's writes are answered with the error", "client", cl.id, "err", err)
			s.replaceReplies(cl, err)
		}
		cl.ks.LSN = 0
	}
	cl.logged = cl.logged[:0]
	s.setMulti(cl)
	// The replies count as the client's memory while they are written
	// (a client that does not read blocks the flush), then no longer.
	published := cl.wr.Len() >= cl.mem.publishAt
	if published {
		s.setOutput(cl, int64(cl.wr.Len()))
	}
	err := s.flush(cl)
	if published {
		s.setOutput(cl, 0)
		s.replyWritten(cl)
	}
	s.releaseInflight(cl)
	return err == nil
}

// flush writes the buffered replies; for a connection with a subscriber,
// holding its write lock, with the pushes queued meanwhile after them
// (flushSubscribed).
func (s *Server) flush(cl *client) error {
	if cl.sub != nil {
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
		s.stats.errors.Add(1)
		cl.wr.WriteError(replyText(err))
		at = sp.end
	}
	cl.wr.WriteRaw(old[at:])
}
