package keyspace

import "iter"

// The writes that are not one kind's typed call (those are beside their
// kinds, in ops.go): MIGRATE's move, a transaction with its watched keys,
// DEBUG RELOAD, the gate held whole, and the key space's enumerations.

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
