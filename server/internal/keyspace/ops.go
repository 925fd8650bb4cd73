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

// Applying is one op being applied to its key, by a command (live) or by
// replay and a replica's stream. Live, limits hold: memory may be refused
// and a filter grows only as far as it may. Replayed, every op was
// acknowledged once: growth is forced and charged without limit.
type applying struct {
	st   *Store
	Key  string
	At   *Entry // the key's entry, nil if absent
	live bool
	// Op is the op of a write by a client, kept here with the rest of
	// the scratch.
	Op Op
	// Built is a restore's filter, which the live command built (and
	// charged) from the payload before taking any lock.
	Built *Entry
	// Nx (live CF.ADDNX, CF.INSERTNX) adds an item only if absent.
	Nx bool
	// Hold keeps a new entry commit published locked for the caller.
	Hold bool

	// What the apply did, for the live command's reply and whether it logs:
	// changed for del and compact, added for add (each item's outcome).
	Changed bool
	Added   []AddResult
	// Accepted is an add's items that went in: what is logged.
	Accepted [][]byte
}

// applyingFor returns the scratch of a live write by w, for key k at entry
// c: w's own, reset, or a new one for the server's own writes (w nil).
func applyingFor(w *Writer, k string, c *Entry) *applying {
	if w == nil {
		return &applying{Key: k, At: c}
	}
	a := &w.scratch
	*a = applying{Key: k, At: c, Added: a.Added[:0], Accepted: a.Accepted[:0]}
	return a
}

// Charge is the account new tables are charged to.
func (a *applying) Charge() cf.Charger {
	if a.live {
		return a.st.charger
	}
	return a.st.forceCharger
}

// put makes nc, not yet shared, key a.Key's entry with deadline d (0 for
// none), in place of a.At, which is retired. Live, nc is published locked
// (commit releases it once the op is logged, see Hold) and, if the key was
// absent, only if it still is: errRaced asks the caller to look the key up
// again.
func (a *applying) put(nc *Entry, d int64) error {
	if a.live {
		nc.Mu.Lock()
	}
	if a.At == nil {
		if _, loaded := a.st.keys.LoadOrStore(a.Key, nc); loaded {
			// Only live: replay runs alone.
			nc.Mu.Unlock()
			return errRaced
		}
	} else {
		a.st.keys.Swap(a.Key, nc)
		a.st.retire(a.Key, a.At)
		a.At.Version.Add(1)
	}
	if d != 0 {
		a.st.exp.set(a.Key, nc, d)
	}
	a.st.touch(nc)
	a.At = nc
	return nil
}

// putOwn is put of a filter the apply built itself: if the put lost a
// race, its bytes are released.
func (a *applying) putOwn(nc *Entry) error {
	err := a.put(nc, 0)
	if err != nil {
		a.st.Release(nc.SizeBytes())
	}
	return err
}

// errRaced is a live put that found the key created meanwhile.
var errRaced = errors.New("the key was created meanwhile")

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

// commit applies o, live, to a.At, the key's entry, and logs it: the key's
// lock held (or, for a kind that creates, the key absent), the gate
// read-locked or held by w's EXEC, the key space writable. The key is o's:
// commit fills a.Key from it for the kinds that read it. A kind that
// reports whether it changed anything is logged only if it did; an add
// logs the items it accepted.
//
// A kind that publishes a new entry (a create, a restore, a load's header,
// a clear) publishes it locked, so that no other writer reaches it before
// its op is logged; commit unlocks it then, unless a.Hold asks to keep it
// (a create whose command then runs on it, and unlocks it). An entry it
// replaced stays locked by the caller, who locked it.
func (s *Store) commit(w *Writer, a *applying, o *Op) error {
	a.st, a.live = s, true
	kind := kindOf(o.Kind)
	if a.Key == "" && !kind.inPlace {
		a.Key = string(o.Key)
	}
	if kind.logFirst {
		s.logOp(w, w.encode(o))
		return kind.apply(a, o)
	}
	before := a.At
	if err := kind.apply(a, o); err != nil {
		return err
	}
	switch o.Kind {
	case OpDel, OpCompact:
		if !a.Changed {
			return nil
		}
	case OpAdd:
		if len(a.Accepted) == 0 {
			return nil
		}
		o.Items = a.Accepted // the caller's op: it reads the results from a
	}
	s.logOp(w, w.encode(o))
	if a.At != before && !a.Hold {
		a.At.Mu.Unlock()
	}
	return nil
}

// needsKey reports whether o applies to an existing key only.
func (o *Op) needsKey() bool {
	return kindOf(o.Kind).needsKey || o.Kind == OpChunk && o.Iter != 1
}

// Records that are not one key's op: a transaction (OpMulti), and a
// replica's position (OpReplPos, position.go).

// EncodeMulti is a transaction's record: its ops, applied together.
func EncodeMulti(ops [][]byte) []byte {
	w := fields.Writer{OpMulti}.Uvarint(uint64(len(ops)))
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
		if o := r.Str(); len(o) > 0 && o[0] == OpMulti {
			return true
		}
	}
	return false
}

// replayMulti replays a transaction's record: each of its ops in order, all
// at the record's offset.
func (st *Store) replayMulti(b []byte, at int64, fz *FuzzyLog) error {
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
		// A replica's batch (position.go) may hold the primary's
		// transactions: one level of nesting, no more.
		if len(o) > 0 && o[0] == OpMulti && nestedMulti(o) {
			return errNestedMulti
		}
		if err := st.Replay(o, at, fz); err != nil {
			return err
		}
	}
	return nil
}
