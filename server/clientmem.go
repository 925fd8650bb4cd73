package server

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/limits"
)

// Client memory: what each connection holds, the totals INFO reports and
// --maxmemory sees, and Redis's two bounds on it, client-output-buffer-limit
// (per client, by class) and maxmemory-clients (all clients together).
//
// What a client holds. Its request buffer (package resp: the requests not
// yet run, a half-sent one included, and the arguments of the one running,
// which alias it), its replies built and not yet written, the commands a
// transaction queued, and for a subscriber the pushes pending or being
// written. The connection's goroutine publishes the first three in
// client.mem's atomics: the request buffer each time the reader allocates
// one (resp.Reader.OnResize), the replies when a pipeline's flush begins and
// ends, if they reach trackOutput bytes (a smaller reply is Redis's static
// reply buffer: not counted), the transaction at each pipeline's end.
// Publishers and the push goroutine publish the pushes, under the
// subscriber's lock, to the total in steps of trackOutput. Each change is
// added to the server's total as it is published (clientMemory.normal), so
// nothing walks the clients to add them up; a replica link's are moved to
// its own total once PSYNC makes it one. A client that ends takes its
// figures off the totals.
//
// Who sees it. INFO's mem_clients_normal and mem_clients_slaves, CLIENT
// LIST's qbuf, qbuf-free, multi-mem, omem and tot-mem, and --maxmemory:
// store.clients is the normal total less the reply bytes already charged as
// dump chunks (store.inflight), so a reply is counted once. A write that
// would take the filters and the clients past MaxMemory is refused, as
// Redis's used_memory counts client buffers.
//
// client-output-buffer-limit. A client's output is its replies not yet
// written plus its pushes. Hard limit: serveConn compares each command's
// reply buffer with the smaller of its class's limits (one comparison a
// command; the limits are looked up once a read), and a client at its hard
// limit is closed at once, its replies unsent; a PUBLISH that would take a
// subscriber to its hard limit closes it (cmd_pubsub.go). Soft limit: the
// same checks record when a client first reached it (mem.softSince), and
// clientsCron, every cronPeriod, closes a client whose published output has
// stayed at or above it for more than soft-seconds, and clears the mark of
// one below it. So a client that never reads its replies, whose flush is
// blocked, is closed by the cron. A reply counts until all of it has been
// written (Redis counts the part unsent). The replica class is enforced by
// the replica links themselves, whose output is the stream not yet sent,
// held in the backlog (repl_output.go); the cron leaves them alone.
//
// maxmemory-clients. When a published increase takes the normal total to
// the limit, clientsCron is woken; it (and each of its rounds, for a limit
// lowered by CONFIG SET) closes the clients holding the most, largest
// first, until the total is under the limit, as Redis's evictClients. A
// client with CLIENT NO-EVICT on counts in the total but is never evicted;
// replicas are neither counted nor evicted. Eviction runs on the cron's
// goroutine, never a connection's, so no lock a command holds is involved;
// a client is closed asynchronously (a TLS close may write), marked killed
// first so that it is gone from CLIENT LIST and is not evicted twice.

// trackOutput is the least reply, or step of pushes, counted in the totals:
// Redis's static reply buffer is 16 KiB. Smaller changes would cost an
// atomic add on a shared counter for every pipeline and message.
const trackOutput = 16 << 10

// cronPeriod is clientsCron's period: Redis's clientsCron runs at hz 10.
const cronPeriod = 100 * time.Millisecond

// clientMem is one client's published figures (see the protocol above).
type clientMem struct {
	qbuf  atomic.Int64 // capacity of the request buffer
	qlen  atomic.Int64 // of it, bytes not yet consumed when the last read began
	obuf  atomic.Int64 // replies being flushed, if at least the publish threshold
	multi atomic.Int64 // a transaction's queued commands
	push  atomic.Int64 // pushes pending or being written, to the byte
	// pushed is push as the totals count it, in steps of trackOutput;
	// written under the subscriber's lock.
	pushed atomic.Int64
	// softSince is when the output reached its class's soft limit (Unix
	// ns); 0 while below it.
	softSince atomic.Int64
	// replica is set once the connection is a replica's link: its figures
	// count in the replicas' total.
	replica atomic.Bool

	// The connection's goroutine's own:
	charged   int64 // of obuf, the bytes store.inflight counts already
	multiSeen int64 // multi as last published
	queued    int64 // bytes of the transaction's queued commands (cmd_multi.go)
	// outCheck is the reply size at which serveConn checks the output
	// limits (the smaller nonzero one of the client's class), publishAt
	// the one from which a pipeline's replies are published; both set
	// before each read (armOutput).
	outCheck, publishAt int
}

// total is the client's memory as the totals count it.
func (m *clientMem) total() int64 {
	return m.qbuf.Load() + m.obuf.Load() + m.multi.Load() + m.pushed.Load()
}

// output is the client's output as its limits see it.
func (m *clientMem) output() int64 { return m.obuf.Load() + m.push.Load() }

// clientMemory is the server's side: totals, statistics, eviction.
type clientMemory struct {
	normal   atomic.Int64 // every client's memory but replicas'
	replicas atomic.Int64 // replica links'
	evictAt  atomic.Int64 // maxmemory-clients in bytes; 0: none (publish sets it)

	evicted      atomic.Int64 // INFO's evicted_clients
	outputClosed atomic.Int64 // client_output_buffer_limit_disconnections
	queryClosed  atomic.Int64 // client_query_buffer_limit_disconnections

	wake     chan struct{} // capacity 1: the normal total reached evictAt
	evictMu  sync.Mutex    // one eviction at a time
	lastWarn atomic.Int64  // Unix seconds of the last "still over" warning
}

// add publishes a change of d bytes in cl's memory, of which charged are
// counted already as dump chunks, and wakes the eviction if the total
// reached maxmemory-clients.
func (s *Server) addClientMem(cl *client, d, charged int64) {
	if cl.mem.replica.Load() {
		s.cmem.replicas.Add(d)
		return
	}
	total := s.cmem.normal.Add(d)
	s.store.Clients.Add(d - charged)
	if d > 0 {
		if limit := s.cmem.evictAt.Load(); limit > 0 && total >= limit {
			s.wakeCron()
		}
	}
}

func (s *Server) wakeCron() {
	select {
	case s.cmem.wake <- struct{}{}:
	default: // already woken
	}
}

// setQbuf publishes the capacity of cl's request buffer.
func (s *Server) setQbuf(cl *client, n int) {
	if d := int64(n) - cl.mem.qbuf.Swap(int64(n)); d != 0 {
		s.addClientMem(cl, d, 0)
	}
}

// setOutput publishes n bytes of cl's replies being flushed (0 once they
// are), with the part of them store.inflight counts already.
func (s *Server) setOutput(cl *client, n int64) {
	charged := min(n, int64(cl.inflight))
	d, dc := n-cl.mem.obuf.Swap(n), charged-cl.mem.charged
	cl.mem.charged = charged
	if d != 0 || dc != 0 {
		s.addClientMem(cl, d, dc)
	}
}

// setMulti publishes the bytes of cl's queued transaction, if they changed.
func (s *Server) setMulti(cl *client) {
	if n := cl.mem.queued; n != cl.mem.multiSeen {
		s.addClientMem(cl, n-cl.mem.multiSeen, 0)
		cl.mem.multi.Store(n)
		cl.mem.multiSeen = n
	}
}

// setPush publishes n bytes of pushes for sub's client; sub.mu held.
func (s *Server) setPush(sub *subscriber, n int64) {
	m := &sub.cl.mem
	m.push.Store(n)
	if c := n &^ (trackOutput - 1); c != m.pushed.Load() {
		s.addClientMem(sub.cl, c-m.pushed.Swap(c), 0)
	}
}

// dropClientMem takes an ended connection's figures off the totals (its
// pushes: dropSubscriber).
func (s *Server) dropClientMem(cl *client) {
	s.setQbuf(cl, 0)
	s.setOutput(cl, 0)
	cl.mem.queued = 0
	s.setMulti(cl)
	cl.mem.qlen.Store(0)
}

// becomeReplica moves cl's figures to the replicas' total: PSYNC made the
// connection a replica's link, which is neither a normal client nor
// evictable.
func (s *Server) becomeReplica(cl *client) {
	d, charged := cl.mem.total(), cl.mem.charged
	s.addClientMem(cl, -d, -charged)
	cl.mem.replica.Store(true)
	s.cmem.replicas.Add(d)
}

// replyWritten clears the soft limit's mark once a pipeline's replies are
// written, unless pushes waiting keep cl at its soft limit: below it, the
// time at it is no longer continuous. (A mark left would close cl the next
// time it reaches the limit, should the cron not check its class.)
func (s *Server) replyWritten(cl *client) {
	if cl.mem.softSince.Load() == 0 {
		return
	}
	lim := s.clientLimits().OutputBuffer.get(cl.outputClass())
	if cl.mem.push.Load() < lim.Soft || lim.Soft == 0 {
		cl.mem.softSince.Store(0)
	}
}

// outputClass is cl's client-output-buffer-limit class, as Redis's
// getClientType: a replica's link, a client with a subscription, or normal.
func (cl *client) outputClass() int {
	switch {
	case cl.isReplicaLink.Load():
		return classReplica
	case cl.subscribed():
		return classPubSub
	}
	return classNormal
}

// armOutput sets the reply sizes serveConn compares with before each read:
// the class's limits in force now, so a command costs one comparison.
func (s *Server) armOutput(cl *client) {
	lim := s.clientLimits().OutputBuffer.get(cl.outputClass())
	check := int64(math.MaxInt)
	if lim.Hard > 0 {
		check = lim.Hard
	}
	if lim.Soft > 0 {
		check = min(check, lim.Soft)
	}
	cl.mem.outCheck = int(min(check, math.MaxInt))
	cl.mem.publishAt = min(cl.mem.outCheck, trackOutput)
}

// overOutput is serveConn's check once cl's reply buffer reached outCheck:
// at the hard limit cl is closed now (it reports true, and serveConn
// returns without sending anything); at the soft limit the time is marked,
// and cl closed if it was marked more than soft-seconds ago.
func (s *Server) overOutput(cl *client) bool {
	class := cl.outputClass()
	lim := s.clientLimits().OutputBuffer.get(class)
	out := int64(cl.wr.Len()) + cl.mem.push.Load()
	if lim.Hard > 0 && out >= lim.Hard {
		s.closeForOutput(cl, class, out, false)
		return true
	}
	if lim.Soft > 0 && out >= lim.Soft && s.softExpired(cl, lim, time.Now()) {
		s.closeForOutput(cl, class, out, false)
		return true
	}
	return false
}

// softExpired marks the moment cl's output reached its soft limit, if not
// marked yet, and reports whether the mark is more than soft-seconds old.
func (s *Server) softExpired(cl *client, lim OutputLimit, now time.Time) bool {
	since := cl.mem.softSince.Load()
	if since == 0 {
		cl.mem.softSince.CompareAndSwap(0, now.UnixNano())
		return false
	}
	return now.Sub(time.Unix(0, since)) > time.Duration(lim.SoftSeconds)*time.Second
}

// closeForOutput closes cl for its output buffer limit: async from another
// goroutine (a TLS close may write), or by cl's own goroutine returning.
// It reports false if cl was being closed already.
func (s *Server) closeForOutput(cl *client, class int, out int64, async bool) bool {
	if cl.killed.Swap(true) {
		return false
	}
	s.cmem.outputClosed.Add(1)
	lim := s.clientLimits().OutputBuffer.get(class)
	s.log.Warn("client closed for overcoming of output buffer limits",
		"client", s.clientLine(cl), "class", limits.ClassNames[class], "bytes", out,
		"limit", lim.Line(class))
	if async && cl.nc != nil {
		go cl.nc.Close()
	}
	return true
}

// clientsCron closes the clients past a soft limit for too long, and evicts
// clients past maxmemory-clients, every cronPeriod and when woken, until the
// server closes.
func (s *Server) clientsCron() {
	s.every(cronPeriod, s.cmem.wake, func(now time.Time) {
		s.checkOutputs(now)
		s.evictClients()
	})
}

// checkOutputs applies the output buffer limits to what the clients
// published: the replies of a blocked flush, the pushes of a subscriber.
func (s *Server) checkOutputs(now time.Time) {
	ob := &s.clientLimits().OutputBuffer
	normal := ob.get(classNormal)
	s.mu.Lock()
	defer s.mu.Unlock()
	for cl := range s.clients {
		if cl.killed.Load() || normal == (OutputLimit{}) && !cl.subscribed() {
			continue // the common case: a normal client, no limit for them
		}
		class := cl.outputClass()
		if class == classReplica {
			continue // bounded by repl_output.go (see above)
		}
		lim, out := ob.get(class), cl.mem.output()
		switch {
		case lim.Hard > 0 && out >= lim.Hard:
			s.closeForOutput(cl, class, out, true)
		case lim.Soft > 0 && out >= lim.Soft:
			if s.softExpired(cl, lim, now) {
				s.closeForOutput(cl, class, out, true)
			}
		default:
			cl.mem.softSince.Store(0)
		}
	}
}

// evictClients closes the clients holding the most memory, largest first,
// until the normal total is under maxmemory-clients.
func (s *Server) evictClients() {
	limit := s.cmem.evictAt.Load()
	if limit <= 0 || s.cmem.normal.Load() < limit {
		return
	}
	s.cmem.evictMu.Lock()
	defer s.cmem.evictMu.Unlock()
	type candidate struct {
		cl  *client
		mem int64
	}
	var cands []candidate
	total := s.cmem.normal.Load()
	s.mu.Lock()
	for cl := range s.clients {
		m := cl.mem.total()
		switch {
		case cl.mem.replica.Load() || cl.isReplicaLink.Load():
		case cl.killed.Load():
			total -= m // on its way out: its memory goes with it
		case !cl.noEvict.Load():
			cands = append(cands, candidate{cl, m})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(cands, func(a, b candidate) int {
		if c := cmp.Compare(b.mem, a.mem); c != 0 {
			return c
		}
		return cmp.Compare(a.cl.id, b.cl.id)
	})
	for _, c := range cands {
		if total < limit {
			return
		}
		if c.cl.killed.Swap(true) {
			continue
		}
		s.cmem.evicted.Add(1)
		total -= c.mem
		s.log.Info("evicting client (maxmemory-clients)", "client", s.clientLine(c.cl), "tot-mem", c.mem, "limit", limit)
		go c.cl.nc.Close()
	}
	if now := time.Now().Unix(); total >= limit && s.cmem.lastWarn.Swap(now) != now {
		s.log.Warn("over maxmemory-clients after evicting every evictable client", "clients", total, "limit", limit)
	}
}
