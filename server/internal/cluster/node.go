package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cuckoohash/cuckoo/server/internal/config"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// File is the topology's file in the data directory.
const File = "cluster.json"

// MaxConfigJSON bounds the topology a replica reads from its primary
// (CUCKOO.CLUSTER GETCONFIG): every slot migrating and a thousand nodes
// take about 1.5 MB.
const MaxConfigJSON = 64 << 20

// ErrEmulated refuses a topology pushed to an emulated node.
var ErrEmulated = errors.New("ERR this node emulates a cluster alone (--cluster-emulated): its topology is fixed")

// Node is this server as a node of a cluster: its id, the topology in
// force, its file and the slot locks (doc.go, "Protocol").
type Node struct {
	id       string
	emulated bool   // owns every slot alone; the topology cannot change
	path     string // cluster.json; "" without a data directory
	log      *slog.Logger
	// mu serialises topology changes: check, write the file, publish.
	mu sync.Mutex
	// topo is the topology in force, immutable, replaced as a whole:
	// published only once its file is written.
	topo atomic.Pointer[topology.Map]
	// slots: a command on a key holds its slot's lock shared from its
	// redirect check to its reply; MIGRATE holds it exclusively while it
	// moves a key of the slot (Mover).
	slots [topology.Slots]sync.RWMutex
}

// New returns the node for a server whose data directory is dir ("" for
// none): its id and topology are cluster.json's, or, at the first start, a
// new id (written to the file) and a topology of this node alone, owning
// no slots. An emulated node owns every slot alone, and its topology
// cannot change. A file that cannot be read, or that does not hold a
// topology for a node id, is an error: the node does not start. log (nil:
// slog.Default()) receives the topology changes.
func New(dir string, emulated bool, log *slog.Logger) (*Node, error) {
	if log == nil {
		log = slog.Default()
	}
	n := &Node{emulated: emulated, log: log}
	conf := topology.Config{}
	if dir != "" {
		n.path = filepath.Join(dir, File)
		b, err := os.ReadFile(n.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("cluster: %w", err)
		default:
			if err := json.Unmarshal(b, &conf); err != nil {
				return nil, fmt.Errorf("cluster: %s: %w", n.path, err)
			}
			if !topology.IsNodeID(conf.Myself) {
				return nil, fmt.Errorf("cluster: %s: myself %q is not a node id", n.path, conf.Myself)
			}
		}
	}
	if conf.Myself == "" {
		conf.Myself = topology.NewNodeID()
		if n.path != "" {
			if err := n.write(conf); err != nil {
				return nil, fmt.Errorf("cluster: %w", err)
			}
		}
	}
	n.id = conf.Myself
	if emulated {
		conf = topology.Config{Myself: n.id, Nodes: []topology.Node{
			{ID: n.id, Role: topology.RolePrimary, Slots: [][2]int{{0, topology.Slots - 1}}}}}
	}
	t, err := topology.Compile(conf)
	if err != nil {
		return nil, fmt.Errorf("cluster: %s: %w", n.path, err) // only a file's topology can fail
	}
	n.topo.Store(t)
	return n, nil
}

// ID is the node's id, 40 hex digits (CLUSTER MYID).
func (n *Node) ID() string { return n.id }

// Emulated reports whether the node owns every slot alone
// (--cluster-emulated), with a topology that cannot change.
func (n *Node) Emulated() bool { return n.emulated }

// Topology is the topology in force. It is immutable: a command loads it
// once and sees one topology, while a change publishes another.
func (n *Node) Topology() *topology.Map { return n.topo.Load() }

// SlotLock is slot's lock: a command on a key of the slot holds it shared
// from its route decision to its reply; moving a key of the slot (Mover)
// holds it exclusively.
func (n *Node) SlotLock(slot int) *sync.RWMutex { return &n.slots[slot] }

// ConfigJSON is the topology in force as JSON (CUCKOO.CLUSTER GETCONFIG).
func ConfigJSON(t *topology.Map) []byte {
	b, _ := json.Marshal(t.Config()) // a Config always encodes
	return b
}

// SetConfig puts in force the topology b, a JSON topology.Config pushed by
// CUCKOO.CLUSTER SETCONFIG, once written to cluster.json. It refuses, with
// an error whose text is the reply, a topology that does not decode (an
// unknown field included), one for another node, one that does not hold
// together, one older than the node's (the same epoch is taken again), and
// any on an emulated node; the topology in force is then unchanged.
func (n *Node) SetConfig(b []byte) error {
	if n.emulated {
		return ErrEmulated
	}
	var conf topology.Config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&conf); err != nil {
		return fmt.Errorf("ERR invalid topology JSON: %w", err)
	}
	if conf.Myself != n.id {
		return fmt.Errorf("ERR the topology is for node %q; this is node %s", conf.Myself, n.id)
	}
	return n.set(conf, false)
}

// AdoptPrimary takes the topology of this replica's primary, b (its
// CUCKOO.CLUSTER GETCONFIG), if it is newer and lists this node: a node that
// was down while the topology changed (a primary failed over, now made a
// replica of the new one) learns it from the primary it replicates, the
// one link it has. Not gossip: nothing else is asked or told. Anything else
// (not a topology, not listing this node, not newer) is ignored.
func (n *Node) AdoptPrimary(b []byte) {
	var conf topology.Config
	if err := json.Unmarshal(b, &conf); err != nil {
		return
	}
	if !slices.ContainsFunc(conf.Nodes, func(x topology.Node) bool { return x.ID == n.id }) {
		return // not one of its nodes: the operator's to mend
	}
	conf.Myself = n.id
	if err := n.set(conf, true); err == nil {
		n.log.Info("cluster: took the primary's newer topology", "epoch", conf.Epoch)
	}
}

// set checks conf, persists it and puts it in force, unless its epoch is
// older than the node's (or, if newer, not newer). Its errors are replies.
func (n *Node) set(conf topology.Config, newer bool) error {
	t, err := topology.Compile(conf)
	if err != nil {
		return fmt.Errorf("ERR invalid topology: %w", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if old := n.topo.Load(); conf.Epoch < old.Epoch() || newer && conf.Epoch == old.Epoch() {
		return fmt.Errorf("ERR the topology's epoch %d is older than this node's, %d", conf.Epoch, old.Epoch())
	}
	if n.path != "" {
		if err := n.write(conf); err != nil {
			n.log.Error("cluster: writing the topology failed; it is not applied", "err", err)
			return fmt.Errorf("ERR writing %s: %w", File, err)
		}
	}
	// Publish last: a node never serves a topology it would not find
	// again after a restart.
	n.topo.Store(t)
	n.log.Info("cluster: topology set", "epoch", conf.Epoch, "nodes", len(conf.Nodes), "slots", t.Assigned())
	return nil
}

// write persists conf as cluster.json, atomically (a temporary file,
// fsynced, renamed over the old one).
func (n *Node) write(conf topology.Config) error {
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteFile(n.path, append(b, '\n'))
}
