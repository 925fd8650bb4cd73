package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/config"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// Cluster mode (doc.go, "Cluster"): the Redis Cluster protocol that cluster
// clients speak (slots, -MOVED, -ASK, CLUSTER SLOTS/SHARDS/NODES), with no
// gossip: the topology is pushed to every node by CUCKOO.CLUSTER SETCONFIG.
//
// Protocol. The topology in force is cluster.topo, an immutable value
// replaced as a whole: the redirect check loads it once per command and sees
// one topology. SETCONFIG, serialised by cluster.mu, checks the new one,
// writes it to cluster.json (atomically: a temporary file renamed over the
// old) and only then publishes it, so a node never serves a topology it
// would not find again after a restart.
//
// The topology as data (its JSON, its checks, each slot's owner, the slot
// hash) is package internal/topology's; this file holds what needs the
// server or a connection: redirects, the CLUSTER commands, the file.

// maxTopologyJSON bounds the topology a replica reads from its primary:
// every slot migrating and a thousand nodes take about 1.5 MB.
const maxTopologyJSON = 64 << 20

// clusterFile is the topology's file in the data directory.
const clusterFile = "cluster.json"

// Sentinel errors, spelled as Redis spells them.
var (
	errClusterDisabled = replyErr("ERR This instance has cluster support disabled")
	errInvalidSlot     = replyErr("ERR Invalid slot")
)

// cluster is a cluster-enabled server's state.
type cluster struct {
	myID     string
	emulated bool   // owns every slot alone; the topology cannot change
	path     string // cluster.json; "" without a data directory
	mu       sync.Mutex
	topo     atomic.Pointer[topology.Map]
	// slotLocks: a command on a key holds its slot's lock shared from its
	// redirect check to its reply; MIGRATE holds it exclusively while it
	// moves a key of the slot (cluster_migrate.go).
	slotLocks [topology.Slots]sync.RWMutex
}

// clusterCommands binds this file's commands to their rows of Redis's table, by name.
func clusterCommands() (b []binding) {
	b = append(b, binding{name: "cluster|slots", run: clusterCmd(cmdClusterSlots)})
	b = append(b, binding{name: "cluster|shards", run: clusterCmd(cmdClusterShards)})
	b = append(b, binding{name: "cluster|nodes", run: clusterCmd(cmdClusterNodes)})
	b = append(b, binding{name: "cluster|myid", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.wr.WriteBulkString(s.cluster.myID)
	})})
	b = append(b, binding{name: "cluster|info", run: clusterCmd(cmdClusterInfo)})
	b = append(b, binding{name: "cluster|keyslot", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.wr.WriteInt(topology.KeySlot(a[2]))
	})})
	b = append(b, binding{name: "cluster|countkeysinslot", run: clusterCmd(cmdClusterCountKeys)})
	b = append(b, binding{name: "cluster|getkeysinslot", run: clusterCmd(cmdClusterGetKeys)})
	b = append(b, binding{name: "cluster|help", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		command.WriteHelp(cl.wr, clusterHelp)
	})})
	b = append(b, binding{name: "asking", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.cluster.asking = true // after clusterRedirect cleared it: for the next command
		cl.wr.WriteString("OK")
	})})
	b = append(b, binding{name: "readonly", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.cluster.readonly = true
		cl.wr.WriteString("OK")
	})})
	b = append(b, binding{name: "readwrite", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.cluster.readonly = false
		cl.wr.WriteString("OK")
	})})
	b = append(b, binding{name: "cuckoo.cluster|setconfig", run: clusterCmd(cmdClusterSetConfig)})
	b = append(b, binding{name: "cuckoo.cluster|getconfig", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		b, _ := json.Marshal(t.Config())
		cl.wr.WriteBulk(b)
	})})
	return b
}

var clusterHelp = []string{
	"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"COUNTKEYSINSLOT <slot>",
	"    Return the number of keys in <slot>.",
	"GETKEYSINSLOT <slot> <count>",
	"    Return key names stored by current node in a slot.",
	"INFO",
	"    Return information about the cluster.",
	"KEYSLOT <key>",
	"    Return the hash slot for <key>.",
	"MYID",
	"    Return the node id.",
	"NODES",
	"    Return cluster configuration seen by node. Output format:",
	"    <id> <ip:port@cport> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
	"SHARDS",
	"    Return information about slot range mappings and the nodes associated with them.",
	"SLOTS",
	"    Return information about slots range mappings. Each range is made of:",
	"    start, end, master and replicas IP addresses, ports and ids",
	"HELP",
	"    Print this help.",
	"The topology is set with CUCKOO.CLUSTER SETCONFIG <json> and read with CUCKOO.CLUSTER GETCONFIG.",
}

// clusterCmd wraps a cluster command: without cluster mode it answers as
// Redis does; with it, fn gets the topology in force.
func clusterCmd(fn func(s *Server, cl *client, a [][]byte, t *topology.Map)) handler {
	return func(s *Server, cl *client, a [][]byte) {
		if s.cluster == nil {
			s.writeErr(cl, errClusterDisabled)
			return
		}
		fn(s, cl, a, s.cluster.topo.Load())
	}
}

// initCluster sets up cluster mode: the node id and topology from
// cluster.json in the data directory, or, at first start, a new id (and the
// file). An emulated node owns every slot alone.
func (s *Server) initCluster(cfg Config) error {
	c := &cluster{emulated: cfg.ClusterEmulated}
	conf := topology.Config{}
	if cfg.Dir != "" {
		c.path = filepath.Join(cfg.Dir, clusterFile)
		b, err := os.ReadFile(c.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("server: cluster: %w", err)
		default:
			if err := json.Unmarshal(b, &conf); err != nil {
				return fmt.Errorf("server: cluster: %s: %w", c.path, err)
			}
			if !topology.IsNodeID(conf.Myself) {
				return fmt.Errorf("server: cluster: %s: myself %q is not a node id", c.path, conf.Myself)
			}
		}
	}
	if conf.Myself == "" {
		conf.Myself = topology.NewNodeID()
		if c.path != "" {
			if err := c.write(conf); err != nil {
				return fmt.Errorf("server: cluster: %w", err)
			}
		}
	}
	c.myID = conf.Myself
	if c.emulated {
		conf = topology.Config{Myself: c.myID, Nodes: []topology.Node{
			{ID: c.myID, Role: topology.RolePrimary, Slots: [][2]int{{0, topology.Slots - 1}}}}}
	}
	t, err := topology.Compile(conf)
	if err != nil {
		return fmt.Errorf("server: cluster: %s: %w", c.path, err) // only a file's topology can fail
	}
	c.topo.Store(t)
	s.cluster = c
	return nil
}

// write persists conf as cluster.json, atomically.
func (c *cluster) write(conf topology.Config) error {
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteFile(c.path, append(b, '\n'))
}

// endpoint is node i's host and port; myself's, if the topology leaves them
// out (a new or emulated node), are those cl reached this node at.
func endpoint(t *topology.Map, i int, cl *client) (string, int) {
	n := &t.Nodes()[i]
	if n.Host != "" && n.Port != 0 || i != t.Me() {
		return n.Host, n.Port
	}
	host, port := n.Host, n.Port
	if cl.nc == nil {
		return host, port
	}
	if a, ok := cl.nc.LocalAddr().(*net.TCPAddr); ok {
		if host == "" {
			host = a.IP.String()
		}
		if port == 0 {
			port = a.Port
		}
	}
	return host, port
}

// nodeAddr is node i's host:port, as -MOVED and -ASK give it.
func nodeAddr(t *topology.Map, i int, cl *client) string {
	h, p := endpoint(t, i, cl)
	return net.JoinHostPort(h, strconv.Itoa(p))
}

// clusterRedirect is the cluster check of exec: the error that sends cmd
// elsewhere, or "" if this node runs it; then, if slot >= 0, the caller
// holds that slot's lock shared and releases it after the command has run.
// MIGRATE is not checked: it takes its keys' slot locks itself. ASKING
// lasts one command, or, sent before MULTI, the whole transaction. A transaction is checked command by
// command as they are queued (a redirect makes EXEC answer EXECABORT, as
// any refusal does), and as a whole when EXEC comes: its keys must share a
// slot, or EXEC is refused and the transaction discarded; the queue EXEC
// then runs is not checked again.
func (s *Server) clusterRedirect(cl *client, cmd *bound, args [][]byte) (slot int, refusal error) {
	if cl.ks.InExec() || cmd.spec.Name == "migrate" {
		return -1, nil // EXEC is running its queue, under its slot's lock
	}
	asking := cl.cluster.asking || cmd.asking
	if cmd.spec.Name != "multi" && (!cl.tx.inMulti.Load() || cmd.inMulti) {
		cl.cluster.asking = false
	}
	var sole [1][]byte
	var keys [][]byte
	write := cmd.write
	switch {
	case cmd.soleKey > 0: // the common case, with no slice to build
		if cmd.soleKey < len(args) {
			sole[0] = args[cmd.soleKey]
			keys = sole[:]
		}
	case cmd.spec.Name == "exec":
		if !cl.tx.inMulti.Load() || cl.tx.multiErr {
			return -1, nil // EXEC answers
		}
		for _, q := range cl.tx.queued {
			if b, _ := s.cmds.lookup(q); b != nil && len(b.spec.Keys) > 0 {
				for _, p := range b.spec.KeyPositions(q) {
					keys = append(keys, q[p])
				}
				write = write || b.write
			}
		}
	case len(cmd.spec.Keys) == 0:
		return -1, nil
	default:
		for _, p := range cmd.spec.KeyPositions(args) {
			keys = append(keys, args[p])
		}
	}
	if len(keys) == 0 {
		return -1, nil
	}
	slot = topology.KeySlot(keys[0])
	var msg string
	for _, k := range keys[1:] {
		if topology.KeySlot(k) != slot {
			msg = "CROSSSLOT Keys in request don't hash to the same slot"
			break
		}
	}
	if msg == "" {
		l := &s.cluster.slotLocks[slot]
		l.RLock()
		if msg = s.clusterRoute(cl, slot, keys, write, asking); msg != "" {
			l.RUnlock()
		}
	}
	if msg == "" {
		return slot, nil
	}
	if cmd.spec.Name == "exec" {
		// As Redis does, a refused EXEC discards the transaction.
		cl.endMulti()
		cl.unwatch()
	}
	return -1, replyErr(msg)
}

// clusterRoute is where a command of keys, all in slot, goes (write: it
// writes), as clusterRedirect's result. Preconditions: the slot's lock held
// shared, so that a key found here stays until the command has run.
func (s *Server) clusterRoute(cl *client, slot int, keys [][]byte, write, asking bool) string {
	t := s.cluster.topo.Load()
	owner, me, nodes := t.Owner(slot), t.Me(), t.Nodes()
	switch {
	case owner < 0:
		return "CLUSTERDOWN Hash slot not served"
	case owner == me:
		if s.store.Replica.Load() && (write || !cl.cluster.readonly) {
			// Named the slot's primary while still replicating: a
			// failover under way (cuckoo cluster failover). Clients retry
			// until it has its old primary's every write and takes them;
			// a READONLY read, stale by choice, is served.
			return "TRYAGAIN this node is taking over as primary of the slot: it is still a replica"
		}
		target, migrating := t.Migrating(slot)
		if !migrating {
			return ""
		}
		return s.askIfMoved(cl, t, slot, target, keys)
	}
	if _, importing := t.Importing(slot); importing && asking {
		return ""
	}
	if cl.cluster.readonly && !write && nodes[me].Primary == nodes[owner].ID {
		// A replica's read, after READONLY. While its primary migrates
		// the slot, a key no longer here (its DEL replicated) is asked of
		// the target, as the primary would.
		if id, migrating := nodes[owner].Migrating[slot]; migrating {
			target, _ := t.ByID(id) // a primary listed: Compile checked
			return s.askIfMoved(cl, t, slot, target, keys)
		}
		return ""
	}
	return fmt.Sprintf("MOVED %d %s", slot, nodeAddr(t, owner, cl))
}

// askIfMoved is the route of keys on a slot migrating to node target: here
// if they all are, -ASK if none is, -TRYAGAIN if some are (a multi-key
// command waits until they have all moved).
func (s *Server) askIfMoved(cl *client, t *topology.Map, slot, target int, keys [][]byte) string {
	missing := 0
	for _, k := range keys {
		if !s.store.Present(k) {
			missing++
		}
	}
	switch {
	case missing == 0:
		return ""
	case missing < len(keys):
		return "TRYAGAIN Multiple keys request during rehashing of slot"
	}
	return fmt.Sprintf("ASK %d %s", slot, nodeAddr(t, target, cl))
}

func cmdClusterSetConfig(s *Server, cl *client, a [][]byte, _ *topology.Map) {
	c := s.cluster
	if c.emulated {
		s.writeErr(cl, replyErr("ERR this node emulates a cluster alone (--cluster-emulated): its topology is fixed"))
		return
	}
	var conf topology.Config
	dec := json.NewDecoder(bytes.NewReader(a[2]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&conf); err != nil {
		s.writeErr(cl, replyErr("ERR invalid topology JSON: "+err.Error()))
		return
	}
	if conf.Myself != c.myID {
		s.writeErr(cl, replyErr(fmt.Sprintf("ERR the topology is for node %q; this is node %s", conf.Myself, c.myID)))
		return
	}
	if err := s.setTopology(conf, false); err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

// setTopology checks conf, persists it and puts it in force, unless its
// epoch is older than the node's (or, if newer, not newer). Its errors are
// replies.
func (s *Server) setTopology(conf topology.Config, newer bool) error {
	c := s.cluster
	t, err := topology.Compile(conf)
	if err != nil {
		return replyErr("ERR invalid topology: " + err.Error())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.topo.Load(); conf.Epoch < old.Epoch() || newer && conf.Epoch == old.Epoch() {
		return replyErr(fmt.Sprintf("ERR the topology's epoch %d is older than this node's, %d", conf.Epoch, old.Epoch()))
	}
	if c.path != "" {
		if err := c.write(conf); err != nil {
			s.log.Error("cluster: writing the topology failed; it is not applied", "err", err)
			return replyErr("ERR writing " + clusterFile + ": " + err.Error())
		}
	}
	c.topo.Store(t)
	s.log.Info("cluster: topology set", "epoch", conf.Epoch, "nodes", len(conf.Nodes), "slots", t.Assigned())
	return nil
}

// adoptPrimaryTopology takes the topology of this replica's primary, b (its
// CUCKOO.CLUSTER GETCONFIG), if it is newer and lists this node: a node that
// was down while the topology changed (a primary failed over, now made a
// replica of the new one) learns it from the primary it replicates, the
// one link it has. Not gossip: nothing else is asked or told.
func (s *Server) adoptPrimaryTopology(b []byte) {
	c := s.cluster
	var conf topology.Config
	if err := json.Unmarshal(b, &conf); err != nil {
		return
	}
	if !slices.ContainsFunc(conf.Nodes, func(n topology.Node) bool { return n.ID == c.myID }) {
		return // not one of its nodes: the operator's to mend
	}
	conf.Myself = c.myID
	if err := s.setTopology(conf, true); err == nil {
		s.log.Info("cluster: took the primary's newer topology", "epoch", conf.Epoch)
	}
}

// writeNode writes a node as CLUSTER SLOTS does: ip, port, id, and a map of
// further endpoints (none).
func writeNode(cl *client, t *topology.Map, i int) {
	h, p := endpoint(t, i, cl)
	cl.wr.WriteArray(4)
	cl.wr.WriteBulkString(h)
	cl.wr.WriteInt(p)
	cl.wr.WriteBulkString(t.Nodes()[i].ID)
	cl.wr.WriteMap(0)
}

func cmdClusterSlots(s *Server, cl *client, a [][]byte, t *topology.Map) {
	type slotRange struct {
		r    [2]int
		node int
	}
	var all []slotRange
	for i := range t.Nodes() {
		for _, r := range t.Ranges(i) {
			all = append(all, slotRange{r, i})
		}
	}
	slices.SortFunc(all, func(x, y slotRange) int { return x.r[0] - y.r[0] })
	cl.wr.WriteArray(len(all))
	for _, x := range all {
		reps := t.Replicas(x.node)
		cl.wr.WriteArray(3 + len(reps))
		cl.wr.WriteInt(x.r[0])
		cl.wr.WriteInt(x.r[1])
		writeNode(cl, t, x.node)
		for _, r := range reps {
			writeNode(cl, t, r)
		}
	}
}

func cmdClusterShards(s *Server, cl *client, a [][]byte, t *topology.Map) {
	var primaries []int
	for i, n := range t.Nodes() {
		if n.Role == topology.RolePrimary {
			primaries = append(primaries, i)
		}
	}
	cl.wr.WriteArray(len(primaries))
	for _, p := range primaries {
		cl.wr.WriteMap(2)
		cl.wr.WriteBulkString("slots")
		rs := t.Ranges(p)
		cl.wr.WriteArray(2 * len(rs))
		for _, r := range rs {
			cl.wr.WriteInt(r[0])
			cl.wr.WriteInt(r[1])
		}
		cl.wr.WriteBulkString("nodes")
		nodes := append([]int{p}, t.Replicas(p)...)
		cl.wr.WriteArray(len(nodes))
		for _, i := range nodes {
			h, port := endpoint(t, i, cl)
			role := "master"
			if i != p {
				role = "replica"
			}
			cl.wr.WriteMap(7)
			for _, kv := range []struct {
				k string
				v any
			}{{"id", t.Nodes()[i].ID}, {"port", port}, {"ip", h}, {"endpoint", h}, {"role", role},
				{"replication-offset", 0}, {"health", "online"}} {
				cl.wr.WriteBulkString(kv.k)
				switch v := kv.v.(type) {
				case int:
					cl.wr.WriteInt(v)
				case string:
					cl.wr.WriteBulkString(v)
				}
			}
		}
	}
}

func cmdClusterNodes(s *Server, cl *client, a [][]byte, t *topology.Map) {
	var sb strings.Builder
	for i, n := range t.Nodes() {
		h, p := endpoint(t, i, cl)
		flags := "master"
		primary := "-"
		if n.Role == topology.RoleReplica {
			flags, primary = "slave", n.Primary
		}
		if i == t.Me() {
			flags = "myself," + flags
		}
		fmt.Fprintf(&sb, "%s %s:%d@%d %s %s 0 0 %d connected", n.ID, h, p, p+10000, flags, primary, t.Epoch())
		for _, r := range t.Ranges(i) {
			if r[0] == r[1] {
				fmt.Fprintf(&sb, " %d", r[0])
			} else {
				fmt.Fprintf(&sb, " %d-%d", r[0], r[1])
			}
		}
		if i == t.Me() {
			for _, slot := range t.MigratingSlots() {
				target, _ := t.Migrating(slot)
				fmt.Fprintf(&sb, " [%d->-%s]", slot, t.Nodes()[target].ID)
			}
			for _, slot := range t.ImportingSlots() {
				source, _ := t.Importing(slot)
				fmt.Fprintf(&sb, " [%d-<-%s]", slot, t.Nodes()[source].ID)
			}
		}
		sb.WriteByte('\n')
	}
	cl.wr.WriteVerbatim(sb.String())
}

func cmdClusterInfo(s *Server, cl *client, a [][]byte, t *topology.Map) {
	state := "fail"
	if t.OK() {
		state = "ok"
	}
	size := 0
	for i, n := range t.Nodes() {
		if n.Role == topology.RolePrimary && len(t.Ranges(i)) > 0 {
			size++
		}
	}
	var sb strings.Builder
	for _, kv := range []struct {
		k string
		v any
	}{{"cluster_state", state}, {"cluster_slots_assigned", t.Assigned()}, {"cluster_slots_ok", t.Assigned()},
		{"cluster_slots_pfail", 0}, {"cluster_slots_fail", 0}, {"cluster_known_nodes", len(t.Nodes())},
		{"cluster_size", size}, {"cluster_current_epoch", t.Epoch()}, {"cluster_my_epoch", t.Epoch()},
		{"cluster_stats_messages_sent", 0}, {"cluster_stats_messages_received", 0},
		{"total_cluster_links_buffer_limit_exceeded", 0}} {
		fmt.Fprintf(&sb, "%s:%v\r\n", kv.k, kv.v)
	}
	cl.wr.WriteVerbatim(sb.String())
}

// slotArg parses a slot argument, or answers the error and returns -1.
func slotArg(b []byte) int {
	n, ok := integer.Parse(b)
	if !ok || n < 0 || n >= topology.Slots {
		return -1
	}
	return int(n)
}

// COUNTKEYSINSLOT and GETKEYSINSLOT scan the key space: O(n) for n keys,
// computing each key's slot. A per-slot index would make them O(1) and O(k)
// but cost every key creation and drop a second map update, in cluster mode
// and out of it; these are operator commands (slot migration), rare enough
// for a scan.

func cmdClusterCountKeys(s *Server, cl *client, a [][]byte, t *topology.Map) {
	slot := slotArg(a[2])
	if slot < 0 {
		s.writeErr(cl, errInvalidSlot)
		return
	}
	n := 0
	for k := range s.store.All() {
		if topology.KeySlot(k) == slot {
			n++
		}
	}
	cl.wr.WriteInt(n)
}

func cmdClusterGetKeys(s *Server, cl *client, a [][]byte, t *topology.Map) {
	slot := slotArg(a[2])
	count, ok := integer.Parse(a[3])
	if slot < 0 || !ok || count < 0 {
		s.writeErr(cl, replyErr("ERR Invalid slot or number of keys"))
		return
	}
	var keys []string
	for k := range s.store.All() {
		if int64(len(keys)) >= count {
			break
		}
		if topology.KeySlot(k) == slot {
			keys = append(keys, k)
		}
	}
	cl.wr.WriteArray(len(keys))
	for _, k := range keys {
		cl.wr.WriteBulkString(k)
	}
}
