package server

import (
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/clientmem"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
)

// Client memory: what each connection holds, its totals, and the bounds
// client-output-buffer-limit and maxmemory-clients. Package
// internal/clientmem owns the accounting and the decisions (its doc states
// the protocol): each client's figures are its mem, a clientmem.Usage, the
// totals are s.cmem. This file is the server's side: the class of a
// client, when serveConn and the cron check it, and closing the clients
// the decisions name, with the logs.
//
// Who sees it. INFO's mem_clients_normal and mem_clients_slaves, CLIENT
// LIST's qbuf, qbuf-free, multi-mem, omem and tot-mem, and --maxmemory:
// store.Clients is the normal total less the reply bytes already charged
// as dump chunks (store.inflight), so a reply is counted once. A write that
// would take the filters and the clients past MaxMemory is refused, as
// Redis's used_memory counts client buffers.
//
// Where the limits are checked. serveConn compares each command's reply
// buffer with the smaller of its class's limits (one comparison a command;
// the limits are looked up once a read) and closes a client over them at
// once, its replies unsent; a PUBLISH checks each subscriber's pushes
// (package pubsub's Deliver); clientsCron, every clientmem.CronPeriod and
// when woken, checks what every client published, so a client that never
// reads its replies, whose flush is blocked, is closed by the cron, and
// evicts past maxmemory-clients. Eviction and the cron's closes run on the
// cron's goroutine, never a connection's, so no lock a command holds is
// involved; a client is closed asynchronously (a TLS close may write),
// marked killed first so that it is gone from CLIENT LIST and is not
// closed twice.

// outputClass is cl's client-output-buffer-limit class.
func (cl *client) outputClass() int {
	return clientmem.Class(cl.repl.isLink.Load(), cl.sub.Any())
}

// armOutput sets the reply sizes serveConn compares with before each read:
// the class's limits in force now, so a command costs one comparison.
func (s *Server) armOutput(cl *client) {
	cl.mem.Arm(s.clientLimits().OutputBuffer.Get(cl.outputClass()))
}

// overOutput is serveConn's check once cl's reply buffer reached OutCheck:
// over a limit (the hard one, or the soft one for too long) cl is closed
// now (it reports true, and serveConn returns without sending anything).
func (s *Server) overOutput(cl *client) bool {
	class := cl.outputClass()
	out := int64(cl.wr.Len()) + cl.mem.Pushes()
	if cl.mem.Check(s.clientLimits().OutputBuffer.Get(class), out, time.Now()).Over() {
		s.closeForOutput(cl, class, out, false)
		return true
	}
	return false
}

// replyWritten clears the soft limit's mark once a pipeline's replies are
// written (clientmem's ReplyWritten).
func (s *Server) replyWritten(cl *client) {
	cl.mem.ReplyWritten(s.clientLimits().OutputBuffer.Get(cl.outputClass()))
}

// closeForOutput closes cl for its output buffer limit: async from another
// goroutine (a TLS close may write), or by cl's own goroutine returning.
// It reports false if cl was being closed already.
func (s *Server) closeForOutput(cl *client, class int, out int64, async bool) bool {
	if cl.killed.Swap(true) {
		return false
	}
	s.cmem.OutputClosed.Add(1)
	lim := s.clientLimits().OutputBuffer.Get(class)
	s.log.Warn("client closed for overcoming of output buffer limits",
		"client", s.clientLine(cl), "class", limits.ClassNames[class], "bytes", out,
		"limit", lim.Line(class))
	if async && cl.nc != nil {
		go cl.nc.Close()
	}
	return true
}

// clientsCron closes the clients past a soft limit for too long, and evicts
// clients past maxmemory-clients, every clientmem.CronPeriod and when
// woken, until the server closes.
func (s *Server) clientsCron() {
	s.every(clientmem.CronPeriod, s.cmem.Wake(), func(now time.Time) {
		s.checkOutputs(now)
		s.evictClients(now)
	})
}

// checkOutputs applies the output buffer limits to what the clients
// published: the replies of a blocked flush, the pushes of a subscriber.
func (s *Server) checkOutputs(now time.Time) {
	ob := &s.clientLimits().OutputBuffer
	normal := ob.Get(classNormal)
	s.mu.Lock()
	defer s.mu.Unlock()
	for cl := range s.clients {
		if cl.killed.Load() || normal == (OutputLimit{}) && !cl.sub.Any() {
			continue // the common case: a normal client, no limit for them
		}
		class := cl.outputClass()
		if class == classReplica {
			continue // bounded by internal/repl's output.go
		}
		if v, out := cl.mem.CheckPublished(ob.Get(class), now); v.Over() {
			s.closeForOutput(cl, class, out, true)
		}
	}
}

// evictClients closes the clients clientmem.Evict chooses, those holding
// the most memory, largest first, until the normal total is under
// maxmemory-clients.
func (s *Server) evictClients(now time.Time) {
	limit := s.cmem.EvictAt()
	if limit <= 0 || s.cmem.Normal() < limit {
		return
	}
	s.cmem.EvictMu.Lock()
	defer s.cmem.EvictMu.Unlock()
	var cands []clientmem.Candidate[*client]
	total := s.cmem.Normal()
	s.mu.Lock()
	for cl := range s.clients {
		m := cl.mem.Total()
		switch {
		case cl.mem.IsReplica() || cl.repl.isLink.Load():
		case cl.killed.Load():
			total -= m // on its way out: its memory goes with it
		case !cl.noEvict.Load():
			cands = append(cands, clientmem.Candidate[*client]{Client: cl, ID: cl.id, Mem: m})
		}
	}
	s.mu.Unlock()
	total = clientmem.Evict(cands, total, limit, func(c clientmem.Candidate[*client]) bool {
		if c.Client.killed.Swap(true) {
			return false
		}
		s.cmem.Evicted.Add(1)
		s.log.Info("evicting client (maxmemory-clients)", "client", s.clientLine(c.Client), "tot-mem", c.Mem, "limit", limit)
		go c.Client.nc.Close()
		return true
	})
	if total >= limit && s.cmem.WarnOver(now) {
		s.log.Warn("over maxmemory-clients after evicting every evictable client", "clients", total, "limit", limit)
	}
}
