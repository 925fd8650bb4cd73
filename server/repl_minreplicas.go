package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// min-replicas-to-write and min-replicas-max-lag: a primary that cannot
// hear enough of its replicas stops acknowledging writes, as Redis's does.
//
// Why. A primary cut off from its replicas and from Sentinel's majority
// goes on acknowledging writes until it hears it was demoted, and every one
// of them is lost when it rejoins as a replica of the promoted one (issue
// 39 measured 29,704 over a partition of this kind). With
// min-replicas-to-write N, a primary refuses writes with NOREPLICAS while
// fewer than N of its replicas are good, which bounds that window to about
// min-replicas-max-lag seconds; the writes that must survive a failover are
// the ones WAIT saw acknowledged.
//
// Good. A replica is good when its link is online (its copy sent, or its
// continue answered) and its last REPLCONF ACK is at most
// min-replicas-max-lag seconds old. Redis counts that lag in whole unix
// seconds, once a second, so its primary stops between max-lag and max-lag
// + 2 s after the last acknowledgement; here it is counted to the
// millisecond, at the moment it passes, which is within Redis's range and
// at its tight end. A replica acknowledges each second and after each batch
// it applies, so a primary cut off from it stops acknowledging writes at
// most max-lag + 1 s after the cut (max-lag after it under writes).
//
// Protocol. The count is not taken on every write: it is taken when a
// replica acknowledges (while the setting is on), when a link goes online
// or is dropped, when either setting changes, once a second by heartbeat,
// and by a timer set, at each count, for the moment the first good
// replica's acknowledgement grows older than max-lag; each count runs
// under minReplicas.mu and stores minReplicas.good. A write reads that
// atomic and the two settings' atomics, which publish stores
// (cmd_config.go). A write racing a recount sees the count before or after
// it. minReplicas.mu is taken last, under replication.mu (a link dropped)
// or the settings' lock (publish), and nothing is locked under it: INFO
// takes the settings' lock under replication.mu, so publish may not take
// replication.mu. The check applies to commands flagged write, refused at
// the door (and queued ones inside MULTI, so that EXEC answers EXECABORT),
// and to EXEC as a whole if its queue holds a write, as Redis's
// processCommand does; the commands an EXEC runs are not checked again one
// by one, so a transaction runs whole or not at all. A replica never
// refuses on these grounds (Redis checks only a primary; a replica answers
// READONLY).

// errNoReplicas is Redis's reply to a write refused for want of good
// replicas.
var errNoReplicas = replyErr("NOREPLICAS Not enough good replicas to write.")

// minReplicas is the settings and the count of good replicas (see above).
type minReplicas struct {
	toWrite atomic.Int64 // min-replicas-to-write; 0: never refuse
	maxLag  atomic.Int64 // min-replicas-max-lag, seconds; 0: never refuse
	good    atomic.Int64 // good replicas at the last count
	mu      sync.Mutex
	// online holds the links that went online and are not yet dropped;
	// guarded by mu. replicaLink.state is written without a lock by the
	// link's own goroutine, so the count keeps its own record rather than
	// read it.
	online map[*replicaLink]struct{}
	// expiry counts again when the first good replica stops being good;
	// guarded by mu.
	expiry *time.Timer
}

// setMinReplicas applies the settings of cfg and counts again, as Redis's
// CONFIG SET of either does; publish calls it.
func (s *Server) setMinReplicas(cfg *Config) {
	s.minRep.toWrite.Store(int64(max(cfg.MinReplicasToWrite, 0)))
	s.minRep.maxLag.Store(int64(max(cfg.MinReplicasMaxLag, 0)))
	s.countGoodReplicas()
}

// replicaOnline records that link went online: its copy is sent or its
// continue answered, and it streams from now on. serveReplica calls it.
func (s *Server) replicaOnline(link *replicaLink) {
	m := &s.minRep
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.online == nil {
		m.online = map[*replicaLink]struct{}{}
	}
	m.online[link] = struct{}{}
	m.count()
}

// replicaDropped forgets link, which serveReplica has just dropped.
func (s *Server) replicaDropped(link *replicaLink) {
	m := &s.minRep
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.online[link]; ok {
		delete(m.online, link)
		m.count()
	}
}

// countGoodReplicas counts the good replicas now (Redis's
// refreshGoodSlavesCount).
func (s *Server) countGoodReplicas() {
	s.minRep.mu.Lock()
	defer s.minRep.mu.Unlock()
	s.minRep.count()
}

// replicaAcked counts again after a replica's acknowledgement, while the
// setting is on: a replica that was not good may be now.
func (s *Server) replicaAcked() {
	if s.minRep.toWrite.Load() > 0 && s.minRep.maxLag.Load() > 0 {
		s.countGoodReplicas()
	}
}

// count counts the good replicas, and sets the timer for the moment the
// first of them stops being good. Preconditions: mu held.
func (m *minReplicas) count() {
	now, maxLag := time.Now().UnixMilli(), m.maxLag.Load()*1000
	good, next := 0, int64(0)
	for l := range m.online {
		if until := l.lastAck.Load() + maxLag; now <= until {
			good++
			if next == 0 || until < next {
				next = until
			}
		}
	}
	m.good.Store(int64(good))
	if m.expiry != nil {
		m.expiry.Stop()
		m.expiry = nil
	}
	if good > 0 && m.toWrite.Load() > 0 && maxLag > 0 {
		m.expiry = time.AfterFunc(time.Duration(next+1-now)*time.Millisecond, func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.count()
		})
	}
}

// enoughReplicas reports whether a write may run: min-replicas-to-write or
// min-replicas-max-lag is 0, the server is a replica, or it has at least
// min-replicas-to-write good replicas (Redis's checkGoodReplicasStatus).
func (s *Server) enoughReplicas() bool {
	n := s.minRep.toWrite.Load()
	return n == 0 || s.minRep.maxLag.Load() == 0 || s.store.Replica.Load() || s.minRep.good.Load() >= n
}

// execRefusal is EXEC's refusal, or nil: a queue that holds a write, on a
// primary without enough good replicas, is discarded with EXECABORT naming
// NOREPLICAS, before the queue's errors are considered, as in Redis.
func (s *Server) execRefusal(queued [][][]byte) error {
	if s.enoughReplicas() {
		return nil
	}
	for _, q := range queued {
		if cmd, _ := s.cmds.lookup(q); cmd != nil && cmd.write {
			return replyErr("EXECABORT Transaction discarded because of: " + errNoReplicas.Error())
		}
	}
	return nil
}

// goodReplicasShown is INFO's min_slaves_good_slaves, and whether INFO
// shows it: Redis does, after connected_slaves, while both settings are set.
func (s *Server) goodReplicasShown() (good int64, shown bool) {
	if s.minRep.toWrite.Load() == 0 || s.minRep.maxLag.Load() == 0 {
		return 0, false
	}
	return s.minRep.good.Load(), true
}
