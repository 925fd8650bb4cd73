package server_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// replicaOf makes c a replica of the server at addr and waits for the link.
func replicaOf(t *testing.T, c *redis.Client, addr string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	if err := c.Do(context.Background(), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replication link", func() bool {
		return infoFields(t, c, "replication")["master_link_status"] == "up"
	})
}

// sameData checks that two servers hold the same keys with the same
// filters, byte for byte (CF.SCANDUMP of every key).
func sameData(t *testing.T, a, b *redis.Client) {
	t.Helper()
	ctx := context.Background()
	ka, kb := a.Keys(ctx, "*").Val(), b.Keys(ctx, "*").Val()
	if fmt.Sprint(sorted(ka)) != fmt.Sprint(sorted(kb)) {
		t.Fatalf("keys differ: %v and %v", sorted(ka), sorted(kb))
	}
	for _, k := range ka {
		da, db := dump(t, a, k), dump(t, b, k)
		if fmt.Sprint(da) != fmt.Sprint(db) {
			t.Errorf("key %s: the dumps differ", k)
		}
	}
}

// TestReplication: a replica takes a full copy, then the stream; it serves
// reads, refuses writes, and ends byte-identical; WAIT counts it; ROLE and
// INFO describe both ends.
func TestReplication(t *testing.T) {
	ctx := context.Background()
	_, paddr := start(t, server.Config{})
	_, raddr := start(t, server.Config{})
	p, r := client(t, paddr), client(t, raddr)
	p.CFReserve(ctx, "before", 1000)
	for i := range 500 {
		p.CFAdd(ctx, "before", fmt.Sprint(i))
	}
	replicaOf(t, r, paddr)
	for i := range 2000 {
		p.CFAdd(ctx, "after", fmt.Sprint(i))
	}
	p.CFDel(ctx, "before", "7")
	p.PExpire(ctx, "before", time.Hour)
	p.TxPipelined(ctx, func(pp redis.Pipeliner) error {
		pp.CFAdd(ctx, "tx", "a")
		pp.CFAdd(ctx, "tx", "b")
		return nil
	})
	if n, err := p.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 5000 = %d, %v", n, err)
	}
	for i := range 2000 {
		if !r.CFExists(ctx, "after", fmt.Sprint(i)).Val() {
			t.Fatalf("the replica lacks item %d", i)
		}
	}
	if ttl := r.TTL(ctx, "before").Val(); ttl < 59*time.Minute {
		t.Errorf("the replica's TTL %v", ttl)
	}
	sameData(t, p, r)
	wantErr(t, r.CFAdd(ctx, "after", "x").Err(), "READONLY You can't write against a read only replica.")
	_, rport, _ := net.SplitHostPort(raddr)
	pi := infoFields(t, p, "replication")
	if pi["role"] != "master" || pi["connected_slaves"] != "1" || !strings.Contains(pi["slave0"], "port="+rport+",state=online") {
		t.Errorf("the primary's INFO replication: %v", pi)
	}
	ri := infoFields(t, r, "replication")
	if ri["role"] != "slave" || ri["master_repl_offset"] != pi["master_repl_offset"] || ri["master_replid"] != pi["master_replid"] {
		t.Errorf("the replica's INFO replication: %v (primary %v)", ri, pi)
	}
	if role := fmt.Sprint(r.Do(ctx, "ROLE").Val()); !strings.HasPrefix(role, "[slave 127.0.0.1 ") || !strings.Contains(role, " connected ") {
		t.Errorf("the replica's ROLE: %s", role)
	}
	if role := fmt.Sprint(p.Do(ctx, "ROLE").Val()); !strings.HasPrefix(role, "[master ") || !strings.Contains(role, rport) {
		t.Errorf("the primary's ROLE: %s", role)
	}
	wantErr(t, r.Do(ctx, "WAIT", 1, 10).Err(), "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
	// Expiry: the primary's drop reaches the replica.
	p.CFAdd(ctx, "brief", "x")
	p.PExpire(ctx, "brief", 50*time.Millisecond)
	waitFor(t, "the expired key dropped on both", func() bool {
		return p.Exists(ctx, "brief").Val() == 0 && r.DBSize(ctx).Val() == p.DBSize(ctx).Val()
	})
}

// TestReplicationPartialResync: a replica whose link breaks continues from
// the backlog; one that fell behind the backlog takes a full copy again.
func TestReplicationPartialResync(t *testing.T) {
	ctx := context.Background()
	_, paddr := start(t, server.Config{ReplBacklogSize: 64 << 10})
	_, raddr := start(t, server.Config{})
	p, r := client(t, paddr), client(t, raddr)
	replicaOf(t, r, paddr)
	kill := func() {
		// The primary's side of the link: the client that sent PSYNC.
		for _, line := range strings.Split(p.ClientList(ctx).Val(), "\n") {
			if strings.Contains(line, "cmd=psync") {
				f := strings.Fields(line)
				p.Do(ctx, "CLIENT", "KILL", "ID", strings.TrimPrefix(f[0], "id="))
			}
		}
	}
	for round, n := range []int{100, 20_000} { // within the backlog, then far beyond it
		full := infoField(t, p, "sync_full")
		partial := infoField(t, p, "sync_partial_ok")
		kill()
		// One pipeline: the writes pass the backlog before the replica's
		// retry a second later (one request at a time, under -race and a
		// busy machine, they did not, and the replica continued).
		p.Pipelined(ctx, func(pp redis.Pipeliner) error {
			for i := range n {
				pp.CFAdd(ctx, "k", fmt.Sprint(round, ":", i))
			}
			return nil
		})
		waitFor(t, "the replica to catch up", func() bool {
			return infoFields(t, r, "replication")["master_repl_offset"] == infoFields(t, p, "replication")["master_repl_offset"] &&
				infoFields(t, r, "replication")["master_link_status"] == "up"
		})
		gotFull, gotPartial := infoField(t, p, "sync_full")-full, infoField(t, p, "sync_partial_ok")-partial
		if round == 0 && (gotPartial != 1 || gotFull != 0) {
			t.Errorf("within the backlog: %d partial, %d full resyncs", gotPartial, gotFull)
		}
		if round == 1 && gotFull != 1 {
			t.Errorf("beyond the backlog: %d partial, %d full resyncs", gotPartial, gotFull)
		}
		sameData(t, p, r)
	}
}

// TestReplicationPromotion: REPLICAOF NO ONE makes a replica a primary that
// takes writes; the old primary's other replica, pointed at it, continues
// from its backlog (the old replication id stays valid up to the switch).
func TestReplicationPromotion(t *testing.T) {
	ctx := context.Background()
	_, paddr := start(t, server.Config{})
	_, aaddr := start(t, server.Config{})
	_, baddr := start(t, server.Config{})
	p, a, b := client(t, paddr), client(t, aaddr), client(t, baddr)
	replicaOf(t, a, paddr)
	replicaOf(t, b, paddr)
	for i := range 1000 {
		p.CFAdd(ctx, "k", fmt.Sprint(i))
	}
	p.Do(ctx, "WAIT", 2, 5000)
	if err := a.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := a.CFAdd(ctx, "k", "after promotion").Err(); err != nil {
		t.Fatalf("a write to the promoted replica: %v", err)
	}
	replicaOf(t, b, aaddr)
	if got := infoField(t, a, "sync_partial_ok"); got != 1 {
		t.Errorf("the other replica's resync with the promoted one: %d partial (want 1), %d full", got, infoField(t, a, "sync_full"))
	}
	a.Do(ctx, "WAIT", 1, 5000)
	if !b.CFExists(ctx, "k", "after promotion").Val() {
		t.Error("the write after the promotion did not reach the other replica")
	}
	sameData(t, a, b)
}

// TestReplicationPromotionInExec: Sentinel promotes a replica with REPLICAOF
// NO ONE inside MULTI/EXEC while its primary streams writes to it: EXEC
// holds the gate the stream needs, and the promotion must not wait for the
// stream; after it, the promoted server takes writes and nothing of the old
// stream is applied.
func TestReplicationPromotionInExec(t *testing.T) {
	ctx := context.Background()
	_, paddr := start(t, server.Config{})
	_, aaddr := start(t, server.Config{})
	p, a := client(t, paddr), client(t, aaddr)
	replicaOf(t, a, paddr)
	stop := make(chan struct{})
	streaming := make(chan struct{})
	go func() {
		defer close(streaming)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				p.CFAdd(ctx, "busy", fmt.Sprint(i))
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	done := make(chan error, 1)
	go func() {
		_, err := a.TxPipelined(ctx, func(pp redis.Pipeliner) error {
			pp.Do(ctx, "REPLICAOF", "NO", "ONE")
			pp.Do(ctx, "CLIENT", "KILL", "TYPE", "normal")
			return nil
		})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("promotion in MULTI/EXEC: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the promotion in MULTI/EXEC is stuck")
	}
	close(stop)
	<-streaming
	if role := infoFields(t, a, "replication")["role"]; role != "master" {
		t.Fatalf("after the promotion a is %s", role)
	}
	off := infoFields(t, a, "replication")["master_repl_offset"]
	time.Sleep(100 * time.Millisecond)
	if got := infoFields(t, a, "replication")["master_repl_offset"]; got != off {
		t.Errorf("the promoted server's offset moved from %s to %s with no write to it", off, got)
	}
	if err := a.CFAdd(ctx, "mine", "x").Err(); err != nil {
		t.Errorf("a write to the promoted server: %v", err)
	}
}

// TestReplicaLinkType: a replica's link is a client of type slave (flag S)
// on its primary: CLIENT KILL TYPE normal, which Sentinel sends after a
// promotion, leaves it alone; CLIENT KILL TYPE replica closes it.
func TestReplicaLinkType(t *testing.T) {
	ctx := context.Background()
	_, paddr := start(t, server.Config{})
	_, raddr := start(t, server.Config{})
	p, r := client(t, paddr), client(t, raddr)
	replicaOf(t, r, paddr)
	list := p.ClientList(ctx).Val()
	if !strings.Contains(list, "flags=S ") {
		t.Errorf("CLIENT LIST has no replica link:\n%s", list)
	}
	if n := p.ClientKillByFilter(ctx, "TYPE", "normal").Val(); n != 0 {
		t.Errorf("CLIENT KILL TYPE normal closed %d clients", n)
	}
	if s := infoFields(t, p, "replication")["connected_slaves"]; s != "1" {
		t.Errorf("connected_slaves %s after CLIENT KILL TYPE normal", s)
	}
	if n := p.ClientKillByFilter(ctx, "TYPE", "replica").Val(); n != 1 {
		t.Errorf("CLIENT KILL TYPE replica closed %d clients", n)
	}
}

// TestReplicationCopyUnderWrites: a full copy taken while clients keep
// writing (adds, deletes, new keys, dropped keys, a FLUSHALL-free mix) ends
// byte-identical: each key's ops before its position in the copy are not
// applied twice, those after it are applied. The replica's data directory
// is whole afterwards: restarted, it continues by partial resync.
func TestReplicationCopyUnderWrites(t *testing.T) {
	ctx := context.Background()
	_, paddr := start(t, server.Config{ReplBacklogSize: 64 << 20})
	p := client(t, paddr)
	for k := range 40 {
		for i := range 500 {
			p.CFAdd(ctx, fmt.Sprint("k", k), fmt.Sprint(i))
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := client(t, paddr)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := fmt.Sprint("k", i%40)
			w.CFAdd(ctx, k, fmt.Sprint("w", i))
			switch i % 97 {
			case 0:
				w.CFDel(ctx, k, fmt.Sprint(i%500))
			case 1:
				w.CFAdd(ctx, fmt.Sprint("new", i), "x")
			case 2:
				w.Del(ctx, fmt.Sprint("new", i-1-97))
			}
		}
	}()
	dir := t.TempDir()
	rs, err := server.New(server.Config{Dir: dir, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	_, raddr := serveOn(t, rs)
	r := client(t, raddr)
	replicaOf(t, r, paddr)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	<-done
	if n, err := p.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	sameData(t, p, r)
	// Restarted on its directory, the replica continues from the backlog.
	r.Close()
	if err := rs.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	partial := infoField(t, p, "sync_partial_ok")
	_, raddr2 := start(t, server.Config{Dir: dir, ReplicaOf: "127.0.0.1 " + strings.Split(paddr, ":")[1]})
	r2 := client(t, raddr2)
	waitFor(t, "the restarted replica's link", func() bool {
		return infoFields(t, r2, "replication")["master_link_status"] == "up"
	})
	if got := infoField(t, p, "sync_partial_ok") - partial; got != 1 {
		t.Errorf("the restarted replica: %d partial resyncs, want 1", got)
	}
	p.Do(ctx, "WAIT", 1, 5000)
	sameData(t, p, r2)
}

// TestReplicaofRewrite: CONFIG REWRITE writes the primary a server
// replicates (Sentinel sends it after REPLICAOF), and a server started from
// the file is a replica of it again; after REPLICAOF NO ONE the rewrite
// makes it a primary.
func TestReplicaofRewrite(t *testing.T) {
	ctx := context.Background()
	_, paddr := start(t, server.Config{})
	path := filepath.Join(t.TempDir(), "cuckoo.conf")
	if err := os.WriteFile(path, []byte("# a replica\nmaxclients 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var cfg server.Config
	if _, err := server.ReadConfigFile(path, &cfg); err != nil {
		t.Fatal(err)
	}
	_, raddr := start(t, cfg)
	r := client(t, raddr)
	replicaOf(t, r, paddr)
	if err := r.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var again server.Config
	if _, err := server.ReadConfigFile(path, &again); err != nil || again.ReplicaOf != "127.0.0.1 "+strings.Split(paddr, ":")[1] {
		t.Errorf("after REPLICAOF and CONFIG REWRITE: replicaof %q, %v", again.ReplicaOf, err)
	}
	r.Do(ctx, "REPLICAOF", "NO", "ONE")
	r.ConfigRewrite(ctx)
	var primary server.Config
	if _, err := server.ReadConfigFile(path, &primary); err != nil || primary.ReplicaOf != "" {
		t.Errorf("after REPLICAOF NO ONE and CONFIG REWRITE: replicaof %q, %v", primary.ReplicaOf, err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "# a replica\n") {
		t.Errorf("the rewritten file lost its comment:\n%s", b)
	}
}
