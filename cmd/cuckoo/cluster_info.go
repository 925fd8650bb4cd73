package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
)

const clusterInfoDescribe = `
Info reads the topology of the cluster through the node HOST:PORT and asks
every node it lists for its state. For each node it prints the address,
id, role, primary (of a replica), slots (ranges and count), keys (DBSIZE),
items (the sum of its filters' items, INFO filters), memory (the filters'
bytes, INFO memory's used_memory_filters) and, for a replica, whether its
link to its primary is up; then whether all 16384 slots have an owner,
the slots being migrated or imported, and the nodes whose topology differs
from the seed's. --json prints the same as one JSON object for scripts
("problems" lists what is amiss).

Exit status, as redis-cli --cluster check's: 0 when all is well; 1 when
the report shows a problem (slots with no owner, a slot migrating or
importing, a node with another epoch or topology, a replica's link down);
2 when a node is unreachable (the report is printed first) or the seed
cannot be read.`

// clusterReport is the output of cluster info --json.
type clusterReport struct {
	Seed         string       `json:"seed"`
	Epoch        int64        `json:"epoch"`
	Nodes        []nodeReport `json:"nodes"` // each primary, then its replicas
	SlotsCovered int          `json:"slots_covered"`
	Uncovered    [][2]int     `json:"uncovered"` // slot ranges with no owner
	OpenSlots    []openSlot   `json:"open_slots"`
	Problems     []string     `json:"problems"` // empty when all is well
	unreachable  int          // nodes that did not answer: exit status 2
	topo         *clusterTopology
}

// nodeReport is one node of cluster info. The pointers are null when the
// node did not answer (and items when it has no INFO filters section).
type nodeReport struct {
	ID          string   `json:"id"`
	Address     string   `json:"address"`
	Role        string   `json:"role"`
	Primary     string   `json:"primary,omitempty"`
	Slots       [][2]int `json:"slots"`
	SlotCount   int      `json:"slot_count"`
	Epoch       *int64   `json:"epoch"` // the node's own
	Keys        *int64   `json:"keys"`
	Items       *int64   `json:"items"`
	MemoryBytes *int64   `json:"memory_bytes"`
	Link        string   `json:"link,omitempty"` // a replica's: "up" or "down"
	Error       string   `json:"error,omitempty"`
}

// openSlot is a slot a primary is migrating to, or importing from, a peer.
type openSlot struct {
	Slot  int    `json:"slot"`
	Node  string `json:"node"`
	State string `json:"state"` // "migrating" or "importing"
	Peer  string `json:"peer"`
}

// runClusterInfo is "cuckoo cluster info".
func runClusterInfo(e *env, args []string) error {
	fs := e.flags(clusterInfoDescribe)
	asJSON := fs.Bool("json", false, "print JSON")
	a := adminFlags(fs)
	if err := e.parse(fs, args, []string{"HOST:PORT"}, 1); err != nil {
		return err
	}
	defer a.close()
	if _, _, err := parseNodeAddr(fs.Arg(0)); err != nil {
		return e.usageErrorf("%v", err)
	}
	ctx := context.Background()
	v, err := a.fetch(ctx, fs.Arg(0))
	if err != nil {
		return fmt.Errorf("cluster info: %w", err)
	}
	r := a.report(ctx, v)
	err = writeReport(e.stdout, r, *asJSON)
	switch {
	case err != nil:
		return fmt.Errorf("cluster info: %w", err)
	case r.unreachable > 0:
		return fmt.Errorf("cluster info: %d of %d nodes %s unreachable", r.unreachable, len(r.Nodes), plural(r.unreachable, "is", "are"))
	case len(r.Problems) > 0:
		return exitStatus(1)
	}
	return nil
}

// report asks every reachable node of v for its keys, items, memory and
// link, and lists what is amiss.
func (a *clusterAdmin) report(ctx context.Context, v *clusterView) *clusterReport {
	r := &clusterReport{Seed: v.Seed, Epoch: v.Topo.Epoch, Uncovered: v.Topo.uncovered(),
		OpenSlots: []openSlot{}, Problems: slices.Clone(v.Warnings), topo: &v.Topo}
	if r.Problems == nil {
		r.Problems = []string{}
	}
	r.SlotsCovered = clusterSlots - countSlots(r.Uncovered)
	nodes := v.Topo.grouped()
	r.Nodes = make([]nodeReport, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		nr := &r.Nodes[i]
		*nr = nodeReport{ID: n.ID, Address: n.addr(), Role: n.Role, Primary: n.Primary,
			Slots: n.Slots, SlotCount: countSlots(n.Slots)}
		if nr.Slots == nil {
			nr.Slots = [][2]int{}
		}
		if err := v.Errs[n.ID]; err != nil {
			nr.Error = err.Error()
			r.unreachable++
			continue
		}
		nr.Epoch = &v.Nodes[n.ID].Topo.Epoch
		wg.Go(func() { a.nodeState(ctx, n, nr) })
	}
	wg.Wait()
	for i, n := range nodes {
		nr := &r.Nodes[i]
		if nr.Error == "" && nr.Role == roleReplica && nr.Link != "up" {
			r.Problems = append(r.Problems, fmt.Sprintf("replica %s: its link to its primary is %s", n.name(), nr.Link))
		}
		if nr.Error != "" && v.Errs[n.ID] == nil {
			r.unreachable++
			r.Problems = append(r.Problems, nr.Error)
		}
		for _, st := range []struct {
			state string
			slots map[int]string
			verb  string
		}{{"migrating", n.Migrating, "to"}, {"importing", n.Importing, "from"}} {
			for _, slot := range sortedSlots(st.slots) {
				r.OpenSlots = append(r.OpenSlots, openSlot{Slot: slot, Node: n.ID, State: st.state, Peer: st.slots[slot]})
				r.Problems = append(r.Problems, fmt.Sprintf("node %s: slot %d is %s %s %s", n.name(), slot, st.state, st.verb, r.nodeName(st.slots[slot])))
			}
		}
	}
	if len(r.Uncovered) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d of %d slots %s no owner: %s",
			countSlots(r.Uncovered), clusterSlots, plural(countSlots(r.Uncovered), "has", "have"), formatSlotRanges(r.Uncovered)))
	}
	return r
}

// nodeState fills in nr's keys, items, memory and link from the node n.
func (a *clusterAdmin) nodeState(ctx context.Context, n *clusterNode, nr *nodeReport) {
	c := a.client(n.addr())
	keys, err := c.DBSize(ctx).Result()
	if err != nil {
		nr.Error = nodeError(n.addr(), err).Error()
		return
	}
	nr.Keys = &keys
	f := infoFields(ctx, c, "memory", "replication", "filters")
	nr.Items = infoInt(f, "filter_items")
	nr.MemoryBytes = infoInt(f, "used_memory_filters")
	if n.Role == roleReplica {
		nr.Link = "down"
		if f["master_link_status"] == "up" {
			nr.Link = "up"
		}
	}
}

// infoInt is an INFO field's integer, or nil if it is missing.
func infoInt(f map[string]string, name string) *int64 {
	n, err := strconv.ParseInt(f[name], 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func sortedSlots(m map[int]string) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// nodeName names the node of id as messages do, or by its short id if the
// topology does not list it.
func (r *clusterReport) nodeName(id string) string {
	if n := r.topo.node(id); n != nil {
		return n.name()
	}
	return shortID(id)
}

func (r *clusterReport) writeText(w io.Writer) error {
	fmt.Fprintf(w, "cluster of %s (%s), epoch %d, through %s\n\n",
		count(len(r.Nodes), "node", "nodes"), count(len(r.topo.primaries()), "primary", "primaries"), r.Epoch, r.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ADDRESS\tID\tROLE\tPRIMARY\tSLOTS\tCOUNT\tKEYS\tITEMS\tMEMORY\tLINK")
	for _, n := range r.Nodes {
		mem := "-"
		if n.MemoryBytes != nil {
			mem = mebibytes(uint64(*n.MemoryBytes))
		}
		link := dash(n.Link)
		if n.Error != "" {
			link = "unreachable"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", n.Address, shortID(n.ID), n.Role,
			dash(shortID(n.Primary)), dash(formatSlotRanges(n.Slots)), n.SlotCount,
			countOrDash(n.Keys), countOrDash(n.Items), mem, link)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if len(r.Uncovered) == 0 {
		fmt.Fprintf(w, "all %d slots are covered\n", clusterSlots)
	}
	if len(r.OpenSlots) == 0 {
		fmt.Fprintln(w, "no slot is migrating or importing")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	if len(r.Problems) == 0 {
		_, err := fmt.Fprintln(w, "all nodes agree on the topology; all is well")
		return err
	}
	return nil
}

// countOrDash formats a count that may be unknown.
func countOrDash(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}
