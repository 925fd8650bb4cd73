package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/prereq"
	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// clusterNode is a node of a test cluster: its address and id.
type clusterNode struct {
	addr, id string
	srv      *server.Server
}

func (n clusterNode) hostPort() (string, int) {
	h, p, _ := net.SplitHostPort(n.addr)
	port, _ := strconv.Atoi(p)
	return h, port
}

// startCluster starts n cluster-enabled nodes, in memory.
func startCluster(t *testing.T, n int) []clusterNode {
	t.Helper()
	nodes := make([]clusterNode, n)
	for i := range nodes {
		srv, addr := start(t, server.Config{ClusterEnabled: true})
		nodes[i] = clusterNode{addr: addr, srv: srv, id: myID(t, addr)}
	}
	return nodes
}

func myID(t *testing.T, addr string) string {
	t.Helper()
	id, ok := resptest.Dial(t, addr).Do("CLUSTER", "MYID").(string)
	if !ok || len(id) != 40 {
		t.Fatalf("CLUSTER MYID = %q", id)
	}
	return id
}

// topoNode is one node of a topology's JSON (CUCKOO.CLUSTER SETCONFIG).
type topoNode = map[string]any

func node(n clusterNode, role string, extra map[string]any) topoNode {
	h, p := n.hostPort()
	m := topoNode{"id": n.id, "host": h, "port": p, "role": role}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func topoJSON(t *testing.T, epoch int, myself string, nodes ...topoNode) string {
	b, err := json.Marshal(map[string]any{"epoch": epoch, "myself": myself, "nodes": nodes})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// push sets the topology on every node of cluster, in its order: the same
// nodes, each its own myself.
func push(t *testing.T, cluster []clusterNode, epoch int, nodes ...topoNode) {
	t.Helper()
	for _, n := range cluster {
		if r := resptest.Dial(t, n.addr).Do("CUCKOO.CLUSTER", "SETCONFIG", topoJSON(t, epoch, n.id, nodes...)); r != "OK" {
			t.Fatalf("SETCONFIG on %s = %v", n.addr, r)
		}
	}
}

// thirds is the topology of three primaries splitting the slots in thirds.
func thirds(c []clusterNode) []topoNode {
	return []topoNode{
		node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 5460}}}),
		node(c[1], "primary", map[string]any{"slots": [][2]int{{5461, 10922}}}),
		node(c[2], "primary", map[string]any{"slots": [][2]int{{10923, 16383}}}),
	}
}

// keyInSlotRange finds a key whose slot is in [lo, hi].
func keyInSlotRange(t *testing.T, addr string, lo, hi int64) (string, int64) {
	t.Helper()
	c := resptest.Dial(t, addr)
	for i := 0; ; i++ {
		k := fmt.Sprintf("key:%d", i)
		if s := c.Do("CLUSTER", "KEYSLOT", k).(int64); lo <= s && s <= hi {
			return k, s
		}
	}
}

// TestClusterKeySlot checks the slot hash against Redis's known values
// (Redis's docs and its cluster tests) and the hash tag rules.
func TestClusterKeySlot(t *testing.T) {
	_, addr := start(t, server.Config{ClusterEnabled: true})
	c := resptest.Dial(t, addr)
	slot := func(k string) int64 { return c.Do("CLUSTER", "KEYSLOT", k).(int64) }
	for k, want := range map[string]int64{
		"somekey": 11058, "foo": 12182, "bar": 5061, "hello": 866, "123456789": 12739,
		"foo{hash_tag}": 2515, "": 0,
	} {
		if got := slot(k); got != want {
			t.Errorf("KEYSLOT %q = %d, want %d", k, got, want)
		}
	}
	for _, same := range [][2]string{
		{"{user1000}.following", "{user1000}.followers"},
		{"foo{bar}{zap}", "bar"},     // the first tag only
		{"foo{{bar}}zap", "{bar"},    // from the first '{' to the first '}'
		{"foo{bar}", "{bar}baz"},     // a tag anywhere
		{"foo}{bar}", "bar"},         // a '}' before the '{' is not a tag's end
		{"foo{}{bar}", "foo{}{bar}"}, // an empty tag hashes the whole key
	} {
		if a, b := slot(same[0]), slot(same[1]); a != b {
			t.Errorf("KEYSLOT %q = %d, KEYSLOT %q = %d: want equal", same[0], a, same[1], b)
		}
	}
	if slot("foo{}{bar}") == slot("bar") {
		t.Error(`KEYSLOT "foo{}{bar}" hashed the tag after an empty one`)
	}
	if r := c.Do("CLUSTER", "COUNTKEYSINSLOT", "16384"); r != resptest.Error("ERR Invalid slot") {
		t.Errorf("COUNTKEYSINSLOT 16384 = %v", r)
	}
	if r := c.Do("CLUSTER", "GETKEYSINSLOT", "1", "-1"); r != resptest.Error("ERR Invalid slot or number of keys") {
		t.Errorf("GETKEYSINSLOT 1 -1 = %v", r)
	}
}

// TestClusterDisabled: without cluster mode the cluster commands answer as
// Redis's do, and INFO says so.
func TestClusterDisabled(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := resptest.Dial(t, addr)
	for _, cmd := range [][]string{{"CLUSTER", "INFO"}, {"CLUSTER", "SLOTS"}, {"CLUSTER", "KEYSLOT", "k"},
		{"ASKING"}, {"READONLY"}, {"READWRITE"}, {"CUCKOO.CLUSTER", "GETCONFIG"}} {
		if r := c.Do(resptest.Args(cmd...)...); r != resptest.Error("ERR This instance has cluster support disabled") {
			t.Errorf("%v = %v", cmd, r)
		}
	}
	if r := c.Do("INFO", "cluster").(string); !strings.Contains(r, "cluster_enabled:0") {
		t.Errorf("INFO cluster = %q", r)
	}
	if r := c.Do("CF.ADD", "k", "x"); r != int64(1) {
		t.Errorf("CF.ADD = %v", r)
	}
}

// TestClusterThreeNodes: three nodes with the slots in thirds; go-redis's
// ClusterClient adds 10^4 items across 1,000 filters and finds every one;
// the CLUSTER replies and the redirects are Redis's.
func TestClusterThreeNodes(t *testing.T) {
	c := startCluster(t, 3)
	push(t, c, 1, thirds(c)...)
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c[0].addr}})
	defer cc.Close()
	const keys, items = 1000, 10_000
	for i := range items {
		if err := cc.CFAdd(ctx, fmt.Sprintf("filter:%d", i%keys), fmt.Sprintf("item:%d", i)).Err(); err != nil {
			t.Fatalf("CF.ADD %d: %v", i, err)
		}
	}
	for i := range items {
		ok, err := cc.CFExists(ctx, fmt.Sprintf("filter:%d", i%keys), fmt.Sprintf("item:%d", i)).Result()
		if err != nil || !ok {
			t.Fatalf("CF.EXISTS item %d = %v, %v", i, ok, err)
		}
	}
	// Every node holds only the keys of its slots, and all are somewhere.
	total := int64(0)
	for i, n := range c {
		cl := client(t, n.addr)
		total += cl.DBSize(ctx).Val()
		ks := cl.Keys(ctx, "*").Val()
		for _, k := range ks {
			s := cc.ClusterKeySlot(ctx, k).Val()
			if lo, hi := []int64{0, 5461, 10923}[i], []int64{5460, 10922, 16383}[i]; s < lo || s > hi {
				t.Errorf("node %d holds %s of slot %d", i, k, s)
			}
		}
		if len(ks) > 0 {
			s := strconv.FormatInt(cc.ClusterKeySlot(ctx, ks[0]).Val(), 10)
			raw := resptest.Dial(t, n.addr)
			if cnt, ok := raw.Do("CLUSTER", "COUNTKEYSINSLOT", s).(int64); !ok || cnt < 1 {
				t.Errorf("node %d: COUNTKEYSINSLOT %s = %v", i, s, cnt)
			}
			if got, ok := raw.Do("CLUSTER", "GETKEYSINSLOT", s, "100").([]any); !ok || len(got) < 1 {
				t.Errorf("node %d: GETKEYSINSLOT %s 100 = %v", i, s, got)
			}
		}
	}
	if total != keys {
		t.Errorf("%d keys on the nodes, want %d", total, keys)
	}

	raw := resptest.Dial(t, c[0].addr)
	// A key of node 1's slots: MOVED to it.
	k, slot := keyInSlotRange(t, c[0].addr, 5461, 10922)
	if r, want := raw.Do("CF.ADD", k, "x"), resptest.Error(fmt.Sprintf("MOVED %d %s", slot, c[1].addr)); r != want {
		t.Errorf("CF.ADD on the wrong node = %v, want %q", r, want)
	}
	own, _ := keyInSlotRange(t, c[0].addr, 0, 5460)
	if r := raw.Do("DEL", "{"+own+"}1", "{"+own+"}2"); r != int64(0) {
		t.Errorf("DEL of two keys of one slot, ours = %v", r)
	}
	if r := raw.Do("EXISTS", "a", "b"); r != resptest.Error("CROSSSLOT Keys in request don't hash to the same slot") {
		t.Errorf("EXISTS a b = %v", r)
	}
	if r := raw.Do("PING"); r != "PONG" {
		t.Errorf("PING (no keys) = %v", r)
	}
	// A transaction's keys must share a slot: EXEC is refused and the
	// transaction discarded otherwise.
	ownSlot := raw.Do("CLUSTER", "KEYSLOT", own).(int64)
	own2, _ := keyInSlotRange(t, c[0].addr, ownSlot+1, 5460) // another slot of node 0
	own3 := own + "{" + own + "}"
	raw.Do("MULTI")
	raw.Do("CF.ADD", own2, "x")
	if r := raw.Do("CF.ADD", own3, "x"); r != "QUEUED" {
		t.Fatalf("CF.ADD in MULTI = %v", r)
	}
	if r := raw.Do("EXEC"); r != resptest.Error("CROSSSLOT Keys in request don't hash to the same slot") {
		t.Errorf("EXEC of two slots = %v", r)
	}
	if r := raw.Do("EXEC"); r != resptest.Error("ERR EXEC without MULTI") {
		t.Errorf("EXEC after a refused EXEC = %v", r)
	}
	raw.Do("MULTI")
	if r := raw.Do("CF.ADD", k, "x"); r != resptest.Error(fmt.Sprintf("MOVED %d %s", slot, c[1].addr)) {
		t.Errorf("CF.ADD of another node's slot in MULTI = %v", r)
	}
	if r := raw.Do("EXEC"); r != resptest.Error("EXECABORT Transaction discarded because of previous errors.") {
		t.Errorf("EXEC after a redirect in MULTI = %v", r)
	}

	// CLUSTER SLOTS: three ranges, each with its node's ip, port and id.
	//lint:ignore SA1019 CLUSTER SLOTS is what go-redis and older clients read
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil || len(slots) != 3 {
		t.Fatalf("CLUSTER SLOTS = %v, %v", slots, err)
	}
	for i, s := range slots {
		want := [2]int64{[]int64{0, 5461, 10923}[i], []int64{5460, 10922, 16383}[i]}
		if int64(s.Start) != want[0] || int64(s.End) != want[1] || len(s.Nodes) != 1 ||
			s.Nodes[0].Addr != c[i].addr || s.Nodes[0].ID != c[i].id {
			t.Errorf("CLUSTER SLOTS[%d] = %+v", i, s)
		}
	}
	shards, err := client(t, c[1].addr).ClusterShards(ctx).Result()
	if err != nil || len(shards) != 3 || shards[1].Slots[0].Start != 5461 || shards[1].Nodes[0].ID != c[1].id ||
		shards[1].Nodes[0].Role != "master" || shards[1].Nodes[0].Health != "online" {
		t.Errorf("CLUSTER SHARDS = %+v, %v", shards, err)
	}
	nodes := client(t, c[1].addr).ClusterNodes(ctx).Val()
	lines := strings.Split(strings.TrimSpace(nodes), "\n")
	h, p := c[1].hostPort()
	if want := fmt.Sprintf("%s %s:%d@%d myself,master - 0 0 1 connected 5461-10922", c[1].id, h, p, p+10000); len(lines) != 3 || lines[1] != want {
		t.Errorf("CLUSTER NODES =\n%s\nwant its second line %q", nodes, want)
	}
	info := client(t, c[2].addr).ClusterInfo(ctx).Val()
	for _, want := range []string{"cluster_state:ok", "cluster_slots_assigned:16384", "cluster_slots_ok:16384",
		"cluster_known_nodes:3", "cluster_size:3", "cluster_current_epoch:1", "cluster_my_epoch:1"} {
		if !strings.Contains(info, want+"\r\n") {
			t.Errorf("CLUSTER INFO lacks %q:\n%s", want, info)
		}
	}
	if r := raw.Do("INFO", "cluster").(string); !strings.Contains(r, "cluster_enabled:1") {
		t.Errorf("INFO cluster = %q", r)
	}
	if r := raw.Do("CLUSTER", "HELP").([]any); len(r) < 5 {
		t.Errorf("CLUSTER HELP = %v", r)
	}
}

// TestClusterDown: a new cluster node owns no slots: a keyed command
// answers CLUSTERDOWN, and CLUSTER INFO says fail.
func TestClusterDown(t *testing.T) {
	c := startCluster(t, 1)
	raw := resptest.Dial(t, c[0].addr)
	if r := raw.Do("CF.ADD", "k", "x"); r != resptest.Error("CLUSTERDOWN Hash slot not served") {
		t.Errorf("CF.ADD on a node of no slots = %v", r)
	}
	info := raw.Do("CLUSTER", "INFO").(string)
	if !strings.Contains(info, "cluster_state:fail\r\n") || !strings.Contains(info, "cluster_slots_assigned:0\r\n") ||
		!strings.Contains(info, "cluster_known_nodes:1\r\n") {
		t.Errorf("CLUSTER INFO =\n%s", info)
	}
	h, p := c[0].hostPort()
	if r, want := raw.Do("CLUSTER", "NODES").(string), fmt.Sprintf("%s %s:%d@%d myself,master - 0 0 0 connected\n", c[0].id, h, p, p+10000); r != want {
		t.Errorf("CLUSTER NODES = %q, want %q", r, want)
	}
	// Half the slots: the other half is not served.
	push(t, c, 1, node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 8191}}}))
	k, slot := keyInSlotRange(t, c[0].addr, 8192, 16383)
	if r := raw.Do("CF.EXISTS", k, "x"); r != resptest.Error("CLUSTERDOWN Hash slot not served") {
		t.Errorf("CF.EXISTS of slot %d = %v", slot, r)
	}
	k, _ = keyInSlotRange(t, c[0].addr, 0, 8191)
	if r := raw.Do("CF.EXISTS", k, "x"); r != int64(0) {
		t.Errorf("CF.EXISTS of an owned slot = %v", r)
	}
}

// TestClusterMigration: a slot migrating from node 0 to node 1 answers ASK
// on node 0 for a key no longer there; node 1, importing it, serves it only
// right after ASKING, for one command.
func TestClusterMigration(t *testing.T) {
	c := startCluster(t, 2)
	k, slot := keyInSlotRange(t, c[0].addr, 0, 16383)
	gone := k + "{" + k + "}" // another key of the slot
	a0, a1 := resptest.Dial(t, c[0].addr), resptest.Dial(t, c[1].addr)
	push(t, c, 1, node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}}), node(c[1], "primary", nil))
	if r := a0.Do("CF.ADD", k, "x"); r != int64(1) {
		t.Fatalf("CF.ADD = %v", r)
	}
	push(t, c, 2,
		node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}, "migrating": map[string]string{strconv.FormatInt(slot, 10): c[1].id}}),
		node(c[1], "primary", map[string]any{"importing": map[string]string{strconv.FormatInt(slot, 10): c[0].id}}))
	if r := a0.Do("CF.EXISTS", k, "x"); r != int64(1) {
		t.Errorf("CF.EXISTS of a key still on the migrating node = %v", r)
	}
	ask := resptest.Error(fmt.Sprintf("ASK %d %s", slot, c[1].addr))
	if r := a0.Do("CF.ADD", gone, "y"); r != ask {
		t.Errorf("CF.ADD of a key not on the migrating node = %v, want %q", r, ask)
	}
	if r := a0.Do("EXISTS", k, gone); r != resptest.Error("TRYAGAIN Multiple keys request during rehashing of slot") {
		t.Errorf("EXISTS of a key here and one gone, on the migrating node = %v", r)
	}
	moved := resptest.Error(fmt.Sprintf("MOVED %d %s", slot, c[0].addr))
	if r := a1.Do("CF.ADD", gone, "y"); r != moved {
		t.Errorf("CF.ADD on the importing node without ASKING = %v, want %q", r, moved)
	}
	if r := a1.Do("ASKING"); r != "OK" {
		t.Fatalf("ASKING = %v", r)
	}
	if r := a1.Do("CF.ADD", gone, "y"); r != int64(1) {
		t.Errorf("CF.ADD after ASKING = %v", r)
	}
	if r := a1.Do("CF.EXISTS", gone, "y"); r != moved {
		t.Errorf("the second command after ASKING = %v, want %q", r, moved)
	}
	// ASKING before MULTI lasts the whole transaction.
	for _, cmd := range [][]string{{"ASKING"}, {"MULTI"}} {
		if r := a1.Do(resptest.Args(cmd...)...); r != "OK" {
			t.Fatalf("%v = %v", cmd, r)
		}
	}
	for _, cmd := range [][]string{{"CF.ADD", gone, "z"}, {"CF.EXISTS", gone, "z"}} {
		if r := a1.Do(resptest.Args(cmd...)...); r != "QUEUED" {
			t.Fatalf("%v in MULTI after ASKING = %v", cmd, r)
		}
	}
	if r := resptest.Sprint(a1.Do("EXEC")); r != "[1 1]" {
		t.Errorf("EXEC after ASKING = %v", r)
	}
	if r := a1.Do("CF.EXISTS", gone, "z"); r != moved {
		t.Errorf("the command after the transaction = %v, want %q", r, moved)
	}
	nodes := a1.Do("CLUSTER", "NODES").(string)
	if want := fmt.Sprintf("[%d-<-%s]", slot, c[0].id); !strings.Contains(nodes, want) {
		t.Errorf("CLUSTER NODES on the importing node lacks %q:\n%s", want, nodes)
	}
	nodes = a0.Do("CLUSTER", "NODES").(string)
	if want := fmt.Sprintf("[%d->-%s]", slot, c[1].id); !strings.Contains(nodes, want) {
		t.Errorf("CLUSTER NODES on the migrating node lacks %q:\n%s", want, nodes)
	}
}

// TestClusterReadonlyReplica: a replica node sends reads to its primary
// until READONLY, and writes always; READWRITE ends READONLY. With
// REPLICAOF set too, reads on the replica find the primary's writes.
func TestClusterReadonlyReplica(t *testing.T) {
	c := startCluster(t, 2)
	push(t, c, 1, node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}}),
		node(c[1], "replica", map[string]any{"primary": c[0].id}))
	r := resptest.Dial(t, c[1].addr)
	moved := resptest.Error(fmt.Sprintf("MOVED %d %s", 12182, c[0].addr))
	if got := r.Do("CF.EXISTS", "foo", "x"); got != moved {
		t.Errorf("a read on the replica = %v, want %q", got, moved)
	}
	if got := r.Do("READONLY"); got != "OK" {
		t.Fatalf("READONLY = %v", got)
	}
	if got := r.Do("CF.EXISTS", "foo", "x"); got != int64(0) {
		t.Errorf("a read on the replica after READONLY = %v", got)
	}
	if got := r.Do("CF.ADD", "foo", "x"); got != moved {
		t.Errorf("a write on the replica after READONLY = %v, want %q", got, moved)
	}
	if got := r.Do("READWRITE"); got != "OK" {
		t.Fatalf("READWRITE = %v", got)
	}
	if got := r.Do("CF.EXISTS", "foo", "x"); got != moved {
		t.Errorf("a read after READWRITE = %v, want %q", got, moved)
	}
	// With the replication itself set (REPLICAOF), a READONLY read on
	// the replica finds the primary's writes; go-redis's ClusterClient
	// with ReadOnly sends its reads there.
	ctx := context.Background()
	replicaOf(t, client(t, c[1].addr), c[0].addr)
	p := client(t, c[0].addr)
	if err := p.CFAdd(ctx, "foo", "x").Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := p.Do(ctx, "WAIT", 1, 5000).Int(); n != 1 || err != nil {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	if got := r.Do("READONLY"); got != "OK" {
		t.Fatalf("READONLY = %v", got)
	}
	if got := r.Do("CF.EXISTS", "foo", "x"); got != int64(1) {
		t.Errorf("a replicated item read on the replica after READONLY = %v", got)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c[0].addr}, ReadOnly: true})
	defer cc.Close()
	for i := range 100 {
		if err := cc.CFAdd(ctx, "bar", fmt.Sprint(i)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	p.Do(ctx, "WAIT", 1, 5000)
	for i := range 100 {
		if ok, err := cc.CFExists(ctx, "bar", fmt.Sprint(i)).Result(); !ok || err != nil {
			t.Fatalf("ClusterClient (ReadOnly) CF.EXISTS %d = %v, %v", i, ok, err)
		}
	}
	if hits, _ := strconv.Atoi(infoFields(t, client(t, c[1].addr), "stats")["keyspace_hits"]); hits < 101 {
		t.Errorf("the replica found %d keys: the ClusterClient's reads went elsewhere", hits)
	}
	//lint:ignore SA1019 CLUSTER SLOTS is what go-redis and older clients read
	slots := client(t, c[0].addr).ClusterSlots(ctx).Val()
	if len(slots) != 1 || len(slots[0].Nodes) != 2 || slots[0].Nodes[1].ID != c[1].id {
		t.Errorf("CLUSTER SLOTS = %+v", slots)
	}
	nodes := r.Do("CLUSTER", "NODES").(string)
	if !strings.Contains(nodes, fmt.Sprintf("%s %s@", c[1].id, c[1].addr)) || !strings.Contains(nodes, " myself,slave "+c[0].id+" ") {
		t.Errorf("CLUSTER NODES on the replica:\n%s", nodes)
	}
}

// TestClusterSetConfigRefusals: an older epoch, a topology for another node,
// and malformed topologies are refused and change nothing.
func TestClusterSetConfigRefusals(t *testing.T) {
	c := startCluster(t, 2)
	raw := resptest.Dial(t, c[0].addr)
	all := node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}})
	push(t, c[:1], 5, all)
	before := raw.Do("CUCKOO.CLUSTER", "GETCONFIG")
	for _, tc := range []struct{ json, want string }{
		{topoJSON(t, 4, c[0].id, all), "-ERR the topology's epoch 4 is older than this node's, 5"},
		{topoJSON(t, 6, c[1].id, all), fmt.Sprintf("-ERR the topology is for node %q; this is node %s", c[1].id, c[0].id)},
		{"{", "-ERR invalid topology JSON: unexpected EOF"},
		{`{"epoch":6,"myself":"` + c[0].id + `","nodes":[],"extra":1}`, `-ERR invalid topology JSON: json: unknown field "extra"`},
		{topoJSON(t, 6, c[0].id, all, node(c[1], "primary", map[string]any{"slots": [][2]int{{5, 5}}})),
			fmt.Sprintf("-ERR invalid topology: slot 5 owned by both %s and %s", c[0].id, c[1].id)},
		{topoJSON(t, 6, c[0].id, node(c[0], "boss", nil)), fmt.Sprintf("-ERR invalid topology: node %s: role \"boss\": want primary or replica", c[0].id)},
		{topoJSON(t, 6, c[0].id, all, node(c[1], "replica", map[string]any{"primary": "x"})),
			fmt.Sprintf("-ERR invalid topology: node %s: primary \"x\" is not a primary listed", c[1].id)},
		{topoJSON(t, 6, c[0].id, node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16384}}})),
			fmt.Sprintf("-ERR invalid topology: node %s: slot range 0-16384", c[0].id)},
		{topoJSON(t, 6, c[0].id, all, topoNode{"id": "abc", "host": "h", "port": 1, "role": "primary"}),
			`-ERR invalid topology: node 1: id "abc" is not a node id (40 hex digits)`},
	} {
		if r := raw.Do("CUCKOO.CLUSTER", "SETCONFIG", tc.json); resptest.Sprint(r) != tc.want {
			t.Errorf("SETCONFIG %s = %v, want %q", tc.json, r, tc.want)
		}
	}
	if after := raw.Do("CUCKOO.CLUSTER", "GETCONFIG"); after != before {
		t.Errorf("GETCONFIG after refusals = %v, want %v", after, before)
	}
	// The same epoch again is taken (a push repeated).
	push(t, c[:1], 5, all)
}

// TestClusterPersist: the node id and the topology survive a restart, from
// cluster.json in the data directory.
func TestClusterPersist(t *testing.T) {
	dir := t.TempDir()
	cfg := server.Config{Dir: dir, ClusterEnabled: true, Logger: quiet()}
	srv, addr := startNoCleanup(t, cfg)
	c := []clusterNode{{addr: addr, srv: srv, id: myID(t, addr)}}
	push(t, c, 7, node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 100}, {200, 16383}}}))
	conf := resptest.Dial(t, addr).Do("CUCKOO.CLUSTER", "GETCONFIG").(string)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".cluster.json.tmp-*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	_, addr2 := start(t, cfg)
	if id := myID(t, addr2); id != c[0].id {
		t.Errorf("MYID after a restart = %s, want %s", id, c[0].id)
	}
	if got := resptest.Dial(t, addr2).Do("CUCKOO.CLUSTER", "GETCONFIG"); got != conf {
		t.Errorf("GETCONFIG after a restart = %v, want %v", got, conf)
	}
	info := resptest.Dial(t, addr2).Do("CLUSTER", "INFO").(string)
	if !strings.Contains(info, "cluster_slots_assigned:16285\r\n") || !strings.Contains(info, "cluster_my_epoch:7\r\n") {
		t.Errorf("CLUSTER INFO after a restart:\n%s", info)
	}
}

// TestClusterEmulated: one node owning every slot serves go-redis's
// ClusterClient, and refuses a topology.
func TestClusterEmulated(t *testing.T) {
	_, addr := start(t, server.Config{ClusterEmulated: true})
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}})
	defer cc.Close()
	for i := range 200 {
		if err := cc.CFAdd(ctx, fmt.Sprintf("f%d", i%20), fmt.Sprint(i)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 {
		if ok, err := cc.CFExists(ctx, fmt.Sprintf("f%d", i%20), fmt.Sprint(i)).Result(); !ok || err != nil {
			t.Fatalf("CF.EXISTS %d = %v, %v", i, ok, err)
		}
	}
	//lint:ignore SA1019 CLUSTER SLOTS is what go-redis and older clients read
	slots := cc.ClusterSlots(ctx).Val()
	if len(slots) != 1 || slots[0].Start != 0 || slots[0].End != 16383 || slots[0].Nodes[0].Addr != addr {
		t.Errorf("CLUSTER SLOTS = %+v", slots)
	}
	raw := resptest.Dial(t, addr)
	if r := raw.Do("CUCKOO.CLUSTER", "SETCONFIG", "{}"); !strings.HasPrefix(resptest.Sprint(r), "-ERR this node emulates a cluster alone") {
		t.Errorf("SETCONFIG on an emulated node = %v", r)
	}
	if r := raw.Do("CONFIG", "GET", "cluster-enabled"); fmt.Sprint(r) != "[cluster-enabled yes]" {
		t.Errorf("CONFIG GET cluster-enabled = %v", r)
	}
}

// TestClusterRedisCLIFollowsMoved: redis-cli -c sent to the node that does
// not own the key's slot follows MOVED to the one that does.
func TestClusterRedisCLIFollowsMoved(t *testing.T) {
	cli := prereq.Program(t, "redis-cli")
	c := startCluster(t, 2)
	push(t, c, 1, node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 8191}}}),
		node(c[1], "primary", map[string]any{"slots": [][2]int{{8192, 16383}}}))
	k, _ := keyInSlotRange(t, c[0].addr, 8192, 16383)
	h, p, _ := net.SplitHostPort(c[0].addr)
	out, err := exec.Command(cli, "-c", "-h", h, "-p", p, "CF.ADD", k, "x").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("redis-cli -c CF.ADD = %q, %v", out, err)
	}
	if r := resptest.Dial(t, c[1].addr).Do("CF.EXISTS", k, "x"); r != int64(1) {
		t.Errorf("CF.EXISTS on the owner = %v", r)
	}
}

// FuzzClusterTopology: any bytes given to SETCONFIG's decoder and checker
// give an error or a topology, never a panic; a topology taken is taken
// again in the form GETCONFIG returns, unchanged.
func FuzzClusterTopology(f *testing.F) {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	f.Add([]byte(`{"epoch":1,"myself":"` + a + `","nodes":[{"id":"` + a + `","host":"h","port":1,"role":"primary","slots":[[0,16383]],"migrating":{"5":"` + b + `"}},` +
		`{"id":"` + b + `","host":"h","port":2,"role":"primary","importing":{"5":"` + a + `"}}]}`))
	f.Add([]byte(`{"epoch":2,"myself":"` + b + `","nodes":[{"id":"` + a + `","host":"h","port":1,"role":"primary","slots":[[0,5],[7,9]]},` +
		`{"id":"` + b + `","host":"h","port":2,"role":"replica","primary":"` + a + `"}]}`))
	f.Add([]byte(`{"epoch":-1,"myself":"x","nodes":[{"slots":[[16384,0]],"migrating":{"-1":""}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := server.CheckTopology(data)
		if err != nil {
			return
		}
		again, err := server.CheckTopology(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("a topology taken, encoded again (%s), gives %s, %v", out, again, err)
		}
	})
}

// TestKeySlotUniform: the slots of a million keys are spread evenly (a
// chi-square test over the 16384 slots, as CRC16 should give).
func TestKeySlotUniform(t *testing.T) {
	const n = 1 << 20
	var counts [16384]int
	for i := range n {
		counts[server.KeySlot(fmt.Appendf(nil, "user:%d", i))]++
	}
	exp := float64(n) / 16384
	chi := 0.0
	for _, c := range counts {
		d := float64(c) - exp
		chi += d * d / exp
	}
	// 16383 degrees of freedom: mean 16383, sd sqrt(2*16383) = 181; 6 sd.
	// Sequential keys come out more even than random ones would (14,017:
	// CRC16 is linear, so keys that differ in their last digits spread
	// over distinct slots); only too uneven a spread is an error.
	t.Logf("chi-square %.0f over 16383 degrees of freedom", chi)
	if chi > 16383+6*181 {
		t.Errorf("chi-square %.0f: slots not uniform", chi)
	}
}
