package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestReplicaRestartResumes: a replica killed with SIGKILL under load and
// restarted on its data continues from its primary's backlog (a partial
// resync, counted in the primary's INFO), and ends with the primary's data
// byte for byte (CF.SCANDUMP of every key).
func TestReplicaRestartResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for a few seconds; skipped with -short")
	}
	bin := cuckooBin(t)
	ctx := context.Background()
	primary, paddr, _ := serveProc(t, bin, "--dir", t.TempDir(), "--repl-backlog-size", "64mb")
	defer func() { primary.Process.Kill(); primary.Wait() }()
	_, pport, _ := net.SplitHostPort(paddr)
	rdir := t.TempDir()
	args := []string{"--dir", rdir, "--appendfsync", "always", "--replicaof", "127.0.0.1 " + pport}
	replica, raddr, _ := serveProc(t, bin, args...)
	p := redis.NewClient(&redis.Options{Addr: paddr})
	defer p.Close()
	infoInt := func(c *redis.Client, field string) int64 {
		n, _ := strconv.ParseInt(infoField(c, "everything", field), 10, 64)
		return n
	}
	waitUntil(t, "the replica online", 10*time.Second, func() bool { return infoField(p, "replication", "connected_slaves") == "1" })
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			p.CFAdd(ctx, fmt.Sprint("k", i%8), fmt.Sprint(i))
		}
	}()
	time.Sleep(500 * time.Millisecond)
	replica.Process.Kill()
	replica.Wait()
	time.Sleep(300 * time.Millisecond)
	full := infoInt(p, "sync_full")
	replica, raddr, _ = serveProc(t, bin, append(args, "--addr", raddr)...)
	defer func() { replica.Process.Kill(); replica.Wait() }()
	r := redis.NewClient(&redis.Options{Addr: raddr})
	defer r.Close()
	waitUntil(t, "the restarted replica's link", 10*time.Second, func() bool {
		return infoField(r, "replication", "master_link_status") == "up"
	})
	time.Sleep(300 * time.Millisecond)
	stop.Store(true)
	<-done
	if n, err := p.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	if got := infoInt(p, "sync_full") - full; got != 0 {
		t.Errorf("the restarted replica took %d full copies; want a partial resync", got)
	}
	if got := infoInt(p, "sync_partial_ok"); got != 1 {
		t.Errorf("sync_partial_ok %d, want 1", got)
	}
	keys := p.Keys(ctx, "*").Val()
	if len(keys) != 8 {
		t.Fatalf("keys %v", keys)
	}
	for _, k := range keys {
		a, b := scanDumpAll(t, p, k), scanDumpAll(t, r, k)
		if a != b {
			t.Errorf("key %s differs between the primary and the replica", k)
		}
	}
}

// scanDumpAll is a key's CF.SCANDUMP, every chunk.
func scanDumpAll(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	out := ""
	for it := int64(0); ; {
		d, err := c.CFScanDump(context.Background(), key, it).Result()
		if errors.Is(err, redis.Nil) {
			return out
		}
		if err != nil {
			t.Fatalf("CF.SCANDUMP %s: %v", key, err)
		}
		if d.Iter == 0 {
			return out
		}
		out += fmt.Sprint(d.Iter, ":", d.Data, ";")
		it = d.Iter
	}
}
