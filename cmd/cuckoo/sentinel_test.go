package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/prereq"
	"github.com/cuckoohash/cuckoo/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// freePort is a port the OS says is free now (Sentinel takes a port number,
// not a listener).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startSentinel runs Debian's redis-sentinel, unchanged, monitoring the
// primary at addr as "mymaster" with quorum 2.
func startSentinel(t *testing.T, sentinel, primary string) string {
	t.Helper()
	return startSentinelFor(t, sentinel, map[string]string{"mymaster": primary}, "")
}

// startSentinelFor runs Debian's redis-sentinel, unchanged, monitoring each
// primary of shards (name to address) with quorum 2, down after 1 s, and
// script, if any, as its client-reconfig-script.
func startSentinelFor(t *testing.T, sentinel string, shards map[string]string, script string) string {
	t.Helper()
	return startSentinelWith(t, sentinel, shards, script, "")
}

// startSentinelWith is startSentinelFor with extra lines in the
// configuration file.
func startSentinelWith(t *testing.T, sentinel string, shards map[string]string, script, extra string) string {
	t.Helper()
	dir := t.TempDir()
	sport := freePort(t)
	var sb strings.Builder
	fmt.Fprintf(&sb, "port %d\nbind 127.0.0.1\ndir %s\n%s", sport, dir, extra)
	for name, addr := range shards {
		host, port, _ := net.SplitHostPort(addr)
		fmt.Fprintf(&sb, "sentinel monitor %s %s %s 2\n", name, host, port)
		fmt.Fprintf(&sb, "sentinel down-after-milliseconds %s 1000\n", name)
		fmt.Fprintf(&sb, "sentinel failover-timeout %s 5000\n", name)
		fmt.Fprintf(&sb, "sentinel parallel-syncs %s 2\n", name)
		if script != "" {
			fmt.Fprintf(&sb, "sentinel client-reconfig-script %s %s\n", name, script)
		}
	}
	conf := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(conf, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sentinel, conf)
	redistest.DieWithTest(cmd)
	out := &syncBuf{}
	cmd.Stdout = lineFunc(out.add)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("sentinel %d:\n%s", sport, strings.Join(out.lines, "\n"))
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sport))
	waitUntil(t, "sentinel up", 10*time.Second, func() bool {
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer c.Close()
		return c.Ping(context.Background()).Err() == nil
	})
	return addr
}

// lineFunc is an io.Writer that hands each line to f.
type lineFunc func(string)

func (f lineFunc) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f(l)
	}
	return len(b), nil
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func infoField(c *redis.Client, section, field string) string {
	s, err := c.Info(context.Background(), section).Result()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

// TestSentinelFailover: a primary, two replicas and three redis-sentinels;
// four go-redis FailoverClient writers add unique items, two of them
// following each batch with WAIT 1 1000; the primary is killed with SIGKILL
// mid-run.
// Sentinel promotes a replica, the writers go on with it, the old primary
// restarted becomes a replica of the new one, and every item WAIT
// acknowledged is on the new primary and on every replica.
func TestSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six processes for about ten seconds; skipped with -short")
	}
	sentinel := prereq.Program(t, "redis-sentinel")
	bin := cuckooBin(t)
	ctx := context.Background()
	pdir := t.TempDir()
	primary, paddr, plog := serveProc(t, bin, "--dir", pdir, "--appendfsync", "always")
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			p.Process.Kill()
			p.Wait()
		}
	}()
	_, pport, _ := net.SplitHostPort(paddr)
	var replicas []string
	logs := map[string]*syncBuf{paddr: plog}
	for range 2 {
		cmd, addr, log := serveProc(t, bin, "--dir", t.TempDir(), "--appendfsync", "always", "--replicaof", "127.0.0.1 "+pport)
		procs = append(procs, cmd)
		replicas = append(replicas, addr)
		logs[addr] = log
	}
	defer func() {
		if t.Failed() {
			for addr, l := range logs {
				t.Logf("cuckoo serve %s:\n%s", addr, strings.Join(l.lines, "\n"))
			}
		}
	}()
	pc := redis.NewClient(&redis.Options{Addr: paddr})
	waitUntil(t, "two replicas online", 10*time.Second, func() bool { return infoField(pc, "replication", "connected_slaves") == "2" })
	pc.Close()
	var sentinels []string
	for range 3 {
		sentinels = append(sentinels, startSentinel(t, sentinel, paddr))
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
	defer sc.Close()
	waitUntil(t, "the sentinels to know each other and the replicas", 20*time.Second, func() bool {
		m, err := sc.Master(ctx, "mymaster").Result()
		return err == nil && m["num-other-sentinels"] == "2" && m["num-slaves"] == "2"
	})

	// The writers.
	var mu sync.Mutex
	var waited, unwaited []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: sentinels,
				MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
			defer c.Close()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				items := make([]any, 10)
				for i := range items {
					items[i] = fmt.Sprintf("w%d:%d:%d", w, n, i)
				}
				if err := c.CFInsert(ctx, "items", nil, items...).Err(); err != nil {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				// Writers 0 and 1 wait for a replica; 2 and 3 take the
				// primary's acknowledgement alone (the asynchronous window).
				acked, err := 0, error(nil)
				if w < 2 {
					acked, err = c.Do(ctx, "WAIT", 1, 1000).Int()
				}
				mu.Lock()
				for _, it := range items {
					if w < 2 && err == nil && acked >= 1 {
						waited = append(waited, it.(string))
					} else {
						unwaited = append(unwaited, it.(string))
					}
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(2 * time.Second)
	primary.Process.Kill() // kill -9
	primary.Wait()
	killed := time.Now()
	var newPrimary string
	waitUntil(t, "Sentinel to promote a replica", 30*time.Second, func() bool {
		a, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
		if err != nil || len(a) != 2 || a[1] == pport {
			return false
		}
		newPrimary = net.JoinHostPort(a[0], a[1])
		return true
	})
	failover := time.Since(killed)
	time.Sleep(2 * time.Second) // the writers go on with the new primary
	close(stop)
	wg.Wait()

	// The old primary, restarted on its data, is made a replica.
	old, oaddr, olog := serveProc(t, bin, "--dir", pdir, "--appendfsync", "always", "--addr", paddr)
	logs[oaddr+" (restarted)"] = olog
	procs = append(procs, old)
	oc := redis.NewClient(&redis.Options{Addr: oaddr})
	defer oc.Close()
	waitUntil(t, "the old primary to become a replica of the new one", 30*time.Second, func() bool {
		return infoField(oc, "replication", "role") == "slave" && infoField(oc, "replication", "master_link_status") == "up"
	})
	// The primary now: Sentinel's answer once it has two replicas online
	// (a second failover may have followed the first on a loaded machine;
	// the guarantee below must hold whatever the topology became).
	var np *redis.Client
	waitUntil(t, "a primary with two replicas online", 30*time.Second, func() bool {
		a, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
		if err != nil || len(a) != 2 {
			return false
		}
		c := redis.NewClient(&redis.Options{Addr: net.JoinHostPort(a[0], a[1])})
		if infoField(c, "replication", "role") == "master" && infoField(c, "replication", "connected_slaves") == "2" {
			if np != nil {
				np.Close()
			}
			np, newPrimary = c, net.JoinHostPort(a[0], a[1])
			return true
		}
		c.Close()
		return false
	})
	defer np.Close()
	if n, err := np.Do(ctx, "WAIT", 2, 10000).Int(); err != nil || n < 2 {
		t.Errorf("WAIT for the replicas of the new primary: %d, %v", n, err)
	}
	check := func(name, addr string) (missingWaited, missingOther int) {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		count := func(items []string) int {
			missing := 0
			for i := 0; i < len(items); i += 500 {
				args := make([]any, 0, 500)
				for _, it := range items[i:min(i+500, len(items))] {
					args = append(args, it)
				}
				got, err := c.CFMExists(ctx, "items", args...).Result()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for _, ok := range got {
					if !ok {
						missing++
					}
				}
			}
			return missing
		}
		return count(waited), count(unwaited)
	}
	nodes := []string{newPrimary}
	for _, r := range append(replicas, oaddr) {
		if r != newPrimary {
			nodes = append(nodes, r)
		}
	}
	for _, node := range nodes {
		mw, mo := check(node, node)
		if mw > 0 {
			t.Errorf("%s: %d of %d items acknowledged by WAIT are missing", node, mw, len(waited))
		}
		if node == newPrimary {
			t.Logf("failover in %v; %d items acknowledged by WAIT, all present; %d of %d acknowledged without WAIT lost",
				failover.Round(time.Millisecond), len(waited), mo, len(unwaited))
		}
	}
}
