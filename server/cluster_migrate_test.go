package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// TestMigrate: MIGRATE between two standalone servers, with Redis's
// replies: a key, KEYS, COPY, REPLACE, a deadline kept, NOKEY, and the
// target's errors.
func TestMigrate(t *testing.T) {
	_, src := start(t, server.Config{})
	_, dst := start(t, server.Config{})
	a, b := resptest.Dial(t, src), resptest.Dial(t, dst)
	host, port, _ := net.SplitHostPort(dst)
	for i := range 100 {
		a.Do("CF.ADD", "k1", "item"+strconv.Itoa(i))
	}
	a.Do("CF.RESERVE", "k2", "1000")
	a.Do("CF.ADD", "k2", "x")
	a.Do("CF.ADD", "k3", "y")
	a.Do("PEXPIRE", "k3", "100000")

	if r := a.Do("MIGRATE", host, port, "k1", "0", "5000"); r != "OK" {
		t.Fatalf("MIGRATE k1 = %v", r)
	}
	if r := a.Do("EXISTS", "k1"); r != int64(0) {
		t.Errorf("k1 is still on the source after MIGRATE: EXISTS = %v", r)
	}
	for i := range 100 {
		if r := b.Do("CF.EXISTS", "k1", "item"+strconv.Itoa(i)); r != int64(1) {
			t.Fatalf("item%d on the target: CF.EXISTS = %v", i, r)
		}
	}
	if r := a.Do("MIGRATE", host, port, "", "0", "5000", "COPY", "KEYS", "k2", "k3", "missing"); r != "OK" {
		t.Fatalf("MIGRATE COPY KEYS = %v", r)
	}
	if r := a.Do("EXISTS", "k2", "k3"); r != int64(2) {
		t.Errorf("COPY left %v of 2 keys on the source", r)
	}
	if r, ok := b.Do("PTTL", "k3").(int64); !ok || r <= 0 || r > 100000 {
		t.Errorf("the deadline on the target: PTTL = %v", r)
	}
	if r := b.Do("PTTL", "k2"); r != int64(-1) {
		t.Errorf("a key without a deadline: PTTL = %v", r)
	}
	if r := b.Do("CF.INFO", "k2"); resptest.Sprint(r) != resptest.Sprint(a.Do("CF.INFO", "k2")) {
		t.Errorf("CF.INFO differs: target %v, source %v", r, a.Do("CF.INFO", "k2"))
	}
	busy := a.Do("MIGRATE", host, port, "k2", "0", "5000")
	if s, _ := busy.(resptest.Error); !strings.HasPrefix(string(s), "ERR Target instance replied with error: BUSYKEY") {
		t.Errorf("MIGRATE over an existing key = %v", busy)
	}
	if r := a.Do("EXISTS", "k2"); r != int64(1) {
		t.Errorf("a refused MIGRATE deleted the key")
	}
	a.Do("CF.ADD", "k2", "z")
	if r := a.Do("MIGRATE", host, port, "k2", "0", "5000", "REPLACE"); r != "OK" {
		t.Errorf("MIGRATE REPLACE = %v", r)
	}
	if r := b.Do("CF.EXISTS", "k2", "z"); r != int64(1) {
		t.Errorf("REPLACE did not replace: CF.EXISTS = %v", r)
	}
	if r := a.Do("MIGRATE", host, port, "nokey", "0", "5000"); r != "NOKEY" {
		t.Errorf("MIGRATE of a missing key = %v", r)
	}
	// The connection is cached: many MIGRATEs in a row reuse it.
	for i := range 20 {
		k := "many" + strconv.Itoa(i)
		a.Do("CF.ADD", k, "x")
		if r := a.Do("MIGRATE", host, port, k, "0", "5000"); r != "OK" {
			t.Fatalf("MIGRATE %s = %v", k, r)
		}
	}
	if r := b.Do("DBSIZE"); r != int64(23) {
		t.Errorf("the target holds %v keys, want 23", r)
	}
	// INFO filters: k1's 100 items, k2's 2, k3's 1 and one in each of 20.
	info := b.Do("INFO", "filters").(string)
	for _, want := range []string{"# Filters\r\n", "filters:23\r\n", "filter_items:123\r\n", "filter_bytes:"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO filters lacks %q:\n%s", want, info)
		}
	}
	if info := b.Do("INFO").(string); strings.Contains(info, "# Filters") {
		t.Errorf("the default INFO scans the key space for its Filters section")
	}
}

// TestMigrateErrors: every refusal answers Redis's text and moves nothing.
func TestMigrateErrors(t *testing.T) {
	_, src := start(t, server.Config{})
	_, dst := start(t, server.Config{RequirePass: "secret"})
	a := resptest.Dial(t, src)
	a.Do("CF.ADD", "k", "x")
	host, port, _ := net.SplitHostPort(dst)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// A target that accepts and never answers.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	_, mutePort, _ := net.SplitHostPort(mute.Addr().String())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{host, "x", "k", "0", "1000"}, "-ERR value is not an integer or out of range"},
		{[]string{host, "70000", "k", "0", "1000"}, "-ERR value is not an integer or out of range"},
		{[]string{host, port, "k", "x", "1000"}, "-ERR value is not an integer or out of range"},
		{[]string{host, port, "k", "0", "soon"}, "-ERR value is not an integer or out of range"},
		{[]string{host, port, "k", "0", "1000", "KEYS", "k"}, "-ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"},
		{[]string{host, port, "k", "0", "1000", "BOGUS"}, "-ERR syntax error"},
		{[]string{host, port, "k", "0", "1000", "AUTH"}, "-ERR syntax error"},
		{[]string{host, port, "k", "0", "1000"}, "-ERR Target instance replied with error: NOAUTH Authentication required."},
		{[]string{host, port, "k", "0", "1000", "AUTH", "wrong"}, "-ERR Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{host, port, "k", "3", "1000", "AUTH", "secret"}, "-ERR Target instance replied with error: ERR DB index is out of range"},
		{[]string{"127.0.0.1", strconv.Itoa(closed), "k", "0", "1000"}, "-IOERR error or timeout connecting to the client"},
		{[]string{"127.0.0.1", mutePort, "k", "0", "200"}, "-IOERR error or timeout reading from target instance"},
	} {
		r := a.Do(resptest.Args(append([]string{"MIGRATE"}, c.args...)...)...)
		if resptest.Sprint(r) != c.want {
			t.Errorf("MIGRATE %v = %v, want %q", c.args, r, c.want)
		}
		if r := a.Do("CF.EXISTS", "k", "x"); r != int64(1) {
			t.Fatalf("after MIGRATE %v the key is gone from the source", c.args)
		}
	}
	if r := a.Do("MIGRATE", host, port, "k", "0", "1000", "AUTH2", "default", "secret"); r != "OK" {
		t.Errorf("MIGRATE AUTH2 = %v", r)
	}
	if r := resptest.Dial(t, src).Do("EXISTS", "k"); r != int64(0) {
		t.Errorf("after MIGRATE AUTH2 the key is still on the source")
	}
}

// TestClusterMigrateSlot: in cluster mode the target takes RESTORE-ASKING
// on a slot it imports (and nothing else without ASKING), and the source
// then sends the moved key's commands there with -ASK.
func TestClusterMigrateSlot(t *testing.T) {
	c := startCluster(t, 2)
	k, slot := keyInSlotRange(t, c[0].addr, 0, 16383)
	a0, a1 := resptest.Dial(t, c[0].addr), resptest.Dial(t, c[1].addr)
	push(t, c, 1, node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}}), node(c[1], "primary", nil))
	a0.Do("CF.ADD", k, "x")
	payload := a0.Do("DUMP", k).(string)
	moved := resptest.Error(fmt.Sprintf("MOVED %d %s", slot, c[0].addr))
	if r := a1.Do("RESTORE-ASKING", k, "0", payload); r != moved {
		t.Errorf("RESTORE-ASKING on a slot not imported = %v, want %q", r, moved)
	}
	host, port := c[1].hostPort()
	// In a transaction it would wait for the lock EXEC holds: refused.
	a0.Do("MULTI")
	a0.Do("MIGRATE", host, strconv.Itoa(port), k, "0", "5000")
	if r := resptest.Sprint(a0.Do("EXEC")); !strings.Contains(r, "MIGRATE inside a transaction is not supported in cluster mode") {
		t.Errorf("MIGRATE in a transaction = %v", r)
	}
	s := strconv.FormatInt(slot, 10)
	push(t, c, 2,
		node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}, "migrating": map[string]string{s: c[1].id}}),
		node(c[1], "primary", map[string]any{"importing": map[string]string{s: c[0].id}}))
	if r := a0.Do("CLUSTER", "COUNTKEYSINSLOT", s); r != int64(1) {
		t.Fatalf("COUNTKEYSINSLOT = %v", r)
	}
	if r := a0.Do("MIGRATE", host, strconv.Itoa(port), "", "0", "5000", "KEYS", k); r != "OK" {
		t.Fatalf("MIGRATE = %v", r)
	}
	if r := a0.Do("CLUSTER", "COUNTKEYSINSLOT", s); r != int64(0) {
		t.Errorf("COUNTKEYSINSLOT on the source after MIGRATE = %v", r)
	}
	ask := resptest.Error(fmt.Sprintf("ASK %d %s", slot, c[1].addr))
	if r := a0.Do("CF.EXISTS", k, "x"); r != ask {
		t.Errorf("CF.EXISTS of the moved key on the source = %v, want %q", r, ask)
	}
	a1.Do("ASKING")
	if r := a1.Do("CF.EXISTS", k, "x"); r != int64(1) {
		t.Errorf("CF.EXISTS after ASKING on the target = %v", r)
	}
	// The end of the migration: the target owns the slot.
	push(t, c, 3, node(c[0], "primary", map[string]any{"slots": slotsWithout(slot)}),
		node(c[1], "primary", map[string]any{"slots": [][2]int64{{slot, slot}}}))
	if r := a1.Do("CF.EXISTS", k, "x"); r != int64(1) {
		t.Errorf("CF.EXISTS on the new owner = %v", r)
	}
	if r, want := a0.Do("CF.EXISTS", k, "x"), resptest.Error(fmt.Sprintf("MOVED %d %s", slot, c[1].addr)); r != want {
		t.Errorf("CF.EXISTS on the old owner = %v, want %q", r, want)
	}
}

// slotsWithout is every slot but one, as ranges.
func slotsWithout(slot int64) [][2]int64 {
	var out [][2]int64
	if slot > 0 {
		out = append(out, [2]int64{0, slot - 1})
	}
	if slot < 16383 {
		out = append(out, [2]int64{slot + 1, 16383})
	}
	return out
}

// TestClusterMigrateUnderLoad moves the keys of one slot, one MIGRATE at a
// time, while go-redis ClusterClients write and read them (following -ASK).
// Afterwards every acknowledged item is present on the target, and no
// lookup of an item acknowledged before it began ever answered false. The
// filters go as one payload each, then (chunked) in CF.SCANDUMP's chunks.
func TestClusterMigrateUnderLoad(t *testing.T) {
	t.Run("whole", migrateUnderLoad)
	t.Run("chunked", func(t *testing.T) {
		t.Cleanup(server.SetMigrateWhole(0))
		migrateUnderLoad(t)
	})
}

func migrateUnderLoad(t *testing.T) {
	c := startCluster(t, 2)
	_, slot := keyInSlotRange(t, c[0].addr, 0, 16383)
	tag := ""
	for i := 0; ; i++ { // a hash tag of that slot
		tag = "t" + strconv.Itoa(i)
		if int64(server.KeySlot([]byte(tag))) == slot {
			break
		}
	}
	s := strconv.FormatInt(slot, 10)
	push(t, c, 1, node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}}), node(c[1], "primary", nil))
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c[0].addr}, MaxRedirects: 16})
	defer cc.Close()
	const nkeys = 200
	key := func(i int) string { return fmt.Sprintf("{%s}:%d", tag, i) }
	for i := range nkeys {
		if err := cc.CFAdd(ctx, key(i), "seed").Err(); err != nil {
			t.Fatal(err)
		}
	}
	// As Redis's reshard does, the target learns of each step first: were
	// the source first, a client it redirects could be sent straight back.
	targetFirst := []clusterNode{c[1], c[0]}
	push(t, targetFirst, 2,
		node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}, "migrating": map[string]string{s: c[1].id}}),
		node(c[1], "primary", map[string]any{"importing": map[string]string{s: c[0].id}}))

	var (
		stop     atomic.Bool
		mu       sync.Mutex
		acked    = map[string][]string{} // key -> items acknowledged
		falseNeg atomic.Int64
		wg       sync.WaitGroup
	)
	writers, readers := 4, 4
	if testing.Short() {
		writers, readers = 2, 2
	}
	for w := range writers {
		wg.Go(func() {
			for n := 0; !stop.Load(); n++ {
				k, item := key((w*7919+n)%nkeys), fmt.Sprintf("w%d-%d", w, n)
				if err := cc.CFAdd(ctx, k, item).Err(); err != nil {
					if errors.Is(err, context.Canceled) {
						return
					}
					t.Errorf("CF.ADD %s: %v", k, err)
					return
				}
				mu.Lock()
				acked[k] = append(acked[k], item)
				mu.Unlock()
			}
		})
	}
	for r := range readers {
		wg.Go(func() {
			for n := 0; !stop.Load(); n++ {
				k := key((r*104729 + n) % nkeys)
				mu.Lock()
				items := append([]string{"seed"}, acked[k]...)
				mu.Unlock()
				item := items[n%len(items)]
				ok, err := cc.CFExists(ctx, k, item).Result()
				if err != nil {
					t.Errorf("CF.EXISTS %s: %v", k, err)
					return
				}
				if !ok {
					falseNeg.Add(1)
					t.Errorf("CF.EXISTS %s %s = false, acknowledged before", k, item)
				}
			}
		})
	}
	host, port := c[1].hostPort()
	src := redis.NewClient(&redis.Options{Addr: c[0].addr})
	defer src.Close()
	time.Sleep(50 * time.Millisecond) // the load is running
	if err := migrateSlot(ctx, src, slot, host, port); err != nil {
		stop.Store(true)
		wg.Wait()
		t.Fatal(err)
	}
	push(t, targetFirst, 3, node(c[0], "primary", map[string]any{"slots": slotsWithout(slot)}),
		node(c[1], "primary", map[string]any{"slots": [][2]int64{{slot, slot}}}))
	time.Sleep(50 * time.Millisecond) // the load goes on against the new owner
	stop.Store(true)
	wg.Wait()
	dst := redis.NewClient(&redis.Options{Addr: c[1].addr})
	defer dst.Close()
	total := 0
	for k, items := range acked {
		for _, item := range items {
			total++
			if ok, err := dst.CFExists(ctx, k, item).Result(); !ok || err != nil {
				t.Errorf("acknowledged %s %s missing on the new owner: %v, %v", k, item, ok, err)
			}
		}
	}
	if n := dst.DBSize(ctx).Val(); n != nkeys {
		t.Errorf("the new owner holds %d keys, want %d", n, nkeys)
	}
	t.Logf("%d acknowledged items checked; %d false negatives", total, falseNeg.Load())
}

// migrateSlot moves every key of slot from src to host:port, ten at a time.
func migrateSlot(ctx context.Context, src *redis.Client, slot int64, host string, port int) error {
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, int(slot), 10).Result()
		if err != nil || len(keys) == 0 {
			return err
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := src.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("MIGRATE: %w", err)
		}
	}
}

// TestClusterMigrateReplicaRead: a replica's READONLY read of a key its
// primary has moved away (the DEL replicated) asks the target, as the
// primary would, instead of answering that the key is absent.
func TestClusterMigrateReplicaRead(t *testing.T) {
	c := startCluster(t, 3) // a primary, its replica, and the target
	k, slot := keyInSlotRange(t, c[0].addr, 0, 16383)
	s := strconv.FormatInt(slot, 10)
	ctx := context.Background()
	replicaOf(t, client(t, c[1].addr), c[0].addr)
	p := client(t, c[0].addr)
	push(t, c, 1, node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}}),
		node(c[1], "replica", map[string]any{"primary": c[0].id}), node(c[2], "primary", nil))
	if err := p.CFAdd(ctx, k, "x").Err(); err != nil {
		t.Fatal(err)
	}
	p.Do(ctx, "WAIT", 1, 5000)
	push(t, c, 2,
		node(c[0], "primary", map[string]any{"slots": [][2]int{{0, 16383}}, "migrating": map[string]string{s: c[2].id}}),
		node(c[1], "replica", map[string]any{"primary": c[0].id}),
		node(c[2], "primary", map[string]any{"importing": map[string]string{s: c[0].id}}))
	r := resptest.Dial(t, c[1].addr)
	r.Do("READONLY")
	if got := r.Do("CF.EXISTS", k, "x"); got != int64(1) {
		t.Fatalf("the replica's read before the move = %v", got)
	}
	host, port := c[2].hostPort()
	if got := p.Do(ctx, "MIGRATE", host, port, k, 0, 5000).Val(); got != "OK" {
		t.Fatalf("MIGRATE = %v", got)
	}
	if n, err := p.Do(ctx, "WAIT", 1, 5000).Int(); n != 1 || err != nil {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	ask := resptest.Error(fmt.Sprintf("ASK %d %s", slot, c[2].addr))
	if got := r.Do("CF.EXISTS", k, "x"); got != ask {
		t.Errorf("the replica's read after the move = %v, want %q", got, ask)
	}
}

// TestMigrateChunked: a filter larger than one payload may be goes in
// CF.SCANDUMP's chunks: every item arrives, with the filter's shape and
// deadline; a key on the target is refused as RESTORE refuses it, or
// replaced with REPLACE; a failure leaves the source's key.
func TestMigrateChunked(t *testing.T) {
	t.Cleanup(server.SetMigrateWhole(1 << 10))
	_, src := start(t, server.Config{})
	_, dst := start(t, server.Config{})
	ctx := context.Background()
	a, b := client(t, src), client(t, dst)
	host, port, _ := net.SplitHostPort(dst)
	a.Do(ctx, "CF.RESERVE", "big", 100000)
	items := make([]any, 20000)
	for i := range items {
		items[i] = "item" + strconv.Itoa(i)
	}
	if err := a.CFInsert(ctx, "big", nil, items...).Err(); err != nil {
		t.Fatal(err)
	}
	a.PExpire(ctx, "big", time.Hour)
	a.CFAdd(ctx, "small", "x")
	info := a.CFInfo(ctx, "big").Val()
	b.CFAdd(ctx, "big", "already there")
	if err := a.Do(ctx, "MIGRATE", host, port, "big", 0, 5000).Err(); err == nil || !strings.Contains(err.Error(), "BUSYKEY") {
		t.Errorf("MIGRATE of a big filter over a key = %v", err)
	}
	if ok, _ := b.CFExists(ctx, "big", "already there").Result(); !ok {
		t.Error("a refused chunked MIGRATE changed the target's key")
	}
	want := mustDump(t, a, "big")
	if err := a.Do(ctx, "MIGRATE", host, port, "", 0, 5000, "REPLACE", "KEYS", "big", "small").Err(); err != nil {
		t.Fatalf("MIGRATE REPLACE of a big filter: %v", err)
	}
	if n := a.Exists(ctx, "big", "small").Val(); n != 0 {
		t.Errorf("%d keys left on the source", n)
	}
	got, err := b.CFMExists(ctx, "big", items...).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range got {
		if !ok {
			t.Fatalf("%s missing on the target", items[i])
		}
	}
	// Byte for byte: a lookup of the old filter's item would be a false
	// positive of the new one's now and then, its seed being random.
	if got := mustDump(t, b, "big"); got != want {
		t.Error("after REPLACE the target's filter is not the source's (DUMP differs)")
	}
	if got := b.CFInfo(ctx, "big").Val(); got != info {
		t.Errorf("CF.INFO on the target %+v, on the source %+v", got, info)
	}
	if d := b.PTTL(ctx, "big").Val(); d <= 0 || d > time.Hour {
		t.Errorf("the deadline on the target: PTTL %v", d)
	}
	// A target that refuses a chunk midway (longer than its
	// proto-max-bulk-len: it closes the connection): the source keeps its
	// key, the target holds no part of it.
	_, small := start(t, server.Config{Limits: server.Limits{MaxBulk: 4 << 10}})
	a.Do(ctx, "CF.RESERVE", "big2", 100000)
	a.CFInsert(ctx, "big2", nil, items...)
	h2, p2, _ := net.SplitHostPort(small)
	if err := a.Do(ctx, "MIGRATE", h2, p2, "big2", 0, 5000).Err(); err == nil {
		t.Error("MIGRATE to a target refusing its chunks succeeded")
	}
	if ok, _ := a.CFExists(ctx, "big2", "item1").Result(); !ok {
		t.Error("a failed chunked MIGRATE lost the source's key")
	}
	if n := client(t, small).Exists(ctx, "big2").Val(); n != 0 {
		t.Error("a failed chunked MIGRATE left a partial key on the target")
	}
}

// TestMigrateChunkedNoMemory: a chunked MIGRATE that cannot charge its
// first chunk (maxmemory reached here) fails before it sends anything, and
// leaves the target's key of that name alone.
func TestMigrateChunkedNoMemory(t *testing.T) {
	t.Cleanup(server.SetMigrateWhole(1 << 10))
	_, src := start(t, server.Config{})
	_, dst := start(t, server.Config{})
	ctx := context.Background()
	a, b := client(t, src), client(t, dst)
	a.Do(ctx, "CF.RESERVE", "big", 100000)
	a.CFAdd(ctx, "big", "x")
	b.CFAdd(ctx, "big", "theirs")
	used := infoFields(t, a, "memory")["used_memory_filters"]
	if err := a.ConfigSet(ctx, "maxmemory", used).Err(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(dst)
	if err := a.Do(ctx, "MIGRATE", host, port, "big", 0, 5000).Err(); err == nil || !strings.Contains(err.Error(), "Insufficient memory") {
		t.Errorf("MIGRATE with no memory for its chunks = %v", err)
	}
	if ok, _ := b.CFExists(ctx, "big", "theirs").Result(); !ok {
		t.Error("the failed MIGRATE deleted the target's key")
	}
	if ok, _ := a.CFExists(ctx, "big", "x").Result(); !ok {
		t.Error("the failed MIGRATE lost the source's key")
	}
}
