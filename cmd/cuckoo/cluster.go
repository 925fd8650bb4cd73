package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// clusterSubcommand is one subcommand of "cuckoo cluster". Its run
// function parses its own flags, as a command's does.
type clusterSubcommand struct {
	name     string
	synopsis string // the arguments, after "cuckoo cluster NAME"
	summary  string // one line for the subcommand list
	run      func(e *env, args []string) error
}

// clusterSubcommands lists the subcommands in the order usage shows them.
// Other files add theirs from init (cluster_move.go: move-slots,
// rebalance).
var clusterSubcommands = []clusterSubcommand{
	{"create", "[--replicas N] [--user U] [--password P] HOST:PORT...", "make a cluster of new, empty nodes: slots split evenly, replicas paired", runClusterCreate},
	{"info", "[--json] [--user U] [--password P] HOST:PORT", "print every node's role, slots, keys, items and memory, and what is amiss", runClusterInfo},
	{"add-node", "[--replica-of ID|HOST:PORT] [--user U] [--password P] NEW_HOST:PORT EXISTING_HOST:PORT", "add a new, empty node: a primary with no slots, or a replica", runClusterAddNode},
}

const clusterDescribe = `
Cluster manages a Redis Cluster of cuckoo serve --cluster-enabled nodes.
The nodes do not gossip: this tool reads the topology (which node owns
which slots, which replicates which) from one node, changes it and pushes
it to every node with a new epoch (CUCKOO.CLUSTER SETCONFIG), then sets
replication with REPLICAOF. Every subcommand takes --user and --password
(or the environment variable REDISCLI_AUTH, as redis-cli does) to
authenticate to the nodes. Run "cuckoo cluster SUBCOMMAND -h" for one's
flags.`

// runCluster is "cuckoo cluster": it dispatches to a subcommand, which
// runs as a command of its own name ("cluster create"), so that its usage
// errors and -h name it.
func runCluster(e *env, args []string) error {
	if len(args) == 0 {
		return &usageError{msg: "cluster: missing subcommand", hint: clusterUsage()}
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(rest) > 0 {
			name, rest = rest[0], []string{"-h"}
			break
		}
		usage, list, _ := strings.Cut(clusterUsage(), "\n\n")
		fmt.Fprintf(e.stdout, "%s\n\n%s\n\n%s", usage, strings.TrimSpace(clusterDescribe), list)
		return nil
	}
	for _, sub := range clusterSubcommands {
		if sub.name == name {
			e.cmd = &command{name: "cluster " + sub.name, synopsis: sub.synopsis, summary: sub.summary, run: sub.run}
			return sub.run(e, rest)
		}
	}
	return &usageError{msg: fmt.Sprintf("cluster: unknown subcommand %q", name), hint: clusterUsage()}
}

// clusterUsage is the subcommand list.
func clusterUsage() string {
	var sb strings.Builder
	sb.WriteString("usage: cuckoo cluster SUBCOMMAND [flags] [arguments]\n\nSubcommands:\n")
	for _, sub := range clusterSubcommands {
		fmt.Fprintf(&sb, "  cuckoo cluster %s %s\n        %s\n", sub.name, sub.synopsis, sub.summary)
	}
	return sb.String()
}

const clusterCreateDescribe = `
Create makes a cluster of the nodes given: cuckoo serve --cluster-enabled
processes that are new (in no cluster, owning no slots, holding no keys,
replicas of nothing). With --replicas N the first 1/(N+1) of them are
primaries and the rest replicas, N for each primary: each replica goes to
a primary of the fewest replicas so far, preferring one on another host
(in the order given otherwise). The 16384 slots are split evenly among the
primaries in contiguous ranges. Every node is checked before any is
changed; then the topology is pushed to every node, each replica is sent
REPLICAOF its primary, and create waits (at most 30 s) until every replica
is connected and every node reports cluster_state:ok. It prints the
cluster: each node's id, address, role, slots and their count.

Replicas authenticate to a primary that needs a password with their own
--masterauth (and --masteruser): set them when starting the nodes.`

// runClusterCreate is "cuckoo cluster create".
func runClusterCreate(e *env, args []string) error {
	fs := e.flags(clusterCreateDescribe)
	replicas := countVar(fs, "replicas", 0, 0, math.MaxInt16, "the number of replicas of each primary")
	a := adminFlags(fs)
	if err := e.parse(fs, args, []string{"HOST:PORT"}, -1); err != nil {
		return err
	}
	defer a.close()
	addrs := fs.Args()
	var plan []plannedNode
	for _, s := range addrs {
		if strings.HasPrefix(s, "-") {
			return e.usageErrorf("flag %s after the positional arguments: flags go first", s)
		}
		host, port, err := parseNodeAddr(s)
		if err != nil {
			return e.usageErrorf("%v", err)
		}
		plan = append(plan, plannedNode{host: host, port: port})
	}
	if per := int(replicas.n) + 1; len(addrs)%per != 0 {
		return e.usageErrorf("%s %s not a multiple of --replicas %d plus 1: each primary needs %s", count(len(addrs), "node", "nodes"),
			plural(len(addrs), "is", "are"), replicas.n, count(int(replicas.n), "replica", "replicas"))
	}
	ctx := context.Background()
	// Check every node before changing any.
	seen := map[string]string{}
	for i, addr := range addrs {
		st, err := a.checkNew(ctx, addr)
		if err != nil {
			return fmt.Errorf("cluster create: %w; no node was changed", err)
		}
		if other, dup := seen[st.ID]; dup {
			return fmt.Errorf("cluster create: %s and %s are the same node, %s; no node was changed", other, addr, shortID(st.ID))
		}
		seen[st.ID] = addr
		plan[i].id = st.ID
	}
	topo := planCluster(plan, int(replicas.n))
	epoch, err := a.push(ctx, topo, nil)
	if err != nil {
		return fmt.Errorf("cluster create: %w", err)
	}
	topo.Epoch = epoch
	if err := a.replicate(ctx, &topo, nil); err != nil {
		return fmt.Errorf("cluster create: the topology is set (epoch %d), but %w", epoch, err)
	}
	if err := a.waitReady(ctx, &topo, clusterWait); err != nil {
		return fmt.Errorf("cluster create: the topology is set (epoch %d), but %w", epoch, err)
	}
	fmt.Fprintf(e.stdout, "created a cluster of %s and %s, epoch %d:\n\n",
		count(len(topo.primaries()), "primary", "primaries"), count(len(topo.Nodes)-len(topo.primaries()), "replica", "replicas"), epoch)
	return writeTopology(e.stdout, &topo)
}

// checkNew checks that the node at addr may join a cluster: reachable, in
// cluster mode, in no topology with other nodes, owning no slots, holding
// no keys, and replicating no one.
func (a *clusterAdmin) checkNew(ctx context.Context, addr string) (*nodeStatus, error) {
	st, err := a.status(ctx, addr)
	if err != nil {
		return nil, err
	}
	for _, n := range st.Topo.Nodes {
		if n.ID != st.ID || len(n.Slots) > 0 {
			return nil, fmt.Errorf("node %s is already in a cluster (epoch %d, %d nodes): only a new node can join one", addr, st.Topo.Epoch, len(st.Topo.Nodes))
		}
	}
	c := a.client(addr)
	keys, err := c.DBSize(ctx).Result()
	if err != nil {
		return nil, nodeError(addr, err)
	}
	if keys > 0 {
		return nil, fmt.Errorf("node %s holds %s: only an empty node can join a cluster", addr, count(int(keys), "key", "keys"))
	}
	if f := infoFields(ctx, c, "replication"); f["role"] != "master" {
		return nil, fmt.Errorf("node %s is a replica of %s:%s: send it REPLICAOF NO ONE first", addr, f["master_host"], f["master_port"])
	}
	return st, nil
}

// plannedNode is a node create places: its address and id.
type plannedNode struct {
	host string
	port int
	id   string
}

// planCluster is the topology of create: the first len(nodes)/(replicas+1)
// nodes are primaries owning an even split of the slots, the rest
// replicas. Each replica goes to a primary with the fewest replicas so far
// (so that every primary ends with the same number), preferring one on
// another host than the replica's, as Redis's anti-affinity does; among
// those, the first at or after the replica's place in round-robin order.
// On one host (loopback) that is plain round-robin.
func planCluster(nodes []plannedNode, replicas int) clusterTopology {
	np := len(nodes) / (replicas + 1)
	topo := clusterTopology{}
	for i, r := range splitSlots(np) {
		n := nodes[i]
		topo.Nodes = append(topo.Nodes, clusterNode{ID: n.id, Host: n.host, Port: n.port, Role: rolePrimary, Slots: [][2]int{r}})
	}
	count := make([]int, np)
	for j, n := range nodes[np:] {
		fewest := count[0]
		for _, c := range count {
			fewest = min(fewest, c)
		}
		pick := -1
		for k := range np {
			p := (j + k) % np
			if count[p] != fewest {
				continue
			}
			if pick < 0 {
				pick = p
			}
			if nodes[p].host != n.host {
				pick = p
				break
			}
		}
		count[pick]++
		topo.Nodes = append(topo.Nodes, clusterNode{ID: n.id, Host: n.host, Port: n.port, Role: roleReplica, Primary: nodes[pick].id})
	}
	return topo
}

// writeTopology prints topo's nodes as a table, each primary followed by
// its replicas.
func writeTopology(w io.Writer, topo *clusterTopology) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tADDRESS\tROLE\tPRIMARY\tSLOTS\tCOUNT")
	for _, n := range topo.grouped() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", shortID(n.ID), n.addr(), n.Role, dash(shortID(n.Primary)),
			dash(formatSlotRanges(n.Slots)), countSlots(n.Slots))
	}
	return tw.Flush()
}

// dash is s, or "-" for an empty cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

const clusterAddNodeDescribe = `
Add-node adds the node NEW_HOST:PORT, a new cuckoo serve --cluster-enabled
node (in no cluster, holding no keys), to the cluster of the node
EXISTING_HOST:PORT: as a primary owning no slots (cuckoo cluster rebalance
or move-slots then gives it some), or with --replica-of as a replica of
that primary, named by its id, a prefix of it, or its HOST:PORT. Every node
of the cluster must be reachable. The new topology is pushed to the new
node first, then to the others; a replica is then sent REPLICAOF and
add-node waits (at most 30 s) until its link is up.`

// runClusterAddNode is "cuckoo cluster add-node".
func runClusterAddNode(e *env, args []string) error {
	fs := e.flags(clusterAddNodeDescribe)
	replicaOf := fs.String("replica-of", "", "add the node as a replica of this primary: its `id` (or a prefix) or HOST:PORT")
	a := adminFlags(fs)
	if err := e.parse(fs, args, []string{"NEW_HOST:PORT", "EXISTING_HOST:PORT"}, 2); err != nil {
		return err
	}
	defer a.close()
	newAddr, seed := fs.Arg(0), fs.Arg(1)
	host, port, err := parseNodeAddr(newAddr)
	if err != nil {
		return e.usageErrorf("%v", err)
	}
	if _, _, err := parseNodeAddr(seed); err != nil {
		return e.usageErrorf("%v", err)
	}
	ctx := context.Background()
	v, err := a.fetch(ctx, seed)
	if err != nil {
		return fmt.Errorf("cluster add-node: %w", err)
	}
	for _, w := range v.Warnings {
		fmt.Fprintf(e.stderr, "cuckoo: cluster add-node: warning: %s\n", w)
	}
	if len(v.Errs) > 0 {
		return fmt.Errorf("cluster add-node: %d of the cluster's %d nodes %s unreachable (above): the new topology must reach every node; no node was changed",
			len(v.Errs), len(v.Topo.Nodes), plural(len(v.Errs), "is", "are"))
	}
	st, err := a.status(ctx, newAddr)
	if err != nil {
		return fmt.Errorf("cluster add-node: %w; no node was changed", err)
	}
	if n := v.Topo.node(st.ID); n != nil {
		return fmt.Errorf("cluster add-node: node %s is already in the cluster, as %s %s; no node was changed", newAddr, n.Role, n.name())
	}
	if n, err := v.Topo.find(newAddr); err == nil {
		return fmt.Errorf("cluster add-node: the cluster lists another node at %s, %s; no node was changed", newAddr, shortID(n.ID))
	}
	if _, err := a.checkNew(ctx, newAddr); err != nil {
		return fmt.Errorf("cluster add-node: %w; no node was changed", err)
	}
	node := clusterNode{ID: st.ID, Host: host, Port: port, Role: rolePrimary}
	if *replicaOf != "" {
		p, err := v.Topo.find(*replicaOf)
		if err != nil {
			return fmt.Errorf("cluster add-node: --replica-of: %w; no node was changed", err)
		}
		if p.Role != rolePrimary {
			return fmt.Errorf("cluster add-node: --replica-of %s: node %s is a replica; give a primary; no node was changed", *replicaOf, p.name())
		}
		node.Role, node.Primary = roleReplica, p.ID
	}
	topo := v.Topo.clone()
	topo.Nodes = append(topo.Nodes, node)
	// The new node first: the others may then name it to clients.
	epoch, err := a.push(ctx, topo, topo.pushOrder(nil, node.ID))
	if err != nil {
		return fmt.Errorf("cluster add-node: %w", err)
	}
	topo.Epoch = epoch
	if node.Role == roleReplica {
		if err := a.replicate(ctx, &topo, []string{node.ID}); err != nil {
			return fmt.Errorf("cluster add-node: the topology is set (epoch %d), but %w", epoch, err)
		}
	}
	if err := a.waitReady(ctx, &topo, clusterWait); err != nil {
		return fmt.Errorf("cluster add-node: the topology is set (epoch %d), but %w", epoch, err)
	}
	fmt.Fprintf(e.stdout, "added %s as a %s, epoch %d:\n\n", node.name(), describeRole(&topo, &node), epoch)
	return writeTopology(e.stdout, &topo)
}

// describeRole is "primary" or "replica of <primary>".
func describeRole(topo *clusterTopology, n *clusterNode) string {
	if n.Role != roleReplica {
		return n.Role
	}
	if p := topo.node(n.Primary); p != nil {
		return "replica of " + p.name()
	}
	return "replica of " + shortID(n.Primary)
}
