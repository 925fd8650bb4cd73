package keyspace

import (
	"errors"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/fields"
)

// Applying an op: the scratch of one op being applied (live or replayed),
// publishing an entry it made, and commit, the live path every typed write
// call takes (ops.go): apply, then log; and the records that hold several
// ops (a transaction).

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
	// one holds a single-item op's item (a delete's).
	one [1][]byte
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
