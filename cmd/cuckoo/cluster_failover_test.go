package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/prereq"
	"github.com/redis/go-redis/v9"
)

// startShards starts 2n nodes and makes them n primaries with a replica
// each; it returns the nodes and, for each primary i, the index of its
// replica.
func startShards(t *testing.T, n int) ([]*clusterProc, map[int]int) {
	t.Helper()
	nodes := startClusterNodes(t, cuckooBin(t), 2*n, "--appendfsync", "always")
	if code, out, errOut := cuckoo(t, "", append([]string{"cluster", "create", "--replicas", "1"}, addrsOf(nodes)...)...); code != 0 {
		t.Fatalf("cluster create: exit %d\n%s%s", code, out, errOut)
	}
	replicaOf := map[int]int{}
	for i := n; i < 2*n; i++ {
		c := redis.NewClient(&redis.Options{Addr: nodes[i].addr})
		port := infoField(c, "replication", "master_port")
		c.Close()
		for j := range n {
			if nodes[j].port == port {
				replicaOf[j] = i
			}
		}
	}
	if len(replicaOf) != n {
		t.Fatalf("replicas: %v", replicaOf)
	}
	return nodes, replicaOf
}

// infoExit is the exit status of cuckoo cluster info through addr, and its
// output.
func infoExit(t *testing.T, addr string) (int, string) {
	code, out, errOut := cuckoo(t, "", "cluster", "info", addr)
	return code, out + errOut
}

// TestClusterFailover: a coordinated failover, under four writers and four
// readers through a ClusterClient: the replica becomes the primary, the old
// primary its replica, and no acknowledged write is lost nor any lookup of
// an acknowledged item answered 0.
func TestClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four server processes; skipped with -short")
	}
	nodes, replicaOf := startShards(t, 2)
	p, r := nodes[0], nodes[replicaOf[0]]
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[1].addr}, MaxRedirects: 64})
	defer cc.Close()
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = "f:" + strconv.Itoa(i)
	}
	load := startLoad(cc, keys, map[string][]string{})
	time.Sleep(300 * time.Millisecond)
	code, out, errOut := cuckoo(t, "", "cluster", "failover", r.addr)
	time.Sleep(300 * time.Millisecond)
	if err := load.end(); err != nil {
		t.Errorf("during the failover: %v", err)
	}
	if code != 0 {
		t.Fatalf("cluster failover: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("%s; %d adds, %d lookups", strings.TrimSpace(out), load.adds.Load(), load.lookups.Load())
	ctx := context.Background()
	rc, pc := redis.NewClient(&redis.Options{Addr: r.addr}), redis.NewClient(&redis.Options{Addr: p.addr})
	defer rc.Close()
	defer pc.Close()
	if role := infoField(rc, "replication", "role"); role != "master" {
		t.Errorf("the replica's role after the failover: %s", role)
	}
	waitUntil(t, "the old primary to replicate the new one", 10*time.Second, func() bool {
		return infoField(pc, "replication", "master_link_status") == "up" && strings.HasSuffix(r.addr, ":"+infoField(pc, "replication", "master_port"))
	})
	missing := 0
	for k, items := range load.acked {
		for _, it := range items {
			if ok, err := cc.CFExists(ctx, k, it).Result(); !ok || err != nil {
				missing++
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d acknowledged items missing after a coordinated failover", missing)
	}
	if code, out := infoExit(t, r.addr); code != 0 {
		t.Errorf("cluster info after the failover: exit %d\n%s", code, out)
	}
	// Refusals: a primary, and a forced failover's need.
	if code, _, errOut := cuckoo(t, "", "cluster", "failover", r.addr); code != exitError || !strings.Contains(errOut, "is a primary already") {
		t.Errorf("failover of a primary: exit %d, %s", code, errOut)
	}
}

// TestClusterFailoverForce: the primary killed (kill -9), failover needs
// --force and then promotes the replica; every write acknowledged by WAIT
// survives; the old primary, restarted and made a replica, takes the new
// topology from its new primary.
func TestClusterFailoverForce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four server processes; skipped with -short")
	}
	nodes, replicaOf := startShards(t, 2)
	p, r := nodes[0], nodes[replicaOf[0]]
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[1].addr}, MaxRedirects: 16})
	defer cc.Close()
	w := startWaitedWriters(cc, 4)
	time.Sleep(500 * time.Millisecond)
	p.cmd.Process.Kill()
	p.cmd.Wait()
	code, _, errOut := cuckoo(t, "", "cluster", "failover", r.addr)
	if code != exitError || !strings.Contains(errOut, "give --force") {
		t.Errorf("failover with the primary down, without --force: exit %d, %s", code, errOut)
	}
	code, out, errOut := cuckoo(t, "", "cluster", "failover", "--force", r.addr)
	if code != 0 {
		w.end()
		t.Fatalf("cluster failover --force: exit %d\n%s%s", code, out, errOut)
	}
	t.Log(strings.TrimSpace(out))
	time.Sleep(time.Second) // the writers go on with the new primary
	waited, after := w.end()
	if after == 0 {
		t.Errorf("no write was acknowledged after the failover")
	}
	checkPresent(t, cc, waited)

	// The old primary comes back on its data, with its old topology, and
	// is made a replica (as Sentinel would): it takes the new topology.
	bin := cuckooBin(t)
	cmd, addr, log := serveProc(t, bin, "--dir", p.dir, "--cluster-enabled", "--addr", p.addr)
	p.cmd, p.log = cmd, log
	oc := redis.NewClient(&redis.Options{Addr: addr})
	defer oc.Close()
	host, port, _ := net.SplitHostPort(r.addr)
	if err := oc.Do(context.Background(), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "cluster info to find all well", 20*time.Second, func() bool {
		code, _ := infoExit(t, r.addr)
		return code == 0
	})
}

// waitedWriters add unique items through a ClusterClient, each followed by
// WAIT 1 on the node that took it; an item is acknowledged when WAIT says a
// replica has it.
type waitedWriters struct {
	stop   atomic.Bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	waited map[string][]string
	after  atomic.Int64 // acknowledged since the last mark
}

func startWaitedWriters(cc *redis.ClusterClient, n int) *waitedWriters {
	w := &waitedWriters{waited: map[string][]string{}}
	ctx := context.Background()
	for i := range n {
		w.wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(i), 3))
			for j := 0; !w.stop.Load(); j++ {
				k, item := "f:"+strconv.Itoa(rnd.IntN(200)), fmt.Sprintf("w%d-%d", i, j)
				node, err := cc.MasterForKey(ctx, k)
				if err != nil {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				cmds, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
					p.CFAdd(ctx, k, item)
					p.Do(ctx, "WAIT", 1, 1000)
					return nil
				})
				if err != nil {
					cc.ReloadState(ctx) // a node down or a MOVED: the slots changed
					time.Sleep(20 * time.Millisecond)
					continue
				}
				if n, err := cmds[1].(*redis.Cmd).Int(); err == nil && n >= 1 {
					w.mu.Lock()
					w.waited[k] = append(w.waited[k], item)
					w.mu.Unlock()
					w.after.Add(1)
				}
			}
		})
	}
	return w
}

// end stops the writers; it returns the items acknowledged by WAIT, and how
// many were since the last mark.
func (w *waitedWriters) end() (map[string][]string, int64) {
	w.stop.Store(true)
	w.wg.Wait()
	return w.waited, w.after.Load()
}

// mark starts counting the acknowledged writes anew.
func (w *waitedWriters) mark() { w.after.Store(0) }

// checkPresent checks every item of items on the cluster.
func checkPresent(t *testing.T, cc *redis.ClusterClient, items map[string][]string) {
	t.Helper()
	ctx := context.Background()
	total, missing := 0, 0
	for k, its := range items {
		args := make([]any, len(its))
		for i, it := range its {
			args[i] = it
		}
		got, err := cc.CFMExists(ctx, k, args...).Result()
		if err != nil {
			t.Fatalf("CF.MEXISTS %s: %v", k, err)
		}
		for _, ok := range got {
			total++
			if !ok {
				missing++
			}
		}
	}
	if missing > 0 || total == 0 {
		t.Errorf("%d of %d items acknowledged by WAIT are missing", missing, total)
	} else {
		t.Logf("%d items acknowledged by WAIT, all present", total)
	}
}

// TestClusterSentinelFailover: three unchanged redis-sentinels watch both
// shards of a cluster, with cuckoo cluster failover --sentinel as their
// client-reconfig-script. A primary killed with kill -9, Sentinel promotes
// its replica and the script pushes the topology: the ClusterClient's
// writers go on, every write acknowledged by WAIT survives, and the old
// primary, restarted, is made a replica by Sentinel and takes the topology.
func TestClusterSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("runs seven processes for about ten seconds; skipped with -short")
	}
	sentinel := prereq.Program(t, "redis-sentinel")
	nodes, replicaOf := startShards(t, 2)
	bin := cuckooBin(t)
	script := filepath.Join(t.TempDir(), "cuckoo-reconfig")
	body := fmt.Sprintf("#!/bin/sh\nexec %s cluster failover --sentinel \"$@\" >>%s.log 2>&1\n", bin, script)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	shards := map[string]string{"shard0": nodes[0].addr, "shard1": nodes[1].addr}
	var sentinels []string
	for range 3 {
		sentinels = append(sentinels, startSentinelFor(t, sentinel, shards, script))
	}
	defer func() {
		if t.Failed() {
			b, _ := os.ReadFile(script + ".log")
			t.Logf("the reconfig script's output:\n%s", b)
		}
	}()
	ctx := context.Background()
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
	defer sc.Close()
	waitUntil(t, "the sentinels to know each other and the replicas", 20*time.Second, func() bool {
		for name := range shards {
			m, err := sc.Master(ctx, name).Result()
			if err != nil || m["num-other-sentinels"] != "2" || m["num-slaves"] != "1" {
				return false
			}
		}
		return true
	})
	p, r := nodes[0], nodes[replicaOf[0]]
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[1].addr}, MaxRedirects: 16})
	defer cc.Close()
	w := startWaitedWriters(cc, 4)
	time.Sleep(time.Second)
	p.cmd.Process.Kill() // kill -9
	p.cmd.Wait()
	killed := time.Now()
	waitUntil(t, "the topology to name the replica primary", 30*time.Second, func() bool {
		return topologyPrimary(t, r.addr)
	})
	t.Logf("Sentinel failed over and the topology named the new primary %v after the kill", time.Since(killed).Round(time.Millisecond))
	w.mark()
	// The clients find the new primary on their next redirect or refresh:
	// on a loaded machine that may take more than a second.
	deadline := time.Now().Add(20 * time.Second)
	for w.after.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	waited, after := w.end()
	if after == 0 {
		t.Errorf("no write was acknowledged in the 20 s after the failover")
	}
	checkPresent(t, cc, waited)

	// The old primary comes back; Sentinel makes it a replica of the new
	// one, and it takes the topology from it.
	cmd, _, log := serveProc(t, bin, "--dir", p.dir, "--cluster-enabled", "--addr", p.addr)
	p.cmd, p.log = cmd, log
	waitUntil(t, "cluster info to find all well", 30*time.Second, func() bool {
		code, _ := infoExit(t, r.addr)
		return code == 0
	})
}

// topologyPrimary reports whether the node at addr is a primary in its
// own topology.
func topologyPrimary(t *testing.T, addr string) bool {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	nodes, err := c.ClusterNodes(context.Background()).Result()
	return err == nil && strings.Contains(nodes, "myself,master")
}

// TestClusterFix: after a forced failover, the old primary comes back with
// its old topology and as a primary; fix pushes the newest topology to all
// and makes it a replica of the new primary, and cluster info finds all
// well. A node given a newer topology alone (a push stopped half-way) is
// mended the same way, and so is a replica promoted by replication alone.
// Then del-node removes the dead node, and a live replica (shut down), and
// refuses a primary owning slots.
func TestClusterFix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four server processes; skipped with -short")
	}
	nodes, replicaOf := startShards(t, 2)
	p, r := nodes[0], nodes[replicaOf[0]]
	p.cmd.Process.Kill()
	p.cmd.Wait()
	if code, out, errOut := cuckoo(t, "", "cluster", "failover", "--force", r.addr); code != 0 {
		t.Fatalf("failover --force: exit %d\n%s%s", code, out, errOut)
	}
	cmd, _, log := serveProc(t, cuckooBin(t), "--dir", p.dir, "--cluster-enabled", "--addr", p.addr)
	p.cmd, p.log = cmd, log
	if code, out := infoExit(t, r.addr); code == 0 {
		t.Errorf("cluster info with the old primary back and stale: exit 0\n%s", out)
	}
	if code, out, errOut := cuckoo(t, "", "cluster", "move-slots", "--from", r.addr, "--to", nodes[1].addr, "--slots", "0"); code == 0 || !strings.Contains(errOut, "cuckoo cluster fix") {
		t.Errorf("move-slots on nodes that disagree: exit %d, %s%s", code, out, errOut)
	}
	code, out, errOut := cuckoo(t, "", "cluster", "fix", r.addr)
	if code != 0 || !strings.Contains(out, p.addr+") now replicates") {
		t.Fatalf("cluster fix: exit %d\n%s%s", code, out, errOut)
	}
	if code, out := infoExit(t, p.addr); code != 0 {
		t.Errorf("cluster info after fix: exit %d\n%s", code, out)
	}
	if code, out, _ := cuckoo(t, "", "cluster", "fix", p.addr); code != 0 || !strings.Contains(out, "nothing to fix") {
		t.Errorf("fix of a cluster in one piece: exit %d\n%s", code, out)
	}
	// A newer topology on one node alone.
	c := redis.NewClient(&redis.Options{Addr: nodes[1].addr})
	defer c.Close()
	b, _ := c.Do(context.Background(), "CUCKOO.CLUSTER", "GETCONFIG").Text()
	var topo clusterTopology
	if err := json.Unmarshal([]byte(b), &topo); err != nil {
		t.Fatal(b, err)
	}
	topo.Epoch += 5
	nb, _ := json.Marshal(topo)
	if err := c.Do(context.Background(), "CUCKOO.CLUSTER", "SETCONFIG", string(nb)).Err(); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := cuckoo(t, "", "cluster", "fix", r.addr); code != 0 || !strings.Contains(out, "is now on 4 nodes") {
		t.Errorf("fix of a push stopped half-way: exit %d\n%s%s", code, out, errOut)
	}
	if code, out := infoExit(t, r.addr); code != 0 {
		t.Errorf("cluster info after the second fix: exit %d\n%s", code, out)
	}
	// The other shard's primary dies and its replica is promoted by
	// replication alone (as Sentinel with no reconfig script does): fix
	// puts it in its primary's place, and clients write to it.
	p1, r1 := nodes[1], nodes[replicaOf[1]]
	p1.cmd.Process.Kill()
	p1.cmd.Wait()
	rc1 := redis.NewClient(&redis.Options{Addr: r1.addr})
	defer rc1.Close()
	if err := rc1.Do(context.Background(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cuckoo(t, "", "cluster", "fix", r.addr)
	if code != exitError || !strings.Contains(out, r1.addr+") was promoted") || !strings.Contains(errOut, p1.addr+") cannot be reached") {
		t.Errorf("fix after a promotion behind the topology's back: exit %d\n%s%s", code, out, errOut)
	}
	if !topologyPrimary(t, r1.addr) {
		t.Error("the promoted replica is not a primary in its topology")
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{r.addr}})
	defer cc.Close()
	for i := range 50 {
		if err := cc.CFAdd(context.Background(), fmt.Sprintf("k%d", i), "x").Err(); err != nil {
			t.Fatalf("CF.ADD after fix: %v", err)
		}
	}
	// The dead node goes for good, then a live replica (shut down);
	// a primary owning slots stays.
	if code, out, errOut := cuckoo(t, "", "cluster", "del-node", r.addr, p.addr); code != exitError || !strings.Contains(errOut, "owns slots") {
		t.Errorf("del-node of a primary owning slots: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := cuckoo(t, "", "cluster", "del-node", p1.addr, r.addr); code != 0 || !strings.Contains(out, "no longer in the cluster") {
		t.Errorf("del-node of a dead replica: exit %d\n%s%s", code, out, errOut)
	}
	if code, out := infoExit(t, r.addr); code != 0 {
		t.Errorf("cluster info after del-node: exit %d\n%s", code, out)
	}
	if code, out, errOut := cuckoo(t, "", "cluster", "del-node", p.addr, r.addr); code != 0 || !strings.Contains(out, "it was shut down") {
		t.Errorf("del-node of a live replica: exit %d\n%s%s", code, out, errOut)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("the removed node's process: %v", err)
	}
	if code, out := infoExit(t, r.addr); code != 0 || strings.Contains(out, p.addr) {
		t.Errorf("cluster info after the second del-node: exit %d\n%s", code, out)
	}
}
