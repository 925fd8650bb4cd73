package topology_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// Node ids of the tests: 40 hex digits each.
var (
	idA = strings.Repeat("a", 40)
	idB = strings.Repeat("b", 40)
	idC = strings.Repeat("c", 40)
	idD = strings.Repeat("d", 40)
)

// primary is a primary node with id, port and slot ranges.
func primary(id string, port int, slots ...[2]int) topology.Node {
	return topology.Node{ID: id, Host: "10.0.0.1", Port: port, Role: topology.RolePrimary, Slots: slots}
}

// checkInvariants checks what the package's doc promises of a Map.
func checkInvariants(t *testing.T, m *topology.Map) {
	t.Helper()
	nodes := m.Nodes()
	if me := m.Me(); me < 0 || me >= len(nodes) || nodes[me].ID != m.Config().Myself {
		t.Fatalf("Me() = %d: not myself %s among %d nodes", me, m.Config().Myself, len(nodes))
	}
	owned := 0
	for slot := range topology.Slots {
		if o := m.Owner(slot); o >= 0 {
			owned++
			if o >= len(nodes) || nodes[o].Role != topology.RolePrimary {
				t.Fatalf("slot %d owned by %d, not a primary", slot, o)
			}
		} else if o != -1 {
			t.Fatalf("Owner(%d) = %d", slot, o)
		}
	}
	if owned != m.Assigned() || m.OK() != (owned == topology.Slots) {
		t.Fatalf("%d slots owned; Assigned() = %d, OK() = %v", owned, m.Assigned(), m.OK())
	}
	inRanges := 0
	for i, n := range nodes {
		if j, ok := m.ByID(n.ID); !ok || j != i {
			t.Fatalf("ByID(%s) = %d, %v; want %d", n.ID, j, ok, i)
		}
		prev := -2
		for _, r := range m.Ranges(i) {
			if r[0] <= prev+1 || r[0] > r[1] {
				t.Fatalf("node %d: range %v after %d: not in order, apart", i, r, prev)
			}
			for slot := r[0]; slot <= r[1]; slot++ {
				if m.Owner(slot) != i {
					t.Fatalf("node %d: range %v holds slot %d, owned by %d", i, r, slot, m.Owner(slot))
				}
			}
			inRanges += r[1] - r[0] + 1
			prev = r[1]
		}
		for _, r := range m.Replicas(i) {
			if nodes[r].Role != topology.RoleReplica || nodes[r].Primary != n.ID {
				t.Fatalf("node %d: replica %d is %+v", i, r, nodes[r])
			}
		}
	}
	if inRanges != owned {
		t.Fatalf("the ranges hold %d slots, %d are owned", inRanges, owned)
	}
	for _, slot := range m.MigratingSlots() {
		if target, ok := m.Migrating(slot); !ok || m.Owner(slot) != m.Me() || target == m.Me() {
			t.Fatalf("migrating slot %d to %d (%v): myself %d, owner %d", slot, target, ok, m.Me(), m.Owner(slot))
		}
	}
	for _, slot := range m.ImportingSlots() {
		if source, ok := m.Importing(slot); !ok || m.Owner(slot) == m.Me() || source == m.Me() {
			t.Fatalf("importing slot %d from %d (%v): myself %d, owner %d", slot, source, ok, m.Me(), m.Owner(slot))
		}
	}
}

// TestCompileLookups: a topology of two primaries, one with a replica, one
// slot migrating between them, and the lookups on it from each side.
func TestCompileLookups(t *testing.T) {
	a := primary(idA, 7000, [2]int{0, 99}, [2]int{200, 299})
	a.Migrating = map[int]string{250: idB, 17: idB}
	b := primary(idB, 7001, [2]int{100, 199}, [2]int{300, 16383})
	b.Importing = map[int]string{250: idA, 17: idA}
	c := topology.Node{ID: idC, Host: "10.0.0.3", Port: 7002, Role: topology.RoleReplica, Primary: idA}
	conf := topology.Config{Epoch: 7, Myself: idA, Nodes: []topology.Node{a, b, c}}
	m, err := topology.Compile(conf)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, m)
	if m.Epoch() != 7 || m.Me() != 0 || len(m.Nodes()) != 3 || !reflect.DeepEqual(m.Config(), conf) {
		t.Errorf("Epoch %d, Me %d, %d nodes, Config %+v", m.Epoch(), m.Me(), len(m.Nodes()), m.Config())
	}
	for slot, want := range map[int]int{0: 0, 99: 0, 100: 1, 199: 1, 200: 0, 250: 0, 299: 0, 300: 1, 16383: 1} {
		if got := m.Owner(slot); got != want {
			t.Errorf("Owner(%d) = %d, want %d", slot, got, want)
		}
	}
	if got, want := m.Ranges(0), [][2]int{{0, 99}, {200, 299}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Ranges(0) = %v, want %v", got, want)
	}
	if got, want := m.Ranges(1), [][2]int{{100, 199}, {300, 16383}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Ranges(1) = %v, want %v", got, want)
	}
	if got := m.Ranges(2); got != nil {
		t.Errorf("Ranges(replica) = %v", got)
	}
	if got := m.Replicas(0); !slices.Equal(got, []int{2}) {
		t.Errorf("Replicas(0) = %v", got)
	}
	if got := m.Replicas(1); got != nil {
		t.Errorf("Replicas(1) = %v", got)
	}
	if i, ok := m.ByID(idC); i != 2 || !ok {
		t.Errorf("ByID(c) = %d, %v", i, ok)
	}
	if _, ok := m.ByID(idD); ok {
		t.Error("ByID of a node not listed found one")
	}
	if !m.OK() || m.Assigned() != topology.Slots {
		t.Errorf("OK %v, Assigned %d: want every slot", m.OK(), m.Assigned())
	}
	if target, ok := m.Migrating(250); target != 1 || !ok {
		t.Errorf("Migrating(250) = %d, %v", target, ok)
	}
	if _, ok := m.Migrating(251); ok {
		t.Error("Migrating(251): a slot not migrating")
	}
	if _, ok := m.Importing(250); ok {
		t.Error("Importing(250) on the source: importing is myself's")
	}
	if got := m.MigratingSlots(); !slices.Equal(got, []int{17, 250}) {
		t.Errorf("MigratingSlots() = %v, want [17 250]", got)
	}
	if got := m.ImportingSlots(); len(got) != 0 {
		t.Errorf("ImportingSlots() = %v", got)
	}

	// The same topology pushed to the target: migrating and importing are
	// myself's.
	conf.Myself = idB
	m, err = topology.Compile(conf)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, m)
	if source, ok := m.Importing(17); source != 0 || !ok || m.Me() != 1 {
		t.Errorf("Importing(17) = %d, %v; Me %d", source, ok, m.Me())
	}
	if got := m.ImportingSlots(); !slices.Equal(got, []int{17, 250}) {
		t.Errorf("ImportingSlots() = %v, want [17 250]", got)
	}
	if got := m.MigratingSlots(); len(got) != 0 {
		t.Errorf("MigratingSlots() = %v", got)
	}
}

// TestCompileMyselfUnlisted: a node not in its topology (a new node, or
// one a topology leaves out) is listed last, a primary with no slots, port
// 0 (unknown) allowed; the Config given is not changed.
func TestCompileMyselfUnlisted(t *testing.T) {
	nodes := []topology.Node{primary(idA, 7000, [2]int{0, 8191})}
	m, err := topology.Compile(topology.Config{Epoch: 1, Myself: idB, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, m)
	if len(m.Nodes()) != 2 || m.Me() != 1 || len(m.Config().Nodes) != 1 {
		t.Fatalf("nodes %+v, Me %d, Config's nodes %d", m.Nodes(), m.Me(), len(m.Config().Nodes))
	}
	if me := m.Nodes()[1]; me.ID != idB || me.Role != topology.RolePrimary || me.Port != 0 || len(me.Slots) != 0 {
		t.Errorf("myself = %+v", me)
	}
	if m.OK() || m.Assigned() != 8192 || m.Owner(8192) != -1 {
		t.Errorf("OK %v, Assigned %d, Owner(8192) %d: half the slots have no owner", m.OK(), m.Assigned(), m.Owner(8192))
	}

	// An empty topology: myself alone, owning nothing.
	m, err = topology.Compile(topology.Config{Myself: idA})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, m)
	if len(m.Nodes()) != 1 || m.Assigned() != 0 || m.Ranges(0) != nil {
		t.Errorf("empty topology: nodes %+v, Assigned %d", m.Nodes(), m.Assigned())
	}

	// Port 0 is myself's only.
	self := primary(idA, 0)
	if _, err := topology.Compile(topology.Config{Myself: idA, Nodes: []topology.Node{self}}); err != nil {
		t.Errorf("myself with port 0: %v", err)
	}
}

// TestCompileRefusals: each check of Compile, with its message.
func TestCompileRefusals(t *testing.T) {
	all := primary(idA, 7000, [2]int{0, 16383})
	withB := func(f func(n *topology.Node)) []topology.Node {
		b := primary(idB, 7001)
		f(&b)
		return []topology.Node{all, b}
	}
	replica := func(of string) topology.Node {
		return topology.Node{ID: idC, Host: "h", Port: 7002, Role: topology.RoleReplica, Primary: of}
	}
	for _, tc := range []struct {
		name string
		conf topology.Config
		want string
	}{
		{"epoch", topology.Config{Epoch: -1, Myself: idA}, "epoch -1 is negative"},
		{"myself", topology.Config{Myself: "abc"}, `myself "abc" is not a node id (40 hex digits)`},
		{"myself not hex", topology.Config{Myself: strings.Repeat("g", 40)}, `myself "` + strings.Repeat("g", 40) + `" is not a node id (40 hex digits)`},
		{"too many", topology.Config{Myself: idA, Nodes: make([]topology.Node, topology.MaxNodes+1)},
			"16385 nodes: at most 16384"},
		{"id", topology.Config{Myself: idA, Nodes: []topology.Node{all, primary("abc", 1)}},
			`node 1: id "abc" is not a node id (40 hex digits)`},
		{"twice", topology.Config{Myself: idA, Nodes: []topology.Node{all, all}}, "node " + idA + " listed twice"},
		{"port 0", topology.Config{Myself: idA, Nodes: []topology.Node{all, primary(idB, 0)}}, "node " + idB + ": port 0"},
		{"port negative", topology.Config{Myself: idA, Nodes: []topology.Node{all, primary(idB, -1)}}, "node " + idB + ": port -1"},
		{"port high", topology.Config{Myself: idA, Nodes: []topology.Node{all, primary(idB, 65536)}}, "node " + idB + ": port 65536"},
		{"role", topology.Config{Myself: idA, Nodes: withB(func(n *topology.Node) { n.Role = "boss" })},
			"node " + idB + `: role "boss": want primary or replica`},
		{"primary's primary", topology.Config{Myself: idA, Nodes: withB(func(n *topology.Node) { n.Primary = idA })},
			"node " + idB + ": a primary with a primary"},
		{"replica of none", topology.Config{Myself: idA, Nodes: []topology.Node{all, replica("x")}},
			"node " + idC + `: primary "x" is not a primary listed`},
		{"replica of a replica", topology.Config{Myself: idA, Nodes: []topology.Node{all, replica(idA),
			{ID: idD, Host: "h", Port: 1, Role: topology.RoleReplica, Primary: idC}}},
			"node " + idD + `: primary "` + idC + `" is not a primary listed`},
		{"replica with slots", topology.Config{Myself: idA, Nodes: []topology.Node{primary(idA, 1), func() topology.Node {
			r := replica(idA)
			r.Slots = [][2]int{{0, 0}}
			return r
		}()}}, "node " + idC + ": a replica owns no slots"},
		{"replica importing", topology.Config{Myself: idA, Nodes: []topology.Node{all, func() topology.Node {
			r := replica(idA)
			r.Importing = map[int]string{0: idA}
			return r
		}()}}, "node " + idC + ": a replica owns no slots"},
		{"range high", topology.Config{Myself: idA, Nodes: []topology.Node{primary(idA, 1, [2]int{0, 16384})}},
			"node " + idA + ": slot range 0-16384"},
		{"range negative", topology.Config{Myself: idA, Nodes: []topology.Node{primary(idA, 1, [2]int{-1, 5})}},
			"node " + idA + ": slot range -1-5"},
		{"range reversed", topology.Config{Myself: idA, Nodes: []topology.Node{primary(idA, 1, [2]int{9, 8})}},
			"node " + idA + ": slot range 9-8"},
		{"owned twice", topology.Config{Myself: idA, Nodes: withB(func(n *topology.Node) { n.Slots = [][2]int{{5, 5}} })},
			"slot 5 owned by both " + idA + " and " + idB},
		{"owned twice by one", topology.Config{Myself: idA, Nodes: []topology.Node{primary(idA, 1, [2]int{0, 9}, [2]int{9, 12})}},
			"slot 9 owned by both " + idA + " and " + idA},
		{"migrating slot", topology.Config{Myself: idA, Nodes: []topology.Node{func() topology.Node {
			a := all
			a.Migrating = map[int]string{16384: idB}
			return a
		}(), primary(idB, 2)}}, "node " + idA + ": migrating slot 16384"},
		{"importing slot", topology.Config{Myself: idA, Nodes: withB(func(n *topology.Node) { n.Importing = map[int]string{-1: idA} })},
			"node " + idB + ": importing slot -1"},
		{"migrating to none", topology.Config{Myself: idA, Nodes: []topology.Node{func() topology.Node {
			a := all
			a.Migrating = map[int]string{3: idD}
			return a
		}()}}, "node " + idA + `: migrating slot 3: peer "` + idD + `" is not another primary listed`},
		{"migrating to itself", topology.Config{Myself: idA, Nodes: []topology.Node{func() topology.Node {
			a := all
			a.Migrating = map[int]string{3: idA}
			return a
		}()}}, "node " + idA + `: migrating slot 3: peer "` + idA + `" is not another primary listed`},
		{"importing from a replica", topology.Config{Myself: idA, Nodes: []topology.Node{all, replica(idA), func() topology.Node {
			b := primary(idB, 2)
			b.Importing = map[int]string{3: idC}
			return b
		}()}}, "node " + idB + `: importing slot 3: peer "` + idC + `" is not another primary listed`},
		{"migrating a slot not owned", topology.Config{Myself: idA, Nodes: withB(func(n *topology.Node) { n.Migrating = map[int]string{3: idA} })},
			"node " + idB + ": migrating slot 3: it owns it false"},
		{"importing a slot owned", topology.Config{Myself: idA, Nodes: []topology.Node{func() topology.Node {
			a := all
			a.Importing = map[int]string{3: idB}
			return a
		}(), primary(idB, 2)}}, "node " + idA + ": importing slot 3: it owns it true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := topology.Compile(tc.conf)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Compile = %v, %v; want error %q", m, err, tc.want)
			}
		})
	}
}

// TestNodeID: a new node id is a node id, and a fresh one each time.
func TestNodeID(t *testing.T) {
	a, b := topology.NewNodeID(), topology.NewNodeID()
	if !topology.IsNodeID(a) || !topology.IsNodeID(b) || a == b {
		t.Errorf("NewNodeID gave %q and %q", a, b)
	}
	for _, id := range []string{"", "abc", idA + "a", strings.Repeat("g", 40), strings.Repeat("A", 40)[:39] + " "} {
		if topology.IsNodeID(id) {
			t.Errorf("IsNodeID(%q) = true", id)
		}
	}
	if !topology.IsNodeID(strings.Repeat("AbC0", 10)) {
		t.Error("IsNodeID of mixed-case hex = false")
	}
}

// FuzzCompile: any JSON decoded into a Config compiles or is refused, never
// panics; a Map compiled satisfies the invariants, and its Config, encoded
// and decoded again, compiles into the same encoding.
func FuzzCompile(f *testing.F) {
	f.Add([]byte(`{"epoch":1,"myself":"` + idA + `","nodes":[{"id":"` + idA + `","host":"h","port":1,"role":"primary","slots":[[0,16383]],"migrating":{"5":"` + idB + `"}},` +
		`{"id":"` + idB + `","host":"h","port":2,"role":"primary","importing":{"5":"` + idA + `"}}]}`))
	f.Add([]byte(`{"epoch":2,"myself":"` + idB + `","nodes":[{"id":"` + idA + `","host":"h","port":1,"role":"primary","slots":[[0,5],[7,9]]},` +
		`{"id":"` + idB + `","host":"h","port":2,"role":"replica","primary":"` + idA + `"}]}`))
	f.Add([]byte(`{"epoch":-1,"myself":"x","nodes":[{"slots":[[16384,0]],"migrating":{"-1":""}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var conf topology.Config
		if json.Unmarshal(data, &conf) != nil {
			return
		}
		m, err := topology.Compile(conf)
		if err != nil {
			return
		}
		checkInvariants(t, m)
		out, err := json.Marshal(m.Config())
		if err != nil {
			t.Fatal(err)
		}
		var again topology.Config
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatal(err)
		}
		m2, err := topology.Compile(again)
		if err != nil {
			t.Fatalf("%s compiled, then refused: %v", out, err)
		}
		if out2, _ := json.Marshal(m2.Config()); string(out2) != string(out) {
			t.Fatalf("encoded again: %s, then %s", out, out2)
		}
	})
}

func ExampleCompile() {
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 40)
	m, err := topology.Compile(topology.Config{Epoch: 1, Myself: a, Nodes: []topology.Node{
		{ID: a, Host: "10.0.0.1", Port: 6379, Role: topology.RolePrimary, Slots: [][2]int{{0, 8191}}},
		{ID: b, Host: "10.0.0.2", Port: 6379, Role: topology.RolePrimary, Slots: [][2]int{{8192, 16383}}},
	}})
	if err != nil {
		panic(err)
	}
	slot := topology.KeySlot("foo")
	fmt.Println(slot, m.Nodes()[m.Owner(slot)].Host, m.Ranges(m.Me()), m.OK())
	// Output: 12182 10.0.0.2 [[0 8191]] true
}
