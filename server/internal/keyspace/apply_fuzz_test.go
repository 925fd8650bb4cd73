package keyspace

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// captured is a stream that keeps every op the store logs, in order: what
// a replica would receive and what the log would hold.
type captured struct{ ops [][]byte }

func (c *captured) Feed(payload []byte) { c.ops = append(c.ops, bytes.Clone(payload)) }

func (c *captured) WithPosition(func(string, int64)) {}

// FuzzLiveEqualsReplay drives a store with a sequence of writes decoded
// from the input, each as the server's commands make them (creates with
// every shape, adds with and without NX, deletes, DEL, FLUSHALL, COMPACT,
// deadlines set, cleared and passed, RENAME and RENAMENX, RESTORE with and
// without REPLACE, CF.LOADCHUNK's header and chunks, and transactions), then
// replays the ops it logged into a fresh store. Every key, its dump, its
// deadline and the bytes charged must be the same in both: live and
// replayed state are one apply's.
func FuzzLiveEqualsReplay(f *testing.F) {
	f.Add([]byte{0, 1, 1, 1, 2, 1, 5, 7, 1, 8, 3})
	f.Add([]byte{1, 0, 6, 0, 6, 4, 1, 1, 6, 1, 7, 6, 1, 2, 6, 2, 6, 10, 8, 6}) // EXPIRE, PERSIST, RENAME with a deadline, a deadline passed, RESTORE
	f.Add([]byte{0, 0, 1, 0, 1, 0, 1, 0, 9, 0, 2, 10, 1, 6, 1, 7, 2})
	f.Add([]byte{0, 2, 0, 3, 1, 2, 1, 2, 1, 2, 10, 2, 4, 0, 0, 1, 0})
	f.Add(bytes.Repeat([]byte{1, 0, 1, 3, 2, 0, 7, 1, 6, 3}, 20))
	// Long scripts of every write, more adds than anything else: the
	// seeds alone exercise each kind many times.
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 1))
		script := make([]byte, 1200)
		for i := range script {
			script[i] = byte(r.Uint32())
			if i%2 == 0 && r.IntN(3) > 0 {
				script[i] = byte(1 + 11*r.IntN(20)) // an add
			}
		}
		f.Add(script)
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		live := NewStore(0, 1<<30)
		stream := &captured{}
		live.Repl = stream
		run(t, live, script)

		replayed := NewStore(0, 1<<30)
		for i, op := range stream.ops {
			if err := replayed.Replay(op, 0, nil); err != nil {
				t.Fatalf("replaying op %d of %d (kind %d): %v", i, len(stream.ops), op[0], err)
			}
		}
		sameStores(t, "replayed", live, replayed)

		// As a replica applies them: in batches, each key's ops on one of
		// several workers, with the other records as barriers.
		streamed := NewStore(0, 1<<30)
		batch := 1 + len(script)%37
		for i := 0; i < len(stream.ops); i += batch {
			ops := stream.ops[i:min(i+batch, len(stream.ops))]
			if err := streamed.ReplayStream(ops, 0, nil, 0, 3); err != nil {
				t.Fatalf("streaming ops %d to %d of %d: %v", i, i+len(ops), len(stream.ops), err)
			}
		}
		sameStores(t, "streamed", live, streamed)
	})
}

// sameStores reports every difference between live and other, a store the
// same ops were applied to: keys, dumps, deadlines and bytes charged.
func sameStores(t *testing.T, name string, live, other *Store) {
	t.Helper()
	if a, b := live.FilterBytes(), other.FilterBytes(); a != b {
		t.Errorf("bytes charged: live %d, %s %d", a, name, b)
	}
	if a, b := live.keys.Len(), other.keys.Len(); a != b {
		t.Errorf("keys: live %d, %s %d", a, name, b)
	}
	for k, c := range live.keys.All() {
		r, ok := other.keys.Load(k)
		if !ok {
			t.Errorf("key %q is live but not %s", k, name)
			continue
		}
		if a, b := c.Deadline.Load(), r.Deadline.Load(); a != b {
			t.Errorf("key %q: deadline live %d, %s %d", k, a, name, b)
		}
		if !bytes.Equal(c.DumpPayload(), r.DumpPayload()) {
			t.Errorf("key %q: the dumps differ (live %d items, %s %d)", k, c.Inserted(), name, r.Inserted())
		}
	}
}

// run applies script's writes to st, as commands would, two bytes a write:
// what to do, and an argument.
func run(t *testing.T, st *Store, script []byte) {
	w := &Writer{}
	key := func(b byte) []byte { return fmt.Appendf(nil, "k%d", b%4) }
	item := func(b byte) []byte { return fmt.Appendf(nil, "item%d", b%32) }
	far := NowMs() + 3600_000
	for i := 0; i+1 < len(script); i += 2 {
		arg := script[i+1]
		k := key(arg)
		switch script[i] % 11 {
		case 0: // CF.RESERVE: a fixed stage, a growing table, 2, 4 or 5 slots; or RedisBloom's layout
			p := cf.Params{Capacity: 16 + uint64(arg%3)*40, BucketSize: 2 + 2*int(arg/4%2), MaxIter: 20, Expansion: int(arg / 8 % 3),
				Layout: cf.Layout(arg / 24 % 2)}
			if p.Layout == cf.LayoutCuckoo && p.BucketSize == 4 && p.Expansion > 0 && arg&2 != 0 {
				p.BucketSize, p.Slots = 8, 5 // recorded with the create
			}
			allow(t, st.Reserve(w, k, &p))
		case 1, 2: // CF.ADD, CF.ADDNX, creating the key in either layout
			p := cf.Params{Capacity: 32, BucketSize: 4, MaxIter: 20, Expansion: 1, Layout: cf.Layout(arg / 128)}
			res, err := st.Add(w, k, [][]byte{item(arg / 4)}, AddOptions{NX: script[i] == 2, Create: &p})
			allow(t, err)
			for _, r := range res {
				allow(t, r.Err)
			}
		case 3: // CF.DEL
			_, err := st.DeleteItem(w, k, item(arg/4))
			allow(t, err)
		case 4: // DEL, and now and then FLUSHALL
			if arg%16 == 15 {
				allow(t, st.FlushAll(w))
			} else {
				_, err := st.Drop(w, k)
				allow(t, err)
			}
		case 5: // CF.COMPACT
			_, err := st.Compact(w, k)
			allow(t, err)
		case 6: // EXPIRE in an hour, PERSIST, or a deadline passed
			var err error
			if d := []int64{far + int64(arg), 0, 1}[arg/4%3]; d == 0 {
				_, err = st.Persist(w, k)
			} else {
				_, err = st.Expire(w, k, d, 0)
			}
			allow(t, err)
		case 7: // RENAME, RENAMENX
			_, err := st.Rename(w, k, key(arg/4), arg/16%2 == 1)
			allow(t, err)
		case 8: // DUMP k, RESTORE into another key, with or without REPLACE
			payload := dumpOf(st, k)
			if payload == nil {
				continue
			}
			if _, err := cf.CheckPayload(payload); err != nil {
				t.Fatalf("a DUMP payload does not check: %v", err)
			}
			allow(t, st.Restore(w, key(arg/4), payload, 0, arg/16%2 == 1))
		case 9: // CF.SCANDUMP k, CF.LOADCHUNK into another key
			loadChunks(t, st, w, k, key(arg/4))
		case 10: // MULTI, three CF.ADDs, EXEC: one record
			st.Exec(w, nil, func() {
				for j := range byte(3) {
					p := cf.Params{Capacity: 32, BucketSize: 4, MaxIter: 20, Expansion: 1}
					_, err := st.Add(w, key(arg+j), [][]byte{item(arg + j)}, AddOptions{Create: &p})
					allow(t, err)
				}
			})
		}
	}
}

// allow fails the test for an error a command could not answer: the ones
// a client may get (no such key, a key that exists, a full filter, a load
// pending) are fine.
func allow(t *testing.T, err error) {
	t.Helper()
	var le *cf.LoadError
	switch {
	case err == nil, errors.Is(err, ErrNoSuchKey), errors.Is(err, ErrNotFound), errors.Is(err, ErrItemExists), errors.Is(err, ErrBusyKey),
		errors.Is(err, ErrLoading), errors.Is(err, cf.ErrFull), errors.Is(err, cf.ErrMaxExpansions), errors.As(err, &le):
		return
	}
	t.Fatalf("a write failed: %v", err)
}

// dumpOf is DUMP k's payload, nil for a missing key or one with a load
// pending.
func dumpOf(st *Store, k []byte) []byte {
	c := st.lockLive(string(k))
	if c == nil {
		return nil
	}
	defer c.Mu.Unlock()
	if c.Loading() {
		return nil
	}
	return c.DumpPayload()
}

// loadChunks moves from's filter into to as CF.SCANDUMP and CF.LOADCHUNK
// do: the header creates to, each chunk fills it.
func loadChunks(t *testing.T, st *Store, w *Writer, from, to []byte) {
	c := st.lockLive(string(from))
	if c == nil {
		return
	}
	var chunks [][]byte
	var iters []int64
	if !c.Loading() {
		for iter := int64(0); ; {
			next, chunk := c.ScanDump(iter)
			if chunk == nil {
				break
			}
			chunks, iters = append(chunks, chunk), append(iters, next)
			iter = next
		}
	}
	c.Mu.Unlock()
	if len(chunks) == 0 {
		return
	}
	if err := st.LoadChunk(w, to, 1, chunks[0]); err != nil {
		allow(t, err)
		return
	}
	for i := 1; i < len(chunks); i++ {
		allow(t, st.LoadChunk(w, to, iters[i], chunks[i]))
	}
}
