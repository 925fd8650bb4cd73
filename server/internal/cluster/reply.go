package cluster

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// The CLUSTER subcommands' replies, in Redis's shapes, from one topology
// t. local is the address the client reached this node at (nil if
// unknown): myself's address where the topology leaves it out.

// help is CLUSTER HELP's reply.
var help = []string{
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

// WriteHelp writes CLUSTER HELP's reply: its lines as status replies.
func WriteHelp(w *resp.Writer) { w.WriteHelp(help) }

// writeNode writes a node as CLUSTER SLOTS does: ip, port, id, and a map of
// further endpoints (none).
func writeNode(w *resp.Writer, t *topology.Map, i int, local net.Addr) {
	h, p := endpoint(t, i, local)
	w.WriteArray(4)
	w.WriteBulkString(h)
	w.WriteInt(p)
	w.WriteBulkString(t.Nodes()[i].ID)
	w.WriteMap(0)
}

// WriteSlots writes CLUSTER SLOTS's reply: each range of slots, in slot
// order, with its primary and the primary's replicas.
func WriteSlots(w *resp.Writer, t *topology.Map, local net.Addr) {
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
	w.WriteArray(len(all))
	for _, x := range all {
		reps := t.Replicas(x.node)
		w.WriteArray(3 + len(reps))
		w.WriteInt(x.r[0])
		w.WriteInt(x.r[1])
		writeNode(w, t, x.node, local)
		for _, r := range reps {
			writeNode(w, t, r, local)
		}
	}
}

// WriteShards writes CLUSTER SHARDS's reply: each primary's slot ranges
// and nodes (the primary, then its replicas).
func WriteShards(w *resp.Writer, t *topology.Map, local net.Addr) {
	var primaries []int
	for i, n := range t.Nodes() {
		if n.Role == topology.RolePrimary {
			primaries = append(primaries, i)
		}
	}
	w.WriteArray(len(primaries))
	for _, p := range primaries {
		w.WriteMap(2)
		w.WriteBulkString("slots")
		rs := t.Ranges(p)
		w.WriteArray(2 * len(rs))
		for _, r := range rs {
			w.WriteInt(r[0])
			w.WriteInt(r[1])
		}
		w.WriteBulkString("nodes")
		nodes := append([]int{p}, t.Replicas(p)...)
		w.WriteArray(len(nodes))
		for _, i := range nodes {
			h, port := endpoint(t, i, local)
			role := "master"
			if i != p {
				role = "replica"
			}
			w.WriteMap(7)
			for _, kv := range []struct {
				k string
				v any
			}{{"id", t.Nodes()[i].ID}, {"port", port}, {"ip", h}, {"endpoint", h}, {"role", role},
				{"replication-offset", 0}, {"health", "online"}} {
				w.WriteBulkString(kv.k)
				switch v := kv.v.(type) {
				case int:
					w.WriteInt(v)
				case string:
					w.WriteBulkString(v)
				}
			}
		}
	}
}

// WriteNodes writes CLUSTER NODES's reply: a line a node, with its cport
// port+10000 and, for myself, its migrating and importing slots.
func WriteNodes(w *resp.Writer, t *topology.Map, local net.Addr) {
	var sb strings.Builder
	for i, n := range t.Nodes() {
		h, p := endpoint(t, i, local)
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
	w.WriteVerbatim(sb.String())
}

// WriteInfo writes CLUSTER INFO's reply: cluster_state is ok only when
// every slot has an owner.
func WriteInfo(w *resp.Writer, t *topology.Map) {
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
	w.WriteVerbatim(sb.String())
}

// CountKeysInSlot and KeysInSlot scan the key space: O(n) for n keys,
// computing each key's slot. A per-slot index would make them O(1) and O(k)
// but cost every key creation and drop a second map update, in cluster mode
// and out of it; these are operator commands (slot migration), rare enough
// for a scan. Both count the keys whose deadline has passed but that are
// not yet dropped, as the key space holds them.

// CountKeysInSlot is the number of keys of ks in slot (CLUSTER
// COUNTKEYSINSLOT).
func CountKeysInSlot(ks *keyspace.Store, slot int) int {
	n := 0
	for k := range ks.All() {
		if topology.KeySlot(k) == slot {
			n++
		}
	}
	return n
}

// KeysInSlot is at most count keys of ks in slot, in the key space's order
// (CLUSTER GETKEYSINSLOT).
func KeysInSlot(ks *keyspace.Store, slot int, count int64) []string {
	var keys []string
	for k := range ks.All() {
		if int64(len(keys)) >= count {
			break
		}
		if topology.KeySlot(k) == slot {
			keys = append(keys, k)
		}
	}
	return keys
}
