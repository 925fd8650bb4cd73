package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/prereq"
	"github.com/redis/go-redis/v9"
)

// clusterProc is one cuckoo serve --cluster-enabled process of a test;
// a test that restarts it on its dir sets cmd and log anew.
type clusterProc struct {
	cmd  *exec.Cmd
	addr string
	port string
	dir  string
	log  *syncBuf
}

// startClusterNodes starts n cuckoo serve --cluster-enabled processes on
// 127.0.0.1:0, each with a data directory of its own and args, and kills
// them (by process id) when the test ends, showing their logs if it
// failed.
func startClusterNodes(t *testing.T, bin string, n int, args ...string) []*clusterProc {
	t.Helper()
	var nodes []*clusterProc
	for range n {
		dir := t.TempDir()
		cmd, addr, log := serveProc(t, bin, append([]string{"--cluster-enabled", "--dir", dir}, args...)...)
		_, port, _ := net.SplitHostPort(addr)
		node := &clusterProc{cmd: cmd, addr: addr, port: port, dir: dir, log: log}
		nodes = append(nodes, node)
		t.Cleanup(func() {
			node.cmd.Process.Kill()
			node.cmd.Wait()
			if t.Failed() {
				t.Logf("cuckoo serve %s:\n%s", node.addr, strings.Join(node.log.lines, "\n"))
			}
		})
	}
	return nodes
}

func addrsOf(nodes []*clusterProc) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.addr)
	}
	return out
}

// clusterReportOf runs cuckoo cluster info --json through seed and decodes
// its report; code is the exit status.
func clusterReportOf(t *testing.T, seed string) (r clusterReport, code int, stderr string) {
	t.Helper()
	code, stdout, stderr := cuckoo(t, "", "cluster", "info", "--json", seed)
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("cluster info --json %s: exit %d, %v\nstdout: %s\nstderr: %s", seed, code, err, stdout, stderr)
	}
	return r, code, stderr
}

func dbsize(t *testing.T, addr string) int64 {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	n, err := c.DBSize(context.Background()).Result()
	if err != nil {
		t.Fatalf("DBSIZE on %s: %v", addr, err)
	}
	return n
}

// TestSlotRanges: the slot range helpers, parse and format round trip and
// every malformed spelling is refused with its reason.
func TestSlotRanges(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want [][2]int
		out  string // formatSlotRanges(want)
		err  string
	}{
		{in: "0-16383", want: [][2]int{{0, 16383}}, out: "0-16383"},
		{in: "5", want: [][2]int{{5, 5}}, out: "5"},
		{in: "0-5460,5462,6000-6100", want: [][2]int{{0, 5460}, {5462, 5462}, {6000, 6100}}, out: "0-5460,5462,6000-6100"},
		{in: "7,5,6", want: [][2]int{{5, 7}}, out: "5-7"},     // sorted and merged
		{in: " 1-2 , 3 ", want: [][2]int{{1, 3}}, out: "1-3"}, // spaces around parts
		{in: "16383,0", want: [][2]int{{0, 0}, {16383, 16383}}, out: "0,16383"},
		{in: "", err: "no slots given"},
		{in: "  ", err: "no slots given"},
		{in: "16384", err: `"16384": slot 16384 is out of 0..16383`},
		{in: "-1", err: `"-1": want a slot number`},
		{in: "10-5", err: `range "10-5" runs backwards`},
		{in: "1-", err: `"1-": want a slot number`},
		{in: "a", err: `"a": want a slot number`},
		{in: "+5", err: `"+5": want a slot number`},
		{in: "1-2-3", err: `"1-2-3": want a slot number`},
		{in: "1,,2", err: `"": want a slot number`},
		{in: "0-10,5", err: "slot 5 given twice"},
		{in: "0-0x10", err: "want a slot number"},
	} {
		got, err := parseSlotRanges(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseSlotRanges(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
			}
		case err != nil || !reflect.DeepEqual(got, tc.want):
			t.Errorf("parseSlotRanges(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case formatSlotRanges(got) != tc.out:
			t.Errorf("formatSlotRanges(%v) = %q, want %q", got, formatSlotRanges(got), tc.out)
		}
	}
	if s := formatSlotRanges(nil); s != "" {
		t.Errorf("formatSlotRanges(nil) = %q", s)
	}
}

// TestSplitSlots: n contiguous ranges covering 0..16383, the first
// 16384%n one slot longer.
func TestSplitSlots(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want [][2]int
	}{
		{1, [][2]int{{0, 16383}}},
		{2, [][2]int{{0, 8191}, {8192, 16383}}},
		{3, [][2]int{{0, 5461}, {5462, 10922}, {10923, 16383}}}, // 5462, 5461, 5461
		{16384, nil}, // checked below: one slot each
		{5, [][2]int{{0, 3276}, {3277, 6553}, {6554, 9830}, {9831, 13107}, {13108, 16383}}},
	} {
		got := splitSlots(tc.n)
		if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitSlots(%d) = %v, want %v", tc.n, got, tc.want)
		}
		next := 0
		for i, r := range got {
			size := r[1] - r[0] + 1
			if r[0] != next || size != 16384/tc.n+b2int(i < 16384%tc.n) {
				t.Fatalf("splitSlots(%d)[%d] = %v", tc.n, i, r)
			}
			next = r[1] + 1
		}
		if next != 16384 || countSlots(got) != 16384 {
			t.Errorf("splitSlots(%d) ends at %d, counts %d", tc.n, next, countSlots(got))
		}
	}
}

func b2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSlotSetOps: addSlots and removeSlots return normal ranges.
func TestSlotSetOps(t *testing.T) {
	a := [][2]int{{0, 10}, {20, 30}}
	if got, want := addSlots(a, [][2]int{{11, 19}, {40, 40}}), [][2]int{{0, 30}, {40, 40}}; !reflect.DeepEqual(got, want) {
		t.Errorf("addSlots = %v, want %v", got, want)
	}
	if got, want := removeSlots(a, [][2]int{{5, 25}}), [][2]int{{0, 4}, {26, 30}}; !reflect.DeepEqual(got, want) {
		t.Errorf("removeSlots = %v, want %v", got, want)
	}
	if got := removeSlots(a, a); got != nil {
		t.Errorf("removeSlots(a, a) = %v", got)
	}
}

// TestTopologyFind: a node is named by id, a unique id prefix or its
// address; anything else is an error that says why.
func TestTopologyFind(t *testing.T) {
	topo := clusterTopology{Nodes: []clusterNode{
		{ID: strings.Repeat("ab", 20), Host: "10.0.0.1", Port: 7000, Role: rolePrimary},
		{ID: "abcd" + strings.Repeat("0", 36), Host: "10.0.0.2", Port: 7000, Role: rolePrimary},
		{ID: strings.Repeat("1", 40), Host: "10.0.0.3", Port: 7001, Role: roleReplica, Primary: strings.Repeat("ab", 20)},
	}}
	for _, tc := range []struct {
		ref  string
		want int // index, or -1
		err  string
	}{
		{ref: strings.Repeat("ab", 20), want: 0},
		{ref: "abab", want: 0},
		{ref: "ABCD", want: 1},
		{ref: "1", want: 2},
		{ref: "10.0.0.3:7001", want: 2},
		{ref: "ab", want: -1, err: `"ab" is the start of more than one node id (abababab, abcd0000): give more of it`},
		{ref: "ff", want: -1, err: `no node of the cluster has id "ff"`},
		{ref: "", want: -1, err: `no node of the cluster has id ""`},
		{ref: "10.0.0.3:7000", want: -1, err: "no node of the cluster is at 10.0.0.3:7000 (the cluster's addresses: 10.0.0.1:7000 10.0.0.2:7000 10.0.0.3:7001)"},
	} {
		n, err := topo.find(tc.ref)
		switch {
		case tc.want < 0:
			if err == nil || err.Error() != tc.err {
				t.Errorf("find(%q) = %v, %v; want error %q", tc.ref, n, err, tc.err)
			}
		case err != nil || n != &topo.Nodes[tc.want]:
			t.Errorf("find(%q) = %v, %v; want node %d", tc.ref, n, err, tc.want)
		}
	}
	if u := topo.uncovered(); !reflect.DeepEqual(u, [][2]int{{0, 16383}}) {
		t.Errorf("uncovered with no slots = %v", u)
	}
	topo.Nodes[0].Slots = [][2]int{{0, 99}, {200, 16383}}
	if u := topo.uncovered(); !reflect.DeepEqual(u, [][2]int{{100, 199}}) {
		t.Errorf("uncovered = %v", u)
	}
}

// TestParseNodeAddr: host:port with a port in 1..65535.
func TestParseNodeAddr(t *testing.T) {
	for _, tc := range []struct {
		in, host string
		port     int
	}{
		{"127.0.0.1:7000", "127.0.0.1", 7000},
		{"[::1]:1", "::1", 1},
		{"node-a:65535", "node-a", 65535},
		{"127.0.0.1", "", 0},
		{"127.0.0.1:0", "", 0},
		{"127.0.0.1:65536", "", 0},
		{":7000", "", 0},
		{"h:x", "", 0},
	} {
		h, p, err := parseNodeAddr(tc.in)
		if h != tc.host || p != tc.port || (err == nil) != (tc.port != 0) {
			t.Errorf("parseNodeAddr(%q) = %q, %d, %v", tc.in, h, p, err)
		}
	}
}

// TestPlanCluster: create's placement. Primaries come first, with an even
// split of the slots; each replica goes to a primary with the fewest
// replicas, on another host if one is left, round-robin otherwise.
func TestPlanCluster(t *testing.T) {
	node := func(host string, i int) plannedNode {
		return plannedNode{host: host, port: 7000 + i, id: fmt.Sprintf("%040d", i)}
	}
	// Replica i's primary, by index in the nodes given.
	for _, tc := range []struct {
		name     string
		hosts    []string
		replicas int
		want     []int // each replica's primary
	}{
		{"loopback", []string{"h", "h", "h", "h", "h", "h"}, 1, []int{0, 1, 2}},
		{"loopback/2 each", []string{"h", "h", "h", "h", "h", "h"}, 2, []int{0, 1, 0, 1}},
		// Replica 3 on host a passes primary 0 on a for 1 on b; replica 4
		// on b takes 2 on c, the next of the fewest; replica 5 the one left.
		{"three hosts", []string{"a", "b", "c", "a", "b", "c"}, 1, []int{1, 2, 0}},
		{"two hosts", []string{"a", "a", "b", "b", "a", "a", "b", "b"}, 1, []int{2, 3, 0, 1}},
		{"no replicas", []string{"a", "b", "c"}, 0, nil},
		{"one primary", []string{"a", "a"}, 1, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []plannedNode
			for i, h := range tc.hosts {
				nodes = append(nodes, node(h, i))
			}
			topo := planCluster(nodes, tc.replicas)
			np := len(nodes) / (tc.replicas + 1)
			if len(topo.Nodes) != len(nodes) {
				t.Fatalf("%d nodes, want %d", len(topo.Nodes), len(nodes))
			}
			var got []int
			for i, n := range topo.Nodes {
				if n.ID != nodes[i].id || n.Port != nodes[i].port {
					t.Errorf("node %d is %s:%d, want the order given", i, n.ID, n.Port)
				}
				if i < np {
					if n.Role != rolePrimary || !reflect.DeepEqual(n.Slots, [][2]int{splitSlots(np)[i]}) {
						t.Errorf("primary %d: %+v", i, n)
					}
					continue
				}
				if n.Role != roleReplica || len(n.Slots) > 0 {
					t.Errorf("replica %d: %+v", i, n)
				}
				p, _ := strconv.Atoi(strings.TrimLeft(n.Primary, "0") + "0")
				got = append(got, p/10)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("replicas' primaries = %v, want %v", got, tc.want)
			}
			if u := topo.uncovered(); len(u) > 0 {
				t.Errorf("uncovered: %v", u)
			}
		})
	}
}

// TestClusterCreate: six nodes made a cluster of three primaries with a
// replica each; go-redis's ClusterClient stores 10^5 items in 1,000
// filters across them and finds every one, on the primaries and (READONLY)
// on the replicas; cluster info reports it all.
func TestClusterCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs six servers; skipped with -short")
	}
	bin := cuckooBin(t)
	ctx := context.Background()
	nodes := startClusterNodes(t, bin, 6)
	addrs := addrsOf(nodes)
	code, stdout, stderr := cuckoo(t, "", append([]string{"cluster", "create", "--replicas", "1"}, addrs...)...)
	if code != 0 {
		t.Fatalf("cluster create: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Logf("cluster create %s:\n%s", addrs, stdout)
	for _, a := range addrs {
		if !strings.Contains(stdout, a) {
			t.Errorf("cluster create's output does not name %s", a)
		}
	}
	for _, want := range []string{"created a cluster of 3 primaries and 3 replicas, epoch 1", "0-5461  ", "5462-10922", "10923-16383"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("cluster create's output lacks %q", want)
		}
	}

	// 10^5 items, 100 in each of 1,000 filters, in pipelined batches.
	const nKeys, perKey = 1000, 100
	items := func(k int) []any {
		out := make([]any, perKey)
		for i := range out {
			out[i] = fmt.Sprintf("item-%d-%d", k, i)
		}
		return out
	}
	key := func(k int) string { return fmt.Sprintf("filter-%d", k) }
	// A slice of its own: go-redis keeps Addrs and appends the nodes it
	// learns of to it, which would overwrite addrs[1:] through addrs[:1].
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addrs[0]}})
	defer cc.Close()
	for batch := 0; batch < nKeys; batch += 100 {
		pipe := cc.Pipeline()
		for k := batch; k < batch+100; k++ {
			pipe.CFInsert(ctx, key(k), nil, items(k)...)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("CF.INSERT batch %d: %v", batch, err)
		}
	}
	checkAll := func(cc *redis.ClusterClient, where string) {
		t.Helper()
		pipe := cc.Pipeline()
		var cmds []*redis.BoolSliceCmd
		for k := range nKeys {
			cmds = append(cmds, pipe.CFMExists(ctx, key(k), items(k)...))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("CF.MEXISTS on the %s: %v", where, err)
		}
		for k, c := range cmds {
			for i, ok := range c.Val() {
				if !ok {
					t.Fatalf("CF.MEXISTS on the %s: %s item %d absent", where, key(k), i)
				}
			}
		}
	}
	checkAll(cc, "primaries")

	// Each primary holds its share of the keys: about a third. The count
	// is binomial (n = 1000, p = 5461/16384 or so): mean 333, standard
	// deviation 15; 250..420 is over 5.5 deviations either side, a false
	// alarm once in tens of millions of runs.
	r, code, stderr := clusterReportOf(t, addrs[3])
	if code != 0 {
		t.Fatalf("cluster info: exit %d, problems %q, %s", code, r.Problems, stderr)
	}
	if len(r.Nodes) != 6 || r.SlotsCovered != 16384 || len(r.Uncovered) != 0 || len(r.Problems) != 0 || r.Epoch != 1 {
		t.Errorf("cluster info: %d nodes, %d slots covered, uncovered %v, problems %q, epoch %d", len(r.Nodes), r.SlotsCovered, r.Uncovered, r.Problems, r.Epoch)
	}
	primaryOf := map[string]string{} // a replica's address to its primary's
	addrOf := map[string]string{}
	for _, n := range r.Nodes {
		addrOf[n.ID] = n.Address
	}
	sum := int64(0)
	for _, n := range r.Nodes {
		if n.Role == roleReplica {
			primaryOf[n.Address] = addrOf[n.Primary]
			if n.Link != "up" {
				t.Errorf("replica %s: link %q", n.Address, n.Link)
			}
			continue
		}
		keys := dbsize(t, n.Address)
		t.Logf("primary %s: slots %s, %d keys", n.Address, formatSlotRanges(n.Slots), keys)
		if keys < 250 || keys > 420 {
			t.Errorf("primary %s holds %d of the %d keys; want 250..420", n.Address, keys, nKeys)
		}
		if n.Keys == nil {
			t.Errorf("cluster info gives primary %s no key count", n.Address)
		} else {
			sum += *n.Keys
		}
		if n.Items != nil && *n.Items != keys*perKey {
			t.Errorf("cluster info: primary %s holds %d items, want %d", n.Address, *n.Items, keys*perKey)
		}
	}
	if sum != nKeys {
		t.Errorf("cluster info: the primaries' keys sum to %d, want %d", sum, nKeys)
	}
	if len(primaryOf) != 3 {
		t.Fatalf("replicas and their primaries: %v", primaryOf)
	}
	// Each replica catches up with its primary: the whole stream, then the
	// same key count.
	for rep, prim := range primaryOf {
		pc := redis.NewClient(&redis.Options{Addr: prim})
		rc := redis.NewClient(&redis.Options{Addr: rep})
		waitUntil(t, "replica "+rep+" to catch up with "+prim, 20*time.Second, func() bool {
			off := infoField(pc, "replication", "master_repl_offset")
			return off != "" && infoField(rc, "replication", "slave_repl_offset") == off && dbsize(t, rep) == dbsize(t, prim)
		})
		pc.Close()
		rc.Close()
	}

	// The text report names every node and says all is covered.
	code, stdout, _ = cuckoo(t, "", "cluster", "info", addrs[0])
	if code != 0 {
		t.Errorf("cluster info: exit %d\n%s", code, stdout)
	}
	for _, a := range addrs {
		if !strings.Contains(stdout, a) {
			t.Errorf("cluster info's output does not name %s:\n%s", a, stdout)
		}
	}
	if !strings.Contains(stdout, "all 16384 slots are covered") || !strings.Contains(stdout, "all is well") {
		t.Errorf("cluster info's output:\n%s", stdout)
	}

	// READONLY: a ClusterClient that reads from replicas finds every item
	// there (each lookup is a keyspace hit on the node that serves it).
	hits := func(addr string) int64 {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		n, _ := strconv.ParseInt(infoField(c, "stats", "keyspace_hits"), 10, 64)
		return n
	}
	before := map[string]int64{}
	for rep := range primaryOf {
		before[rep] = hits(rep)
	}
	ro := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addrs[0]}, ReadOnly: true})
	defer ro.Close()
	checkAll(ro, "replicas")
	for rep := range primaryOf {
		if d := hits(rep) - before[rep]; d <= 0 {
			t.Errorf("replica %s served no read of the ReadOnly client", rep)
		} else {
			t.Logf("replica %s served %d lookups", rep, d)
		}
	}

	// The nodes are in a cluster now: create again changes nothing, and
	// add-node refuses a node already in.
	code, _, stderr = cuckoo(t, "", append([]string{"cluster", "create", "--replicas", "1"}, addrs...)...)
	if code != 2 || !strings.Contains(stderr, "node "+addrs[0]+" is already in a cluster (epoch 1, 6 nodes): only a new node can join one; no node was changed") {
		t.Errorf("create on a cluster's nodes: exit %d, %s", code, stderr)
	}
	code, _, stderr = cuckoo(t, "", "cluster", "add-node", addrs[4], addrs[0])
	if code != 2 || !strings.Contains(stderr, "node "+addrs[4]+" is already in the cluster, as replica") {
		t.Errorf("add-node of a node of the cluster: exit %d, %s", code, stderr)
	}
	if r, _, _ := clusterReportOf(t, addrs[0]); r.Epoch != 1 || len(r.Problems) != 0 {
		t.Errorf("after the refusals: epoch %d, problems %q", r.Epoch, r.Problems)
	}
}

// TestClusterRedisCLI: redis-cli -c, unchanged, follows MOVED between the
// nodes of a cluster made by create: CF.ADD and CF.EXISTS sent to a node
// that does not own the key's slot reach the one that does.
func TestClusterRedisCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three servers; skipped with -short")
	}
	cli := prereq.Program(t, "redis-cli")
	bin := cuckooBin(t)
	ctx := context.Background()
	nodes := startClusterNodes(t, bin, 3)
	if code, stdout, stderr := cuckoo(t, "", append([]string{"cluster", "create"}, addrsOf(nodes)...)...); code != 0 {
		t.Fatalf("cluster create: exit %d\n%s%s", code, stdout, stderr)
	}
	// A key of each node's slots: create gave node i the i-th third.
	c := redis.NewClient(&redis.Options{Addr: nodes[0].addr})
	defer c.Close()
	keyOf := make([]string, len(nodes))
	for i, found := 0, 0; found < len(nodes); i++ {
		k := fmt.Sprintf("key-%d", i)
		slot, err := c.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if owner := int(slot) * len(nodes) / 16384; owner < len(nodes) && keyOf[owner] == "" && slot != 5461 && slot != 10922 {
			keyOf[owner] = k
			found++
		}
	}
	redisCLI := func(args ...string) (string, error) {
		out, err := exec.Command(cli, args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for owner, k := range keyOf {
		// Asked of every node, the owner and two that are not.
		for i, n := range nodes {
			item := fmt.Sprintf("item-from-%d", i)
			if out, err := redisCLI("-c", "-p", n.port, "CF.ADD", k, item); err != nil || out != "1" {
				t.Errorf("redis-cli -c -p %s (node %d) CF.ADD %s (node %d's): %q, %v", n.port, i, k, owner, out, err)
			}
			if out, err := redisCLI("-c", "-p", n.port, "CF.EXISTS", k, item); err != nil || out != "1" {
				t.Errorf("redis-cli -c -p %s (node %d) CF.EXISTS %s (node %d's): %q, %v", n.port, i, k, owner, out, err)
			}
		}
		// The items are on the owner, and without -c another node
		// answers MOVED to it.
		oc := redis.NewClient(&redis.Options{Addr: nodes[owner].addr})
		if ok, err := oc.CFMExists(ctx, k, "item-from-0", "item-from-1", "item-from-2").Result(); err != nil || !reflect.DeepEqual(ok, []bool{true, true, true}) {
			t.Errorf("CF.MEXISTS %s on its owner, node %d: %v, %v", k, owner, ok, err)
		}
		oc.Close()
		other := nodes[(owner+1)%len(nodes)]
		if out, _ := redisCLI("-p", other.port, "CF.EXISTS", k, "item-from-0"); !strings.Contains(out, "MOVED") || !strings.HasSuffix(out, nodes[owner].addr) {
			t.Errorf("redis-cli without -c, CF.EXISTS %s on node %d: %q; want MOVED to %s", k, (owner+1)%len(nodes), out, nodes[owner].addr)
		}
	}
}

// TestClusterAddNode: a one-node cluster grows by a primary owning no
// slots and two replicas (one named by address, one by an id prefix);
// clients see them all; add-node refuses what it must; cluster info
// reports a node that goes away and exits 2.
func TestClusterAddNode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs five servers; skipped with -short")
	}
	bin := cuckooBin(t)
	ctx := context.Background()
	nodes := startClusterNodes(t, bin, 5)
	first, spare := nodes[0].addr, nodes[4].addr
	if code, stdout, stderr := cuckoo(t, "", "cluster", "create", first); code != 0 {
		t.Fatalf("cluster create: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := cuckoo(t, "", "cluster", "add-node", nodes[1].addr, first)
	if code != 0 || !strings.Contains(stdout, "as a primary, epoch 2") {
		t.Fatalf("add-node as a primary: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = cuckoo(t, "", "cluster", "add-node", "--replica-of", first, nodes[2].addr, nodes[1].addr)
	if code != 0 || !strings.Contains(stdout, "as a replica of") || !strings.Contains(stdout, "("+first+"), epoch 3") {
		t.Fatalf("add-node --replica-of %s: exit %d\n%s%s", first, code, stdout, stderr)
	}
	r, code, _ := clusterReportOf(t, first)
	if code != 0 {
		t.Fatalf("cluster info: exit %d, problems %q", code, r.Problems)
	}
	var second string // the id of the primary with no slots
	for _, n := range r.Nodes {
		if n.Address == nodes[1].addr {
			second = n.ID
		}
	}
	code, stdout, stderr = cuckoo(t, "", "cluster", "add-node", "--replica-of", second[:6], nodes[3].addr, first)
	if code != 0 || !strings.Contains(stdout, "as a replica of "+second[:8]+" ("+nodes[1].addr+"), epoch 4") {
		t.Fatalf("add-node --replica-of %s: exit %d\n%s%s", second[:6], code, stdout, stderr)
	}
	r, code, _ = clusterReportOf(t, nodes[3].addr)
	if code != 0 || len(r.Nodes) != 4 || r.Epoch != 4 {
		t.Fatalf("cluster info: exit %d, %d nodes, epoch %d, problems %q", code, len(r.Nodes), r.Epoch, r.Problems)
	}
	want := []struct{ addr, role, primary string }{ // each primary, then its replicas
		{first, rolePrimary, ""}, {nodes[2].addr, roleReplica, first}, {nodes[1].addr, rolePrimary, ""}, {nodes[3].addr, roleReplica, nodes[1].addr},
	}
	addrOf := map[string]string{}
	for _, n := range r.Nodes {
		addrOf[n.ID] = n.Address
	}
	for i, n := range r.Nodes {
		w := want[i]
		if n.Address != w.addr || n.Role != w.role || addrOf[n.Primary] != w.primary || *n.Epoch != 4 {
			t.Errorf("node %d: %+v; want %+v", i, n, w)
		}
		if n.Role == roleReplica && n.Link != "up" {
			t.Errorf("replica %s: link %q", n.Address, n.Link)
		}
	}
	if r.Nodes[0].SlotCount != 16384 || r.Nodes[2].SlotCount != 0 {
		t.Errorf("slots: %d and %d", r.Nodes[0].SlotCount, r.Nodes[2].SlotCount)
	}
	// Clients learn the new nodes: CLUSTER SHARDS through the new primary
	// lists both shards, and a cluster client works through it.
	c := redis.NewClient(&redis.Options{Addr: nodes[1].addr})
	shards, err := c.ClusterShards(ctx).Result()
	c.Close()
	if err != nil || len(shards) != 2 {
		t.Errorf("CLUSTER SHARDS on the new primary: %v, %v", shards, err)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[1].addr}})
	if err := cc.CFAdd(ctx, "k", "x").Err(); err != nil {
		t.Errorf("ClusterClient CF.ADD through the new primary: %v", err)
	}
	cc.Close()

	// Refusals, each changing nothing.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{nodes[3].addr, first}, "cluster add-node: node " + nodes[3].addr + " is already in the cluster, as replica"},
		{[]string{"--replica-of", "ffff", spare, first}, `cluster add-node: --replica-of: no node of the cluster has id "ffff"; no node was changed`},
		{[]string{"--replica-of", "127.0.0.1:1", spare, first}, "cluster add-node: --replica-of: no node of the cluster is at 127.0.0.1:1"},
		{[]string{"--replica-of", nodes[2].addr, spare, first}, "cluster add-node: --replica-of " + nodes[2].addr + ": node "},
		{[]string{spare, "127.0.0.1:" + strconv.Itoa(freePort(t))}, "is unreachable"},
		{[]string{"127.0.0.1:" + strconv.Itoa(freePort(t)), first}, "is unreachable"},
		{[]string{spare}, "cluster add-node: missing EXISTING_HOST:PORT"},
		{[]string{spare, "nohost"}, `cluster add-node: node address "nohost": want host:port`},
		{[]string{"nohost", first}, `cluster add-node: node address "nohost": want host:port`},
	} {
		code, _, stderr := cuckoo(t, "", append([]string{"cluster", "add-node"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("add-node %q: exit %d, %s; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if r, code, _ := clusterReportOf(t, first); code != 0 || r.Epoch != 4 || len(r.Nodes) != 4 {
		t.Errorf("after the refusals: exit %d, epoch %d, %d nodes", code, r.Epoch, len(r.Nodes))
	}

	// A node goes away: info still reports the others, names it, exits 2;
	// add-node refuses to push a topology it could not reach.
	nodes[3].cmd.Process.Kill()
	nodes[3].cmd.Wait()
	r, code, stderr = clusterReportOf(t, first)
	if code != 2 || !strings.Contains(stderr, "cluster info: 1 of 4 nodes is unreachable") {
		t.Errorf("cluster info with a node down: exit %d, %s", code, stderr)
	}
	for _, n := range r.Nodes {
		down := n.Address == nodes[3].addr
		if down != (n.Error != "") || down != (n.Keys == nil) {
			t.Errorf("node %s: error %q, keys %v", n.Address, n.Error, n.Keys)
		}
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], nodes[3].addr+" is unreachable") {
		t.Errorf("problems: %q", r.Problems)
	}
	code, stdout, _ = cuckoo(t, "", "cluster", "info", first)
	if code != 2 || !strings.Contains(stdout, "unreachable") || !strings.Contains(stdout, "problem: node "+nodes[3].addr+" is unreachable") {
		t.Errorf("cluster info (text) with a node down: exit %d\n%s", code, stdout)
	}
	code, _, stderr = cuckoo(t, "", "cluster", "add-node", spare, first)
	if code != 2 || !strings.Contains(stderr, "1 of the cluster's 4 nodes is unreachable (above): the new topology must reach every node; no node was changed") {
		t.Errorf("add-node with a node down: exit %d, %s", code, stderr)
	}
}

// TestClusterUsage: the cluster command's usage errors list the
// subcommands, exit 2, and reach no node.
func TestClusterUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "cuckoo: cluster: missing subcommand\nusage: cuckoo cluster SUBCOMMAND"},
		{[]string{"frobnicate"}, `cuckoo: cluster: unknown subcommand "frobnicate"`},
		{[]string{"create"}, "cuckoo: cluster create: missing HOST:PORT\nusage: cuckoo cluster create [--replicas N]"},
		{[]string{"create", "--replicas", "1", "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, "cluster create: 3 nodes are not a multiple of --replicas 1 plus 1: each primary needs 1 replica"},
		{[]string{"create", "--replicas", "2", "127.0.0.1:1"}, "cluster create: 1 node is not a multiple of --replicas 2 plus 1: each primary needs 2 replicas"},
		{[]string{"create", "--replicas", "-1", "127.0.0.1:1"}, `cluster create: invalid value "-1" for flag -replicas: out of range`},
		{[]string{"create", "127.0.0.1"}, `cluster create: node address "127.0.0.1": want host:port`},
		{[]string{"create", "127.0.0.1:99999"}, `cluster create: node address "127.0.0.1:99999": want host:port with a port in 1..65535`},
		{[]string{"create", "127.0.0.1:1", "--replicas", "1"}, "cluster create: flag --replicas after the positional arguments: flags go first"},
		{[]string{"info"}, "cuckoo: cluster info: missing HOST:PORT"},
		{[]string{"info", "127.0.0.1:1", "127.0.0.1:2"}, `cluster info: unexpected argument "127.0.0.1:2"`},
		{[]string{"info", "x"}, `cluster info: node address "x": want host:port`},
		{[]string{"add-node", "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, `cluster add-node: unexpected argument "127.0.0.1:3"`},
		{[]string{"info", "--bogus", "127.0.0.1:1"}, "cluster info: flag provided but not defined: -bogus"},
	} {
		code, stdout, stderr := cuckoo(t, "", append([]string{"cluster"}, tc.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("cuckoo cluster %q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
		// A wrong subcommand lists them all; a subcommand's own usage
		// error gives its synopsis (above).
		if (tc.args == nil || tc.args[0] == "frobnicate") && !strings.Contains(stderr, "Subcommands:\n  cuckoo cluster create") {
			t.Errorf("cuckoo cluster %q: the usage error does not list the subcommands: %s", tc.args, stderr)
		}
	}
	for _, args := range [][]string{{"cluster", "-h"}, {"cluster", "help"}, {"help", "cluster"}} {
		code, stdout, _ := cuckoo(t, "", args...)
		if code != 0 || !strings.HasPrefix(stdout, "usage: cuckoo cluster SUBCOMMAND") || !strings.Contains(stdout, "cuckoo cluster add-node") {
			t.Errorf("cuckoo %q: exit %d\n%s", args, code, stdout)
		}
	}
	for _, s := range clusterSubcommands {
		sub := s.name
		for _, args := range [][]string{{"cluster", sub, "-h"}, {"cluster", "help", sub}} {
			code, stdout, _ := cuckoo(t, "", args...)
			if code != 0 || !strings.HasPrefix(stdout, "usage: cuckoo cluster "+sub+" ") || !strings.Contains(stdout, "-password") {
				t.Errorf("cuckoo %q: exit %d\n%s", args, code, stdout)
			}
		}
	}
}

// TestClusterRefusals: create refuses nodes it cannot make a cluster of,
// naming the node and why, and changes none; info refuses a seed it cannot
// read and exits 1 on a cluster with problems; a password is taken from
// --password or REDISCLI_AUTH.
func TestClusterRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs servers; skipped with -short")
	}
	bin := cuckooBin(t)
	ctx := context.Background()
	nodes := startClusterNodes(t, bin, 2)
	fresh, other := nodes[0].addr, nodes[1].addr
	plainCmd, plain, _ := serveProc(t, bin, "--dir", "")
	t.Cleanup(func() { plainCmd.Process.Kill(); plainCmd.Wait() })
	// A node that holds a key: written without cluster mode, restarted
	// with it.
	dir := t.TempDir()
	cmd, addr, _ := serveProc(t, bin, "--dir", dir)
	c := redis.NewClient(&redis.Options{Addr: addr})
	if err := c.CFAdd(ctx, "k", "x").Err(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	cmd.Process.Kill()
	cmd.Wait()
	fullCmd, full, _ := serveProc(t, bin, "--dir", dir, "--cluster-enabled")
	t.Cleanup(func() { fullCmd.Process.Kill(); fullCmd.Wait() })
	// A node that replicates another.
	_, freshPort, _ := net.SplitHostPort(fresh)
	replica := startClusterNodes(t, bin, 1, "--replicaof", "127.0.0.1 "+freshPort)[0].addr
	down := "127.0.0.1:" + strconv.Itoa(freePort(t))

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{plain}, "cluster create: node " + plain + " is not in cluster mode (start it with cuckoo serve --cluster-enabled); no node was changed"},
		{[]string{fresh, plain}, "node " + plain + " is not in cluster mode"},
		{[]string{fresh, down}, "cluster create: node " + down + " is unreachable: dial tcp " + down},
		{[]string{fresh, full}, "cluster create: node " + full + " holds 1 key: only an empty node can join a cluster; no node was changed"},
		{[]string{replica, other}, "cluster create: node " + replica + " is a replica of 127.0.0.1:" + freshPort + ": send it REPLICAOF NO ONE first; no node was changed"},
		{[]string{fresh, "localhost:" + freshPort}, "cluster create: " + fresh + " and localhost:" + freshPort + " are the same node"},
	} {
		code, stdout, stderr := cuckoo(t, "", append([]string{"cluster", "create"}, tc.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("cluster create %q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	for _, a := range []string{fresh, other} {
		c := redis.NewClient(&redis.Options{Addr: a})
		if info := c.ClusterInfo(ctx).Val(); !strings.Contains(info, "cluster_current_epoch:0\r\n") || !strings.Contains(info, "cluster_known_nodes:1\r\n") {
			t.Errorf("node %s changed by a refused create:\n%s", a, info)
		}
		c.Close()
	}

	// info: a seed it cannot read.
	for _, tc := range []struct{ seed, want string }{
		{down, "cuckoo: cluster info: node " + down + " is unreachable: dial tcp"},
		{plain, "cuckoo: cluster info: node " + plain + " is not in cluster mode"},
		{fresh, "cuckoo: cluster info: node " + fresh + " is in no cluster yet (its topology lists no nodes): see cuckoo cluster create"},
	} {
		code, stdout, stderr := cuckoo(t, "", "cluster", "info", tc.seed)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("cluster info %s: exit %d, stdout %q, stderr %q; want 2 and %q", tc.seed, code, stdout, stderr, tc.want)
		}
	}

	// info on a cluster with problems, set by hand: fresh owns slots 0-99
	// and migrates slot 5 to other, which imports it but was never told
	// (its epoch is 0). Exit 1, each problem listed.
	ids := map[string]string{}
	for _, a := range []string{fresh, other} {
		c := redis.NewClient(&redis.Options{Addr: a})
		ids[a] = c.ClusterMyID(ctx).Val()
		c.Close()
	}
	host, port, _ := parseNodeAddr(fresh)
	ohost, oport, _ := parseNodeAddr(other)
	topo := clusterTopology{Epoch: 7, Myself: ids[fresh], Nodes: []clusterNode{
		{ID: ids[fresh], Host: host, Port: port, Role: rolePrimary, Slots: [][2]int{{0, 99}}, Migrating: map[int]string{5: ids[other]}},
		{ID: ids[other], Host: ohost, Port: oport, Role: rolePrimary, Importing: map[int]string{5: ids[fresh]}},
	}}
	b, _ := json.Marshal(topo)
	c = redis.NewClient(&redis.Options{Addr: fresh})
	if err := c.Do(ctx, "CUCKOO.CLUSTER", "SETCONFIG", string(b)).Err(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	r, code, _ := clusterReportOf(t, fresh)
	wantProblems := []string{
		"node " + shortID(ids[other]) + " (" + other + ") has epoch 0, the seed 7",
		"node " + shortID(ids[fresh]) + " (" + fresh + "): slot 5 is migrating to " + shortID(ids[other]) + " (" + other + ")",
		"node " + shortID(ids[other]) + " (" + other + "): slot 5 is importing from " + shortID(ids[fresh]) + " (" + fresh + ")",
		"16284 of 16384 slots have no owner: 100-16383",
	}
	if code != 1 || !reflect.DeepEqual(r.Problems, wantProblems) || r.SlotsCovered != 100 || len(r.OpenSlots) != 2 {
		t.Errorf("cluster info on a cluster with problems: exit %d, covered %d, open %v, problems:\n%s\nwant:\n%s",
			code, r.SlotsCovered, r.OpenSlots, strings.Join(r.Problems, "\n"), strings.Join(wantProblems, "\n"))
	}
	code, stdout, stderr := cuckoo(t, "", "cluster", "info", fresh)
	if code != 1 || stderr != "" || !strings.Contains(stdout, "problem: 16284 of 16384 slots have no owner: 100-16383") || strings.Contains(stdout, "all is well") {
		t.Errorf("cluster info (text) on a cluster with problems: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	// A second node of the same epoch but another topology.
	topo.Myself = ids[other]
	topo.Nodes[0].Slots = [][2]int{{0, 98}}
	b, _ = json.Marshal(topo)
	c = redis.NewClient(&redis.Options{Addr: other})
	if err := c.Do(ctx, "CUCKOO.CLUSTER", "SETCONFIG", string(b)).Err(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if r, code, _ := clusterReportOf(t, fresh); code != 1 || len(r.Problems) == 0 || r.Problems[0] != "node "+shortID(ids[other])+" ("+other+") has another topology of the same epoch, 7" {
		t.Errorf("cluster info with two topologies of one epoch: exit %d, problems %q", code, r.Problems)
	}

	// A password: refused without it, taken from --password or from
	// REDISCLI_AUTH.
	locked := startClusterNodes(t, bin, 1, "--requirepass", "sesame")[0].addr
	code, _, stderr = cuckoo(t, "", "cluster", "create", locked)
	if code != 2 || !strings.Contains(stderr, "node "+locked+": NOAUTH") || !strings.Contains(stderr, "(give --user and --password, or REDISCLI_AUTH)") {
		t.Errorf("create without the password: exit %d, %s", code, stderr)
	}
	code, _, stderr = cuckoo(t, "", "cluster", "create", "--password", "wrong", locked)
	if code != 2 || !strings.Contains(stderr, "WRONGPASS") {
		t.Errorf("create with a wrong password: exit %d, %s", code, stderr)
	}
	t.Setenv("REDISCLI_AUTH", "sesame")
	if code, stdout, stderr := cuckoo(t, "", "cluster", "create", locked); code != 0 {
		t.Errorf("create with REDISCLI_AUTH: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := cuckoo(t, "", "cluster", "info", "--user", "default", "--password", "wrong", locked); code != 2 || !strings.Contains(stderr, "WRONGPASS") {
		t.Errorf("info with --password wrong, REDISCLI_AUTH right: exit %d, %s; want the flag to win", code, stderr)
	}
	if code, stdout, stderr := cuckoo(t, "", "cluster", "info", locked); code != 0 || !strings.Contains(stdout, "all is well") {
		t.Errorf("info with REDISCLI_AUTH: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestClusterPush: push, replicate and waitReady, the steps every
// subcommand ends with, on what makes them fail: a node refusing half-way
// (the error names it and the nodes already set), a node unreachable or
// not the one listed (nothing changed), a replica that never connects.
func TestClusterPush(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three servers; skipped with -short")
	}
	bin := cuckooBin(t)
	ctx := context.Background()
	nodes := startClusterNodes(t, bin, 2)
	// An emulated node refuses every topology: its own is fixed.
	emu := startClusterNodes(t, bin, 1, "--cluster-emulated")[0]
	a := &clusterAdmin{}
	defer a.close()
	var topo clusterTopology
	for _, n := range append(nodes, emu) {
		st, err := a.status(ctx, n.addr)
		if err != nil {
			t.Fatal(err)
		}
		host, port, _ := parseNodeAddr(n.addr)
		topo.Nodes = append(topo.Nodes, clusterNode{ID: st.ID, Host: host, Port: port, Role: rolePrimary})
	}
	topo.Nodes[0].Slots = [][2]int{{0, 16383}}
	A, B, E := &topo.Nodes[0], &topo.Nodes[1], &topo.Nodes[2]
	epochOf := func(n *clusterNode) int64 {
		st, err := a.status(ctx, n.addr())
		if err != nil {
			t.Fatal(err)
		}
		return st.Topo.Epoch
	}

	epoch, err := a.push(ctx, topo, []string{A.ID, B.ID, E.ID})
	want := fmt.Sprintf("node %s refused the topology of epoch 1: ERR this node emulates a cluster alone (--cluster-emulated): its topology is fixed (already set on %s, %s)", E.name(), A.name(), B.name())
	if err == nil || err.Error() != want {
		t.Errorf("push with a node that refuses: %d, %v; want %q", epoch, err, want)
	}
	if epochOf(A) != 1 || epochOf(B) != 1 {
		t.Errorf("the nodes before the refusal have epochs %d, %d; want 1", epochOf(A), epochOf(B))
	}
	// Pushing again goes above every node's epoch.
	topo.Nodes = topo.Nodes[:2]
	A, B = &topo.Nodes[0], &topo.Nodes[1]
	if epoch, err := a.push(ctx, topo, nil); err != nil || epoch != 2 || epochOf(A) != 2 || epochOf(B) != 2 {
		t.Errorf("push again: epoch %d, %v; nodes at %d, %d", epoch, err, epochOf(A), epochOf(B))
	}
	if _, err := a.push(ctx, topo, []string{A.ID, strings.Repeat("e", 40)}); err == nil || err.Error() != "push: node eeeeeeee is not in the topology" {
		t.Errorf("push to a node not in the topology: %v", err)
	}
	// B's address with A's id: refused before any node is changed.
	wrong := topo.clone()
	wrong.Nodes[1].ID, wrong.Nodes[0].ID = A.ID, B.ID
	wrong.Nodes[0].Slots = nil
	wrong.Nodes[1].Slots = [][2]int{{0, 16383}}
	if _, err := a.push(ctx, wrong, nil); err == nil || !strings.Contains(err.Error(), "node "+A.addr()+": the node at "+A.addr()+" is "+shortID(A.ID)+", not "+shortID(B.ID)) || !strings.HasSuffix(err.Error(), "; no node was changed") {
		t.Errorf("push to a node that is not the one listed: %v", err)
	}
	// A node down: refused before any node is changed, if it is pushed to.
	down := topo.clone()
	down.Nodes = append(down.Nodes, clusterNode{ID: strings.Repeat("d", 40), Host: "127.0.0.1", Port: freePort(t), Role: rolePrimary})
	if _, err := a.push(ctx, down, nil); err == nil || !strings.Contains(err.Error(), "is unreachable") || !strings.HasSuffix(err.Error(), "; no node was changed") {
		t.Errorf("push to a node down: %v", err)
	}
	if epochOf(A) != 2 || epochOf(B) != 2 {
		t.Errorf("refused pushes changed the epochs: %d, %d", epochOf(A), epochOf(B))
	}

	// B listed as A's replica but never told to replicate: waitReady
	// gives up and says which link is not up.
	rep := topo.clone()
	rep.Nodes[1].Role, rep.Nodes[1].Primary = roleReplica, A.ID
	if _, err := a.push(ctx, rep, nil); err != nil {
		t.Fatal(err)
	}
	err = a.waitReady(ctx, &rep, 200*time.Millisecond)
	if want := "after 200ms: replica " + B.name() + "'s link to " + A.addr() + " is not up"; err == nil || err.Error() != want {
		t.Errorf("waitReady on a replica never connected: %v; want %q", err, want)
	}
	if err := a.replicate(ctx, &rep, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.waitReady(ctx, &rep, clusterWait); err != nil {
		t.Errorf("waitReady after replicate: %v", err)
	}
	orphan := rep.clone()
	orphan.Nodes[1].Primary = strings.Repeat("f", 40)
	if err := a.replicate(ctx, &orphan, nil); err == nil || err.Error() != "replica "+B.name()+": its primary ffffffff is not in the topology" {
		t.Errorf("replicate to a primary not listed: %v", err)
	}
}
