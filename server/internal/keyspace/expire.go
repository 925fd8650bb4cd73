package keyspace

import (
	"fmt"
	"math/bits"
	"sync"
	"time"
)

// Expiry: a key may carry a deadline, an absolute Unix time in
// milliseconds (EXPIRE and its kin set it, PERSIST clears it). The key is
// gone for every command once the clock passes it, and its memory is freed
// soon after.
//
// Protocol. A deadline is written under the key's writer lock, together
// with the store's index of keys that have one (expiries), and logged as
// OpExpire with the absolute deadline, or OpPersist; so a replay sets the
// same deadline whatever the time is when it runs. Replay never looks at the
// clock: every removal the live server made is in the log as an OpDrop.
//
//   - Lookups (store.get) read the deadline with one atomic load and no
//     lock; past it they answer "no such key". They then try, without
//     waiting (TryLock), to remove the key as a writer would (reap).
//   - Writers check the deadline under the key's lock (store.update, drop,
//     install, rename, restore): an expired key is dropped, the drop logged,
//     before the write goes on as on a missing key, so a filter created in
//     its place starts with no deadline.
//   - The sweeper (sweep), every sweepEvery, samples keys of the index, as
//     Redis's active expire cycle does, and drops the expired ones, logging
//     each drop; while more than a quarter of a sample had expired it
//     samples again, for at most sweepBudget.
//
// A drop made by a lookup or the sweeper is logged with no client, so no
// reply waits for it: if the server stops before it is written, the restart
// finds the key expired again and drops it again.

const (
	SweepEvery  = 100 * time.Millisecond // Redis's default hz of 10
	sweepSample = 20                     // keys a round, as Redis's ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP
	SweepBudget = 25 * time.Millisecond  // a quarter of the period, as Redis's slow cycle
)

// NowMs is the clock deadlines are compared with.
func NowMs() int64 { return time.Now().UnixMilli() }

// Expired reports whether c's deadline has passed at now (Unix ms). Redis's
// rule: a key whose deadline is now is still there. No lock.
func (c *Entry) Expired(now int64) bool {
	d := c.Deadline.Load()
	return d != 0 && now > d
}

// expiries is the index of the keys with a deadline: INFO's expires count,
// the exact sum of their deadlines (128 bits) for avg_ttl, and the sweeper's
// sample space. Its mutex is taken after a key's lock, never before one.
type expiries struct {
	mu    sync.Mutex
	keys  map[string]*Entry
	sumHi uint64
	sumLo uint64
}

// set gives c, key k's filter, deadline d (0: none). Preconditions: c.mu
// held, or the gate held exclusively, or recovery.
func (e *expiries) set(k string, c *Entry, d int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if old := c.Deadline.Load(); old != 0 {
		var b uint64
		e.sumLo, b = bits.Sub64(e.sumLo, uint64(old), 0)
		e.sumHi -= b
		if e.keys[k] == c {
			delete(e.keys, k)
		}
	}
	if d != 0 {
		var cy uint64
		e.sumLo, cy = bits.Add64(e.sumLo, uint64(d), 0)
		e.sumHi += cy
		if e.keys == nil {
			e.keys = map[string]*Entry{}
		}
		e.keys[k] = c
	}
	c.Deadline.Store(d)
}

// move re-files c's deadline from key from to key to (RENAME).
// Preconditions: both keys' locks held.
func (e *expiries) move(from, to string, c *Entry) {
	if c.Deadline.Load() == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.keys[from] == c {
		delete(e.keys, from)
	}
	e.keys[to] = c
}

// reset empties the index (FLUSHALL). Preconditions: gate held exclusively.
func (e *expiries) reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.keys, e.sumHi, e.sumLo = nil, 0, 0
}

// stats returns the keys with a deadline and their mean time to live in
// milliseconds at now (0 if none, or if the mean deadline has passed).
func (e *expiries) stats(now int64) (n int, avgTTL int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	n = len(e.keys)
	if n == 0 {
		return 0, 0
	}
	// Each deadline is below 2^63, so the mean is, and sumHi < n.
	mean, _ := bits.Div64(e.sumHi, e.sumLo, uint64(n))
	return n, max(int64(mean)-now, 0)
}

// sample returns up to n keys of the index, from a random place (a map's
// iteration starts at one).
func (e *expiries) sample(n int) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, min(n, len(e.keys)))
	for k := range e.keys {
		if len(out) == n {
			break
		}
		out = append(out, k)
	}
	return out
}

// touch records a lookup or write of c for OBJECT IDLETIME. No lock.
func (s *Store) touch(c *Entry) {
	if now := s.Clock.Load(); c.Access.Load() != now {
		c.Access.Store(now)
	}
}

// at reports whether c is still key k's filter: not dropped, not renamed
// away. Preconditions: c.mu held.
func (s *Store) at(k string, c *Entry) bool {
	if c.Dead {
		return false
	}
	cur, _ := s.keys.Load(k)
	return cur == c
}

// expireLocked drops c, key k's filter, if its deadline has passed, logging
// the drop, and reports whether it did. Preconditions: c.mu held, the gate
// read-locked (or held by w's EXEC), s.at(k, c).
func (s *Store) expireLocked(w *Writer, k string, c *Entry) bool {
	if c.Deadline.Load() == 0 || !c.Expired(NowMs()) { // no clock read for keys without a deadline
		return false
	}
	s.commit(w, &applying{Key: k, At: c}, &Op{Kind: OpDrop, Key: []byte(k)})
	s.ExpiredKeys.Add(1)
	return true
}

// reap drops key k's filter c, found expired by a lookup, unless that would
// wait for a lock: then the sweeper, or the next write, does it. No client
// waits for the drop.
func (s *Store) reap(k string, c *Entry) {
	if s.Replica.Load() {
		return // the primary's drop will come in the stream
	}
	if !s.gate.TryRLock() {
		return // a FLUSHALL, snapshot rotation or EXEC holds it: leave it
	}
	defer s.gate.RUnlock()
	if s.Writable() != nil || !c.Mu.TryLock() {
		return
	}
	defer c.Mu.Unlock()
	if s.at(k, c) {
		s.expireLocked(nil, k, c)
	}
}

// Sweep runs one active expiry cycle until the deadline end: it samples
// sweepSample keys with a deadline and drops the expired ones, again while
// more than a quarter of a sample had expired. It returns the keys dropped.
func (s *Store) Sweep(end time.Time) int {
	dropped := 0
	for {
		keys := s.exp.sample(sweepSample)
		n := 0
		for _, k := range keys {
			if s.dropIfExpired(k) {
				n++
			}
		}
		dropped += n
		if len(keys) < sweepSample || n*4 <= len(keys) || time.Now().After(end) {
			return dropped
		}
	}
}

// dropIfExpired drops key k if it has expired, as a write would.
func (s *Store) dropIfExpired(k string) bool {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.Writable() != nil {
		return false
	}
	c, ok := s.keys.Load(k)
	if !ok || !c.Expired(NowMs()) {
		return false
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return s.at(k, c) && s.expireLocked(nil, k, c)
}

// setExpire gives key k the deadline d (Unix ms; 0 clears it), logging it,
// or, if d is not after now, drops the key as Redis does. Preconditions:
// c.mu held, the gate read-locked (or held by w's EXEC), s.at(k, c).
func (s *Store) setExpire(w *Writer, k []byte, c *Entry, d int64) {
	o := &Op{Kind: OpExpire, Key: k, Deadline: d}
	switch {
	case d == 0:
		o.Kind = OpPersist
	case d <= NowMs():
		o.Kind = OpDrop
	}
	s.commit(w, &applying{Key: string(k), At: c}, o)
}

// KeyspaceLine is INFO's db0 line for n keys: keys=N,expires=E,avg_ttl=A,
// E the keys with a deadline (until dropped, expired ones too, as Redis
// counts them) and A their mean time to live in milliseconds, exact.
func (s *Store) KeyspaceLine(n int) string {
	e, avg := s.exp.stats(NowMs())
	return fmt.Sprintf("keys=%d,expires=%d,avg_ttl=%d", n, e, avg)
}
