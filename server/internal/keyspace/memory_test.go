package keyspace_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// Memory accounting: FilterBytes is the sum of the filters' sizes at
// every moment, each stage charged before it is allocated and released
// exactly once, and --maxmemory refuses what would pass it.

// checkCharged fails the test unless the bytes charged are the filters'
// sizes exactly.
func checkCharged(t *testing.T, st *keyspace.Store, when string) {
	t.Helper()
	if got, want := st.FilterBytes(), sumOfSizes(st); got != want {
		t.Fatalf("%s: %d bytes charged, the filters take %d", when, got, want)
	}
}

// addedItems counts the items the add ops recorded hold.
func addedItems(t *testing.T, rec *recorder) int {
	t.Helper()
	n := 0
	for _, b := range rec.ops {
		o, err := keyspace.DecodeOp(b)
		if err != nil {
			t.Fatalf("a recorded op does not decode: %v", err)
		}
		if o.Kind == keyspace.OpAdd {
			n += len(o.Items)
		}
	}
	return n
}

// TestGrowthIsCharged: a filter that grows is charged each step, in both
// layouts, and FilterBytes follows it add by add.
func TestGrowthIsCharged(t *testing.T) {
	for _, p := range []cf.Params{growing, rbGrow} {
		t.Run(p.Layout.String(), func(t *testing.T) {
			st, _ := recorded()
			w := &keyspace.Writer{}
			mustAdd(t, st, w, "k", p, items("first", 1))
			first, stages := sizeOf(st, "k"), st.Peek("k").Filters()
			checkCharged(t, st, "created")
			for round := range 20 {
				mustAdd(t, st, w, "k", p, items(fmt.Sprint("r", round), 50))
				checkCharged(t, st, fmt.Sprintf("round %d", round))
			}
			if sizeOf(st, "k") <= first || st.Peek("k").Filters() <= stages {
				t.Fatalf("1001 items in a filter of 64 took %d bytes and %d filters, as 1 item did (%d, %d): it did not grow",
					sizeOf(st, "k"), st.Peek("k").Filters(), first, stages)
			}
			keys, n := st.ItemCount()
			if keys != 1 || n != 1001 {
				t.Errorf("ItemCount: %d keys, %d items; want 1 and 1001", keys, n)
			}
		})
	}
}

// TestMaxmemRefusesGrowth: with a limit just above a filter's size, an add
// that needs it to grow is refused item by item with NoRoom and ErrOOM;
// the items before went in and are logged, those refused are not, and
// the bytes charged never pass the limit.
func TestMaxmemRefusesGrowth(t *testing.T) {
	for _, p := range []cf.Params{growing, rbGrow} {
		t.Run(p.Layout.String(), func(t *testing.T) {
			st, rec := recorded()
			w := &keyspace.Writer{}
			mustAdd(t, st, w, "k", p, items("first", 1))
			limit := st.FilterBytes() + 64
			st.Maxmem.Store(limit)
			rec.reset()
			res, err := st.Add(w, []byte("k"), items("more", 1000), keyspace.AddOptions{})
			if err != nil {
				t.Fatalf("Add: %v; a refused growth is an item's outcome, not the add's", err)
			}
			added, noRoom := 0, 0
			for i, r := range res {
				switch r.Status {
				case keyspace.Added:
					added++
				case keyspace.NoRoom:
					noRoom++
					if !errors.Is(r.Err, keyspace.ErrOOM) {
						t.Fatalf("item %d: NoRoom with %v, want ErrOOM", i, r.Err)
					}
				default:
					t.Fatalf("item %d: %s (%v)", i, r.Status, r.Err)
				}
			}
			if len(res) != 1000 || added == 0 || noRoom == 0 {
				t.Fatalf("%d results: %d added, %d refused; want some of each", len(res), added, noRoom)
			}
			if st.FilterBytes() > limit {
				t.Errorf("%d bytes charged, past the limit of %d", st.FilterBytes(), limit)
			}
			checkCharged(t, st, "after the refusals")
			if n := addedItems(t, rec); n != added {
				t.Errorf("%d items logged, %d added", n, added)
			}
			if n := st.Peek("k").Inserted(); n != int64(1+added) {
				t.Errorf("%d items in the filter, want %d", n, 1+added)
			}
		})
	}
}

// TestMaxmemLifted: once the limit that refused a filter's growth is
// lifted, the filter grows again and takes the items it refused, as
// Redis's writes resume once memory is freed. (For this server's layout it
// failed until the growing table asked for the memory again once its stash
// was full: the key answered "Insufficient memory" for good.)
func TestMaxmemLifted(t *testing.T) {
	for _, p := range []cf.Params{growing, rbGrow} {
		t.Run(p.Layout.String(), func(t *testing.T) {
			st, _ := recorded()
			w := &keyspace.Writer{}
			mustAdd(t, st, w, "k", p, items("first", 1))
			st.Maxmem.Store(st.FilterBytes() + 64)
			all := items("more", 1000)
			res, err := st.Add(w, []byte("k"), all, keyspace.AddOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var refused [][]byte
			for i, r := range res {
				if r.Status == keyspace.NoRoom {
					refused = append(refused, all[i])
				}
			}
			if len(refused) == 0 {
				t.Fatal("the limit refused nothing")
			}
			size := sizeOf(st, "k")
			st.Maxmem.Store(0)
			res, err = st.Add(w, []byte("k"), refused, keyspace.AddOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if r.Status != keyspace.Added {
					t.Fatalf("refused item %d of %d, with no limit now: %s (%v)", i, len(refused), r.Status, r.Err)
				}
			}
			if sizeOf(st, "k") <= size {
				t.Errorf("the filter took %d more items in %d bytes, as many as before: it did not grow", len(refused), size)
			}
			checkCharged(t, st, "after the limit was lifted")
		})
	}
}

// TestMaxmemRefusesCreate: a create that does not fit is refused with
// ErrOOM and makes no key; so is one past the bound on one filter.
func TestMaxmemRefusesCreate(t *testing.T) {
	t.Run("maxmemory", func(t *testing.T) {
		st, rec := recorded()
		st.Maxmem.Store(1024)
		big := cf.Params{Capacity: 1 << 20, BucketSize: 4, MaxIter: 20, Expansion: 1, Slots: 4}
		for _, p := range []cf.Params{big, {Capacity: 1 << 20, BucketSize: 2, MaxIter: 20, Expansion: 1, Layout: cf.LayoutRedisBloom}} {
			if err := st.Reserve(&keyspace.Writer{}, []byte("k"), &p); !errors.Is(err, keyspace.ErrOOM) {
				t.Errorf("%s: Reserve past maxmemory: %v, want ErrOOM", p.Layout, err)
			}
			_, err := st.Add(&keyspace.Writer{}, []byte("k"), items("x", 1), keyspace.AddOptions{Create: &p})
			if !errors.Is(err, keyspace.ErrOOM) {
				t.Errorf("%s: Add creating past maxmemory: %v, want ErrOOM", p.Layout, err)
			}
		}
		if st.Len() != 0 || st.FilterBytes() != 0 || len(rec.ops) != 0 {
			t.Errorf("refused creates left %d keys, %d bytes, logged %v", st.Len(), st.FilterBytes(), rec.kinds())
		}
	})
	t.Run("one filter's bound", func(t *testing.T) {
		st := keyspace.NewStore(0, 4096)
		big := cf.Params{Capacity: 1 << 20, BucketSize: 4, MaxIter: 20, Expansion: 1, Slots: 4}
		if err := st.Reserve(&keyspace.Writer{}, []byte("k"), &big); !errors.Is(err, keyspace.ErrOOM) {
			t.Errorf("Reserve past the bound on one filter: %v, want ErrOOM", err)
		}
		if st.Len() != 0 || st.FilterBytes() != 0 {
			t.Errorf("%d keys, %d bytes", st.Len(), st.FilterBytes())
		}
	})
}

// TestFullFilter: a filter that may not grow reports NoRoom with
// cf.ErrFull, and with cf-max-expansions reached the whole add is refused
// with cf.ErrMaxExpansions before any item.
func TestFullFilter(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "fixed", fixed, items("x", 1))
	res, err := st.Add(w, []byte("fixed"), items("y", 200), keyspace.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last := res[len(res)-1]
	if last.Status != keyspace.NoRoom || !errors.Is(last.Err, cf.ErrFull) {
		t.Fatalf("the 201st item in a fixed filter of 64: %s (%v), want NoRoom with ErrFull", last.Status, last.Err)
	}
	checkCharged(t, st, "full")

	mustAdd(t, st, w, "grow", growing, items("x", 1))
	rec.reset()
	limits := &cf.Defaults{MaxExpansions: 1}
	_, err = st.Add(w, []byte("grow"), items("z", 3), keyspace.AddOptions{Limits: limits})
	if !errors.Is(err, cf.ErrMaxExpansions) {
		t.Fatalf("an add at cf-max-expansions: %v, want ErrMaxExpansions", err)
	}
	if n := st.Peek("grow").Inserted(); n != 1 || len(rec.ops) != 0 {
		t.Errorf("the refused add left %d items and logged %v", n, rec.kinds())
	}
	limits.MaxExpansions = 2
	mustAdd(t, st, w, "grow", growing, items("z", 3)) // no limit
	if _, err := st.Add(w, []byte("grow"), items("w", 1), keyspace.AddOptions{Limits: limits}); err != nil {
		t.Errorf("an add below cf-max-expansions: %v", err)
	}
}

// TestAddStatuses: NX reports an item already there as Present, not
// logged; a missing key without Create is ErrNotFound.
func TestAddStatuses(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "k", growing, items("x", 2))
	rec.reset()
	its := append(items("x", 2), []byte("new"))
	res, err := st.Add(w, []byte("k"), its, keyspace.AddOptions{NX: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []keyspace.AddStatus{keyspace.Present, keyspace.Present, keyspace.Added}
	for i, r := range res {
		if r.Status != want[i] || r.Err != nil {
			t.Errorf("item %q: %s (%v), want %s", its[i], r.Status, r.Err, want[i])
		}
	}
	if n := addedItems(t, rec); n != 1 {
		t.Errorf("%d items logged, want the 1 added", n)
	}
	rec.reset()
	res, err = st.Add(w, []byte("k"), items("x", 1), keyspace.AddOptions{NX: true})
	if err != nil || res[0].Status != keyspace.Present || len(rec.ops) != 0 {
		t.Errorf("an NX add of nothing new: %v %v, logged %v", res, err, rec.kinds())
	}
	if _, err := st.Add(w, []byte("nobody"), items("x", 1), keyspace.AddOptions{}); err != keyspace.ErrNotFound {
		t.Errorf("an add to a missing key without Create: %v, want ErrNotFound", err)
	}
	if st.Peek("nobody") != nil {
		t.Error("an add without Create made the key")
	}
	for s, name := range map[keyspace.AddStatus]string{keyspace.Present: "present", keyspace.Added: "added",
		keyspace.NoRoom: "no room", keyspace.Failed: "failed", 9: "AddStatus(9)"} {
		if s.String() != name {
			t.Errorf("AddStatus %d is %q, want %q", uint8(s), s.String(), name)
		}
	}
}

// TestReleaseExactly: every way a filter leaves releases its bytes once:
// DEL, CF.DEL of a RedisBloom filter's items, COMPACT, FLUSHALL; after
// dropping everything nothing stays charged.
func TestReleaseExactly(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	for i, p := range []cf.Params{growing, fixed, rbGrow} {
		for j := range 3 {
			n := 60 * (j + 1)
			if p == fixed {
				n = 20 * (j + 1) // fits in 64
			}
			mustAdd(t, st, w, fmt.Sprintf("k%d%d", i, j), p, items("x", n))
		}
	}
	checkCharged(t, st, "filled")
	before, size := st.FilterBytes(), sizeOf(st, "k00")
	if ok, err := st.Drop(w, []byte("k00")); !ok || err != nil {
		t.Fatalf("Drop: %v %v", ok, err)
	}
	if got := st.FilterBytes(); got != before-size {
		t.Errorf("DEL released %d bytes, the filter took %d", before-got, size)
	}
	if ok, err := st.Drop(w, []byte("k00")); ok || err != nil {
		t.Errorf("a second DEL: %v %v, want false", ok, err)
	}

	// A RedisBloom filter grown into sub-filters, emptied: CF.DEL and
	// COMPACT give its sub-filters back.
	grown := sizeOf(st, "k22")
	for _, it := range items("x", 180) {
		if ok, err := st.DeleteItem(w, []byte("k22"), it); !ok || err != nil {
			t.Fatalf("CF.DEL %q: %v %v", it, ok, err)
		}
	}
	checkCharged(t, st, "after CF.DEL")
	rec.reset()
	if ok, err := st.Compact(w, []byte("k22")); !ok || err != nil {
		t.Fatalf("Compact of a RedisBloom filter: %v %v", ok, err)
	}
	checkCharged(t, st, "after COMPACT")
	if got := sizeOf(st, "k22"); got >= grown {
		t.Errorf("an emptied RedisBloom filter takes %d bytes after COMPACT, %d grown: nothing was given back", got, grown)
	}
	if kinds := rec.kinds(); len(kinds) != 1 || kinds[0] != "compact" {
		t.Errorf("logged %v, want [compact]", kinds)
	}
	// A growing table has no stages to drop: nothing changes or is logged.
	rec.reset()
	if ok, err := st.Compact(w, []byte("k01")); ok || err != nil || len(rec.ops) != 0 {
		t.Errorf("Compact of a growing table: %v %v, logged %v", ok, err, rec.kinds())
	}
	if _, err := st.Compact(w, []byte("nobody")); err != keyspace.ErrNotFound {
		t.Errorf("Compact of a missing key: %v, want ErrNotFound", err)
	}
	if ok, err := st.DeleteItem(w, []byte("k01"), []byte("never added")); ok || err != nil {
		t.Errorf("CF.DEL of an item never added: %v %v", ok, err)
	}
	if _, err := st.DeleteItem(w, []byte("nobody"), []byte("x")); err != keyspace.ErrNotFound {
		t.Errorf("CF.DEL on a missing key: %v, want ErrNotFound", err)
	}

	for _, k := range []string{"k01", "k02", "k10"} {
		if _, err := st.Drop(w, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	checkCharged(t, st, "after DELs")
	rec.reset()
	if err := st.FlushAll(w); err != nil {
		t.Fatal(err)
	}
	if st.Len() != 0 || st.FilterBytes() != 0 {
		t.Errorf("after FLUSHALL: %d keys, %d bytes charged", st.Len(), st.FilterBytes())
	}
	if kinds := rec.kinds(); len(kinds) != 1 || kinds[0] != "flush" {
		t.Errorf("logged %v, want [flush]", kinds)
	}
	// Everything made again and dropped key by key: back to 0.
	for i, p := range []cf.Params{growing, fixed, rbGrow} {
		mustAdd(t, st, w, fmt.Sprint(i), p, items("y", 40))
	}
	for i := range 3 {
		if _, err := st.Drop(w, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if st.FilterBytes() != 0 {
		t.Errorf("%d bytes charged with no key", st.FilterBytes())
	}
}

// TestChunkCharge: a CF.SCANDUMP chunk in flight counts against
// --maxmemory, not in FilterBytes, until it is released; one that does
// not fit is refused and charges nothing. Clients' buffers count too.
func TestChunkCharge(t *testing.T) {
	st, _ := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "k", growing, items("x", 1))
	filters := st.FilterBytes()
	st.Maxmem.Store(filters + 1000)
	if err := st.ChargeChunk(600); err != nil {
		t.Fatal(err)
	}
	if st.FilterBytes() != filters || st.Inflight.Load() != 600 {
		t.Errorf("a chunk in flight: FilterBytes %d (want %d), in flight %d (want 600)", st.FilterBytes(), filters, st.Inflight.Load())
	}
	if err := st.ChargeChunk(600); !errors.Is(err, keyspace.ErrOOM) {
		t.Errorf("a second chunk past the limit: %v, want ErrOOM", err)
	}
	if st.Inflight.Load() != 600 {
		t.Errorf("a refused chunk is in flight: %d", st.Inflight.Load())
	}
	// While the chunk is out, a growth that would fit without it is
	// refused.
	res, err := st.Add(w, []byte("k"), items("y", 500), keyspace.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if last := res[len(res)-1]; last.Status != keyspace.NoRoom || !errors.Is(last.Err, keyspace.ErrOOM) {
		t.Errorf("growth with a chunk in flight: %s (%v), want NoRoom with ErrOOM", last.Status, last.Err)
	}
	if st.FilterBytes()+st.Inflight.Load() > filters+1000 {
		t.Errorf("%d filter bytes and %d in flight pass the limit %d", st.FilterBytes(), st.Inflight.Load(), filters+1000)
	}
	st.ReleaseChunk(600)
	if st.Inflight.Load() != 0 {
		t.Errorf("%d bytes in flight after the release", st.Inflight.Load())
	}
	checkCharged(t, st, "chunk released")
	if err := st.ChargeChunk(600); err != nil {
		t.Errorf("a chunk that fits once the first is released: %v", err)
	}
	st.ReleaseChunk(600)
	// Clients' memory shares the limit.
	st.Maxmem.Store(st.FilterBytes() + 1000)
	st.Clients.Store(900)
	if err := st.ChargeChunk(200); !errors.Is(err, keyspace.ErrOOM) {
		t.Errorf("a chunk past the limit with the clients' memory: %v, want ErrOOM", err)
	}
	st.Clients.Store(0)
	if err := st.ChargeChunk(200); err != nil {
		t.Errorf("the same chunk without the clients' memory: %v", err)
	}
}
