package cluster_test

import (
	"fmt"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// A node owning the first half of the slots sends a key of the second half
// to its owner, and runs a key of its own; keys in two slots are refused.
func ExampleRoute() {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	topo, err := topology.Compile(topology.Config{Epoch: 1, Myself: a, Nodes: []topology.Node{
		{ID: a, Host: "10.0.0.1", Port: 6379, Role: topology.RolePrimary, Slots: [][2]int{{0, 8191}}},
		{ID: b, Host: "10.0.0.2", Port: 6379, Role: topology.RolePrimary, Slots: [][2]int{{8192, 16383}}},
	}})
	if err != nil {
		panic(err)
	}
	ks := keyspace.NewStore(0, 0)
	for _, keys := range [][]string{{"foo"}, {"bar"}, {"foo", "bar"}} {
		c := &cluster.Command{}
		for _, k := range keys {
			c.Keys = append(c.Keys, []byte(k))
		}
		slot, err := cluster.SlotOf(c.Keys)
		if err == nil {
			err = cluster.Route(topo, ks, slot, c)
		}
		fmt.Printf("%v: %v\n", keys, err)
	}
	// Output:
	// [foo]: MOVED 12182 10.0.0.2:6379
	// [bar]: <nil>
	// [foo bar]: CROSSSLOT Keys in request don't hash to the same slot
}
