package server

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
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

// numSlots is Redis Cluster's number of hash slots.
const numSlots = 16384

// maxClusterNodes bounds a topology's nodes: one a slot at most (Redis
// advises 1,000), and an index that fits topology.owner's int16.
const maxClusterNodes = numSlots

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

// crc16tab is CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0),
// Redis Cluster's key hash.
var crc16tab = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// keySlot is the hash slot of key, as Redis computes it: the CRC16 of the
// key, or of its hash tag (the bytes between the first '{' and the first
// '}' after it, if there are any), mod 16384. It takes a string too, so
// that a scan of the key space does not copy each key.
func keySlot[K string | []byte](key K) int {
	if i := indexByte(key, '{'); i >= 0 {
		if j := indexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var c uint16
	for i := 0; i < len(key); i++ {
		c = c<<8 ^ crc16tab[byte(c>>8)^key[i]]
	}
	return int(c & (numSlots - 1))
}

func indexByte[K string | []byte](s K, b byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}

// clusterConfig is the topology CUCKOO.CLUSTER SETCONFIG takes and GETCONFIG
// returns, as JSON, and cluster.json holds.
type clusterConfig struct {
	// Epoch is the topology's version: a node refuses one older than its
	// own. Redis's config epoch; CLUSTER INFO's current and own epochs.
	Epoch int64 `json:"epoch"`
	// Myself is the id of the node the topology is pushed to: a node
	// refuses one meant for another (CLUSTER MYID gives a node's id).
	Myself string              `json:"myself"`
	Nodes  []clusterNodeConfig `json:"nodes"`
}

// clusterNodeConfig is one node of a topology.
type clusterNodeConfig struct {
	ID   string `json:"id"` // 40 hex digits
	Host string `json:"host"`
	Port int    `json:"port"`
	Role string `json:"role"` // "primary" or "replica"
	// Primary is a replica's primary's id.
	Primary string `json:"primary,omitempty"`
	// Slots are a primary's slot ranges, first and last included.
	Slots [][2]int `json:"slots,omitempty"`
	// Migrating maps a slot this primary owns and is moving away to the
	// id of the node it moves to; Importing a slot another node owns and
	// this one is taking over to that owner's id.
	Migrating map[int]string `json:"migrating,omitempty"`
	Importing map[int]string `json:"importing,omitempty"`
}

// topology is a checked clusterConfig, with the lookups the redirect check
// needs. Immutable once published.
type topology struct {
	conf  clusterConfig
	nodes []clusterNodeConfig // conf.Nodes, and myself if it is not listed
	me    int                 // myself's index in nodes
	// owner is each slot's primary, an index in nodes, or -1.
	owner [numSlots]int16
	// migrating and importing are myself's, by slot, to an index in nodes.
	migrating, importing map[int]int
	assigned             int            // slots with an owner
	byID                 map[string]int // index in nodes by id
}

// cluster is a cluster-enabled server's state.
type cluster struct {
	myID     string
	emulated bool   // owns every slot alone; the topology cannot change
	path     string // cluster.json; "" without a data directory
	mu       sync.Mutex
	topo     atomic.Pointer[topology]
	// slotLocks: a command on a key holds its slot's lock shared from its
	// redirect check to its reply; MIGRATE holds it exclusively while it
	// moves a key of the slot (cluster_migrate.go).
	slotLocks [numSlots]sync.RWMutex
}

func init() {
	handle("cluster|slots", clusterCmd(cmdClusterSlots))
	handle("cluster|shards", clusterCmd(cmdClusterShards))
	handle("cluster|nodes", clusterCmd(cmdClusterNodes))
	handle("cluster|myid", clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology) {
		cl.wr.WriteBulkString(s.cluster.myID)
	}))
	handle("cluster|info", clusterCmd(cmdClusterInfo))
	handle("cluster|keyslot", clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology) {
		cl.wr.WriteInt(keySlot(a[2]))
	}))
	handle("cluster|countkeysinslot", clusterCmd(cmdClusterCountKeys))
	handle("cluster|getkeysinslot", clusterCmd(cmdClusterGetKeys))
	handle("cluster|help", clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology) {
		command.WriteHelp(cl.wr, clusterHelp)
	}))
	handle("asking", clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology) {
		cl.asking = true // after clusterRedirect cleared it: for the next command
		cl.wr.WriteString("OK")
	}))
	handle("readonly", clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology) {
		cl.readonly = true
		cl.wr.WriteString("OK")
	}))
	handle("readwrite", clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology) {
		cl.readonly = false
		cl.wr.WriteString("OK")
	}))
	handle("cuckoo.cluster|setconfig", clusterCmd(cmdClusterSetConfig))
	handle("cuckoo.cluster|getconfig", clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology) {
		b, _ := json.Marshal(t.conf)
		cl.wr.WriteBulk(b)
	}))
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
func clusterCmd(fn func(s *Server, cl *client, a [][]byte, t *topology)) handler {
	return func(s *Server, cl *client, a [][]byte) {
		if s.cluster == nil {
			s.writeErr(cl, errClusterDisabled)
			return
		}
		fn(s, cl, a, s.cluster.topo.Load())
	}
}

// newNodeID is a random 40-hex-digit node id, as Redis's.
func newNodeID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func isNodeID(id string) bool {
	if len(id) != 40 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// initCluster sets up cluster mode: the node id and topology from
// cluster.json in the data directory, or, at first start, a new id (and the
// file). An emulated node owns every slot alone.
func (s *Server) initCluster(cfg Config) error {
	c := &cluster{emulated: cfg.ClusterEmulated}
	conf := clusterConfig{}
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
			if !isNodeID(conf.Myself) {
				return fmt.Errorf("server: cluster: %s: myself %q is not a node id", c.path, conf.Myself)
			}
		}
	}
	if conf.Myself == "" {
		conf.Myself = newNodeID()
		if c.path != "" {
			if err := c.write(conf); err != nil {
				return fmt.Errorf("server: cluster: %w", err)
			}
		}
	}
	c.myID = conf.Myself
	if c.emulated {
		conf = clusterConfig{Myself: c.myID, Nodes: []clusterNodeConfig{
			{ID: c.myID, Role: "primary", Slots: [][2]int{{0, numSlots - 1}}}}}
	}
	t, err := compileTopology(conf)
	if err != nil {
		return fmt.Errorf("server: cluster: %s: %w", c.path, err) // only a file's topology can fail
	}
	c.topo.Store(t)
	s.cluster = c
	return nil
}

// write persists conf as cluster.json, atomically.
func (c *cluster) write(conf clusterConfig) error {
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteFile(c.path, append(b, '\n'))
}

// compileTopology checks conf and builds its lookups.
func compileTopology(conf clusterConfig) (*topology, error) {
	if conf.Epoch < 0 {
		return nil, fmt.Errorf("epoch %d is negative", conf.Epoch)
	}
	if !isNodeID(conf.Myself) {
		return nil, fmt.Errorf("myself %q is not a node id (40 hex digits)", conf.Myself)
	}
	if len(conf.Nodes) > maxClusterNodes {
		return nil, fmt.Errorf("%d nodes: at most %d", len(conf.Nodes), maxClusterNodes)
	}
	t := &topology{conf: conf, me: -1, migrating: map[int]int{}, importing: map[int]int{}}
	for i := range t.owner {
		t.owner[i] = -1
	}
	index := map[string]int{}
	for i, n := range conf.Nodes {
		if !isNodeID(n.ID) {
			return nil, fmt.Errorf("node %d: id %q is not a node id (40 hex digits)", i, n.ID)
		}
		if _, dup := index[n.ID]; dup {
			return nil, fmt.Errorf("node %s listed twice", n.ID)
		}
		if n.Port < 0 || n.Port > 65535 || n.Port == 0 && n.ID != conf.Myself {
			return nil, fmt.Errorf("node %s: port %d", n.ID, n.Port)
		}
		index[n.ID] = i
	}
	t.nodes = conf.Nodes
	t.byID = index
	if me, ok := index[conf.Myself]; ok {
		t.me = me
	} else {
		// A node not (yet) in a topology lists itself, with no slots.
		t.nodes = append(slices.Clone(conf.Nodes), clusterNodeConfig{ID: conf.Myself, Role: "primary"})
		t.me = len(t.nodes) - 1
		index[conf.Myself] = t.me
	}
	for i, n := range conf.Nodes {
		switch n.Role {
		case "primary":
			if n.Primary != "" {
				return nil, fmt.Errorf("node %s: a primary with a primary", n.ID)
			}
		case "replica":
			p, ok := index[n.Primary]
			if !ok || conf.Nodes[p].Role != "primary" {
				return nil, fmt.Errorf("node %s: primary %q is not a primary listed", n.ID, n.Primary)
			}
			if len(n.Slots) > 0 || len(n.Migrating) > 0 || len(n.Importing) > 0 {
				return nil, fmt.Errorf("node %s: a replica owns no slots", n.ID)
			}
		default:
			return nil, fmt.Errorf("node %s: role %q: want primary or replica", n.ID, n.Role)
		}
		for _, r := range n.Slots {
			if r[0] < 0 || r[1] >= numSlots || r[0] > r[1] {
				return nil, fmt.Errorf("node %s: slot range %d-%d", n.ID, r[0], r[1])
			}
			for slot := r[0]; slot <= r[1]; slot++ {
				if o := t.owner[slot]; o >= 0 {
					return nil, fmt.Errorf("slot %d owned by both %s and %s", slot, conf.Nodes[o].ID, n.ID)
				}
				t.owner[slot] = int16(i)
				t.assigned++
			}
		}
	}
	for i, n := range conf.Nodes {
		for _, m := range []struct {
			slots   map[int]string
			owned   bool
			into    map[int]int
			meaning string
		}{{n.Migrating, true, t.migrating, "migrating"}, {n.Importing, false, t.importing, "importing"}} {
			for slot, id := range m.slots {
				peer, ok := index[id]
				switch {
				case slot < 0 || slot >= numSlots:
					return nil, fmt.Errorf("node %s: %s slot %d", n.ID, m.meaning, slot)
				case !ok || peer == i || t.nodes[peer].Role != "primary":
					return nil, fmt.Errorf("node %s: %s slot %d: peer %q is not another primary listed", n.ID, m.meaning, slot, id)
				case (int(t.owner[slot]) == i) != m.owned:
					return nil, fmt.Errorf("node %s: %s slot %d: it owns it %v", n.ID, m.meaning, slot, !m.owned)
				}
				if i == t.me {
					m.into[slot] = peer
				}
			}
		}
	}
	return t, nil
}

// endpoint is node i's host and port; myself's, if the topology leaves them
// out (a new or emulated node), are those cl reached this node at.
func (t *topology) endpoint(i int, cl *client) (string, int) {
	n := &t.nodes[i]
	if n.Host != "" && n.Port != 0 || i != t.me {
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

func (t *topology) addr(i int, cl *client) string {
	h, p := t.endpoint(i, cl)
	return net.JoinHostPort(h, strconv.Itoa(p))
}

// ok reports whether every slot has an owner: CLUSTER INFO's cluster_state
// (Redis's cluster-require-full-coverage yes).
func (t *topology) ok() bool { return t.assigned == numSlots }

// clusterRedirect is the cluster check of exec: the error that sends cmd
// elsewhere, or "" if this node runs it; then, if slot >= 0, the caller
// holds that slot's lock shared and releases it after the command has run.
// MIGRATE is not checked: it takes its keys' slot locks itself. ASKING
// lasts one command, or, sent before MULTI, the whole transaction. A transaction is checked command by
// command as they are queued (a redirect makes EXEC answer EXECABORT, as
// any refusal does), and as a whole when EXEC comes: its keys must share a
// slot, or EXEC is refused and the transaction discarded; the queue EXEC
// then runs is not checked again.
func (s *Server) clusterRedirect(cl *client, cmd *bound, args [][]byte) (msg string, slot int) {
	if cl.txn != nil || cmd.spec.Name == "migrate" {
		return "", -1 // EXEC is running its queue, under its slot's lock
	}
	asking := cl.asking || cmd.asking
	if cmd.spec.Name != "multi" && (!cl.inMulti.Load() || cmd.inMulti) {
		cl.asking = false
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
		if !cl.inMulti.Load() || cl.multiErr {
			return "", -1 // EXEC answers
		}
		for _, q := range cl.queued {
			if b, _ := lookup(q); b != nil && len(b.spec.Keys) > 0 {
				for _, p := range b.spec.KeyPositions(q) {
					keys = append(keys, q[p])
				}
				write = write || b.write
			}
		}
	case len(cmd.spec.Keys) == 0:
		return "", -1
	default:
		for _, p := range cmd.spec.KeyPositions(args) {
			keys = append(keys, args[p])
		}
	}
	if len(keys) == 0 {
		return "", -1
	}
	slot = keySlot(keys[0])
	for _, k := range keys[1:] {
		if keySlot(k) != slot {
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
		return "", slot
	}
	if cmd.spec.Name == "exec" {
		// As Redis does, a refused EXEC discards the transaction.
		cl.endMulti()
		cl.unwatch()
	}
	return msg, -1
}

// clusterRoute is where a command of keys, all in slot, goes (write: it
// writes), as clusterRedirect's result. Preconditions: the slot's lock held
// shared, so that a key found here stays until the command has run.
func (s *Server) clusterRoute(cl *client, slot int, keys [][]byte, write, asking bool) string {
	t := s.cluster.topo.Load()
	owner := int(t.owner[slot])
	switch {
	case owner < 0:
		return "CLUSTERDOWN Hash slot not served"
	case owner == t.me:
		if s.store.replica.Load() && (write || !cl.readonly) {
			// Named the slot's primary while still replicating: a
			// failover under way (cuckoo cluster failover). Clients retry
			// until it has its old primary's every write and takes them;
			// a READONLY read, stale by choice, is served.
			return "TRYAGAIN this node is taking over as primary of the slot: it is still a replica"
		}
		target, migrating := t.migrating[slot]
		if !migrating {
			return ""
		}
		return s.askIfMoved(cl, t, slot, target, keys)
	}
	if _, importing := t.importing[slot]; importing && asking {
		return ""
	}
	if cl.readonly && !write && t.nodes[t.me].Primary == t.nodes[owner].ID {
		// A replica's read, after READONLY. While its primary migrates
		// the slot, a key no longer here (its DEL replicated) is asked of
		// the target, as the primary would.
		if id, migrating := t.nodes[owner].Migrating[slot]; migrating {
			return s.askIfMoved(cl, t, slot, t.byID[id], keys)
		}
		return ""
	}
	return fmt.Sprintf("MOVED %d %s", slot, t.addr(owner, cl))
}

// askIfMoved is the route of keys on a slot migrating to node target: here
// if they all are, -ASK if none is, -TRYAGAIN if some are (a multi-key
// command waits until they have all moved).
func (s *Server) askIfMoved(cl *client, t *topology, slot, target int, keys [][]byte) string {
	missing := 0
	for _, k := range keys {
		if !s.store.present(k) {
			missing++
		}
	}
	switch {
	case missing == 0:
		return ""
	case missing < len(keys):
		return "TRYAGAIN Multiple keys request during rehashing of slot"
	}
	return fmt.Sprintf("ASK %d %s", slot, t.addr(target, cl))
}

// present reports whether key is in the key space (and not expired),
// without touching it.
func (st *store) present(key []byte) bool {
	c, _ := st.keys.Load(string(key))
	return c != nil && (c.deadline.Load() == 0 || !c.expired(nowMs()))
}

func cmdClusterSetConfig(s *Server, cl *client, a [][]byte, _ *topology) {
	c := s.cluster
	if c.emulated {
		s.writeErr(cl, replyErr("ERR this node emulates a cluster alone (--cluster-emulated): its topology is fixed"))
		return
	}
	var conf clusterConfig
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
func (s *Server) setTopology(conf clusterConfig, newer bool) error {
	c := s.cluster
	t, err := compileTopology(conf)
	if err != nil {
		return replyErr("ERR invalid topology: " + err.Error())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.topo.Load(); conf.Epoch < old.conf.Epoch || newer && conf.Epoch == old.conf.Epoch {
		return replyErr(fmt.Sprintf("ERR the topology's epoch %d is older than this node's, %d", conf.Epoch, old.conf.Epoch))
	}
	if c.path != "" {
		if err := c.write(conf); err != nil {
			s.log.Error("cluster: writing the topology failed; it is not applied", "err", err)
			return replyErr("ERR writing " + clusterFile + ": " + err.Error())
		}
	}
	c.topo.Store(t)
	s.log.Info("cluster: topology set", "epoch", conf.Epoch, "nodes", len(conf.Nodes), "slots", t.assigned)
	return nil
}

// adoptPrimaryTopology takes the topology of this replica's primary, b (its
// CUCKOO.CLUSTER GETCONFIG), if it is newer and lists this node: a node that
// was down while the topology changed (a primary failed over, now made a
// replica of the new one) learns it from the primary it replicates, the
// one link it has. Not gossip: nothing else is asked or told.
func (s *Server) adoptPrimaryTopology(b []byte) {
	c := s.cluster
	var conf clusterConfig
	if err := json.Unmarshal(b, &conf); err != nil {
		return
	}
	if !slices.ContainsFunc(conf.Nodes, func(n clusterNodeConfig) bool { return n.ID == c.myID }) {
		return // not one of its nodes: the operator's to mend
	}
	conf.Myself = c.myID
	if err := s.setTopology(conf, true); err == nil {
		s.log.Info("cluster: took the primary's newer topology", "epoch", conf.Epoch)
	}
}

// ranges are node i's slot ranges, first and last included, in order.
func (t *topology) ranges(i int) [][2]int {
	var out [][2]int
	for slot := 0; slot < numSlots; slot++ {
		if int(t.owner[slot]) != i {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1] == slot-1 {
			out[n-1][1] = slot
		} else {
			out = append(out, [2]int{slot, slot})
		}
	}
	return out
}

// replicas are the indexes of primary i's replicas.
func (t *topology) replicas(i int) []int {
	var out []int
	for j, n := range t.nodes {
		if n.Role == "replica" && n.Primary == t.nodes[i].ID {
			out = append(out, j)
		}
	}
	return out
}

// writeNode writes a node as CLUSTER SLOTS does: ip, port, id, and a map of
// further endpoints (none).
func (t *topology) writeNode(cl *client, i int) {
	h, p := t.endpoint(i, cl)
	cl.wr.WriteArray(4)
	cl.wr.WriteBulkString(h)
	cl.wr.WriteInt(p)
	cl.wr.WriteBulkString(t.nodes[i].ID)
	cl.wr.WriteMap(0)
}

func cmdClusterSlots(s *Server, cl *client, a [][]byte, t *topology) {
	type slotRange struct {
		r    [2]int
		node int
	}
	var all []slotRange
	for i := range t.nodes {
		for _, r := range t.ranges(i) {
			all = append(all, slotRange{r, i})
		}
	}
	slices.SortFunc(all, func(x, y slotRange) int { return x.r[0] - y.r[0] })
	cl.wr.WriteArray(len(all))
	for _, x := range all {
		reps := t.replicas(x.node)
		cl.wr.WriteArray(3 + len(reps))
		cl.wr.WriteInt(x.r[0])
		cl.wr.WriteInt(x.r[1])
		t.writeNode(cl, x.node)
		for _, r := range reps {
			t.writeNode(cl, r)
		}
	}
}

func cmdClusterShards(s *Server, cl *client, a [][]byte, t *topology) {
	var primaries []int
	for i, n := range t.nodes {
		if n.Role == "primary" {
			primaries = append(primaries, i)
		}
	}
	cl.wr.WriteArray(len(primaries))
	for _, p := range primaries {
		cl.wr.WriteMap(2)
		cl.wr.WriteBulkString("slots")
		rs := t.ranges(p)
		cl.wr.WriteArray(2 * len(rs))
		for _, r := range rs {
			cl.wr.WriteInt(r[0])
			cl.wr.WriteInt(r[1])
		}
		cl.wr.WriteBulkString("nodes")
		nodes := append([]int{p}, t.replicas(p)...)
		cl.wr.WriteArray(len(nodes))
		for _, i := range nodes {
			h, port := t.endpoint(i, cl)
			role := "master"
			if i != p {
				role = "replica"
			}
			cl.wr.WriteMap(7)
			for _, kv := range []struct {
				k string
				v any
			}{{"id", t.nodes[i].ID}, {"port", port}, {"ip", h}, {"endpoint", h}, {"role", role},
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

func cmdClusterNodes(s *Server, cl *client, a [][]byte, t *topology) {
	var sb strings.Builder
	for i, n := range t.nodes {
		h, p := t.endpoint(i, cl)
		flags := "master"
		primary := "-"
		if n.Role == "replica" {
			flags, primary = "slave", n.Primary
		}
		if i == t.me {
			flags = "myself," + flags
		}
		fmt.Fprintf(&sb, "%s %s:%d@%d %s %s 0 0 %d connected", n.ID, h, p, p+10000, flags, primary, t.conf.Epoch)
		for _, r := range t.ranges(i) {
			if r[0] == r[1] {
				fmt.Fprintf(&sb, " %d", r[0])
			} else {
				fmt.Fprintf(&sb, " %d-%d", r[0], r[1])
			}
		}
		if i == t.me {
			for _, slot := range sortedKeys(t.migrating) {
				fmt.Fprintf(&sb, " [%d->-%s]", slot, t.nodes[t.migrating[slot]].ID)
			}
			for _, slot := range sortedKeys(t.importing) {
				fmt.Fprintf(&sb, " [%d-<-%s]", slot, t.nodes[t.importing[slot]].ID)
			}
		}
		sb.WriteByte('\n')
	}
	cl.wr.WriteVerbatim(sb.String())
}

func sortedKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func cmdClusterInfo(s *Server, cl *client, a [][]byte, t *topology) {
	state := "fail"
	if t.ok() {
		state = "ok"
	}
	size := 0
	for i := range t.nodes {
		if t.nodes[i].Role == "primary" && len(t.ranges(i)) > 0 {
			size++
		}
	}
	var sb strings.Builder
	for _, kv := range []struct {
		k string
		v any
	}{{"cluster_state", state}, {"cluster_slots_assigned", t.assigned}, {"cluster_slots_ok", t.assigned},
		{"cluster_slots_pfail", 0}, {"cluster_slots_fail", 0}, {"cluster_known_nodes", len(t.nodes)},
		{"cluster_size", size}, {"cluster_current_epoch", t.conf.Epoch}, {"cluster_my_epoch", t.conf.Epoch},
		{"cluster_stats_messages_sent", 0}, {"cluster_stats_messages_received", 0},
		{"total_cluster_links_buffer_limit_exceeded", 0}} {
		fmt.Fprintf(&sb, "%s:%v\r\n", kv.k, kv.v)
	}
	cl.wr.WriteVerbatim(sb.String())
}

// slotArg parses a slot argument, or answers the error and returns -1.
func slotArg(b []byte) int {
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 0 || n >= numSlots {
		return -1
	}
	return n
}

// COUNTKEYSINSLOT and GETKEYSINSLOT scan the key space: O(n) for n keys,
// computing each key's slot. A per-slot index would make them O(1) and O(k)
// but cost every key creation and drop a second map update, in cluster mode
// and out of it; these are operator commands (slot migration), rare enough
// for a scan.

func cmdClusterCountKeys(s *Server, cl *client, a [][]byte, t *topology) {
	slot := slotArg(a[2])
	if slot < 0 {
		s.writeErr(cl, errInvalidSlot)
		return
	}
	n := 0
	for k := range s.store.keys.All() {
		if keySlot(k) == slot {
			n++
		}
	}
	cl.wr.WriteInt(n)
}

func cmdClusterGetKeys(s *Server, cl *client, a [][]byte, t *topology) {
	slot := slotArg(a[2])
	count, err := strconv.Atoi(string(a[3]))
	if slot < 0 || err != nil || count < 0 {
		s.writeErr(cl, replyErr("ERR Invalid slot or number of keys"))
		return
	}
	var keys []string
	for k := range s.store.keys.All() {
		if len(keys) >= count {
			break
		}
		if keySlot(k) == slot {
			keys = append(keys, k)
		}
	}
	cl.wr.WriteArray(len(keys))
	for _, k := range keys {
		cl.wr.WriteBulkString(k)
	}
}
