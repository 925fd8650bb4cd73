package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// Failover inside a shard: a replica becomes its primary's successor. The
// replication is Redis's (REPLICAOF NO ONE promotes a replica, which keeps
// its replication history, so the other replicas continue from it); the
// topology the nodes push clients to is the tool's, pushed with a new epoch.
//
// A coordinated failover (the primary up) loses nothing:
//
//  1. push a topology that names the replica primary of the slots and the
//     old primary its replica: the old primary now sends its slots'
//     commands to the replica (-MOVED), which answers writes -TRYAGAIN
//     (clients retry) while it still replicates;
//  2. wait until the replica has every write the old primary took (their
//     replication offsets equal, and the primary's still);
//  3. REPLICAOF NO ONE on the replica: it takes writes;
//  4. REPLICAOF the new primary on the old one and the shard's other
//     replicas.
//
// A forced failover (--force: the primary is down) skips 1 and 2: writes the
// replica had not received are lost, as with any asynchronous replication
// (WAIT is the client's guard). With --sentinel, the tool is Redis
// Sentinel's client-reconfig-script: Sentinel has promoted the replica and
// repointed the others itself, and the tool pushes the topology only.

func init() {
	clusterSubcommands = append(clusterSubcommands,
		clusterSubcommand{"failover", "[--force] [--timeout D] [--user U] [--password P] REPLICA_HOST:PORT | --sentinel MASTER ROLE STATE FROM_IP FROM_PORT TO_IP TO_PORT",
			"make a replica its shard's primary: coordinated, forced, or after Redis Sentinel's", runClusterFailover})
}

const clusterFailoverDescribe = `
Failover makes the replica REPLICA_HOST:PORT the primary of its shard: it
takes over its primary's slots, and the old primary and the shard's other
replicas replicate it. With the primary up, the failover is coordinated
and loses no write: the primary's clients are sent to the replica, which
makes them retry (-TRYAGAIN) until it has every write of the primary, then
takes writes. With the primary down, --force promotes the replica at once;
writes it had not received are lost (a client that must not lose one
follows it with WAIT).

With --sentinel, the arguments are those Redis Sentinel passes its
client-reconfig-script after a failover (the master name, the sentinel's
role, the state, the old primary's address and the new one's); the tool
then pushes the topology that names the new primary, if the sentinel is
the failover's leader, and does nothing otherwise. In sentinel.conf:

    sentinel client-reconfig-script SHARD /usr/local/bin/cuckoo-reconfig

with /usr/local/bin/cuckoo-reconfig an executable holding

    #!/bin/sh
    exec cuckoo cluster failover --sentinel "$@"

Its exit status is 1 (Sentinel retries) when a node cannot be reached.
The addresses Sentinel knows the nodes by must be those of the topology.`

func runClusterFailover(e *env, args []string) error {
	fs := e.flags(clusterFailoverDescribe)
	a := adminFlags(fs)
	force := fs.Bool("force", false, "promote the replica at once, without its primary (which is down)")
	sentinel := fs.Bool("sentinel", false, "run as Redis Sentinel's client-reconfig-script (its seven arguments)")
	timeout := fs.Duration("timeout", 10*time.Second, "how long a coordinated failover waits for the replica to catch up")
	need, hi := []string{"REPLICA_HOST:PORT"}, 1
	if hasFlag(args, "sentinel") {
		need, hi = []string{"MASTER", "ROLE", "STATE", "FROM_IP", "FROM_PORT", "TO_IP", "TO_PORT"}, 7
	}
	if err := e.parse(fs, args, need, hi); err != nil {
		return err
	}
	defer a.close()
	ctx := context.Background()
	if *sentinel {
		if *force {
			return e.usageErrorf("--sentinel and --force: Sentinel has promoted the replica already")
		}
		return sentinelReconfig(ctx, e, a, fs.Args())
	}
	f := &failover{a: a, out: e.stdout, timeout: *timeout}
	if err := f.run(ctx, fs.Arg(0), *force); err != nil {
		return fmt.Errorf("cluster failover: %w", err)
	}
	return nil
}

// hasFlag reports whether args, before the first positional one, set the
// boolean flag name.
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		switch a {
		case "-" + name, "--" + name, "-" + name + "=true", "--" + name + "=true":
			return true
		}
		if len(a) == 0 || a[0] != '-' || a == "--" {
			return false
		}
	}
	return false
}

// failover is one failover of a shard.
type failover struct {
	a       *clusterAdmin
	out     io.Writer
	timeout time.Duration
}

func (f *failover) run(ctx context.Context, replicaAddr string, force bool) error {
	if _, _, err := parseNodeAddr(replicaAddr); err != nil {
		return err
	}
	v, err := f.a.fetch(ctx, replicaAddr)
	if err != nil {
		return err
	}
	r, err := v.Topo.find(replicaAddr)
	if err != nil {
		return err
	}
	if r.Role != roleReplica {
		return fmt.Errorf("%s is a primary already", r.name())
	}
	p := v.Topo.node(r.Primary)
	_, primaryDown := v.Errs[p.ID]
	switch {
	case primaryDown && !force:
		return fmt.Errorf("its primary %s cannot be reached (%v): give --force to promote %s without it", p.name(), v.Errs[p.ID], r.name())
	case !primaryDown && !force:
		if f := infoFields(ctx, f.a.client(r.addr()), "replication"); f["master_link_status"] != "up" || !replicating(f, p) {
			return fmt.Errorf("%s is not replicating %s with its link up (master_link_status %q): a coordinated failover needs it", r.name(), p.name(), f["master_link_status"])
		}
	}
	next := promoted(&v.Topo, r.ID)
	reachable := next.pushOrder(v.Errs, r.ID)
	start := time.Now()
	if force {
		if err := f.a.client(r.addr()).Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
			return fmt.Errorf("REPLICAOF NO ONE on %s: %w", r.name(), nodeError(r.addr(), err))
		}
	}
	epoch, err := f.a.push(ctx, next, reachable)
	if err != nil {
		return err
	}
	next.Epoch = epoch
	if !force {
		if err := f.catchUp(ctx, p, r); err != nil {
			// Give the shard back to the old primary, which still holds
			// every write.
			if _, perr := f.a.push(ctx, v.Topo, reachable); perr != nil {
				return fmt.Errorf("%w; and putting the old topology back failed: %v", err, perr)
			}
			return fmt.Errorf("%w; the old topology is back (a new epoch): nothing changed", err)
		}
		if err := f.a.client(r.addr()).Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
			return fmt.Errorf("REPLICAOF NO ONE on %s: %w", r.name(), nodeError(r.addr(), err))
		}
	}
	var repoint []string
	for _, n := range next.replicasOf(r.ID) {
		if v.Errs[n.ID] == nil {
			repoint = append(repoint, n.ID)
		}
	}
	if len(repoint) > 0 { // replicate's nil is every replica
		if err := f.a.replicate(ctx, &next, repoint); err != nil {
			return fmt.Errorf("%s is the primary (epoch %d), but %w", r.name(), epoch, err)
		}
	}
	fmt.Fprintf(f.out, "%s is the primary of %s (epoch %d) after %v", r.name(), formatSlotRanges(next.node(r.ID).Slots), epoch, time.Since(start).Round(time.Millisecond))
	if primaryDown {
		fmt.Fprintf(f.out, "; %s is down: restarted, it becomes a replica once REPLICAOF %s %d is sent to it (Sentinel does), and takes the topology from its new primary", p.name(), r.Host, r.Port)
	}
	fmt.Fprintln(f.out)
	return nil
}

// catchUp waits until replica r has every write primary p took: their
// offsets equal, and p's unchanged across a wait (the writes running when
// the topology changed have finished).
func (f *failover) catchUp(ctx context.Context, p, r *clusterNode) error {
	deadline := time.Now().Add(f.timeout)
	pc, rc := f.a.client(p.addr()), f.a.client(r.addr())
	last := int64(-1)
	for {
		po, err1 := strconv.ParseInt(infoFields(ctx, pc, "replication")["master_repl_offset"], 10, 64)
		ro, err2 := strconv.ParseInt(infoFields(ctx, rc, "replication")["slave_repl_offset"], 10, 64)
		if err1 == nil && err2 == nil && ro >= po {
			if po == last {
				return nil
			}
			last = po
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not catch up with %s within %v (offsets %d and %d)", r.name(), p.name(), f.timeout, ro, po)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// promoted is t with replica id made its primary's successor: it owns the
// primary's slots (and open slots), and the primary and its other replicas
// replicate it.
func promoted(t *clusterTopology, id string) clusterTopology {
	next := t.clone()
	r := next.node(id)
	p := next.node(r.Primary)
	r.Role, r.Primary = rolePrimary, ""
	r.Slots, r.Migrating, r.Importing = p.Slots, p.Migrating, p.Importing
	for i := range next.Nodes {
		n := &next.Nodes[i]
		if n.Role == roleReplica && n.Primary == p.ID {
			n.Primary = id
		}
		// The peers of open slots name the primary by id: now the replica.
		for s, peer := range n.Migrating {
			if peer == p.ID {
				n.Migrating[s] = id
			}
		}
		for s, peer := range n.Importing {
			if peer == p.ID {
				n.Importing[s] = id
			}
		}
	}
	p.Role, p.Primary = roleReplica, id
	p.Slots, p.Migrating, p.Importing = nil, nil, nil
	return next
}

// sentinelReconfig is the client-reconfig-script: MASTER ROLE STATE FROM_IP
// FROM_PORT TO_IP TO_PORT. Only the leader acts; a node it cannot reach
// exits 1, so that Sentinel runs it again.
func sentinelReconfig(ctx context.Context, e *env, a *clusterAdmin, args []string) error {
	role, from, to := args[1], net.JoinHostPort(args[3], args[4]), net.JoinHostPort(args[5], args[6])
	if role != "leader" {
		return nil // every sentinel runs the script; the leader pushes
	}
	retry := func(err error) error {
		fmt.Fprintf(e.stderr, "cuckoo: cluster failover --sentinel %s: %v\n", args[0], err)
		return exitStatus(1)
	}
	v, err := a.fetch(ctx, to)
	if err != nil {
		return retry(err)
	}
	r, err := v.Topo.find(to)
	if err != nil {
		return fmt.Errorf("cluster failover --sentinel: the new primary: %w", err)
	}
	if r.Role == rolePrimary {
		fmt.Fprintf(e.stdout, "%s is a primary in the topology already (epoch %d)\n", r.name(), v.Topo.Epoch)
		return nil
	}
	if p := v.Topo.node(r.Primary); p == nil || p.addr() != from {
		return fmt.Errorf("cluster failover --sentinel: %s replicates %s in the topology, not %s", r.name(), shortID(r.Primary), from)
	}
	next := promoted(&v.Topo, r.ID)
	epoch, err := a.push(ctx, next, next.pushOrder(v.Errs, r.ID))
	if err != nil {
		return retry(err)
	}
	fmt.Fprintf(e.stdout, "%s is the primary of %s (epoch %d), as Sentinel %s decided\n", r.name(), formatSlotRanges(next.node(r.ID).Slots), epoch, args[0])
	return nil
}
