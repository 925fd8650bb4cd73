package main

import (
	"context"
	"fmt"
	"strings"
)

func init() {
	clusterSubcommands = append(clusterSubcommands,
		clusterSubcommand{"del-node", "[--user U] [--password P] [--tls ...] NODE EXISTING_HOST:PORT",
			"remove a node that owns no slots (a replica, an emptied primary, a dead one) and shut it down", runClusterDelNode})
}

const clusterDelNodeDescribe = `
Del-node removes NODE (its id, a prefix of it, or its HOST:PORT) from the
cluster of the node EXISTING_HOST:PORT: a replica, a primary that owns no
slots and has no replicas (move its slots away with move-slots or
rebalance first), or a node that is dead for good. The topology without it
is pushed to every other node, which must all answer; then, if NODE can be
reached, it is shut down (SHUTDOWN NOSAVE), as redis-cli --cluster del-node
does, so that no client is served by a node the cluster no longer knows.`

func runClusterDelNode(e *env, args []string) error {
	fs := e.flags(clusterDelNodeDescribe)
	a := adminFlags(fs)
	if err := e.parse(fs, args, []string{"NODE", "EXISTING_HOST:PORT"}, 2); err != nil {
		return err
	}
	defer a.close()
	ctx := context.Background()
	v, err := a.fetch(ctx, fs.Arg(1))
	if err != nil {
		return fmt.Errorf("cluster del-node: %w", err)
	}
	n, err := v.Topo.find(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("cluster del-node: %w", err)
	}
	switch {
	case len(n.Slots) > 0:
		return fmt.Errorf("cluster del-node: %s owns slots %s: move them away first (move-slots, or rebalance once it is gone)", n.name(), formatSlotRanges(n.Slots))
	case len(n.Migrating) > 0 || len(n.Importing) > 0:
		return fmt.Errorf("cluster del-node: %s has slots open (a move stopped half-way): finish the move first", n.name())
	case len(v.Topo.replicasOf(n.ID)) > 0:
		return fmt.Errorf("cluster del-node: %s has replicas: remove them first, or fail over to one", n.name())
	}
	for id, err := range v.Errs {
		if id != n.ID {
			return fmt.Errorf("cluster del-node: %w; every other node must answer (nothing was changed)", err)
		}
	}
	next := v.Topo.clone()
	for i := range next.Nodes {
		if next.Nodes[i].ID == n.ID {
			next.Nodes = append(next.Nodes[:i], next.Nodes[i+1:]...)
			break
		}
	}
	if len(next.Nodes) == 0 {
		return fmt.Errorf("cluster del-node: %s is the cluster's last node", n.name())
	}
	epoch, err := a.push(ctx, next, nil)
	if err != nil {
		return fmt.Errorf("cluster del-node: %w", err)
	}
	fmt.Fprintf(e.stdout, "%s is no longer in the cluster (epoch %d)", n.name(), epoch)
	if _, down := v.Errs[n.ID]; !down {
		// SHUTDOWN answers nothing when it works: the connection closes.
		err := a.client(n.addr()).Do(ctx, "SHUTDOWN", "NOSAVE").Err()
		if err != nil && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "connection reset") {
			fmt.Fprintln(e.stdout)
			return fmt.Errorf("cluster del-node: %s was removed, but SHUTDOWN failed: %w", n.name(), nodeError(n.addr(), err))
		}
		fmt.Fprint(e.stdout, "; it was shut down")
	}
	fmt.Fprintln(e.stdout)
	return nil
}
