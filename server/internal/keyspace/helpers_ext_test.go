package keyspace_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// The helpers of the black-box tests: a store on a data directory as the
// server opens and closes it, a fake replication stream that records what
// the store logs, and a key space's state to compare.

var quiet = slog.New(slog.DiscardHandler)

// params are the filters the tests make, as the commands' arguments give
// them (Slots as cf's args.go sets it): a growing table of 64 items, a
// fixed one, and one of RedisBloom's layout that grows by sub-filters.
var (
	growing = cf.Params{Capacity: 64, BucketSize: 4, MaxIter: 20, Expansion: 1, Slots: 4}
	fixed   = cf.Params{Capacity: 64, BucketSize: 4, MaxIter: 20, Expansion: 0, Slots: 4}
	rbGrow  = cf.Params{Capacity: 64, BucketSize: 2, MaxIter: 20, Expansion: 1, Layout: cf.LayoutRedisBloom}
)

// open recovers dir into a new store, as the server's New does, and closes
// its log when the test ends unless the test closed it first (crash).
func open(t *testing.T, dir string) *keyspace.Store {
	t.Helper()
	st, err := openErr(t, dir, false)
	if err != nil {
		t.Fatalf("recovering %s: %v", dir, err)
	}
	return st
}

// openErr is open that returns recovery's error; repair is --repair.
func openErr(t *testing.T, dir string, repair bool) (*keyspace.Store, error) {
	t.Helper()
	st := keyspace.NewStore(0, 1<<30)
	a, err := keyspace.RecoverDir(st, dir, keyspace.FsyncNo, repair, quiet)
	if err != nil {
		return nil, err
	}
	st.AOF = a
	closeLog := sync.OnceValue(a.Close)
	closers.Store(a, closeLog)
	t.Cleanup(func() {
		closeLog()
		closers.Delete(a)
	})
	return st, nil
}

// closers holds each open log's close, run once: by shut, or when the
// test ends.
var closers sync.Map // *keyspace.AOF -> func() error

// shut closes st's log, writing every record appended: what a kill -9
// after the replies leaves (they are sent once the records reached the OS).
func shut(t *testing.T, st *keyspace.Store) {
	t.Helper()
	closeLog, _ := closers.Load(st.AOF)
	if err := closeLog.(func() error)(); err != nil {
		t.Fatalf("closing the log: %v", err)
	}
}

// snapshot saves st as SAVE does and returns the keys written. The size
// and generation it reports must be the installed file's and the log's.
func snapshot(t *testing.T, st *keyspace.Store, dir string) int {
	t.Helper()
	n, size, gen, err := st.Snapshot(dir)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, keyspace.SnapName))
	if err != nil {
		t.Fatalf("after a snapshot: %v", err)
	}
	if fi.Size() != size || gen != st.AOF.Generation() {
		t.Fatalf("snapshot reported %d bytes of generation %d; the file has %d, the log is at %d", size, gen, fi.Size(), st.AOF.Generation())
	}
	return n
}

// keyState is what a restart must bring back of one key.
type keyState struct {
	payload           []byte
	deadline          int64
	inserted, deleted int64
	params            cf.Params
}

// space is a key space's whole state: each key's, and the bytes charged.
type space struct {
	keys  map[string]keyState
	bytes int64
}

// stateOf reads st's state; no write may run meanwhile.
func stateOf(st *keyspace.Store) space {
	s := space{keys: map[string]keyState{}, bytes: st.FilterBytes()}
	for k, c := range st.All() {
		c.Mu.Lock()
		p := c.Params()
		if p.Layout == cf.LayoutRedisBloom {
			p.Seed = 0 // drawn, but unused and not kept: RedisBloom hashes with seed 0
		}
		s.keys[k] = keyState{c.DumpPayload(), c.Deadline.Load(), c.Inserted(), c.Deleted(), p}
		c.Mu.Unlock()
	}
	return s
}

// sameSpace fails the test at every difference between want and got.
func sameSpace(t *testing.T, what string, got, want space) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want.keys)) {
		w := want.keys[k]
		g, ok := got.keys[k]
		switch {
		case !ok:
			t.Errorf("%s: key %q is missing", what, k)
		case g.deadline != w.deadline:
			t.Errorf("%s: key %q: deadline %d, want %d", what, k, g.deadline, w.deadline)
		case g.inserted != w.inserted || g.deleted != w.deleted:
			t.Errorf("%s: key %q: %d items inserted and %d deleted, want %d and %d", what, k, g.inserted, g.deleted, w.inserted, w.deleted)
		case g.params != w.params:
			t.Errorf("%s: key %q: params %+v, want %+v", what, k, g.params, w.params)
		case !bytes.Equal(g.payload, w.payload):
			t.Errorf("%s: key %q: the dumps differ (%d bytes, want %d)", what, k, len(g.payload), len(w.payload))
		}
	}
	for k := range got.keys {
		if _, ok := want.keys[k]; !ok {
			t.Errorf("%s: key %q should not be there", what, k)
		}
	}
	if got.bytes != want.bytes {
		t.Errorf("%s: %d bytes charged, want %d", what, got.bytes, want.bytes)
	}
}

// recorder is a replication stream that keeps every op the store logs.
type recorder struct {
	mu  sync.Mutex
	ops [][]byte
}

func (r *recorder) Feed(payload []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, bytes.Clone(payload))
}

func (r *recorder) WithPosition(func(string, int64)) {}

// kinds names the records fed so far, in order: the op kinds, or "multi"
// for a transaction.
func (r *recorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, op := range r.ops {
		if op[0] == keyspace.OpMulti {
			out = append(out, "multi")
			continue
		}
		out = append(out, keyspace.OpKind(op[0]).String())
	}
	return out
}

// reset forgets the records fed so far.
func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = nil
}

// recorded returns a store with a recorder as its stream and no log.
func recorded() (*keyspace.Store, *recorder) {
	st := keyspace.NewStore(0, 1<<30)
	rec := &recorder{}
	st.Repl = rec
	return st, rec
}

// items returns n distinct items named with prefix.
func items(prefix string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "%s-%d", prefix, i)
	}
	return out
}

// mustAdd adds items to key, creating it with p if missing, and fails the
// test unless every item went in.
func mustAdd(t *testing.T, st *keyspace.Store, w *keyspace.Writer, key string, p cf.Params, its [][]byte) {
	t.Helper()
	res, err := st.Add(w, []byte(key), its, keyspace.AddOptions{Create: &p})
	if err != nil {
		t.Fatalf("add to %q: %v", key, err)
	}
	for i, r := range res {
		if r.Status != keyspace.Added {
			t.Fatalf("add to %q: item %d %s (%v)", key, i, r.Status, r.Err)
		}
	}
}

// payloadOf is DUMP key's payload; the key must exist.
func payloadOf(t *testing.T, st *keyspace.Store, key string) []byte {
	t.Helper()
	c := st.Peek(key)
	if c == nil {
		t.Fatalf("key %q is missing", key)
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.DumpPayload()
}

// sizeOf is key's filter's bytes; 0 if it is missing.
func sizeOf(st *keyspace.Store, key string) int64 {
	c := st.Peek(key)
	if c == nil {
		return 0
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return int64(c.SizeBytes())
}

// sumOfSizes is the bytes of every filter in st: what FilterBytes must
// equal while no dump chunk is in flight.
func sumOfSizes(st *keyspace.Store) int64 {
	var n int64
	for k := range st.All() {
		n += sizeOf(st, k)
	}
	return n
}
