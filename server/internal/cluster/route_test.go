package cluster_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// The test cluster: A (10.0.0.1:7001) owns slots 0-8191 and migrates
// migSlot to B (10.0.0.2:7002), which owns 8192-15999 and imports
// migSlot; C (10.0.0.3:7003) is A's replica; 16000-16383 have no owner.
var (
	idA, idB, idC = strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	addrA, addrB  = "10.0.0.1:7001", "10.0.0.2:7002"
)

const lastB = 15999

// Keys of the test cluster's slots, found once.
var (
	migTag  = tagIn(0, 8191) // a hash tag whose slot A migrates
	migSlot = topology.KeySlot(migTag)
	kA      = keyIn(0, 8191, migSlot) // A's, not migrating
	kB      = keyIn(8192, lastB, -1)
	kDown   = keyIn(lastB+1, topology.Slots-1, -1)
	m1, m2  = "{" + migTag + "}1", "{" + migTag + "}2"
)

// keyIn is a key whose slot is in [lo, hi] and is not except.
func keyIn(lo, hi, except int) string {
	for i := 0; ; i++ {
		k := fmt.Sprintf("k%d", i)
		if s := topology.KeySlot(k); s >= lo && s <= hi && s != except {
			return k
		}
	}
}

// tagIn is a hash tag whose slot is in [lo, hi].
func tagIn(lo, hi int) string {
	for i := 0; ; i++ {
		tag := fmt.Sprintf("t%d", i)
		if s := topology.KeySlot(tag); s >= lo && s <= hi {
			return tag
		}
	}
}

// testConfig is the test cluster's topology as pushed to node myself.
func testConfig(myself string) topology.Config {
	return topology.Config{Epoch: 1, Myself: myself, Nodes: []topology.Node{
		{ID: idA, Host: "10.0.0.1", Port: 7001, Role: topology.RolePrimary, Slots: [][2]int{{0, 8191}},
			Migrating: map[int]string{migSlot: idB}},
		{ID: idB, Host: "10.0.0.2", Port: 7002, Role: topology.RolePrimary, Slots: [][2]int{{8192, lastB}},
			Importing: map[int]string{migSlot: idA}},
		{ID: idC, Host: "10.0.0.3", Port: 7003, Role: topology.RoleReplica, Primary: idA},
	}}
}

func compile(t *testing.T, conf topology.Config) *topology.Map {
	t.Helper()
	m, err := topology.Compile(conf)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newStore is a key space holding a filter under each of keys.
func newStore(t testing.TB, replica bool, keys ...string) *keyspace.Store {
	t.Helper()
	st := keyspace.NewStore(0, 1<<30)
	var w keyspace.Writer
	for _, k := range keys {
		p := cf.Params{Capacity: 64, BucketSize: 4, MaxIter: 20, Expansion: 1}
		if err := st.Reserve(&w, []byte(k), &p); err != nil {
			t.Fatal(err)
		}
	}
	st.Replica.Store(replica)
	return st
}

// TestRoute: the route decision for every case the doc names, as node A
// (the owner, migrating a slot), B (the importer), C (A's replica).
func TestRoute(t *testing.T) {
	moved := func(slot int, addr string) error { return &cluster.Redirect{Slot: slot, Addr: addr} }
	ask := func(slot int, addr string) error { return &cluster.Redirect{Ask: true, Slot: slot, Addr: addr} }
	for _, tc := range []struct {
		name             string
		myself           string
		keys             []string
		write            bool
		asking, readonly bool
		replica          bool     // the node still replicates
		present          []string // the keys in the node's key space
		want             error
	}{
		{name: "own slot", myself: idA, keys: []string{kA}},
		{name: "own slot write", myself: idA, keys: []string{kA}, write: true},
		{name: "other's slot", myself: idA, keys: []string{kB}, want: moved(topology.KeySlot(kB), addrB)},
		{name: "other's slot asking, not importing", myself: idA, keys: []string{kB}, asking: true, want: moved(topology.KeySlot(kB), addrB)},
		{name: "no owner", myself: idA, keys: []string{kDown}, want: cluster.ErrDown},
		{name: "no owner readonly", myself: idC, keys: []string{kDown}, readonly: true, want: cluster.ErrDown},

		{name: "migrating, key here", myself: idA, keys: []string{m1}, present: []string{m1}},
		{name: "migrating, key moved", myself: idA, keys: []string{m1}, want: ask(migSlot, addrB)},
		{name: "migrating, write of a key moved", myself: idA, keys: []string{m1}, write: true, want: ask(migSlot, addrB)},
		{name: "migrating, all keys moved", myself: idA, keys: []string{m1, m2}, want: ask(migSlot, addrB)},
		{name: "migrating, some keys moved", myself: idA, keys: []string{m1, m2}, present: []string{m2}, want: cluster.ErrRehashing},
		{name: "migrating, all keys here", myself: idA, keys: []string{m1, m2}, present: []string{m1, m2}},

		{name: "importing without asking", myself: idB, keys: []string{m1}, want: moved(migSlot, addrA)},
		{name: "importing after asking", myself: idB, keys: []string{m1}, asking: true},
		{name: "importing after asking, write", myself: idB, keys: []string{m1}, asking: true, write: true},
		{name: "not importing after asking", myself: idB, keys: []string{kA}, asking: true, want: moved(topology.KeySlot(kA), addrA)},

		{name: "taking over, write", myself: idA, keys: []string{kA}, write: true, replica: true, want: cluster.ErrTakingOver},
		{name: "taking over, read", myself: idA, keys: []string{kA}, replica: true, want: cluster.ErrTakingOver},
		{name: "taking over, readonly read", myself: idA, keys: []string{kA}, readonly: true, replica: true},
		{name: "taking over, readonly write", myself: idA, keys: []string{kA}, readonly: true, write: true, replica: true, want: cluster.ErrTakingOver},

		{name: "replica, read", myself: idC, keys: []string{kA}, replica: true, want: moved(topology.KeySlot(kA), addrA)},
		{name: "replica, readonly read", myself: idC, keys: []string{kA}, readonly: true, replica: true},
		{name: "replica, readonly write", myself: idC, keys: []string{kA}, readonly: true, write: true, replica: true, want: moved(topology.KeySlot(kA), addrA)},
		{name: "replica, readonly read of another primary's slot", myself: idC, keys: []string{kB}, readonly: true, replica: true, want: moved(topology.KeySlot(kB), addrB)},
		{name: "replica, readonly read, migrating, key here", myself: idC, keys: []string{m1}, readonly: true, replica: true, present: []string{m1}},
		{name: "replica, readonly read, migrating, key moved", myself: idC, keys: []string{m1}, readonly: true, replica: true, want: ask(migSlot, addrB)},
		{name: "replica, readonly read, migrating, some moved", myself: idC, keys: []string{m1, m2}, readonly: true, replica: true, present: []string{m1}, want: cluster.ErrRehashing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := compile(t, testConfig(tc.myself))
			st := newStore(t, tc.replica, tc.present...)
			c := &cluster.Command{Write: tc.write, Asking: tc.asking, Readonly: tc.readonly}
			for _, k := range tc.keys {
				c.Keys = append(c.Keys, []byte(k))
			}
			slot, err := cluster.SlotOf(c.Keys)
			if err != nil {
				t.Fatal(err)
			}
			got := cluster.Route(topo, st, slot, c)
			var wantR, gotR *cluster.Redirect
			switch {
			case errors.As(tc.want, &wantR):
				if !errors.As(got, &gotR) || *gotR != *wantR {
					t.Errorf("Route = %v, want %v", got, tc.want)
				}
			case !errors.Is(got, tc.want):
				t.Errorf("Route = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRedirectText: the redirects and refusals as clients read them.
func TestRedirectText(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&cluster.Redirect{Slot: 3999, Addr: "10.0.0.2:7002"}, "MOVED 3999 10.0.0.2:7002"},
		{&cluster.Redirect{Ask: true, Slot: 0, Addr: "[::1]:6379"}, "ASK 0 [::1]:6379"},
		{cluster.ErrCrossSlot, "CROSSSLOT Keys in request don't hash to the same slot"},
		{cluster.ErrDown, "CLUSTERDOWN Hash slot not served"},
		{cluster.ErrRehashing, "TRYAGAIN Multiple keys request during rehashing of slot"},
		{cluster.ErrTakingOver, "TRYAGAIN this node is taking over as primary of the slot: it is still a replica"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%#v.Error() = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestSlotOf: keys sharing a hash tag share a slot; keys that do not are
// refused with CROSSSLOT.
func TestSlotOf(t *testing.T) {
	for _, tc := range []struct {
		keys []string
		want int
		err  error
	}{
		{[]string{"foo"}, 12182, nil},
		{[]string{"{user1000}.following", "{user1000}.followers"}, topology.KeySlot("user1000"), nil},
		{[]string{"{user1000}.following", "{user1001}.followers"}, -1, cluster.ErrCrossSlot},
		{[]string{"a", "a", "b"}, -1, cluster.ErrCrossSlot},
	} {
		var keys [][]byte
		for _, k := range tc.keys {
			keys = append(keys, []byte(k))
		}
		if got, err := cluster.SlotOf(keys); got != tc.want || err != tc.err {
			t.Errorf("SlotOf(%q) = %d, %v, want %d, %v", tc.keys, got, err, tc.want, tc.err)
		}
	}
}

// BenchmarkRoute is the route decision of a one-key command on a slot the
// node owns: the cost every keyed command pays in cluster mode.
func BenchmarkRoute(b *testing.B) {
	topo, err := topology.Compile(testConfig(idA))
	if err != nil {
		b.Fatal(err)
	}
	st := newStore(b, false)
	key := [][]byte{[]byte(kA)}
	b.ReportAllocs()
	for b.Loop() {
		c := cluster.Command{Keys: key}
		slot, _ := cluster.SlotOf(c.Keys)
		if err := cluster.Route(topo, st, slot, &c); err != nil {
			b.Fatal(err)
		}
	}
}
