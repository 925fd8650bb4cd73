package keyspace

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/hashmap"
	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// This file is the key space: a hashmap.Map from key to *Entry, and the
// write path every write command takes.
//
// Protocol. A write command runs with gate read-locked and its key's writer
// lock (Entry.Mu) held; it makes its op and commits it (ops.go):
// the op's one apply, which replay and replicas run too, changes the key,
// and the op is appended to the log before the key is unlocked. So:
//
//   - the ops of one key reach the log in the order they were applied;
//   - a key is created locked: the create op is logged before any other
//     writer can touch the new filter;
//   - DEL logs its drop op while holding the key's lock and before removing
//     the key from the map, so a writer that then creates the key again logs
//     its create after the drop; writers that still hold the old *entry find
//     it dead, or no longer under their key (a RENAME moved it: store.at),
//     and look the key up again;
//   - a writer that finds its key's deadline passed drops the key, logging
//     the drop, then goes on as on a missing key (expire.go);
//   - FLUSHALL and snapshots take gate exclusively: no write is in flight, and
//     a snapshot's copy and the log rotation happen at one point of the log.
//
// Lookups (CF.EXISTS, CF.COUNT) take no lock at all: a map Load, then the
// lock-free filter.

// Store is the key space. Memory accounting: mem is the bytes of every live
// filter's stages, the sum of their SizeInBytes, plus the CF.SCANDUMP chunks in flight: a stage is
// charged (charge) before it is allocated, and a filter's bytes are released
// once, when it dies (dropLocked, clear) or loses stages (compact); a chunk
// is charged at its largest before it is built and released when its reply
// has been sent. Nothing else changes mem, so it never drifts, and
// --maxmemory bounds both.
type Store struct {
	keys *hashmap.Map[string, *Entry]
	gate sync.RWMutex
	AOF  *AOF // nil without --dir, and during recovery

	mem       atomic.Int64 // bytes of all filters' stages, and of dump chunks in flight
	Inflight  atomic.Int64 // of mem, the dump chunks built and not yet sent
	Maxmem    atomic.Int64 // 0: no limit; CONFIG SET maxmemory stores it
	maxFilter uint64       // the most one filter may take
	// Clients is what clients hold, less the dump chunks mem counts
	// already (the server's clientmem.go): --maxmemory bounds mem and clients together.
	Clients atomic.Int64
	// charger and forceCharger are charge and chargeForce as values, made
	// once: a method value made per write would be allocated per write.
	charger, forceCharger cf.Charger

	Dirty       atomic.Int64 // ops since the last snapshot
	ExpiredKeys atomic.Int64 // dropped because their deadline passed (INFO)

	// Repl receives every op logged (internal/repl's Node); replica is set while this
	// server is a replica: its keys change only by its primary's stream, so
	// it never drops an expired key itself (lookups still hide it).
	Repl    stream
	Replica atomic.Bool
	// ReplID and replOffset are the replication position the log recorded
	// last (position.go): set by recovery, read by New.
	ReplID     string
	ReplOffset int64

	exp   expiries     // the keys with a deadline (expire.go)
	Clock atomic.Int64 // Unix seconds, ticked by the sweeper: OBJECT IDLETIME's clock
	snap  snapProgress // the snapshot being written, for RENAME (snapshot.go)
}

// Entry is one key's value in the key space: its filter and what the key
// space keeps of it. The filter is embedded, so a lookup reaches its table
// with no pointer more than the map's.
type Entry struct {
	// Mu is the key's writer lock: held across a write command's change
	// and its log append (see the protocol above).
	Mu sync.Mutex
	// Dead is set, under mu, when the key is deleted; a writer that finds it
	// set looks the key up again.
	Dead bool
	// Version counts the changes made by commands, for WATCH.
	Version atomic.Uint64
	// Deadline is the key's expiry, Unix milliseconds, 0 for none
	// (expire.go). Written under mu with the store's expiry index;
	// read by lookups with one atomic load, no lock: the key is gone once
	// the clock passes it.
	Deadline atomic.Int64
	// Access is the store's coarse clock (seconds) when the key was last
	// looked up or written, for OBJECT IDLETIME; stored only when it
	// changes, so readers of a hot key write its line once a second.
	Access atomic.Int64

	cf.Filter
}

// stream is where the key space sends every op it logs besides the log:
// replication (internal/repl's Node), connected by the server.
type stream interface {
	// Feed sends a logged op to the replicas, if any.
	Feed(payload []byte)
	// WithPosition runs fn with a replica's position in its primary's
	// stream, held still: a snapshot's rotation logs it first in the new
	// log generation.
	WithPosition(fn func(id string, offset int64))
}

// Writer is a client's side of its writes, passed to the key space as a
// value of the write instead of the connection: the log position its
// replies wait for, the ops its commands logged (WATCH's versions), the
// ops of the EXEC it runs, gathered into one record, and the scratch of its
// writes. A nil writer is the server's own (expiry): it waits for nothing.
type Writer struct {
	// LSN is the log position this pipeline's replies wait for.
	LSN uint64
	// opsLogged counts the ops this client's commands logged.
	opsLogged int
	// txn is set while the client's EXEC runs, holding the gate
	// exclusively: its commands' ops gather here (the server's cmd_multi.go).
	txn *txnOps
	// scratch is the scratch of the client's live writes (ops.go),
	// reused so that a write allocates nothing.
	scratch applying
	// record is the scratch a logged op is encoded in when logOp copies
	// it (outside a transaction, which keeps its ops); it is kept only up
	// to maxRecordScratch, so that a client's one large write (a RESTORE,
	// a CF.LOADCHUNK) does not stay in its memory.
	record []byte
}

const maxRecordScratch = 64 << 10

// encode returns o's record payload, in w's scratch where logOp will only
// copy it. w may be nil.
func (w *Writer) encode(o *Op) []byte {
	if w == nil || w.txn != nil {
		return o.Encode()
	}
	rec := o.AppendEncoded(w.record[:0])
	if cap(rec) <= maxRecordScratch {
		w.record = rec
	}
	return rec
}

// txnOps are the ops an EXEC's commands logged, in order.
type txnOps struct{ Ops [][]byte }

// holdsGate reports whether w runs an EXEC, holding the store's gate
// exclusively; nil (replay, expiry) holds nothing.
func (w *Writer) holdsGate() bool { return w != nil && w.txn != nil }

// InExec reports whether w runs an EXEC.
func (w *Writer) InExec() bool { return w.txn != nil }

func NewStore(maxmem int64, maxFilter uint64) *Store {
	st := &Store{keys: hashmap.New[string, *Entry](), maxFilter: maxFilter}
	st.charger, st.forceCharger = st.Charge, st.chargeForce
	st.Maxmem.Store(maxmem)
	st.Clock.Store(time.Now().Unix())
	return st
}

// Charge accounts n more bytes for a filter that takes have bytes now,
// before they are allocated. It refuses them past --maxmemory, or past the
// bound on one filter, so that no command can ask for more than the machine
// has even without --maxmemory.
func (s *Store) Charge(have, n uint64) error {
	if have+n > s.maxFilter || have+n < have {
		return fmt.Errorf("%w: one filter may take at most %d bytes, this one would take %d", ErrOOM, s.maxFilter, have+n)
	}
	for {
		cur := s.mem.Load()
		if limit := s.Maxmem.Load(); limit > 0 && cur+s.Clients.Load()+int64(n) > limit {
			return ErrOOM
		}
		if s.mem.CompareAndSwap(cur, cur+int64(n)) {
			return nil
		}
	}
}

// chargeForce accounts n bytes with no limit: replay, whose ops were
// acknowledged once.
func (s *Store) chargeForce(_, n uint64) error {
	s.mem.Add(int64(n))
	return nil
}

// Release gives back n bytes charged before.
func (s *Store) Release(n uint64) { s.mem.Add(-int64(n)) }

// ChargeChunk accounts n bytes for a CF.SCANDUMP chunk before it is built;
// the connection releases them (releaseChunk) once the reply is sent.
func (s *Store) ChargeChunk(n uint64) error {
	if err := s.Charge(0, n); err != nil {
		return err
	}
	s.Inflight.Add(int64(n))
	return nil
}

func (s *Store) ReleaseChunk(n uint64) {
	s.Inflight.Add(-int64(n))
	s.Release(n)
}

// ItemCount is the number of filters and of items in them all (inserted
// minus deleted): a scan of the key space, O(n) for n keys.
func (s *Store) ItemCount() (keys int, items int64) {
	for _, c := range s.keys.All() {
		keys++
		items += c.Inserted()
	}
	return keys, items
}

// FilterBytes is used_memory_filters: mem without the chunks in flight.
func (s *Store) FilterBytes() int64 { return s.mem.Load() - s.Inflight.Load() }

// rlockGate read-locks the gate for a write by w, unless w holds it
// exclusively: the client running an EXEC (see the server's cmd_multi.go).
func (s *Store) rlockGate(w *Writer) {
	if !w.holdsGate() {
		s.gate.RLock()
	}
}

func (s *Store) runlockGate(w *Writer) {
	if !w.holdsGate() {
		s.gate.RUnlock()
	}
}

// logOp appends an op to the log and raises the client's LSN to it. Inside
// an EXEC the op joins the transaction's record instead (the server's
// cmd_multi.go), which keeps payload; otherwise the log and the replication
// stream copy it, and it may be reused once logOp returns (Writer.encode).
func (s *Store) logOp(w *Writer, payload []byte) {
	if w != nil {
		w.opsLogged++
		if w.txn != nil {
			w.txn.Ops = append(w.txn.Ops, payload)
			return
		}
	}
	s.Dirty.Add(1)
	if s.Repl != nil {
		s.Repl.Feed(payload) // to the replicas, in the same order per key as the log
	}
	if s.AOF == nil {
		return
	}
	lsn := s.AOF.Append(payload)
	if w != nil && lsn > w.LSN {
		w.LSN = lsn
	}
}

// Writable returns the error that refuses writes: on a replica, whose data
// only its primary's stream changes (replay, which does not come here), and
// after the log failed. The dispatcher refuses commands flagged write on a
// replica first; this is the key space's own guard, so that a command whose
// flags are wrong cannot change a replica's data and silently part it from
// its primary. Preconditions: the gate read-locked (replicaOf flips the
// role with it held exclusively).
func (s *Store) Writable() error {
	if s.Replica.Load() {
		return ErrReadonly
	}
	if s.AOF != nil {
		return s.AOF.Err()
	}
	return nil
}

// Get returns key's filter for a lookup, nil if it is missing or expired.
// No lock: a map Load and an atomic load of the deadline (expire.go).
func (s *Store) Get(key []byte) *Entry {
	c, _ := s.keys.Load(string(key))
	if c == nil {
		return nil
	}
	if c.Deadline.Load() != 0 && c.Expired(NowMs()) {
		s.reap(string(key), c)
		return nil
	}
	s.touch(c)
	return c
}

// update runs fn with key's writer lock held, inside the gate: every write
// to one key (ops.go's typed calls) is one. A missing key is created with create's
// parameters (and a fresh seed) if create is not nil, else fn gets nil.
// loading is CF.LOADCHUNK's data chunks, the only writes a key with a load
// pending takes. Preconditions: none; the caller holds no lock.
func (s *Store) update(w *Writer, key []byte, create *cf.Params, loading bool, fn func(c *Entry, created bool) error) error {
	s.rlockGate(w)
	defer s.runlockGate(w)
	if err := s.Writable(); err != nil {
		return err
	}
	k := string(key)
	for {
		c, ok := s.keys.Load(k)
		if !ok {
			if create == nil {
				return fn(nil, false)
			}
			p := *create
			p.Seed = rand.Uint64()
			a := applyingFor(w, k, nil)
			a.Op, a.Hold = Op{Kind: OpCreate, Key: key, Params: p}, true
			err := s.commit(w, a, &a.Op)
			if err == errRaced {
				continue
			}
			if err != nil {
				return err
			}
			return runLocked(w, a.At, true, fn)
		}
		c.Mu.Lock()
		if !s.at(k, c) {
			c.Mu.Unlock()
			continue
		}
		if s.expireLocked(w, k, c) {
			// Gone: go on as on a missing key, whose new filter has no
			// deadline.
			c.Mu.Unlock()
			continue
		}
		if c.Loading() && !loading {
			// Its remaining chunks would overwrite the change: refuse it
			// rather than acknowledge and lose it.
			c.Mu.Unlock()
			return ErrLoading
		}
		s.touch(c)
		return runLocked(w, c, false, fn)
	}
}

// runLocked runs fn and unlocks c.mu, even if fn panics. A change that
// logged an op bumps c.version, which WATCH compares.
func runLocked(w *Writer, c *Entry, created bool, fn func(*Entry, bool) error) error {
	defer c.Mu.Unlock()
	var before int
	if w != nil {
		before = w.opsLogged
		defer func() {
			if w.opsLogged != before {
				c.Version.Add(1)
			}
		}()
	}
	return fn(c, created)
}

// Drop deletes key and reports whether it was there.
func (s *Store) Drop(w *Writer, key []byte) (bool, error) {
	s.rlockGate(w)
	defer s.runlockGate(w)
	if err := s.Writable(); err != nil {
		return false, err
	}
	k := string(key)
	c := s.lockLive(k)
	if c == nil {
		return false, nil
	}
	defer c.Mu.Unlock()
	if s.expireLocked(w, k, c) {
		return false, nil // Redis's DEL of an expired key: 0
	}
	// Logged first, then unpublished: see the protocol above (OpDrop's
	// logFirst).
	return true, s.commit(w, &applying{Key: k, At: c}, &Op{Kind: OpDrop, Key: key})
}

// lockLive returns key k's filter with its writer lock held, still k's
// (s.at), or nil if k is absent. A filter dropped or renamed away while
// its lock was awaited is passed over for the one now under k.
func (s *Store) lockLive(k string) *Entry {
	for {
		c, ok := s.keys.Load(k)
		if !ok {
			return nil
		}
		c.Mu.Lock()
		if s.at(k, c) {
			return c
		}
		c.Mu.Unlock()
	}
}

// dropLocked removes c, key's filter. Preconditions: c.mu held (or the gate
// held exclusively).
func (s *Store) dropLocked(k string, c *Entry) {
	s.keys.Delete(k)
	s.retire(k, c)
}

// retire marks c, key k's filter until now, dead, forgets its deadline and
// releases its bytes; the caller has removed or replaced it in the map.
// Preconditions: c.mu held (or the gate held exclusively).
func (s *Store) retire(k string, c *Entry) {
	if c.Deadline.Load() != 0 {
		s.exp.set(k, c, 0)
	}
	c.Dead = true
	s.Release(c.SizeBytes())
}

// FlushAll deletes every key.
func (s *Store) FlushAll(w *Writer) error {
	if !w.holdsGate() {
		s.gate.Lock()
		defer s.gate.Unlock()
	}
	if err := s.Writable(); err != nil {
		return err
	}
	return s.commit(w, &applying{}, &Op{Kind: OpFlush})
}

// clear empties the key space. Preconditions: gate held exclusively (or
// recovery).
func (s *Store) clear() {
	for _, c := range s.keys.All() {
		c.Dead = true
		s.Release(c.SizeBytes())
	}
	s.keys.Clear()
	s.exp.reset()
}

// install applies o, an op that creates its key, unless the key exists.
func (s *Store) install(w *Writer, o *Op) error {
	s.rlockGate(w)
	defer s.runlockGate(w)
	if err := s.Writable(); err != nil {
		return err
	}
	k := string(o.Key)
	for {
		if old, ok := s.keys.Load(k); ok {
			if !s.dropExpiredOrGone(w, k, old) {
				return ErrItemExists
			}
			continue
		}
		a := &applying{Key: k}
		err := s.commit(w, a, o)
		if err == errRaced {
			continue
		}
		return err
	}
}

// dropExpiredOrGone reports whether old, found under key k, is no longer
// there: dropped or renamed meanwhile, or expired, and then dropped here
// (logged). Preconditions: the gate read-locked (or held by w's EXEC); no
// key lock held but that of a filter not yet published.
func (s *Store) dropExpiredOrGone(w *Writer, k string, old *Entry) bool {
	old.Mu.Lock()
	defer old.Mu.Unlock()
	return !s.at(k, old) || s.expireLocked(w, k, old)
}

// Present reports whether key is in the key space (and not expired),
// without touching it.
func (st *Store) Present(key []byte) bool {
	c, _ := st.keys.Load(string(key))
	return c != nil && (c.Deadline.Load() == 0 || !c.Expired(NowMs()))
}

// LiveKeys is the key space without the keys whose deadline has passed.
func (s *Store) LiveKeys() iter.Seq2[string, *Entry] {
	return func(yield func(string, *Entry) bool) {
		now := NowMs()
		for k, c := range s.keys.All() {
			if !c.Expired(now) && !yield(k, c) {
				return
			}
		}
	}
}

// DropExcept drops every key that keep does not hold, as replay drops one
// (nothing is logged), and returns how many it dropped: a replica's keys
// that a full copy, installed over them key by key, did not hold.
// Preconditions: the gate held exclusively.
func (s *Store) DropExcept(keep map[string]uint64) int {
	var drop []string
	for k := range s.keys.All() {
		if _, ok := keep[k]; !ok {
			drop = append(drop, k)
		}
	}
	for _, k := range drop {
		if c, ok := s.keys.Load(k); ok {
			s.dropLocked(k, c)
		}
	}
	return len(drop)
}
