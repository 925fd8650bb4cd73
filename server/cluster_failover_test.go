package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/resptest"
)

// TestClusterReplicaAdoptsTopology: a node made a replica takes its
// primary's topology when it is newer and lists the node (a node that was
// down during a failover learns it so), and keeps its own otherwise.
func TestClusterReplicaAdoptsTopology(t *testing.T) {
	c := startCluster(t, 3)
	// The primary's topology, epoch 5, lists node 1 as its replica; node 1
	// is at epoch 2 and thinks it owns every slot.
	resptest.Dial(t, c[1].addr).Do("CUCKOO.CLUSTER", "SETCONFIG", topoJSON(t, 2, c[1].id,
		node(c[1], "primary", map[string]any{"slots": [][2]int{{0, 16383}}})))
	if r := resptest.Dial(t, c[0].addr).Do("CUCKOO.CLUSTER", "SETCONFIG", topoJSON(t, 5, c[0].id,
		node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}}),
		node(c[1], "replica", map[string]any{"primary": c[0].id}))); r != "OK" {
		t.Fatal(r)
	}
	replicaOf(t, client(t, c[1].addr), c[0].addr)
	var conf struct {
		Epoch  int64
		Myself string
	}
	b := resptest.Dial(t, c[1].addr).Do("CUCKOO.CLUSTER", "GETCONFIG").(string)
	if err := json.Unmarshal([]byte(b), &conf); err != nil || conf.Epoch != 5 || conf.Myself != c[1].id {
		t.Errorf("the replica's topology after REPLICAOF: %s (%v)", b, err)
	}
	if nodes := resptest.Dial(t, c[1].addr).Do("CLUSTER", "NODES").(string); !strings.Contains(nodes, "myself,slave "+c[0].id) {
		t.Errorf("CLUSTER NODES on the replica:\n%s", nodes)
	}
	// A primary whose topology does not list the replica: kept its own.
	resptest.Dial(t, c[2].addr).Do("CUCKOO.CLUSTER", "SETCONFIG", topoJSON(t, 9, c[2].id,
		node(c[2], "primary", map[string]any{"slots": [][2]int{{0, 16383}}})))
	replicaOf(t, client(t, c[1].addr), c[2].addr)
	b = resptest.Dial(t, c[1].addr).Do("CUCKOO.CLUSTER", "GETCONFIG").(string)
	if err := json.Unmarshal([]byte(b), &conf); err != nil || conf.Epoch != 5 {
		t.Errorf("the replica took a topology that does not list it: %s", b)
	}
}

// TestClusterPromotingReplicaTryAgain: a node the topology names the
// slots' primary while it still replicates (a failover under way) answers
// -TRYAGAIN, which cluster clients retry, but to READONLY reads.
func TestClusterPromotingReplicaTryAgain(t *testing.T) {
	c := startCluster(t, 2)
	replicaOf(t, client(t, c[1].addr), c[0].addr)
	push(t, c, 1, node(c[1], "primary", map[string]any{"slots": [][2]int{{0, 16383}}}),
		node(c[0], "replica", map[string]any{"primary": c[1].id}))
	r := resptest.Dial(t, c[1].addr)
	if got := r.Do("CF.ADD", "k", "x"); got != resptest.Error("TRYAGAIN this node is taking over as primary of the slot: it is still a replica") {
		t.Errorf("a write on the replica being promoted = %v", got)
	}
	if got := r.Do("CF.EXISTS", "k", "x"); got != resptest.Error("TRYAGAIN this node is taking over as primary of the slot: it is still a replica") {
		t.Errorf("a read on the replica being promoted = %v", got)
	}
	r.Do("READONLY")
	if got := r.Do("CF.EXISTS", "k", "x"); got != int64(0) {
		t.Errorf("a READONLY read on the replica being promoted = %v", got)
	}
	if got := r.Do("REPLICAOF", "NO", "ONE"); got != "OK" {
		t.Fatalf("REPLICAOF NO ONE = %v", got)
	}
	if got := r.Do("CF.ADD", "k", "x"); got != int64(1) {
		t.Errorf("a write after the promotion = %v", got)
	}
}
