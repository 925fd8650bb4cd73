package keyspace_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// TestExpireConditions is Redis 7's EXPIRE NX|XX|GT|LT, row by row: NX
// only on a key with no deadline, XX only on one with, GT only later than
// the current deadline (none counts as infinite, so never), LT only
// earlier (none counts as infinite, so always). A deadline set is logged
// as one op; one refused changes and logs nothing.
func TestExpireConditions(t *testing.T) {
	const none = int64(0)
	cur := hour // the key's current deadline, when it has one
	for _, tc := range []struct {
		current, when int64
		cond          keyspace.ExpireCond
		want          bool
	}{
		{none, cur, 0, true},
		{cur, cur + 1000, 0, true},
		{cur, cur - 1000, 0, true},

		{none, cur, keyspace.ExpireNX, true},
		{cur, cur + 1000, keyspace.ExpireNX, false},

		{none, cur, keyspace.ExpireXX, false},
		{cur, cur + 1000, keyspace.ExpireXX, true},
		{cur, cur - 1000, keyspace.ExpireXX, true},

		{none, cur, keyspace.ExpireGT, false},
		{cur, cur + 1000, keyspace.ExpireGT, true},
		{cur, cur, keyspace.ExpireGT, false},
		{cur, cur - 1000, keyspace.ExpireGT, false},

		{none, cur, keyspace.ExpireLT, true},
		{cur, cur - 1000, keyspace.ExpireLT, true},
		{cur, cur, keyspace.ExpireLT, false},
		{cur, cur + 1000, keyspace.ExpireLT, false},

		{none, cur, keyspace.ExpireXX | keyspace.ExpireLT, false},
		{cur, cur - 1000, keyspace.ExpireXX | keyspace.ExpireLT, true},
		{cur, cur + 1000, keyspace.ExpireXX | keyspace.ExpireLT, false},
		{none, cur, keyspace.ExpireXX | keyspace.ExpireGT, false},
		{cur, cur + 1000, keyspace.ExpireXX | keyspace.ExpireGT, true},
	} {
		name := fmt.Sprintf("current=%s/when=%+d/cond=%s", ttlName(tc.current), tc.when-cur, condName(tc.cond))
		t.Run(name, func(t *testing.T) {
			st, rec := recorded()
			w := &keyspace.Writer{}
			mustAdd(t, st, w, "k", growing, items("x", 1))
			if tc.current != none {
				if ok, err := st.Expire(w, []byte("k"), tc.current, 0); err != nil || !ok {
					t.Fatalf("setting the current deadline: %v %v", ok, err)
				}
			}
			rec.reset()
			set, err := st.Expire(w, []byte("k"), tc.when, tc.cond)
			if err != nil {
				t.Fatal(err)
			}
			if set != tc.want {
				t.Fatalf("Expire reported %v, want %v", set, tc.want)
			}
			want, logged := tc.current, []string(nil)
			if tc.want {
				want, logged = tc.when, []string{"expire"}
			}
			if d := st.Peek("k").Deadline.Load(); d != want {
				t.Errorf("deadline %d, want %d", d, want)
			}
			if got := rec.kinds(); !slices.Equal(got, logged) {
				t.Errorf("logged %v, want %v", got, logged)
			}
		})
	}
	t.Run("missing key", func(t *testing.T) {
		st, rec := recorded()
		for _, cond := range []keyspace.ExpireCond{0, keyspace.ExpireNX, keyspace.ExpireLT} {
			if set, err := st.Expire(&keyspace.Writer{}, []byte("nobody"), hour, cond); set || err != nil {
				t.Errorf("cond %s on a missing key: %v %v, want false and no error", condName(cond), set, err)
			}
		}
		if st.Len() != 0 || len(rec.ops) != 0 {
			t.Errorf("an expire of a missing key made %d keys and logged %v", st.Len(), rec.kinds())
		}
	})
}

func ttlName(d int64) string {
	if d == 0 {
		return "none"
	}
	return "set"
}

func condName(c keyspace.ExpireCond) string {
	var parts []string
	for i, n := range []string{"NX", "XX", "GT", "LT"} {
		if c&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// TestExpireInThePast: a deadline not after now deletes the key, logged
// as a drop, as Redis does; 0 and negative deadlines are such too. A
// condition that refuses keeps the key.
func TestExpireInThePast(t *testing.T) {
	for _, when := range []int64{keyspace.NowMs() - 1000, 1, 0, -5} {
		t.Run(strconv.FormatInt(when, 10), func(t *testing.T) {
			st, rec := recorded()
			w := &keyspace.Writer{}
			mustAdd(t, st, w, "k", growing, items("x", 1))
			rec.reset()
			set, err := st.Expire(w, []byte("k"), when, 0)
			if err != nil || !set {
				t.Fatalf("Expire: %v %v, want true", set, err)
			}
			if st.Len() != 0 || st.FilterBytes() != 0 {
				t.Errorf("%d keys and %d bytes left, want none", st.Len(), st.FilterBytes())
			}
			if got := rec.kinds(); !slices.Equal(got, []string{"drop"}) {
				t.Errorf("logged %v, want [drop]", got)
			}
		})
	}
	t.Run("refused by GT", func(t *testing.T) {
		st, _ := recorded()
		w := &keyspace.Writer{}
		mustAdd(t, st, w, "k", growing, items("x", 1))
		if _, err := st.Expire(w, []byte("k"), hour, 0); err != nil {
			t.Fatal(err)
		}
		if set, err := st.Expire(w, []byte("k"), 1, keyspace.ExpireGT); set || err != nil {
			t.Fatalf("GT with a past deadline: %v %v, want false", set, err)
		}
		if st.Get([]byte("k")) == nil {
			t.Fatal("a refused expire deleted the key")
		}
	})
}

// TestPersist: PERSIST clears a deadline (logged), and reports false,
// logging nothing, for a key without one or a missing key.
func TestPersist(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "k", growing, items("x", 1))
	rec.reset()
	if ok, err := st.Persist(w, []byte("k")); ok || err != nil {
		t.Fatalf("persist of a key with no deadline: %v %v", ok, err)
	}
	if ok, err := st.Persist(w, []byte("nobody")); ok || err != nil {
		t.Fatalf("persist of a missing key: %v %v", ok, err)
	}
	if len(rec.ops) != 0 {
		t.Fatalf("logged %v for no change", rec.kinds())
	}
	if _, err := st.Expire(w, []byte("k"), hour, 0); err != nil {
		t.Fatal(err)
	}
	if line := st.KeyspaceLine(1); !strings.Contains(line, "expires=1,") {
		t.Fatalf("INFO line %q with one deadline", line)
	}
	if ok, err := st.Persist(w, []byte("k")); !ok || err != nil {
		t.Fatalf("persist: %v %v, want true", ok, err)
	}
	if d := st.Peek("k").Deadline.Load(); d != 0 {
		t.Fatalf("deadline %d after PERSIST", d)
	}
	if got := rec.kinds(); !slices.Equal(got, []string{"expire", "persist"}) {
		t.Errorf("logged %v, want [expire persist]", got)
	}
	if line := st.KeyspaceLine(1); line != "keys=1,expires=0,avg_ttl=0" {
		t.Errorf("INFO line %q after PERSIST", line)
	}
}

// expireSoon gives key a deadline ms from now, and returns it.
func expireSoon(t *testing.T, st *keyspace.Store, key string, ms int64) int64 {
	t.Helper()
	d := keyspace.NowMs() + ms
	if ok, err := st.Expire(nil, []byte(key), d, 0); err != nil || !ok {
		t.Fatalf("expire %s: %v %v", key, ok, err)
	}
	return d
}

// waitPast sleeps until the clock is past deadline d.
func waitPast(d int64) {
	for keyspace.NowMs() <= d {
		time.Sleep(time.Millisecond)
	}
}

// TestExpiredKeyIsGone: past its deadline a key is gone for lookups at
// once (Get, Present, LiveKeys), though still in the map until dropped;
// the lookup drops it, logged, and counts it expired.
func TestExpiredKeyIsGone(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "k", growing, items("x", 1))
	mustAdd(t, st, w, "stays", growing, items("x", 1))
	c := st.Peek("k")
	if _, err := st.Expire(w, []byte("k"), hour, 0); err != nil {
		t.Fatal(err)
	}
	if st.Get([]byte("k")) != c || !st.Present([]byte("k")) {
		t.Fatal("a key whose deadline is ahead is not found")
	}
	d := expireSoon(t, st, "k", 5)
	// Redis's rule: a key whose deadline is now is still there.
	if c.Expired(d) || !c.Expired(d+1) || st.Peek("stays").Expired(1<<62) {
		t.Fatal("Expired does not follow the deadline")
	}
	waitPast(d)
	if st.Present([]byte("k")) {
		t.Error("Present reports an expired key")
	}
	for k := range st.LiveKeys() {
		if k == "k" {
			t.Error("LiveKeys yields an expired key")
		}
	}
	if st.Peek("k") != c || st.Len() != 2 {
		t.Fatal("Present or LiveKeys dropped the key: they only look")
	}
	rec.reset()
	if st.Get([]byte("k")) != nil {
		t.Fatal("Get returned an expired key")
	}
	if st.Peek("k") != nil || st.Len() != 1 {
		t.Error("the lookup did not drop the expired key")
	}
	if got := rec.kinds(); !slices.Equal(got, []string{"drop"}) {
		t.Errorf("logged %v, want [drop]", got)
	}
	if n := st.ExpiredKeys.Load(); n != 1 {
		t.Errorf("%d keys counted expired, want 1", n)
	}
	if st.FilterBytes() != sizeOf(st, "stays") {
		t.Errorf("%d bytes charged, want %d (the other key's)", st.FilterBytes(), sizeOf(st, "stays"))
	}
}

// TestWriteToExpiredKey: a write finds an expired key gone: an add
// creates a fresh filter with no deadline in its place, logging the drop
// first; a write that does not create answers as on a missing key.
func TestWriteToExpiredKey(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "k", growing, items("old", 10))
	mustAdd(t, st, w, "r", growing, items("old", 1))
	waitPast(max(expireSoon(t, st, "k", 10), expireSoon(t, st, "r", 10)))
	rec.reset()
	mustAdd(t, st, w, "k", growing, items("new", 1))
	c := st.Peek("k")
	if c.Inserted() != 1 || c.Deadline.Load() != 0 {
		t.Errorf("the new filter holds %d items with deadline %d, want 1 and none", c.Inserted(), c.Deadline.Load())
	}
	if got := rec.kinds(); !slices.Equal(got, []string{"drop", "create", "add"}) {
		t.Errorf("logged %v, want [drop create add]", got)
	}
	if _, err := st.DeleteItem(w, []byte("r"), items("old", 1)[0]); err != keyspace.ErrNotFound {
		t.Errorf("delete from an expired key: %v, want ErrNotFound", err)
	}
	if ok, err := st.Drop(w, []byte("k")); !ok || err != nil {
		t.Errorf("drop of the new key: %v %v", ok, err)
	}
	if n := st.ExpiredKeys.Load(); n != 2 {
		t.Errorf("%d keys counted expired, want 2", n)
	}
	if st.Len() != 0 || st.FilterBytes() != 0 {
		t.Errorf("%d keys and %d bytes left", st.Len(), st.FilterBytes())
	}
}

// TestSweep: one cycle drops every expired key, sampling again while
// more than a quarter of a sample had expired, counts them, logs each
// drop, and leaves the keys whose deadline is ahead.
func TestSweep(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	var last int64
	for i := range 30 {
		k := fmt.Sprintf("soon%d", i)
		mustAdd(t, st, w, k, fixed, items(k, 1))
		last = expireSoon(t, st, k, 10)
	}
	for i := range 5 {
		k := fmt.Sprintf("later%d", i)
		mustAdd(t, st, w, k, fixed, items(k, 1))
		if _, err := st.Expire(w, []byte(k), hour, 0); err != nil {
			t.Fatal(err)
		}
	}
	mustAdd(t, st, w, "forever", fixed, items("f", 1))
	waitPast(last)
	rec.reset()
	if n := st.Sweep(time.Now().Add(time.Minute)); n != 30 {
		t.Fatalf("Sweep dropped %d keys, want 30", n)
	}
	if n := st.ExpiredKeys.Load(); n != 30 {
		t.Errorf("%d keys counted expired, want 30", n)
	}
	if st.Len() != 6 {
		t.Errorf("%d keys left, want 6", st.Len())
	}
	if got := rec.kinds(); len(got) != 30 || slices.ContainsFunc(got, func(k string) bool { return k != "drop" }) {
		t.Errorf("logged %v, want 30 drops", got)
	}
	if st.FilterBytes() != sumOfSizes(st) {
		t.Errorf("%d bytes charged, the filters left take %d", st.FilterBytes(), sumOfSizes(st))
	}
	if n := st.Sweep(time.Now().Add(time.Minute)); n != 0 {
		t.Errorf("a second sweep dropped %d keys", n)
	}
	if line := st.KeyspaceLine(st.Len()); !strings.HasPrefix(line, "keys=6,expires=5,") {
		t.Errorf("INFO line %q, want 6 keys of which 5 expire", line)
	}
}

// TestKeyspaceLine: INFO's db0 line counts the keys with a deadline,
// expired ones included until they are dropped, and their exact mean time
// to live.
func TestKeyspaceLine(t *testing.T) {
	st, _ := recorded()
	w := &keyspace.Writer{}
	if line := st.KeyspaceLine(0); line != "keys=0,expires=0,avg_ttl=0" {
		t.Fatalf("empty: %q", line)
	}
	for _, k := range []string{"a", "b", "c"} {
		mustAdd(t, st, w, k, fixed, items(k, 1))
	}
	now := keyspace.NowMs()
	for k, ttl := range map[string]int64{"a": 10_000, "b": 20_000} {
		if _, err := st.Expire(w, []byte(k), now+ttl, 0); err != nil {
			t.Fatal(err)
		}
	}
	// avg_ttl is exact: the mean deadline less the clock when it is read.
	before := keyspace.NowMs()
	expires, avg := parseLine(t, st.KeyspaceLine(3), 3)
	if most, least := now+15_000-before, now+15_000-keyspace.NowMs(); expires != 2 || avg > most || avg < least {
		t.Errorf("expires=%d avg_ttl=%d, want 2 and %d to %d", expires, avg, least, most)
	}
	// A rename keeps the deadline counted once; a drop forgets it.
	if _, err := st.Rename(w, []byte("a"), []byte("c"), false); err != nil {
		t.Fatal(err)
	}
	if expires, _ := parseLine(t, st.KeyspaceLine(2), 2); expires != 2 {
		t.Errorf("after a rename: expires=%d, want 2", expires)
	}
	if _, err := st.Drop(w, []byte("c")); err != nil {
		t.Fatal(err)
	}
	before = keyspace.NowMs()
	expires, avg = parseLine(t, st.KeyspaceLine(1), 1)
	if most, least := now+20_000-before, now+20_000-keyspace.NowMs(); expires != 1 || avg > most || avg < least {
		t.Errorf("after a drop: expires=%d avg_ttl=%d, want 1 and %d to %d", expires, avg, least, most)
	}
	// An expired key is counted until it is dropped; a mean in the past
	// reads 0.
	d := expireSoon(t, st, "b", 5)
	waitPast(d)
	if line := st.KeyspaceLine(1); line != "keys=1,expires=1,avg_ttl=0" {
		t.Errorf("an expired key not yet dropped: %q", line)
	}
	if err := st.FlushAll(w); err != nil {
		t.Fatal(err)
	}
	if line := st.KeyspaceLine(0); line != "keys=0,expires=0,avg_ttl=0" {
		t.Errorf("after FLUSHALL: %q", line)
	}
}

// parseLine reads expires and avg_ttl of an INFO db0 line for keys keys.
func parseLine(t *testing.T, line string, keys int) (expires, avg int64) {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(line, "keys=%d,expires=%d,avg_ttl=%d", &n, &expires, &avg); err != nil || n != keys {
		t.Fatalf("INFO line %q: %v", line, err)
	}
	return expires, avg
}

// TestReplicaKeepsExpiredKeys: a replica hides an expired key from
// lookups but never drops it itself: its primary's drop comes in the
// stream. Neither a lookup nor the sweeper drops it or logs anything.
func TestReplicaKeepsExpiredKeys(t *testing.T) {
	st, rec := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "k", growing, items("x", 1))
	d := expireSoon(t, st, "k", 10)
	st.Replica.Store(true)
	waitPast(d)
	rec.reset()
	if st.Get([]byte("k")) != nil {
		t.Fatal("a replica's lookup returned an expired key")
	}
	if n := st.Sweep(time.Now().Add(time.Minute)); n != 0 {
		t.Errorf("a replica's sweep dropped %d keys", n)
	}
	if st.Len() != 1 || len(rec.ops) != 0 || st.ExpiredKeys.Load() != 0 {
		t.Errorf("a replica dropped an expired key itself: %d keys, logged %v", st.Len(), rec.kinds())
	}
	// The primary's drop, replayed, removes it.
	st.LockAll()
	err := st.Replay((&keyspace.Op{Kind: keyspace.OpDrop, Key: []byte("k")}).Encode(), 0, nil)
	st.UnlockAll()
	if err != nil || st.Len() != 0 || st.FilterBytes() != 0 {
		t.Errorf("the replayed drop: %v, %d keys and %d bytes left", err, st.Len(), st.FilterBytes())
	}
}
