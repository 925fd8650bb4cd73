package cluster_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newNode(t *testing.T, dir string) *cluster.Node {
	t.Helper()
	n, err := cluster.New(dir, false, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// push is testConfig for n, at epoch, as SETCONFIG's JSON.
func push(t *testing.T, n *cluster.Node, epoch int64) []byte {
	t.Helper()
	conf := testConfig(n.ID())
	conf.Epoch = epoch
	conf.Nodes[0].ID = n.ID() // n is A
	conf.Nodes[1].Importing[migSlot] = n.ID()
	conf.Nodes[2].Primary = n.ID()
	b, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNodeFileRoundTrip: a new node makes its id and cluster.json; a
// topology set is written there and found again, with the id, by the
// node started next on the same directory.
func TestNodeFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	n := newNode(t, dir)
	if !topology.IsNodeID(n.ID()) {
		t.Fatalf("ID = %q, not a node id", n.ID())
	}
	if topo := n.Topology(); topo.Assigned() != 0 || len(topo.Nodes()) != 1 || topo.Epoch() != 0 {
		t.Errorf("a new node's topology: %s", cluster.ConfigJSON(topo))
	}
	if again := newNode(t, dir); again.ID() != n.ID() {
		t.Errorf("ID after a restart = %s, want %s", again.ID(), n.ID())
	}

	if err := n.SetConfig(push(t, n, 7)); err != nil {
		t.Fatal(err)
	}
	want := cluster.ConfigJSON(n.Topology())
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".cluster.json.tmp-*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	again := newNode(t, dir)
	if again.ID() != n.ID() {
		t.Errorf("ID after a restart = %s, want %s", again.ID(), n.ID())
	}
	if got := cluster.ConfigJSON(again.Topology()); string(got) != string(want) {
		t.Errorf("topology after a restart:\n%s\nwant\n%s", got, want)
	}
	if again.Topology().Assigned() != lastB+1 {
		t.Errorf("Assigned after a restart = %d", again.Topology().Assigned())
	}

	// The file is the Config, indented, as an operator reads it.
	b, err := os.ReadFile(filepath.Join(dir, cluster.File))
	if err != nil {
		t.Fatal(err)
	}
	var conf topology.Config
	if err := json.Unmarshal(b, &conf); err != nil || conf.Epoch != 7 || conf.Myself != n.ID() || len(conf.Nodes) != 3 {
		t.Errorf("cluster.json = %s (%v)", b, err)
	}
	if !strings.HasPrefix(string(b), "{\n  \"epoch\": 7,") || !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("cluster.json is not indented JSON:\n%s", b)
	}
}

// TestNodeDamagedFile: a cluster.json that does not decode, names no node
// id, or holds a topology that does not hold together stops the node, and
// is left as it was.
func TestNodeDamagedFile(t *testing.T) {
	for _, tc := range []struct {
		name, file, err string
	}{
		{"truncated", `{"epoch": 3, "myself": "`, "unexpected end of JSON input"},
		{"not JSON", "\x00\x01garbage", "invalid character"},
		{"no id", `{"epoch": 3, "nodes": []}`, `myself "" is not a node id`},
		{"bad id", `{"myself": "abc"}`, `myself "abc" is not a node id`},
		{"slot owned twice", `{"epoch": 1, "myself": "` + idA + `", "nodes": [` +
			`{"id": "` + idA + `", "host": "h", "port": 1, "role": "primary", "slots": [[0, 10]]},` +
			`{"id": "` + idB + `", "host": "h", "port": 2, "role": "primary", "slots": [[5, 20]]}]}`, "slot 5"},
		{"no port", `{"epoch": 1, "myself": "` + idA + `", "nodes": [{"id": "` + idB + `", "role": "primary"}]}`, "port 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, cluster.File)
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			n, err := cluster.New(dir, false, quiet)
			if err == nil || !strings.HasPrefix(err.Error(), "cluster: ") || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("New = %v, %v; want an error with %q", n, err, tc.err)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.file {
				t.Errorf("the damaged file was changed to %q", b)
			}
		})
	}
	// A directory in the file's place cannot be read.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, cluster.File), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.New(dir, false, quiet); err == nil {
		t.Error("New with a directory as cluster.json succeeded")
	}
}

// TestNodeSetConfigRefusals: each refusal's reply, and the topology in
// force unchanged by it.
func TestNodeSetConfigRefusals(t *testing.T) {
	dir := t.TempDir()
	n := newNode(t, dir)
	if err := n.SetConfig(push(t, n, 5)); err != nil {
		t.Fatal(err)
	}
	before := string(cluster.ConfigJSON(n.Topology()))
	other := testConfig(idB)
	otherJSON, _ := json.Marshal(other)
	for _, tc := range []struct {
		name string
		push []byte
		want string
	}{
		{"older epoch", push(t, n, 4), "ERR the topology's epoch 4 is older than this node's, 5"},
		{"another node's", otherJSON, `ERR the topology is for node "` + idB + `"; this is node ` + n.ID()},
		{"unknown field", []byte(`{"epoch": 6, "myself": "` + n.ID() + `", "gossip": true}`), `ERR invalid topology JSON: json: unknown field "gossip"`},
		{"not JSON", []byte(`{`), "ERR invalid topology JSON: unexpected EOF"},
		{"inconsistent", []byte(`{"epoch": 6, "myself": "` + n.ID() + `", "nodes": [{"id": "` + idB + `", "role": "replica", "primary": "` + idC + `"}]}`),
			"ERR invalid topology: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := n.SetConfig(tc.push)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("SetConfig = %v, want %q", err, tc.want)
			}
			if after := string(cluster.ConfigJSON(n.Topology())); after != before {
				t.Errorf("the topology changed to %s", after)
			}
		})
	}
	if again := newNode(t, dir); string(cluster.ConfigJSON(again.Topology())) != before {
		t.Errorf("cluster.json changed by a refused push")
	}
	// The same epoch again is taken (a push repeated).
	if err := n.SetConfig(push(t, n, 5)); err != nil {
		t.Errorf("the same epoch again: %v", err)
	}
}

// TestNodeWithoutDir: without a data directory a node works, and writes
// nothing.
func TestNodeWithoutDir(t *testing.T) {
	wd, _ := os.Getwd()
	n := newNode(t, "")
	if err := n.SetConfig(push(t, n, 1)); err != nil {
		t.Fatal(err)
	}
	if n.Topology().Epoch() != 1 {
		t.Errorf("Epoch = %d", n.Topology().Epoch())
	}
	if _, err := os.Stat(filepath.Join(wd, cluster.File)); err == nil {
		t.Error("a node without a directory wrote cluster.json")
	}
}

// TestNodeEmulated: an emulated node owns every slot alone and refuses
// any topology, but keeps its id in the directory.
func TestNodeEmulated(t *testing.T) {
	dir := t.TempDir()
	n, err := cluster.New(dir, true, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if !n.Emulated() || !n.Topology().OK() || n.Topology().Owner(0) != n.Topology().Me() {
		t.Errorf("an emulated node's topology: %s", cluster.ConfigJSON(n.Topology()))
	}
	if err := n.SetConfig([]byte("{}")); err != cluster.ErrEmulated {
		t.Errorf("SetConfig on an emulated node = %v", err)
	}
	if again := newNode(t, dir); again.ID() != n.ID() {
		t.Errorf("the emulated node's id was not kept: %s, then %s", n.ID(), again.ID())
	}
}

// TestNodeAdoptPrimary: a replica takes its primary's topology only if it
// is newer and lists it, whatever node it was pushed to.
func TestNodeAdoptPrimary(t *testing.T) {
	n := newNode(t, t.TempDir())
	if err := n.SetConfig(push(t, n, 3)); err != nil {
		t.Fatal(err)
	}
	primary := func(epoch int64, listed bool) []byte {
		conf := testConfig(idB) // as pushed to B, another node
		conf.Epoch = epoch
		if listed {
			conf.Nodes[2].ID = n.ID() // n is now C, A's replica
		}
		b, _ := json.Marshal(conf)
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want int64 // the epoch in force after
	}{
		{"not JSON", []byte("-ERR unknown command"), 3},
		{"same epoch", primary(3, true), 3},
		{"older", primary(2, true), 3},
		{"not listing this node", primary(4, false), 3},
		{"newer", primary(4, true), 4},
	} {
		n.AdoptPrimary(tc.b)
		if got := n.Topology().Epoch(); got != tc.want {
			t.Errorf("%s: epoch %d, want %d", tc.name, got, tc.want)
		}
	}
	topo := n.Topology()
	if me := topo.Nodes()[topo.Me()]; me.ID != n.ID() || me.Role != topology.RoleReplica || me.Primary != idA {
		t.Errorf("after adopting, myself is %+v", me)
	}
}
