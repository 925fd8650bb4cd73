package main

import (
	"context"
	"fmt"
	"strings"
)

// Fix makes the nodes agree again after a change stopped half-way (a push
// that some nodes missed, a node that was down), a replica was promoted
// without the topology (Sentinel with no reconfig script), or a failed
// primary came back: the newest topology any node holds (the highest
// epoch), with each such promoted replica in its primary's place, is pushed
// to every node that answers, with a new epoch, and every replica it names
// is made to replicate its primary if it does not. It is what the other
// subcommands tell the operator to run when they find the nodes disagreeing.

func init() {
	clusterSubcommands = append(clusterSubcommands,
		clusterSubcommand{"fix", "[--user U] [--password P] [--tls ...] HOST:PORT",
			"make the nodes agree: the newest topology pushed to all, replicas repointed", runClusterFix})
}

const clusterFixDescribe = `
Fix makes the nodes of the cluster HOST:PORT belongs to agree, after a
change that stopped half-way (a push some nodes missed) or a node that was
down: it takes the newest topology any node holds (the highest epoch);
puts in its primary's place a replica that replication made a primary
(Redis Sentinel without the reconfig script, or REPLICAOF NO ONE by hand)
while that primary is down or replicates it; pushes the result to every
node that answers with a new epoch; and sends REPLICAOF to each replica it
names that does not replicate its primary (a failed primary that came
back, for one). Nodes that cannot be reached are named;
run fix again once they are back. Slots left open by a stopped move stay
open: finish the move with move-slots.`

func runClusterFix(e *env, args []string) error {
	fs := e.flags(clusterFixDescribe)
	a := adminFlags(fs)
	if err := e.parse(fs, args, []string{"HOST:PORT"}, 1); err != nil {
		return err
	}
	defer a.close()
	ctx := context.Background()
	v, err := a.fetch(ctx, fs.Arg(0))
	if err != nil {
		return fmt.Errorf("cluster fix: %w", err)
	}
	// The newest topology: the seed's, or a node's of a higher epoch.
	best := v.Topo
	for _, st := range v.Nodes {
		if st.Topo.Epoch > best.Epoch {
			best = st.Topo
		}
	}
	// Every node of it that answers (the newest may list nodes the seed's
	// does not), and whether each already holds it.
	var order, down []string
	up := map[string]*nodeStatus{}
	agree := true
	for i := range best.Nodes {
		n := &best.Nodes[i]
		st, err := a.status(ctx, n.addr())
		switch {
		case err != nil:
			down = append(down, n.name())
			continue
		case st.ID != n.ID:
			return fmt.Errorf("cluster fix: the node at %s is %s, not %s: mend the topology by hand", n.addr(), shortID(st.ID), shortID(n.ID))
		}
		order = append(order, n.ID)
		up[n.ID] = st
		agree = agree && st.Topo.Epoch == best.Epoch && st.Topo.sameNodes(&best)
	}
	// A replica promoted behind the topology's back (by Sentinel without
	// the reconfig script, or by hand) takes its primary's place.
	for _, id := range promotedReplicas(ctx, a, &best, up) {
		r := best.node(id)
		fmt.Fprintf(e.stdout, "%s was promoted (its role is master): it takes over %s\n", r.name(), formatSlotRanges(best.node(r.Primary).Slots))
		best = promoted(&best, id)
		agree = false
	}
	epoch := best.Epoch
	if !agree {
		if epoch, err = a.push(ctx, best, order); err != nil {
			return fmt.Errorf("cluster fix: %w", err)
		}
		fmt.Fprintf(e.stdout, "the topology of epoch %d is now on %s, as epoch %d\n", best.Epoch, count(len(order), "node", "nodes"), epoch)
	}
	best.Epoch = epoch
	// Replicas that do not replicate their primary.
	var repoint []string
	for _, id := range order {
		n := best.node(id)
		if n.Role != roleReplica {
			continue
		}
		if !replicating(infoFields(ctx, a.client(n.addr()), "replication"), best.node(n.Primary)) {
			repoint = append(repoint, id)
		}
	}
	if len(repoint) > 0 {
		if err := a.replicate(ctx, &best, repoint); err != nil {
			return fmt.Errorf("cluster fix: %w", err)
		}
		for _, id := range repoint {
			n := best.node(id)
			fmt.Fprintf(e.stdout, "%s now replicates %s\n", n.name(), best.node(n.Primary).name())
		}
	}
	if agree && len(repoint) == 0 {
		fmt.Fprintf(e.stdout, "the %s (epoch %d): nothing to fix\n", count(len(order), "node that answers is alone", "nodes that answer agree"), epoch)
	}
	if len(down) > 0 {
		return fmt.Errorf("cluster fix: %s cannot be reached: run fix again once back", strings.Join(down, ", "))
	}
	if err := a.waitReady(ctx, &best, clusterWait); err != nil {
		return fmt.Errorf("cluster fix: %w", err)
	}
	return nil
}

// promotedReplicas are the replicas of topo that replication made primaries:
// a replica whose role is master while its primary cannot be reached, or
// replicates it. One a shard at most: if two replicas of a primary claim
// it, or the primary is still a master too, the shard is left as it is
// (Sentinel has not finished; run fix again, or failover by hand).
func promotedReplicas(ctx context.Context, a *clusterAdmin, topo *clusterTopology, up map[string]*nodeStatus) []string {
	var out []string
	for _, p := range topo.primaries() {
		var masters []*clusterNode
		for _, r := range topo.replicasOf(p.ID) {
			if up[r.ID] != nil && infoFields(ctx, a.client(r.addr()), "replication")["role"] == "master" {
				masters = append(masters, r)
			}
		}
		if len(masters) != 1 {
			continue
		}
		r := masters[0]
		if up[p.ID] != nil && !replicating(infoFields(ctx, a.client(p.addr()), "replication"), r) {
			continue
		}
		out = append(out, r.ID)
	}
	return out
}
