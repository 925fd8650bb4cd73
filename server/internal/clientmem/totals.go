package clientmem

// Protocol (the package doc's, in short). Each figure of a Usage has one
// writer at a time: its connection's goroutine, or for the pushes whoever
// holds the subscriber's lock. A figure changes at its atomic Swap or
// Store, which is when other goroutines see it (CLIENT LIST, the cron); the
// difference is then added to the totals, which are sums of those
// differences: a total is exact once every add of the changes before it
// returned, and never walks the clients. A client's mark of its soft limit
// is set by CompareAndSwap from zero, so the first of concurrent markers
// wins, and cleared by any checker that finds it below the limit.

import (
	"sync"
	"sync/atomic"
	"time"
)

// CronPeriod is the period of the server's clients cron, which applies the
// output limits to what clients published and evicts: Redis's clientsCron
// runs at hz 10.
const CronPeriod = 100 * time.Millisecond

// Totals is the server's side: every client's figures summed, maxmemory-clients,
// the statistics of the clients closed, and the cron's wake-up. Make it
// with New; it must not be copied.
type Totals struct {
	normal   atomic.Int64 // every client's memory but replicas'
	replicas atomic.Int64 // replica links'
	evictAt  atomic.Int64 // maxmemory-clients in bytes; 0: none
	// store is the key space's count of client memory: normal less the
	// reply bytes already charged as dump chunks, so a reply is counted
	// once.
	store *atomic.Int64

	// INFO's evicted_clients, client_output_buffer_limit_disconnections
	// and client_query_buffer_limit_disconnections; the server counts
	// them as it closes clients.
	Evicted, OutputClosed, QueryClosed atomic.Int64

	// EvictMu is held by the cron across an eviction round (Evict): one
	// at a time.
	EvictMu  sync.Mutex
	wake     chan struct{} // capacity 1: the normal total reached evictAt
	lastWarn atomic.Int64  // Unix seconds of the last "still over" warning
}

// New returns empty totals that also add the normal clients' changes, less
// the bytes already charged as dump chunks, to store (the key space's
// count of client memory, which --maxmemory sees).
func New(store *atomic.Int64) *Totals {
	return &Totals{store: store, wake: make(chan struct{}, 1)}
}

// Normal is every normal client's memory (INFO's mem_clients_normal).
func (t *Totals) Normal() int64 { return t.normal.Load() }

// Replicas is the replica links' memory (INFO's mem_clients_slaves).
func (t *Totals) Replicas() int64 { return t.replicas.Load() }

// Wake is signalled when a published increase takes the normal total to
// maxmemory-clients, and by SetEvictAt: the cron's cue to evict now.
func (t *Totals) Wake() <-chan struct{} { return t.wake }

// EvictAt is maxmemory-clients in bytes, 0 for none.
func (t *Totals) EvictAt() int64 { return t.evictAt.Load() }

// SetEvictAt sets maxmemory-clients in bytes (0: none) and wakes the cron,
// so that a lower limit evicts at once.
func (t *Totals) SetEvictAt(n int64) {
	t.evictAt.Store(n)
	t.signal()
}

func (t *Totals) signal() {
	select {
	case t.wake <- struct{}{}:
	default: // already woken
	}
}

// add publishes a change of d bytes in u's memory, of which charged are
// counted already as dump chunks, and wakes the cron if the total reached
// maxmemory-clients.
func (t *Totals) add(u *Usage, d, charged int64) {
	if u.replica.Load() {
		t.replicas.Add(d)
		return
	}
	total := t.normal.Add(d)
	if t.store != nil {
		t.store.Add(d - charged)
	}
	if d > 0 {
		if limit := t.evictAt.Load(); limit > 0 && total >= limit {
			t.signal()
		}
	}
}

// SetQbuf publishes n, the capacity of u's request buffer.
func (t *Totals) SetQbuf(u *Usage, n int) {
	if d := int64(n) - u.qbuf.Swap(int64(n)); d != 0 {
		t.add(u, d, 0)
	}
}

// SetOutput publishes n bytes of u's replies being flushed (0 once they
// are), of which the first inflight are counted already as dump chunks.
// The connection's goroutine only.
func (t *Totals) SetOutput(u *Usage, n int64, inflight uint64) {
	charged := min(n, int64(min(inflight, 1<<62)))
	d, dc := n-u.obuf.Swap(n), charged-u.charged
	u.charged = charged
	if d != 0 || dc != 0 {
		t.add(u, d, dc)
	}
}

// SetMulti publishes the bytes of u's queued transaction (Queue,
// ClearQueue), if they changed. The connection's goroutine only.
func (t *Totals) SetMulti(u *Usage) {
	if n := u.queued; n != u.multiSeen {
		t.add(u, n-u.multiSeen, 0)
		u.multi.Store(n)
		u.multiSeen = n
	}
}

// SetPush publishes n bytes of pushes pending or being written for u, to the
// byte in u and in steps of TrackOutput in the totals. Callers serialize
// (package pubsub holds the subscriber's lock).
func (t *Totals) SetPush(u *Usage, n int64) {
	u.push.Store(n)
	if c := n &^ (TrackOutput - 1); c != u.pushed.Load() {
		t.add(u, c-u.pushed.Swap(c), 0)
	}
}

// Drop takes an ended connection's figures off the totals but its pushes
// (which its subscriber's end takes off: SetPush(u, 0)).
func (t *Totals) Drop(u *Usage) {
	t.SetQbuf(u, 0)
	t.SetOutput(u, 0, 0)
	u.queued = 0
	t.SetMulti(u)
	u.qlen.Store(0)
}

// BecomeReplica moves u's figures to the replicas' total: PSYNC made the
// connection a replica's link, which is neither a normal client nor
// evictable.
func (t *Totals) BecomeReplica(u *Usage) {
	d, charged := u.Total(), u.charged
	t.add(u, -d, -charged)
	u.replica.Store(true)
	t.replicas.Add(d)
}

// WarnOver reports whether to log that the clients are still over
// maxmemory-clients after an eviction round at now: at most once a second.
func (t *Totals) WarnOver(now time.Time) bool {
	s := now.Unix()
	return t.lastWarn.Swap(s) != s
}
