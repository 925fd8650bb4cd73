package repl

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
// or is dropped, when either setting changes (SetMinReplicas), once a
// second by Heartbeat, and by a timer set, at each count, for the moment
// the first good replica's acknowledgement grows older than max-lag; each
// count runs under minReplicas.mu and stores minReplicas.good. A write
// reads that atomic and the two settings' atomics (EnoughReplicas), which
// SetMinReplicas stores. A write racing a recount sees the count before or
// after it. minReplicas.mu is taken last, under Node.mu (a link dropped)
// or the server's settings lock (its publish calls SetMinReplicas), and
// nothing is locked under it: Status takes the settings' lock (Priority)
// under Node.mu, so SetMinReplicas' caller may not take Node.mu. The
// server applies the check to the commands flagged write, at the door
// (and to queued ones inside MULTI, so that EXEC answers EXECABORT), and
// to EXEC as a whole if its queue holds a write, as Redis's
// processCommand does. A replica never refuses on these grounds (Redis
// checks only a primary; a replica answers READONLY).

// DefaultMinReplicasMaxLag is min-replicas-max-lag's default, as Redis's.
const DefaultMinReplicasMaxLag = 10

// minReplicas is the settings and the count of good replicas (see above).
type minReplicas struct {
	toWrite atomic.Int64 // min-replicas-to-write; 0: never refuse
	maxLag  atomic.Int64 // min-replicas-max-lag, seconds; 0: never refuse
	good    atomic.Int64 // good replicas at the last count
	// now is the clock: time.Now, or a test's.
	now func() time.Time
	mu  sync.Mutex
	// online holds the links that went online and are not yet dropped;
	// guarded by mu. Link.state is written by the link's own goroutine,
	// so the count keeps its own record rather than read it.
	online map[*Link]struct{}
	// expiry counts again when the first good replica stops being good;
	// guarded by mu.
	expiry *time.Timer
}

// SetMinReplicas applies min-replicas-to-write and min-replicas-max-lag
// (negative values are 0) and counts again, as Redis's CONFIG SET of
// either does.
func (n *Node) SetMinReplicas(toWrite, maxLag int64) {
	n.min.toWrite.Store(max(toWrite, 0))
	n.min.maxLag.Store(max(maxLag, 0))
	n.countGoodReplicas()
}

// replicaOnline records that link went online: its copy is sent or its
// continue answered, and it streams from now on. Serve calls it.
func (n *Node) replicaOnline(link *Link) {
	m := &n.min
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.online == nil {
		m.online = map[*Link]struct{}{}
	}
	m.online[link] = struct{}{}
	m.count()
}

// replicaDropped forgets link, which Serve has just dropped.
func (n *Node) replicaDropped(link *Link) {
	m := &n.min
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.online[link]; ok {
		delete(m.online, link)
		m.count()
	}
}

// countGoodReplicas counts the good replicas now (Redis's
// refreshGoodSlavesCount).
func (n *Node) countGoodReplicas() {
	n.min.mu.Lock()
	defer n.min.mu.Unlock()
	n.min.count()
}

// replicaAcked counts again after a replica's acknowledgement, while the
// setting is on: a replica that was not good may be now.
func (n *Node) replicaAcked() {
	if n.min.toWrite.Load() > 0 && n.min.maxLag.Load() > 0 {
		n.countGoodReplicas()
	}
}

// count counts the good replicas, and sets the timer for the moment the
// first of them stops being good. Preconditions: mu held.
func (m *minReplicas) count() {
	now, maxLag := m.now().UnixMilli(), m.maxLag.Load()*1000
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

// EnoughReplicas reports whether a write may run: min-replicas-to-write or
// min-replicas-max-lag is 0, the server is a replica, or it has at least
// min-replicas-to-write good replicas (Redis's checkGoodReplicasStatus).
func (n *Node) EnoughReplicas() bool {
	want := n.min.toWrite.Load()
	return want == 0 || n.min.maxLag.Load() == 0 || n.cfg.Store.Replica.Load() || n.min.good.Load() >= want
}

// goodReplicasShown is INFO's min_slaves_good_slaves, and whether INFO
// shows it: Redis does, after connected_slaves, while both settings are set.
func (n *Node) goodReplicasShown() (good int64, shown bool) {
	if n.min.toWrite.Load() == 0 || n.min.maxLag.Load() == 0 {
		return 0, false
	}
	return n.min.good.Load(), true
}
