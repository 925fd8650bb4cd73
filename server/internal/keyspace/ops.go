package keyspace

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/fields"
)

// The one table of the log's record kinds (opKinds): each kind's fields,
// written and read, and its one apply; then each kind's typed call, the
// write a command makes (Store.Add, Reserve, ...), so that a new write is
// its kind's row and its call here, and its command's row and handler in
// the server. A log record's payload is one op: the
// effect of a write command, not the command itself, so that replay does
// exactly what the live server did (only the items an insert accepted, the
// seed a new filter drew). A command makes its op, applies it with the
// key's lock held, and logs it; replay and a replica's stream decode it and
// apply it with the same function, so live and replayed state are the same
// code's.
//
//	op byte, then fields: uvarints, and strings as uvarint length + bytes
//
//	OpCreate  key, capacity, bucket size, max iterations, expansion, seed,
//	          and the layout unless it is this server's (1: RedisBloom's)
//	OpAdd     key, n, n items            (each was inserted)
//	OpDel     key, item                  (one copy was deleted)
//	OpDrop    key                        (DEL of the key)
//	OpFlush                              (FLUSHALL)
//	OpCompact key
//	OpChunk   key, iterator, data        (an accepted CF.LOADCHUNK)
//	OpExpire  key, deadline              (EXPIRE and its kin: the absolute
//	                                      deadline, Unix ms, > 0)
//	OpPersist key                        (PERSIST: the deadline cleared)
//	OpRename  key, new key               (RENAME, RENAMENX: the filter and
//	                                      its deadline move, replacing the
//	                                      new key's)
//	OpRestore key, deadline, payload     (RESTORE: DUMP's payload, replacing
//	                                      the key; deadline 0 for none)
//
// A key dropped because its deadline passed (by a lookup, a write or the
// sweeper) is logged as OpDrop: replay never reads the clock.
const (
	OpCreate OpKind = 1 + iota
	OpAdd
	OpDel
	OpDrop
	OpFlush
	OpCompact
	OpChunk
	OpExpire
	OpPersist
	OpRename
	OpRestore
)

// The records that are not one key's op, numbered apart from the ops.
// Every record kind of the log and the stream is numbered here, nowhere
// else.
const (
	// OpMulti holds a transaction's ops, applied together (the server's cmd_multi.go):
	// uvarint n, then n ops as strings.
	OpMulti byte = 64
	// OpReplPing is the primary's heartbeat in the stream, never logged: a
	// replica sees the link alive, and offsets move on both sides alike
	// (internal/repl).
	OpReplPing byte = 65
	// OpReplPos is a replica's position in its own log (position.go).
	OpReplPos byte = 66
)

// OpKind is a record's first byte when the record is one key's op.
type OpKind byte

// String is the kind's name in the table, as errors and logs give it.
func (k OpKind) String() string {
	if row := kindOf(k); row != nil {
		return row.name
	}
	return "op(" + strconv.Itoa(int(k)) + ")"
}

// Op is a decoded log payload.
type Op struct {
	Kind   OpKind
	Key    []byte
	Params cf.Params
	Items  [][]byte
	Iter   uint64
	// To is OpRename's new key; deadline OpExpire's and OpRestore's.
	To       []byte
	Deadline int64
}

// opKind is one kind of op: its name (for errors), its fields after the
// key, and its apply.
type opKind struct {
	name  string
	write func(w fields.Writer, o *Op) fields.Writer
	read  func(r *fields.Reader, o *Op)
	// apply makes o's change to a.At, key o.Key's entry (nil if the key is
	// absent; create and restore kinds make it). Preconditions: a.At's lock
	// held and the gate read-locked, or the gate held exclusively (replay,
	// a replica's stream).
	apply func(a *applying, o *Op) error
	// needsKey: applying it to an absent key is an error in the log.
	needsKey bool
	// logFirst: a command logs it before applying it, since applying
	// unpublishes a key: a writer that then creates the key anew must log
	// its create after this op (store.go's protocol). Its apply never
	// fails.
	logFirst bool
	// inPlace: it changes the entry and never the map, so its apply does
	// not read the key (a.Key may be left empty: the hot writes do not
	// make a string of it).
	inPlace bool
}

var opKinds = [...]opKind{
	OpCreate: {
		name: "create",
		write: func(w fields.Writer, o *Op) fields.Writer {
			w = w.Uvarint(o.Params.Capacity).Uvarint(uint64(o.Params.BucketSize)).Uvarint(uint64(o.Params.MaxIter)).
				Uvarint(uint64(o.Params.Expansion)).Uvarint(o.Params.Seed)
			// Trailing fields, left out where they hold what records
			// before them meant, so older logs read the same: the layout
			// (before the RedisBloom layout, this server's), then the
			// slots (before 5-slot buckets, legacySlots).
			slots := o.Params.RecordedSlots()
			if o.Params.Layout != cf.LayoutCuckoo || slots != 0 {
				w = w.Uvarint(uint64(o.Params.Layout))
			}
			if slots != 0 {
				w = w.Uvarint(uint64(slots))
			}
			return w
		},
		read: func(r *fields.Reader, o *Op) {
			o.Params.Capacity = r.Uvarint()
			o.Params.BucketSize = r.Int(cf.MaxBucketSize)
			o.Params.MaxIter = r.Int(cf.MaxIterations)
			o.Params.Expansion = r.Int(cf.MaxExpansion)
			o.Params.Seed = r.Uvarint()
			if len(r.B) > 0 && r.Err == nil {
				o.Params.Layout = cf.Layout(r.Int(uint64(cf.LayoutRedisBloom)))
			}
			var slots int
			if len(r.B) > 0 && r.Err == nil {
				slots = r.Int(cf.MaxBucketSize)
			}
			o.Params.SetRecordedSlots(slots)
		},
		apply: func(a *applying, o *Op) error {
			nc := new(Entry)
			if err := nc.Init(o.Params, a.Charge()); err != nil {
				return err
			}
			return a.putOwn(nc)
		},
	},
	OpAdd: {
		name: "add",
		write: func(w fields.Writer, o *Op) fields.Writer {
			w = w.Uvarint(uint64(len(o.Items)))
			for _, it := range o.Items {
				w = w.Str(it)
			}
			return w
		},
		read: func(r *fields.Reader, o *Op) {
			n := r.Uvarint()
			if n > uint64(len(r.B)) {
				r.Err = fields.ErrShort
				return
			}
			for range n {
				o.Items = append(o.Items, r.Str())
			}
		},
		apply:    applyAdd,
		needsKey: true,
		inPlace:  true,
	},
	OpDel: {
		name:  "del",
		write: func(w fields.Writer, o *Op) fields.Writer { return w.Str(o.Items[0]) },
		read:  func(r *fields.Reader, o *Op) { o.Items = [][]byte{r.Str()} },
		apply: func(a *applying, o *Op) error {
			before := a.At.SizeBytes()
			a.Changed = a.At.Del(o.Items[0])
			a.st.Release(before - a.At.SizeBytes()) // a RedisBloom filter compacts as it deletes
			return nil
		},
		needsKey: true,
		inPlace:  true,
	},
	OpDrop: {
		name: "drop",
		apply: func(a *applying, o *Op) error {
			a.st.dropLocked(a.Key, a.At)
			return nil
		},
		needsKey: true,
		logFirst: true,
	},
	OpFlush: {
		name: "flush",
		apply: func(a *applying, o *Op) error {
			a.st.clear()
			return nil
		},
		logFirst: true,
	},
	OpCompact: {
		name: "compact",
		apply: func(a *applying, o *Op) error {
			before := a.At.SizeBytes()
			a.Changed = a.At.Compact()
			a.st.Release(before - a.At.SizeBytes())
			return nil
		},
		needsKey: true,
		inPlace:  true,
	},
	OpChunk: {
		name:  "chunk",
		write: func(w fields.Writer, o *Op) fields.Writer { return w.Uvarint(o.Iter).Str(o.Items[0]) },
		read: func(r *fields.Reader, o *Op) {
			o.Iter = r.Uvarint()
			o.Items = [][]byte{r.Str()}
		},
		apply: func(a *applying, o *Op) error {
			if o.Iter != 1 {
				if a.At == nil {
					return ErrNotFound
				}
				return a.At.LoadChunk(int64(o.Iter), o.Items[0])
			}
			nc := new(Entry)
			if err := nc.BeginLoad(o.Items[0], a.Charge(), a.st.Release); err != nil {
				return err
			}
			return a.putOwn(nc)
		},
	},
	OpExpire: {
		name:  "expire",
		write: func(w fields.Writer, o *Op) fields.Writer { return w.Uvarint(uint64(o.Deadline)) },
		read: func(r *fields.Reader, o *Op) {
			o.Deadline = int64(r.Int(math.MaxInt64))
			if o.Deadline == 0 && r.Err == nil {
				r.Err = errors.New("an expiry with no deadline")
			}
		},
		apply: func(a *applying, o *Op) error {
			a.st.exp.set(a.Key, a.At, o.Deadline)
			return nil
		},
		needsKey: true,
	},
	OpPersist: {
		name: "persist",
		apply: func(a *applying, o *Op) error {
			a.st.exp.set(a.Key, a.At, 0)
			return nil
		},
		needsKey: true,
	},
	OpRename: {
		name:     "rename",
		write:    func(w fields.Writer, o *Op) fields.Writer { return w.Str(o.To) },
		read:     func(r *fields.Reader, o *Op) { o.To = r.Str() },
		apply:    applyRename,
		needsKey: true,
		logFirst: true,
	},
	OpRestore: {
		name:  "restore",
		write: func(w fields.Writer, o *Op) fields.Writer { return w.Uvarint(uint64(o.Deadline)).Str(o.Items[0]) },
		read: func(r *fields.Reader, o *Op) {
			o.Deadline = int64(r.Int(math.MaxInt64))
			o.Items = [][]byte{r.Str()}
		},
		apply: func(a *applying, o *Op) error {
			nc := a.Built
			if nc == nil { // replay: the live command built it from the payload
				nc = new(Entry)
				if err := nc.LoadPayload(o.Items[0], a.Charge(), a.st.Release); err != nil {
					return fmt.Errorf("restore of %q: %v", o.Key, err)
				}
			}
			return a.put(nc, o.Deadline)
		},
	},
}

// kindOf returns kind k's row, nil for a number no op has.
func kindOf(k OpKind) *opKind {
	if int(k) >= len(opKinds) || opKinds[k].name == "" {
		return nil
	}
	return &opKinds[k]
}

// Encode returns o's payload.
func (o *Op) Encode() []byte { return o.AppendEncoded(nil) }

// AppendEncoded appends o's record payload to dst.
func (o *Op) AppendEncoded(dst []byte) []byte {
	w := fields.Writer(append(dst, byte(o.Kind)))
	if o.Kind == OpFlush {
		return w
	}
	w = w.Str(o.Key)
	if k := kindOf(o.Kind); k.write != nil {
		w = k.write(w, o)
	}
	return w
}

func DecodeOp(b []byte) (Op, error) {
	if len(b) == 0 {
		return Op{}, fields.ErrShort
	}
	o := Op{Kind: OpKind(b[0])}
	k := kindOf(o.Kind)
	if k == nil {
		return o, fmt.Errorf("unknown op %d", o.Kind)
	}
	r := &fields.Reader{B: b[1:]}
	if o.Kind != OpFlush {
		o.Key = r.Str()
	}
	if k.read != nil && r.Err == nil {
		k.read(r, &o)
	}
	if r.Err == nil && len(r.B) != 0 {
		r.Err = fmt.Errorf("%d trailing bytes", len(r.B))
	}
	return o, r.Err
}

func applyAdd(a *applying, o *Op) error {
	if len(o.Items) > 1 {
		a.At.Touch(o.Items)
	}
	if !a.live {
		for _, it := range o.Items {
			if _, err := a.At.Add(it, false, true, a.st.forceCharger); err != nil {
				return err
			}
		}
		return nil
	}
	for _, it := range o.Items {
		r := addResult(a.At.Add(it, a.Nx, false, a.st.charger))
		a.Added = append(a.Added, r)
		if r.Status == Added {
			a.Accepted = append(a.Accepted, it)
		}
	}
	return nil
}

// applyRename moves a.At from o.Key to o.To, with its deadline, retiring
// to's entry. Live, rename has published a.At under o.To already if o.to
// was absent, and locked both.
func applyRename(a *applying, o *Op) error {
	st, f, t, src := a.st, a.Key, string(o.To), a.At
	if f == t {
		return nil
	}
	if dst, ok := st.keys.Load(t); ok && dst != src {
		st.keys.Swap(t, src)
		st.retire(t, dst)
	} else if !ok {
		st.keys.Store(t, src)
	}
	st.keys.Delete(f)
	st.exp.move(f, t, src)
	if a.live {
		src.Version.Add(1)
		st.touch(src)
	}
	return nil
}

// The typed calls of the kinds above, one a write command: each takes the
// gate and the key's lock (update), makes its op and commits it, and
// returns what happened as values; the command layer writes the reply.
// w is the client's Writer; nil is the server's own write.

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
		a.one[0] = item // the scratch's, so that a delete allocates nothing
		a.Op = Op{Kind: OpDel, Key: key, Items: a.one[:]}
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
