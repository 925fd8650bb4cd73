package cluster

import (
	"errors"
	"net"
	"strconv"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// The route decision's refusals, spelled as Redis spells them: each text is
// the reply.
var (
	// ErrCrossSlot: a command's keys are in different slots.
	ErrCrossSlot = errors.New("CROSSSLOT Keys in request don't hash to the same slot")
	// ErrDown: no node owns the slot.
	ErrDown = errors.New("CLUSTERDOWN Hash slot not served")
	// ErrTakingOver: the topology names this node the slot's primary while
	// it still replicates (a failover under way); clients retry.
	ErrTakingOver = errors.New("TRYAGAIN this node is taking over as primary of the slot: it is still a replica")
	// ErrRehashing: a command's keys are some here and some moved already,
	// on a slot this node migrates; clients retry.
	ErrRehashing = errors.New("TRYAGAIN Multiple keys request during rehashing of slot")
)

// Redirect sends a command to another node: -MOVED (the slot's owner, for
// good) or -ASK (the target of a migration, for this command, after
// ASKING). Its text is the reply.
type Redirect struct {
	Ask  bool   // -ASK rather than -MOVED
	Slot int    // the keys' slot
	Addr string // the node's host:port
}

func (r *Redirect) Error() string {
	kind := "MOVED "
	if r.Ask {
		kind = "ASK "
	}
	return kind + strconv.Itoa(r.Slot) + " " + r.Addr
}

// Command is what the route decision needs of a command.
type Command struct {
	Keys     [][]byte // its keys, all in the slot routed; at least one
	Write    bool     // it writes (EXEC: a command of its queue does)
	Asking   bool     // ASKING came before it (or before its MULTI)
	Readonly bool     // its connection sent READONLY (until READWRITE)
	// Local is the address the connection reached this node at: myself's
	// address when the topology leaves it out. nil if unknown.
	Local net.Addr
}

// SlotOf is the slot of keys (at least one), or ErrCrossSlot if they are
// not all in one.
func SlotOf(keys [][]byte) (int, error) {
	slot := topology.KeySlot(keys[0])
	for _, k := range keys[1:] {
		if topology.KeySlot(k) != slot {
			return -1, ErrCrossSlot
		}
	}
	return slot, nil
}

// Route is where c, a command on keys of slot, goes under topology t: nil
// if this node runs it, or the error that is the reply: a *Redirect,
// ErrDown, ErrTakingOver or ErrRehashing. ks is the node's key space: its
// replica flag, and, on a slot migrating, which keys are still here.
//
//   - No owner: ErrDown.
//   - Owned here: run, unless the node still replicates (ErrTakingOver,
//     but to a READONLY read) or migrates the slot and some keys have gone
//     (askIfMoved).
//   - Owned by another node: run if the node imports the slot and ASKING
//     came first, or if it replicates the owner and c is a READONLY read
//     (asked of the target, as the owner would, while the owner migrates
//     the slot); else -MOVED to the owner.
//
// Preconditions: the slot's lock held shared (Node.SlotLock), so that a
// key found here stays until the command has run.
func Route(t *topology.Map, ks *keyspace.Store, slot int, c *Command) error {
	owner, me, nodes := t.Owner(slot), t.Me(), t.Nodes()
	switch {
	case owner < 0:
		return ErrDown
	case owner == me:
		if ks.Replica.Load() && (c.Write || !c.Readonly) {
			// Named the slot's primary while still replicating: a
			// failover under way (cuckoo cluster failover). Clients retry
			// until it has its old primary's every write and takes them;
			// a READONLY read, stale by choice, is served.
			return ErrTakingOver
		}
		target, migrating := t.Migrating(slot)
		if !migrating {
			return nil
		}
		return askIfMoved(t, ks, slot, target, c)
	}
	if _, importing := t.Importing(slot); importing && c.Asking {
		return nil
	}
	if c.Readonly && !c.Write && nodes[me].Primary == nodes[owner].ID {
		// A replica's read, after READONLY. While its primary migrates
		// the slot, a key no longer here (its DEL replicated) is asked of
		// the target, as the primary would.
		if id, migrating := nodes[owner].Migrating[slot]; migrating {
			target, _ := t.ByID(id) // a primary listed: Compile checked
			return askIfMoved(t, ks, slot, target, c)
		}
		return nil
	}
	return &Redirect{Slot: slot, Addr: nodeAddr(t, owner, c.Local)}
}

// askIfMoved is the route of c's keys on a slot migrating to node target:
// here if they all are, -ASK if none is, ErrRehashing if some are (a
// multi-key command waits until they have all moved).
func askIfMoved(t *topology.Map, ks *keyspace.Store, slot, target int, c *Command) error {
	missing := 0
	for _, k := range c.Keys {
		if !ks.Present(k) {
			missing++
		}
	}
	switch {
	case missing == 0:
		return nil
	case missing < len(c.Keys):
		return ErrRehashing
	}
	return &Redirect{Ask: true, Slot: slot, Addr: nodeAddr(t, target, c.Local)}
}

// endpoint is node i's host and port; myself's, if the topology leaves them
// out (a new or emulated node), are those of local, the address a client
// reached this node at.
func endpoint(t *topology.Map, i int, local net.Addr) (string, int) {
	n := &t.Nodes()[i]
	if n.Host != "" && n.Port != 0 || i != t.Me() {
		return n.Host, n.Port
	}
	host, port := n.Host, n.Port
	if a, ok := local.(*net.TCPAddr); ok {
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
func nodeAddr(t *topology.Map, i int, local net.Addr) string {
	h, p := endpoint(t, i, local)
	return net.JoinHostPort(h, strconv.Itoa(p))
}
