package topology

import (
	"fmt"
	"slices"
)

// Map is a checked Config, with the lookups a node's redirect check and
// its CLUSTER commands need. Immutable: its methods may be called from any
// number of goroutines, and what they return must not be modified.
type Map struct {
	conf  Config
	nodes []Node // conf.Nodes, and myself if it is not listed
	me    int    // myself's index in nodes
	// owner is each slot's primary, an index in nodes, or -1.
	owner [Slots]int16
	// migrating and importing are myself's, by slot, to an index in nodes.
	migrating, importing map[int]int
	assigned             int            // slots with an owner
	byID                 map[string]int // index in nodes by id
}

// Compile checks conf and builds its lookups. Its error says what does not
// hold together (the package's Invariants), naming the node and the slot;
// conf is then not used.
func Compile(conf Config) (*Map, error) {
	if conf.Epoch < 0 {
		return nil, fmt.Errorf("epoch %d is negative", conf.Epoch)
	}
	if !IsNodeID(conf.Myself) {
		return nil, fmt.Errorf("myself %q is not a node id (40 hex digits)", conf.Myself)
	}
	if len(conf.Nodes) > MaxNodes {
		return nil, fmt.Errorf("%d nodes: at most %d", len(conf.Nodes), MaxNodes)
	}
	t := &Map{conf: conf, me: -1, migrating: map[int]int{}, importing: map[int]int{}}
	for i := range t.owner {
		t.owner[i] = -1
	}
	if err := t.indexNodes(); err != nil {
		return nil, err
	}
	if err := t.assignSlots(); err != nil {
		return nil, err
	}
	if err := t.markMoves(); err != nil {
		return nil, err
	}
	return t, nil
}

// indexNodes checks the nodes' ids and ports and indexes them by id
// (byID), with this node, listed or not, as me.
func (t *Map) indexNodes() error {
	conf := t.conf
	index := map[string]int{}
	for i, n := range conf.Nodes {
		if !IsNodeID(n.ID) {
			return fmt.Errorf("node %d: id %q is not a node id (40 hex digits)", i, n.ID)
		}
		if _, dup := index[n.ID]; dup {
			return fmt.Errorf("node %s listed twice", n.ID)
		}
		if n.Port < 0 || n.Port > 65535 || n.Port == 0 && n.ID != conf.Myself {
			return fmt.Errorf("node %s: port %d", n.ID, n.Port)
		}
		index[n.ID] = i
	}
	t.nodes = conf.Nodes
	t.byID = index
	if me, ok := index[conf.Myself]; ok {
		t.me = me
	} else {
		// A node not (yet) in a topology lists itself, with no slots.
		t.nodes = append(slices.Clone(conf.Nodes), Node{ID: conf.Myself, Role: RolePrimary})
		t.me = len(t.nodes) - 1
		index[conf.Myself] = t.me
	}
	return nil
}

// assignSlots checks each node's role (a replica's primary is a primary
// listed, and it owns no slots) and gives each slot its owner: no slot
// has two.
func (t *Map) assignSlots() error {
	nodes := t.conf.Nodes
	for i, n := range nodes {
		switch n.Role {
		case RolePrimary:
			if n.Primary != "" {
				return fmt.Errorf("node %s: a primary with a primary", n.ID)
			}
		case RoleReplica:
			p, ok := t.byID[n.Primary]
			if !ok || nodes[p].Role != RolePrimary {
				return fmt.Errorf("node %s: primary %q is not a primary listed", n.ID, n.Primary)
			}
			if len(n.Slots) > 0 || len(n.Migrating) > 0 || len(n.Importing) > 0 {
				return fmt.Errorf("node %s: a replica owns no slots", n.ID)
			}
		default:
			return fmt.Errorf("node %s: role %q: want primary or replica", n.ID, n.Role)
		}
		for _, r := range n.Slots {
			if r[0] < 0 || r[1] >= Slots || r[0] > r[1] {
				return fmt.Errorf("node %s: slot range %d-%d", n.ID, r[0], r[1])
			}
			for slot := r[0]; slot <= r[1]; slot++ {
				if o := t.owner[slot]; o >= 0 {
					return fmt.Errorf("slot %d owned by both %s and %s", slot, nodes[o].ID, n.ID)
				}
				t.owner[slot] = int16(i)
				t.assigned++
			}
		}
	}
	return nil
}

// markMoves checks the slots each node migrates (it owns them) and imports
// (it does not), each to or from another primary listed, and keeps this
// node's in migrating and importing.
func (t *Map) markMoves() error {
	for i, n := range t.conf.Nodes {
		for _, m := range []struct {
			slots   map[int]string
			owned   bool
			into    map[int]int
			meaning string
		}{{n.Migrating, true, t.migrating, "migrating"}, {n.Importing, false, t.importing, "importing"}} {
			for slot, id := range m.slots {
				peer, ok := t.byID[id]
				switch {
				case slot < 0 || slot >= Slots:
					return fmt.Errorf("node %s: %s slot %d", n.ID, m.meaning, slot)
				case !ok || peer == i || t.nodes[peer].Role != RolePrimary:
					return fmt.Errorf("node %s: %s slot %d: peer %q is not another primary listed", n.ID, m.meaning, slot, id)
				case (int(t.owner[slot]) == i) != m.owned:
					return fmt.Errorf("node %s: %s slot %d: it owns it %v", n.ID, m.meaning, slot, !m.owned)
				}
				if i == t.me {
					m.into[slot] = peer
				}
			}
		}
	}
	return nil
}

// Config is the Config t was compiled from, as GETCONFIG returns it.
func (t *Map) Config() Config { return t.conf }

// Epoch is the topology's epoch.
func (t *Map) Epoch() int64 { return t.conf.Epoch }

// Nodes are the topology's nodes: the Config's, then myself if the Config
// does not list it. A node's index in it names the node in every other
// lookup.
func (t *Map) Nodes() []Node { return t.nodes }

// Me is myself's index in Nodes.
func (t *Map) Me() int { return t.me }

// ByID is the index in Nodes of the node with id, if there is one.
func (t *Map) ByID(id string) (int, bool) {
	i, ok := t.byID[id]
	return i, ok
}

// Owner is the index in Nodes of slot's primary, or -1 if no node owns it.
// Preconditions: 0 <= slot < Slots.
func (t *Map) Owner(slot int) int { return int(t.owner[slot]) }

// Migrating is the index in Nodes of the node myself moves slot to, if it
// is migrating it.
func (t *Map) Migrating(slot int) (target int, ok bool) {
	target, ok = t.migrating[slot]
	return target, ok
}

// Importing is the index in Nodes of the node myself takes slot over from,
// if it is importing it.
func (t *Map) Importing(slot int) (source int, ok bool) {
	source, ok = t.importing[slot]
	return source, ok
}

// MigratingSlots are the slots myself is migrating, in order.
func (t *Map) MigratingSlots() []int { return sortedKeys(t.migrating) }

// ImportingSlots are the slots myself is importing, in order.
func (t *Map) ImportingSlots() []int { return sortedKeys(t.importing) }

// Assigned is the number of slots with an owner: CLUSTER INFO's
// cluster_slots_assigned.
func (t *Map) Assigned() int { return t.assigned }

// OK reports whether every slot has an owner: CLUSTER INFO's cluster_state
// (Redis's cluster-require-full-coverage yes).
func (t *Map) OK() bool { return t.assigned == Slots }

// Ranges are node i's slot ranges, first and last included, in order, each
// as long as it can be (two ranges never touch). O(Slots).
func (t *Map) Ranges(i int) [][2]int {
	var out [][2]int
	for slot := range Slots {
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

// Replicas are the indexes in Nodes of primary i's replicas, in order.
func (t *Map) Replicas(i int) []int {
	var out []int
	for j, n := range t.nodes {
		if n.Role == RoleReplica && n.Primary == t.nodes[i].ID {
			out = append(out, j)
		}
	}
	return out
}

func sortedKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
