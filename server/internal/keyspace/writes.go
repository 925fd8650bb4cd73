package keyspace

import (
	"errors"
	"iter"
	"strconv"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// The key space's writes, one typed call per kind: a command parses its
// arguments, makes one of these calls and writes the reply from what it
// returns. Each call takes the gate and the key's writer lock, makes its op,
// applies and logs it (store.go's protocol, ops.go's table), and returns
// what happened as values: a result per item, whether anything changed, or
// one of the errors below. No call writes a reply or knows its text: the
// command layer chooses that (the server's replies).
//
// w is the client's Writer; nil is the server's own write (expiry, DEBUG),
// which waits for no log position.

// AddStatus is what an add did with one item.
type AddStatus uint8

const (
	// Present: not added, because an NX add found the item may be there
	// already.
	Present AddStatus = iota
	// Added: the item went in, and is logged.
	Added
	// NoRoom: the item did not fit: the filter is full, may not grow
	// further (cf-max-expansions, RedisBloom's growth bound), or the memory
	// its growth needed was refused. AddResult.Err says which.
	NoRoom
	// Failed: the filter refused the item for another reason, in
	// AddResult.Err.
	Failed
)

var addStatusNames = [...]string{Present: "present", Added: "added", NoRoom: "no room", Failed: "failed"}

func (s AddStatus) String() string {
	if int(s) < len(addStatusNames) {
		return addStatusNames[s]
	}
	return "AddStatus(" + strconv.Itoa(int(s)) + ")"
}

// AddResult is one item's outcome in an add.
type AddResult struct {
	Status AddStatus
	Err    error // why, for NoRoom and Failed
}

// addResult classifies the outcome of one item's add.
func addResult(added bool, err error) AddResult {
	switch {
	case err == nil && added:
		return AddResult{Status: Added}
	case err == nil:
		return AddResult{Status: Present}
	case errors.Is(err, cf.ErrFull), errors.Is(err, cf.ErrMaxExpansions), errors.Is(err, ErrOOM), errors.Is(err, cf.ErrGrowRB):
		return AddResult{Status: NoRoom, Err: err}
	}
	return AddResult{Status: Failed, Err: err}
}

// AddOptions are an add's variants.
type AddOptions struct {
	// NX adds an item only if it may not be there yet (CF.ADDNX,
	// CF.INSERTNX).
	NX bool
	// Create makes a missing key with these parameters (a fresh seed is
	// drawn); nil refuses a missing key with ErrNotFound (NOCREATE).
	Create *cf.Params
	// Limits, if set, refuses the whole add with cf.ErrMaxExpansions when
	// the filter has as many sub-filters as its cf-max-expansions allows,
	// as RedisBloom does.
	Limits *cf.Defaults
}

// Add adds items to key's filter and returns each item's outcome, in
// order; only the items added are logged. The results are w's scratch,
// valid until w's next write.
func (s *Store) Add(w *Writer, key []byte, items [][]byte, o AddOptions) ([]AddResult, error) {
	var res []AddResult
	err := s.update(w, key, o.Create, false, func(c *Entry, _ bool) error {
		if c == nil {
			return ErrNotFound
		}
		if o.Limits != nil {
			if err := o.Limits.CheckGrowth(&c.Filter); err != nil {
				return err
			}
		}
		a := applyingFor(w, "", c)
		a.Nx, a.Op = o.NX, Op{Kind: OpAdd, Key: key, Items: items}
		if err := s.commit(w, a, &a.Op); err != nil {
			return err
		}
		res = a.Added
		return nil
	})
	return res, err
}

// Reserve creates key's filter with parameters p (a fresh seed is drawn),
// or refuses with ErrItemExists if the key exists.
func (s *Store) Reserve(w *Writer, key []byte, p *cf.Params) error {
	return s.update(w, key, p, false, func(_ *Entry, created bool) error {
		if !created {
			return ErrItemExists
		}
		return nil
	})
}

// DeleteItem deletes one copy of item from key's filter and reports whether
// one was there; ErrNotFound if the key is missing.
func (s *Store) DeleteItem(w *Writer, key, item []byte) (bool, error) {
	deleted := false
	err := s.update(w, key, nil, false, func(c *Entry, _ bool) error {
		if c == nil {
			return ErrNotFound
		}
		a := applyingFor(w, "", c)
		a.Op = Op{Kind: OpDel, Key: key, Items: [][]byte{item}}
		err := s.commit(w, a, &a.Op)
		deleted = a.Changed
		return err
	})
	return deleted, err
}

// Compact drops the empty stages of key's filter and reports whether it
// dropped any; ErrNotFound if the key is missing.
func (s *Store) Compact(w *Writer, key []byte) (bool, error) {
	compacted := false
	err := s.update(w, key, nil, false, func(c *Entry, _ bool) error {
		if c == nil {
			return ErrNotFound
		}
		a := &applying{At: c}
		err := s.commit(w, a, &Op{Kind: OpCompact, Key: key})
		compacted = a.Changed
		return err
	})
	return compacted, err
}

// LoadChunk applies CF.LOADCHUNK's chunk at iterator iter (not 0): 1 is a
// dump's header, which creates the key (ErrItemExists if it exists); any
// other is a chunk of the key's pending load (ErrNotFound if the key is
// missing; a negative iterator, which RedisBloom takes for a data chunk
// that cannot fit, cf.ErrBadChunk).
func (s *Store) LoadChunk(w *Writer, key []byte, iter int64, data []byte) error {
	o := &Op{Kind: OpChunk, Key: key, Iter: uint64(iter), Items: [][]byte{data}}
	switch {
	case iter == 1:
		return s.install(w, o)
	case iter < 0:
		return s.update(w, key, nil, true, func(c *Entry, _ bool) error {
			if c == nil {
				return ErrNotFound
			}
			return cf.ErrBadChunk
		})
	}
	return s.update(w, key, nil, true, func(c *Entry, _ bool) error {
		return s.commit(w, &applying{At: c}, o)
	})
}

// ExpireCond is EXPIRE's conditions (Redis 7's NX, XX, GT, LT), a set of
// bits.
type ExpireCond uint8

const (
	ExpireNX ExpireCond = 1 << iota // only if the key has no deadline
	ExpireXX                        // only if it has one
	ExpireGT                        // only if the new one is later (none counts as infinite)
	ExpireLT                        // only if the new one is earlier
)

// allows reports whether the conditions let deadline when replace current
// (0: none), as Redis decides: no deadline counts as infinite for GT and LT.
func (cond ExpireCond) allows(current, when int64) bool {
	switch {
	case cond&ExpireNX != 0 && current != 0,
		cond&ExpireXX != 0 && current == 0,
		cond&ExpireGT != 0 && (current == 0 || when <= current),
		cond&ExpireLT != 0 && current != 0 && when >= current:
		return false
	}
	return true
}

// Expire gives key the deadline when (Unix ms) if cond allows it and
// reports whether it was set; a deadline not after now deletes the key, as
// Redis does. A missing key is not set (false).
func (s *Store) Expire(w *Writer, key []byte, when int64, cond ExpireCond) (bool, error) {
	set := false
	err := s.update(w, key, nil, false, func(c *Entry, _ bool) error {
		if c == nil || !cond.allows(c.Deadline.Load(), when) {
			return nil
		}
		// 0 would read as "none": a deadline at or before now is one of
		// those that delete the key.
		s.setExpire(w, key, c, max(when, 1))
		set = true
		return nil
	})
	return set, err
}

// Persist clears key's deadline and reports whether it had one.
func (s *Store) Persist(w *Writer, key []byte) (bool, error) {
	removed := false
	err := s.update(w, key, nil, false, func(c *Entry, _ bool) error {
		if c != nil && c.Deadline.Load() != 0 {
			s.setExpire(w, key, c, 0)
			removed = true
		}
		return nil
	})
	return removed, err
}

// Migrate hands key's filter, locked, to send with its time to live (ms
// from now, 0 for none), and then, unless keep, drops the key, logged as a
// DEL: MIGRATE's move of one key. A key missing or expired is not sent
// (nil); one with a load pending is refused with ErrLoading. send must not
// call back into the store.
func (s *Store) Migrate(w *Writer, key []byte, keep bool, send func(c *Entry, ttl int64) error) error {
	s.rlockGate(w)
	defer s.runlockGate(w)
	if err := s.Writable(); err != nil {
		return err
	}
	k := string(key)
	c := s.lockLive(k)
	if c == nil {
		return nil // gone since MIGRATE began: nothing to move
	}
	defer c.Mu.Unlock()
	if s.expireLocked(w, k, c) {
		return nil
	}
	if c.Loading() {
		return ErrLoading
	}
	ttl := int64(0)
	if d := c.Deadline.Load(); d != 0 {
		ttl = max(d-NowMs(), 1) // not expired: a deadline now is still there
	}
	if err := send(c, ttl); err != nil {
		return err
	}
	if keep {
		return nil
	}
	return s.commit(w, &applying{Key: k, At: c}, &Op{Kind: OpDrop, Key: key})
}

// Watch is a key as WATCH saw it: its entry and that entry's version.
type Watch struct {
	key     string
	at      *Entry
	version uint64
}

// Watch returns key as it is now, for Exec to compare. A key whose
// deadline has passed is watched as absent, as every command sees it.
func (s *Store) Watch(key []byte) Watch {
	v := Watch{key: string(key)}
	if c := s.live(v.key, NowMs()); c != nil {
		v.at, v.version = c, c.Version.Load()
	}
	return v
}

// Key is the watched key's name.
func (v Watch) Key() string { return v.key }

// live returns key k's entry, nil if it is absent or its deadline has
// passed at now (dropped or not yet).
func (s *Store) live(k string, now int64) *Entry {
	c, _ := s.keys.Load(k)
	if c == nil || c.Expired(now) {
		return nil
	}
	return c
}

// changed reports whether v's key changed since Watch, at now. A key
// whose deadline passed since is a change, dropped or not yet; one already
// expired at Watch was absent then, and its drop is none: Redis's rules
// (isWatchedKeyExpired, touchWatchedKey). Preconditions: the gate held
// exclusively, so no write is in flight.
func (s *Store) changed(v Watch, now int64) bool {
	c := s.live(v.key, now)
	return c != v.at || (c != nil && c.Version.Load() != v.version)
}

// Exec runs an EXEC's commands (run) with the gate held exclusively, unless
// a key of watched changed since its Watch: then it runs nothing and
// reports false. The ops the commands log are gathered and logged as one
// record when run returns, so that replay and replicas apply the
// transaction whole; w's writes inside run hold no gate of their own.
func (s *Store) Exec(w *Writer, watched []Watch, run func()) bool {
	s.gate.Lock()
	defer s.gate.Unlock()
	now := NowMs()
	for _, v := range watched {
		if s.changed(v, now) {
			return false
		}
	}
	w.txn = &txnOps{}
	defer func() {
		ops := w.txn.Ops
		w.txn = nil
		switch len(ops) {
		case 0:
		case 1:
			s.logOp(w, ops[0])
		default:
			s.logOp(w, EncodeMulti(ops))
		}
	}()
	run()
	return true
}

// LockAll holds the gate exclusively until UnlockAll: no write is in flight
// meanwhile, and none begins. A replica's role change, its copy and its
// stream, and DEBUG RELOAD take it.
func (s *Store) LockAll() { s.gate.Lock() }

// UnlockAll releases what LockAll took.
func (s *Store) UnlockAll() { s.gate.Unlock() }

// Len is the number of keys, the expired ones not yet dropped included.
func (s *Store) Len() int { return s.keys.Len() }

// All is every key with its entry, the expired ones not yet dropped
// included; see LiveKeys.
func (s *Store) All() iter.Seq2[string, *Entry] { return s.keys.All() }

// Peek returns key k's entry as it is, nil if absent: no expiry check and
// no access time, for OBJECT, read-ahead and WATCH-like checks.
func (s *Store) Peek(k string) *Entry {
	c, _ := s.keys.Load(k)
	return c
}

// ReplaceFromPayload makes key's filter the one DUMP's payload holds, with
// deadline d (Unix ms, 0 for none), as replay applies a RESTORE: nothing
// is logged and memory is charged without limit. A replica's full copy
// and DEBUG RELOAD use it. Preconditions: the gate held exclusively.
func (s *Store) ReplaceFromPayload(key []byte, d int64, payload []byte) error {
	return s.Replay((&Op{Kind: OpRestore, Key: key, Deadline: d, Items: [][]byte{payload}}).Encode(), 0, nil)
}

// ReloadError is a key that DEBUG RELOAD could not restore.
type ReloadError struct {
	Key string
	Err error
}

func (e *ReloadError) Error() string { return "reload of key " + e.Key + ": " + e.Err.Error() }
func (e *ReloadError) Unwrap() error { return e.Err }

// Reload writes every key out as its DUMP payload and restores it in its
// place, with its deadline, through the replay path (the op a RESTORE
// logs, unlogged): DEBUG RELOAD. It returns the keys reloaded; a key that
// fails stops it with a *ReloadError.
func (s *Store) Reload(w *Writer) (int, error) {
	if !w.holdsGate() {
		s.gate.Lock()
		defer s.gate.Unlock()
	}
	var names []string
	for k := range s.keys.All() {
		names = append(names, k)
	}
	keys := 0
	for _, k := range names {
		c, ok := s.keys.Load(k)
		if !ok {
			continue
		}
		c.Mu.Lock()
		if c.Dead || c.Loading() {
			c.Mu.Unlock()
			continue
		}
		payload, deadline := c.DumpPayload(), c.Deadline.Load()
		c.Mu.Unlock()
		if err := s.ReplaceFromPayload([]byte(k), deadline, payload); err != nil {
			return keys, &ReloadError{Key: k, Err: err}
		}
		keys++
	}
	return keys, nil
}
