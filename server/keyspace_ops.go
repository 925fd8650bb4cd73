package server

import (
	"errors"
	"fmt"
	"math"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/fields"
)

// The one table of the log's record kinds (opKinds): each kind's fields,
// written and read, and its one apply. A log record's payload is one op: the
// effect of a write command, not the command itself, so that replay does
// exactly what the live server did (only the items an insert accepted, the
// seed a new filter drew). A command makes its op, applies it with the
// key's lock held, and logs it; replay and a replica's stream decode it and
// apply it with the same function, so live and replayed state are the same
// code's.
//
//	op byte, then fields: uvarints, and strings as uvarint length + bytes
//
//	opCreate  key, capacity, bucket size, max iterations, expansion, seed
//	opAdd     key, n, n items            (each was inserted)
//	opDel     key, item                  (one copy was deleted)
//	opDrop    key                        (DEL of the key)
//	opFlush                              (FLUSHALL)
//	opCompact key
//	opChunk   key, iterator, data        (an accepted CF.LOADCHUNK)
//	opExpire  key, deadline              (EXPIRE and its kin: the absolute
//	                                      deadline, Unix ms, > 0)
//	opPersist key                        (PERSIST: the deadline cleared)
//	opRename  key, new key               (RENAME, RENAMENX: the filter and
//	                                      its deadline move, replacing the
//	                                      new key's)
//	opRestore key, deadline, payload     (RESTORE: DUMP's payload, replacing
//	                                      the key; deadline 0 for none)
//
// A key dropped because its deadline passed (by a lookup, a write or the
// sweeper) is logged as opDrop: replay never reads the clock.
const (
	opCreate byte = 1 + iota
	opAdd
	opDel
	opDrop
	opFlush
	opCompact
	opChunk
	opExpire
	opPersist
	opRename
	opRestore
)

// The records that are not one key's op, numbered apart from the ops.
// Every record kind of the log and the stream is numbered here, nowhere
// else.
const (
	// opMulti holds a transaction's ops, applied together (cmd_multi.go):
	// uvarint n, then n ops as strings.
	opMulti byte = 64
	// opReplPing is the primary's heartbeat in the stream, never logged: a
	// replica sees the link alive, and offsets move on both sides alike
	// (repl.go).
	opReplPing byte = 65
	// opReplPos is a replica's position in its own log (repl_position.go).
	opReplPos byte = 66
)

// op is a decoded log payload.
type op struct {
	kind  byte
	key   []byte
	p     cf.Params
	items [][]byte
	iter  uint64
	// to is opRename's new key; deadline opExpire's and opRestore's.
	to       []byte
	deadline int64
}

// opKind is one kind of op: its name (for errors), its fields after the
// key, and its apply.
type opKind struct {
	name  string
	write func(w fields.Writer, o *op) fields.Writer
	read  func(r *fields.Reader, o *op)
	// apply makes o's change to a.c, key o.key's entry (nil if the key is
	// absent; create and restore kinds make it). Preconditions: a.c's lock
	// held and the gate read-locked, or the gate held exclusively (replay,
	// a replica's stream).
	apply func(a *applying, o *op) error
	// needsKey: applying it to an absent key is an error in the log.
	needsKey bool
	// logFirst: a command logs it before applying it, since applying
	// unpublishes a key: a writer that then creates the key anew must log
	// its create after this op (keyspace.go's protocol). Its apply never
	// fails.
	logFirst bool
}

var opKinds = [...]opKind{
	opCreate: {
		name: "create",
		write: func(w fields.Writer, o *op) fields.Writer {
			return w.Uvarint(o.p.Capacity).Uvarint(uint64(o.p.BucketSize)).Uvarint(uint64(o.p.MaxIter)).
				Uvarint(uint64(o.p.Expansion)).Uvarint(o.p.Seed)
		},
		read: func(r *fields.Reader, o *op) {
			o.p.Capacity = r.Uvarint()
			o.p.BucketSize = r.Int(cf.MaxBucketSize)
			o.p.MaxIter = r.Int(cf.MaxIterations)
			o.p.Expansion = r.Int(cf.MaxExpansion)
			o.p.Seed = r.Uvarint()
		},
		apply: func(a *applying, o *op) error {
			nc := new(entry)
			if err := nc.Init(o.p, a.charge()); err != nil {
				return err
			}
			return a.putOwn(nc)
		},
	},
	opAdd: {
		name: "add",
		write: func(w fields.Writer, o *op) fields.Writer {
			w = w.Uvarint(uint64(len(o.items)))
			for _, it := range o.items {
				w = w.Str(it)
			}
			return w
		},
		read: func(r *fields.Reader, o *op) {
			n := r.Uvarint()
			if n > uint64(len(r.B)) {
				r.Err = fields.ErrShort
				return
			}
			for range n {
				o.items = append(o.items, r.Str())
			}
		},
		apply:    applyAdd,
		needsKey: true,
	},
	opDel: {
		name:  "del",
		write: func(w fields.Writer, o *op) fields.Writer { return w.Str(o.items[0]) },
		read:  func(r *fields.Reader, o *op) { o.items = [][]byte{r.Str()} },
		apply: func(a *applying, o *op) error {
			a.changed = a.c.Del(o.items[0])
			return nil
		},
		needsKey: true,
	},
	opDrop: {
		name: "drop",
		apply: func(a *applying, o *op) error {
			a.st.dropLocked(a.k, a.c)
			return nil
		},
		needsKey: true,
		logFirst: true,
	},
	opFlush: {
		name: "flush",
		apply: func(a *applying, o *op) error {
			a.st.clear()
			return nil
		},
		logFirst: true,
	},
	opCompact: {
		name: "compact",
		apply: func(a *applying, o *op) error {
			before := a.c.SizeBytes()
			a.changed = a.c.Compact()
			a.st.release(before - a.c.SizeBytes())
			return nil
		},
		needsKey: true,
	},
	opChunk: {
		name:  "chunk",
		write: func(w fields.Writer, o *op) fields.Writer { return w.Uvarint(o.iter).Str(o.items[0]) },
		read: func(r *fields.Reader, o *op) {
			o.iter = r.Uvarint()
			o.items = [][]byte{r.Str()}
		},
		apply: func(a *applying, o *op) error {
			if o.iter != 1 {
				if a.c == nil {
					return errNotFound
				}
				return a.c.LoadChunk(int64(o.iter), o.items[0])
			}
			nc := new(entry)
			if err := nc.BeginLoad(o.items[0], a.charge(), a.st.release); err != nil {
				return err
			}
			return a.putOwn(nc)
		},
	},
	opExpire: {
		name:  "expire",
		write: func(w fields.Writer, o *op) fields.Writer { return w.Uvarint(uint64(o.deadline)) },
		read: func(r *fields.Reader, o *op) {
			o.deadline = int64(r.Int(math.MaxInt64))
			if o.deadline == 0 && r.Err == nil {
				r.Err = errors.New("an expiry with no deadline")
			}
		},
		apply: func(a *applying, o *op) error {
			a.st.exp.set(a.k, a.c, o.deadline)
			return nil
		},
		needsKey: true,
	},
	opPersist: {
		name: "persist",
		apply: func(a *applying, o *op) error {
			a.st.exp.set(a.k, a.c, 0)
			return nil
		},
		needsKey: true,
	},
	opRename: {
		name:     "rename",
		write:    func(w fields.Writer, o *op) fields.Writer { return w.Str(o.to) },
		read:     func(r *fields.Reader, o *op) { o.to = r.Str() },
		apply:    applyRename,
		needsKey: true,
		logFirst: true,
	},
	opRestore: {
		name:  "restore",
		write: func(w fields.Writer, o *op) fields.Writer { return w.Uvarint(uint64(o.deadline)).Str(o.items[0]) },
		read: func(r *fields.Reader, o *op) {
			o.deadline = int64(r.Int(math.MaxInt64))
			o.items = [][]byte{r.Str()}
		},
		apply: func(a *applying, o *op) error {
			nc := a.built
			if nc == nil { // replay: the live command built it from the payload
				nc = new(entry)
				if err := nc.LoadPayload(o.items[0], a.charge(), a.st.release); err != nil {
					return fmt.Errorf("restore of %q: %v", o.key, err)
				}
			}
			return a.put(nc, o.deadline)
		},
	},
}

// kindOf returns kind k's row, nil for a number no op has.
func kindOf(k byte) *opKind {
	if int(k) >= len(opKinds) || opKinds[k].name == "" {
		return nil
	}
	return &opKinds[k]
}

// encode returns o's payload.
func (o *op) encode() []byte {
	w := fields.Writer{o.kind}
	if o.kind == opFlush {
		return w
	}
	w = w.Str(o.key)
	if k := kindOf(o.kind); k.write != nil {
		w = k.write(w, o)
	}
	return w
}

func decodeOp(b []byte) (op, error) {
	if len(b) == 0 {
		return op{}, fields.ErrShort
	}
	o := op{kind: b[0]}
	k := kindOf(o.kind)
	if k == nil {
		return o, fmt.Errorf("unknown op %d", o.kind)
	}
	r := &fields.Reader{B: b[1:]}
	if o.kind != opFlush {
		o.key = r.Str()
	}
	if k.read != nil && r.Err == nil {
		k.read(r, &o)
	}
	if r.Err == nil && len(r.B) != 0 {
		r.Err = fmt.Errorf("%d trailing bytes", len(r.B))
	}
	return o, r.Err
}

// applying is one op being applied to its key, by a command (live) or by
// replay and a replica's stream. Live, limits hold: memory may be refused
// and a filter grows only as far as it may. Replayed, every op was
// acknowledged once: growth is forced and charged without limit.
type applying struct {
	st   *store
	k    string
	c    *entry // the key's entry, nil if absent
	live bool
	// op is the op of a write by a client, kept here with the rest of
	// the scratch.
	op op
	// built is a restore's filter, which the live command built (and
	// charged) from the payload before taking any lock.
	built *entry
	// nx (live CF.ADDNX, CF.INSERTNX) adds an item only if absent.
	nx bool

	// What the apply did, for the live command's reply and whether it logs:
	// changed for del and compact, added for add (for each item 1 added, 0
	// present, or the error that refused it).
	changed bool
	added   []any
	// accepted is an add's items that went in: what is logged.
	accepted [][]byte
}

// applyingFor returns the scratch of a live write by w, for key k at entry
// c: w's own, reset, or a new one for the server's own writes (w nil).
func applyingFor(w *writer, k string, c *entry) *applying {
	if w == nil {
		return &applying{k: k, c: c}
	}
	a := &w.write
	*a = applying{k: k, c: c, added: a.added[:0], accepted: a.accepted[:0]}
	return a
}

// charge is the account new tables are charged to.
func (a *applying) charge() cf.Charger {
	if a.live {
		return a.st.charger
	}
	return a.st.forceCharger
}

// put makes nc, not yet shared, key a.k's entry with deadline d (0 for
// none), in place of a.c, which is retired. Live, nc is published locked
// (its lock is the caller's to release) and, if the key was absent,
// only if it still is: errRaced asks the caller to look the key up again.
func (a *applying) put(nc *entry, d int64) error {
	if a.live {
		nc.mu.Lock()
	}
	if a.c == nil {
		if _, loaded := a.st.keys.LoadOrStore(a.k, nc); loaded {
			// Only live: replay runs alone.
			nc.mu.Unlock()
			return errRaced
		}
	} else {
		a.st.keys.Swap(a.k, nc)
		a.st.retire(a.k, a.c)
		a.c.version.Add(1)
	}
	if d != 0 {
		a.st.exp.set(a.k, nc, d)
	}
	a.st.touch(nc)
	a.c = nc
	return nil
}

// putOwn is put of a filter the apply built itself: if the put lost a
// race, its bytes are released.
func (a *applying) putOwn(nc *entry) error {
	err := a.put(nc, 0)
	if err != nil {
		a.st.release(nc.SizeBytes())
	}
	return err
}

// errRaced is a live put that found the key created meanwhile.
var errRaced = errors.New("the key was created meanwhile")

func applyAdd(a *applying, o *op) error {
	if !a.live {
		for _, it := range o.items {
			if _, err := a.c.Add(it, false, true, a.st.forceCharger); err != nil {
				return err
			}
		}
		return nil
	}
	for _, it := range o.items {
		added, err := a.c.Add(it, a.nx, false, a.st.charger)
		switch {
		case err == nil && added:
			a.added = append(a.added, 1)
			a.accepted = append(a.accepted, it)
		case err == nil:
			a.added = append(a.added, 0)
		default:
			a.added = append(a.added, err)
		}
	}
	return nil
}

// applyRename moves a.c from o.key to o.to, with its deadline, retiring
// to's entry. Live, rename has published a.c under o.to already if o.to
// was absent, and locked both.
func applyRename(a *applying, o *op) error {
	st, f, t, src := a.st, a.k, string(o.to), a.c
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
		src.version.Add(1)
		st.touch(src)
	}
	return nil
}

// commit applies o, live, to a.c, key a.k's entry (a.k is needed by the
// kinds that create, drop, move or expire a key), and logs it: the key's lock held (or,
// for a kind that creates, the key absent or locked), the gate read-locked
// or held by w's EXEC, the key space writable. A kind that reports whether
// it changed anything is logged only if it did; an add logs the items it
// accepted.
func (s *store) commit(w *writer, a *applying, o *op) error {
	a.st, a.live = s, true
	kind := kindOf(o.kind)
	if kind.logFirst {
		s.logOp(w, o.encode())
		return kind.apply(a, o)
	}
	if err := kind.apply(a, o); err != nil {
		return err
	}
	switch o.kind {
	case opDel, opCompact:
		if !a.changed {
			return nil
		}
	case opAdd:
		if len(a.accepted) == 0 {
			return nil
		}
		o.items = a.accepted // the caller's op: it reads the results from a
	}
	s.logOp(w, o.encode())
	return nil
}

// needsKey reports whether o applies to an existing key only.
func (o *op) needsKey() bool {
	return kindOf(o.kind).needsKey || o.kind == opChunk && o.iter != 1
}

// Records that are not one key's op: a transaction (opMulti), and a
// replica's position (opReplPos, repl_position.go).

// encodeMulti is a transaction's record: its ops, applied together.
func encodeMulti(ops [][]byte) []byte {
	w := fields.Writer{opMulti}.Uvarint(uint64(len(ops)))
	for _, o := range ops {
		w = w.Str(o)
	}
	return w
}

var errNestedMulti = errors.New("a transaction record nested deeper than a replica's batch")

// nestedMulti reports whether transaction record b holds another.
func nestedMulti(b []byte) bool {
	r := &fields.Reader{B: b[1:]}
	n := r.Uvarint()
	for i := uint64(0); i < n && r.Err == nil; i++ {
		if o := r.Str(); len(o) > 0 && o[0] == opMulti {
			return true
		}
	}
	return false
}

// replayMulti replays a transaction's record: each of its ops in order, all
// at the record's offset.
func (st *store) replayMulti(b []byte, at int64, fz *fuzzyLog) error {
	r := &fields.Reader{B: b[1:]}
	n := r.Uvarint()
	if r.Err == nil && n > uint64(len(r.B)) {
		return fields.ErrShort
	}
	ops := make([][]byte, 0, n)
	for range n {
		ops = append(ops, r.Str())
	}
	if r.Err != nil {
		return r.Err
	}
	if len(r.B) != 0 {
		return fields.ErrShort
	}
	for _, o := range ops {
		// A replica's batch (repl_position.go) may hold the primary's
		// transactions: one level of nesting, no more.
		if len(o) > 0 && o[0] == opMulti && nestedMulti(o) {
			return errNestedMulti
		}
		if err := st.replay(o, at, fz); err != nil {
			return err
		}
	}
	return nil
}
