package keyspace

import "unsafe"

// The writes that move a filter between keys, or put a whole one in place:
// RENAME and RESTORE. Both follow the key space's protocol (store.go):
// the locks of every key they touch are held across the change and its one
// logged op, and a filter is published under a new key while locked.
//
// RENAME locks both keys' filters, in the order of their addresses, so two
// renames never wait on each other in a cycle (lockPair). A writer that had looked up
// the old key and then waited for its lock finds the filter no longer
// there (store.at) and looks the key up again, so its op is logged under the
// name it wrote to. While a snapshot is being written, a rename whose old
// key the snapshot has not reached yet sends the snapshot to the new key
// afterwards (snapProgress.renamed): the moved filter is then in the file
// under its new name, whatever the order of the two.

// Rename moves key from's filter, with its deadline, to key to, replacing
// to's filter unless nx, and logs it as one op. It reports whether it moved
// it (RENAMENX's 1); false with nx when to exists. RENAME k k answers as
// Redis: OK (RENAMENX 0) if k exists.
func (s *Store) Rename(w *Writer, from, to []byte, nx bool) (bool, error) {
	s.rlockGate(w)
	defer s.runlockGate(w)
	if err := s.Writable(); err != nil {
		return false, err
	}
	f, t := string(from), string(to)
	for {
		src, ok := s.keys.Load(f)
		if !ok {
			return false, ErrNoSuchKey
		}
		if f == t {
			src.Mu.Lock()
			gone := !s.at(f, src)
			expired := !gone && s.expireLocked(w, f, src)
			src.Mu.Unlock()
			switch {
			case gone:
				continue
			case expired:
				return false, ErrNoSuchKey
			}
			return !nx, nil
		}
		dst, _ := s.keys.Load(t)
		unlock := lockPair(src, dst)
		if !s.at(f, src) || dst != nil && !s.at(t, dst) {
			unlock()
			continue
		}
		moved, retry, err := s.renameLocked(w, f, src, t, dst, nx)
		unlock()
		if !retry {
			return moved, err
		}
	}
}

// renameLocked is rename with src (at f) and dst (at t, or nil) locked.
// retry asks the caller to look both up again: t was created meanwhile.
func (s *Store) renameLocked(w *Writer, f string, src *Entry, t string, dst *Entry, nx bool) (moved, retry bool, err error) {
	if s.expireLocked(w, f, src) {
		return false, false, ErrNoSuchKey
	}
	if dst != nil && s.expireLocked(w, t, dst) {
		dst = nil
	}
	if dst != nil && nx {
		return false, false, nil
	}
	if dst == nil {
		// Publish src under t first: a writer of t that finds it waits for
		// src's lock, then logs after the rename.
		if _, loaded := s.keys.LoadOrStore(t, src); loaded {
			return false, true, nil
		}
	}
	s.snap.renamed(f, t)
	return true, false, s.commit(w, &applying{Key: f, At: src}, &Op{Kind: OpRename, Key: []byte(f), To: []byte(t)})
}

// lockPair locks a and b (nil, or a itself, for one lock) in the order of
// their addresses, and returns the function that unlocks them. The order
// is the filters', not their keys': a rename looks its two keys up before
// it locks, other renames may move filters between keys meanwhile, so two
// renames may find the same two filters under keys in opposite orders.
// An address never changes (Go's heap does not move objects).
func lockPair(a, b *Entry) func() {
	switch {
	case b == nil || b == a:
		a.Mu.Lock()
		return a.Mu.Unlock
	case uintptr(unsafe.Pointer(a)) > uintptr(unsafe.Pointer(b)):
		a, b = b, a
	}
	a.Mu.Lock()
	b.Mu.Lock()
	return func() {
		b.Mu.Unlock()
		a.Mu.Unlock()
	}
}

// Restore puts the filter DUMP's payload holds under key with deadline d
// (Unix ms, 0 for none), replacing the key's filter if replace, else
// refusing with ErrBusyKey; it logs the payload as the op. The filter is
// built and charged before any lock is taken. A deadline already passed
// creates nothing, and deletes the key it would replace, as Redis does.
func (s *Store) Restore(w *Writer, key, payload []byte, d int64, replace bool) error {
	c := new(Entry)
	if err := c.LoadPayload(payload, s.Charge, s.Release); err != nil {
		return err
	}
	if d != 0 && d <= NowMs() {
		s.Release(c.SizeBytes())
		if replace {
			_, err := s.Drop(w, key)
			return err
		}
		return nil
	}
	err := s.restore(w, key, c, d, replace, payload)
	if err != nil {
		s.Release(c.SizeBytes())
	}
	return err
}

// restore puts c, built from payload and not yet shared, under key: see
// Restore.
func (s *Store) restore(w *Writer, key []byte, c *Entry, d int64, replace bool, payload []byte) error {
	s.rlockGate(w)
	defer s.runlockGate(w)
	if err := s.Writable(); err != nil {
		return err
	}
	k := string(key)
	o := &Op{Kind: OpRestore, Key: key, Deadline: d, Items: [][]byte{payload}}
	for {
		a := &applying{Key: k, Built: c}
		old, _ := s.keys.Load(k)
		if old != nil {
			old.Mu.Lock()
			if !s.at(k, old) || s.expireLocked(w, k, old) {
				old.Mu.Unlock()
				continue
			}
			if !replace {
				old.Mu.Unlock()
				return ErrBusyKey
			}
			a.At = old
		}
		err := s.commit(w, a, o)
		if old != nil {
			old.Mu.Unlock()
		}
		if err == errRaced {
			continue
		}
		return err
	}
}
