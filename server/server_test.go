package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// start serves cfg on 127.0.0.1:0; the listener is bound before Serve runs,
// so the address is ready when start returns. Cleanup shuts it down. Each
// of before is called with the server before it serves.
func start(t testing.TB, cfg server.Config, before ...func(*server.Server)) (*server.Server, string) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range before {
		f(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return srv, ln.Addr().String()
}

func client(t testing.TB, addr string, opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: addr, MaxRetries: -1}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestCFCommands(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()

	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// CF.ADD on a missing key creates it with the default capacity.
	if ok, err := c.CFAdd(ctx, "k", "a").Result(); err != nil || !ok {
		t.Fatalf("CF.ADD = %v, %v", ok, err)
	}
	if ok, _ := c.CFExists(ctx, "k", "a").Result(); !ok {
		t.Error("CF.EXISTS a = false")
	}
	if ok, _ := c.CFExists(ctx, "k", "zz").Result(); ok {
		t.Error("CF.EXISTS zz = true")
	}
	if ok, err := c.CFExists(ctx, "missing", "a").Result(); err != nil || ok {
		t.Errorf("CF.EXISTS on a missing key = %v, %v; want false", ok, err)
	}
	if ok, _ := c.CFAddNX(ctx, "k", "a").Result(); ok {
		t.Error("CF.ADDNX of a present item = true")
	}
	if n, _ := c.CFCount(ctx, "k", "a").Result(); n != 1 {
		t.Errorf("CF.COUNT = %d", n)
	}
	wantErr(t, c.CFReserve(ctx, "k", 100).Err(), "ERR item exists")
	wantErr(t, c.CFDel(ctx, "missing", "a").Err(), "Not found")
	wantErr(t, c.CFInfo(ctx, "missing").Err(), "ERR not found")
	capRange := "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"
	wantErr(t, c.CFReserve(ctx, "r", -5).Err(), capRange)
	wantErr(t, c.CFReserve(ctx, "r", 0).Err(), capRange)
	wantErr(t, c.Do(ctx, "CF.RESERVE", "r", "x").Err(), "Bad capacity")
	wantErr(t, c.CFReserveBucketSize(ctx, "r", 100, 0).Err(), "BUCKETSIZE: value must be in the range [1, 255]")
	wantErr(t, c.CFReserveBucketSize(ctx, "r", 100, 256).Err(), "BUCKETSIZE: value must be in the range [1, 255]")
	wantErr(t, c.CFReserveBucketSize(ctx, "r", 7, 4).Err(), capRange)
	wantErr(t, c.CFReserveExpansion(ctx, "r", 100, -1).Err(), "EXPANSION: value must be in the range [0, 32768]")

	if ok, _ := c.CFDel(ctx, "k", "a").Result(); !ok {
		t.Error("CF.DEL = false")
	}
	if ok, _ := c.CFExists(ctx, "k", "a").Result(); ok {
		t.Error("CF.EXISTS after CF.DEL = true")
	}
	if ok, _ := c.CFDel(ctx, "k", "a").Result(); ok {
		t.Error("second CF.DEL = true")
	}

	if err := c.CFReserveWithArgs(ctx, "r", &redis.CFReserveOptions{Capacity: 1000, BucketSize: 2, MaxIterations: 50, Expansion: 2}).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := c.CFInsert(ctx, "r", nil, "x", "y", "x").Result()
	if err != nil || len(res) != 3 || !res[0] || !res[1] || !res[2] {
		t.Errorf("CF.INSERT = %v, %v", res, err)
	}
	nx, err := c.CFInsertNX(ctx, "r", nil, "x", "w").Result()
	if err != nil || fmt.Sprint(nx) != "[0 1]" {
		t.Errorf("CF.INSERTNX = %v, %v", nx, err)
	}
	wantErr(t, c.CFInsert(ctx, "nope", &redis.CFInsertOptions{NoCreate: true}, "x").Err(), "ERR not found")
	if err := c.CFInsert(ctx, "cap", &redis.CFInsertOptions{Capacity: 5000}, "x").Err(); err != nil {
		t.Error(err)
	}
	m, err := c.CFMExists(ctx, "r", "x", "y", "nothere").Result()
	if err != nil || fmt.Sprint(m) != "[true true false]" {
		t.Errorf("CF.MEXISTS = %v, %v", m, err)
	}
	info, err := c.CFInfo(ctx, "r").Result()
	if err != nil {
		t.Fatal(err)
	}
	if info.NumFilters != 1 || info.NumItemsInserted != 4 || info.BucketSize != 2 || info.ExpansionRate != 2 || info.MaxIteration != 50 || info.NumBuckets == 0 || info.Size == 0 {
		t.Errorf("CF.INFO = %+v", info)
	}
	if err := c.Do(ctx, "CF.COMPACT", "r").Err(); err != nil {
		t.Error(err)
	}
	wantErr(t, c.Do(ctx, "CF.COMPACT", "missing").Err(), "Cuckoo filter was not found")
}

func TestExpansion(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()

	// EXPANSION 0: a fixed-size filter that answers "Filter is full".
	// (go-redis leaves out EXPANSION 0, so send it by hand.)
	if err := c.Do(ctx, "CF.RESERVE", "fixed", 100, "EXPANSION", 0).Err(); err != nil {
		t.Fatal(err)
	}
	full := false
	var added int
	for i := 0; i < 100000 && !full; i++ {
		err := c.CFAdd(ctx, "fixed", fmt.Sprint("item", i)).Err()
		if err != nil {
			wantErr(t, err, "Filter is full")
			full = true
		} else {
			added++
		}
	}
	if !full || added < 100 {
		t.Errorf("fixed filter: full=%v after %d adds, want full after >= 100", full, added)
	}
	info, _ := c.CFInfo(ctx, "fixed").Result()
	if info.NumFilters != 1 {
		t.Errorf("fixed filter has %d sub-filters", info.NumFilters)
	}

	// An expanding filter adds sub-filters and keeps every item.
	if err := c.CFReserveWithArgs(ctx, "grow", &redis.CFReserveOptions{Capacity: 100, Expansion: 2}).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := c.Pipeline()
	for i := range 3000 {
		pipe.CFAdd(ctx, "grow", fmt.Sprint("item", i))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	info, _ = c.CFInfo(ctx, "grow").Result()
	if info.NumFilters < 4 || info.NumItemsInserted != 3000 {
		t.Errorf("CF.INFO after growth = %+v", info)
	}
	for i := range 3000 {
		pipe.CFExists(ctx, "grow", fmt.Sprint("item", i))
	}
	cmds, _ := pipe.Exec(ctx)
	for i, cmd := range cmds {
		if !cmd.(*redis.BoolCmd).Val() {
			t.Fatalf("item%d lost after growth", i)
		}
	}

	// Thousands of inserts of one item: a clear error, no runaway growth.
	for range 2000 {
		pipe.CFAdd(ctx, "dup", "same")
	}
	cmds, _ = pipe.Exec(ctx)
	last := cmds[len(cmds)-1].Err()
	wantErr(t, last, "Filter is full")
	info, _ = c.CFInfo(ctx, "dup").Result()
	if info.NumFilters > 2 {
		t.Errorf("inserting one item 2000 times made %d sub-filters", info.NumFilters)
	}
}

func TestScanDumpLoadChunk(t *testing.T) {
	_, addr := start(t, server.Config{})
	_, addr2 := start(t, server.Config{})
	c, c2 := client(t, addr), client(t, addr2)
	ctx := context.Background()
	if err := c.CFReserveWithArgs(ctx, "src", &redis.CFReserveOptions{Capacity: 1000, Expansion: 2}).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := c.Pipeline()
	for i := range 5000 {
		pipe.CFAdd(ctx, "src", fmt.Sprint("k", i))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var chunks []redis.ScanDump
	for iter := int64(0); ; {
		d, err := c.CFScanDump(ctx, "src", iter).Result()
		if errors.Is(err, redis.Nil) || d.Iter == 0 {
			// The end: RedisBloom's [0, nil], which go-redis reports as
			// redis.Nil.
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Iter == 0 {
			break
		}
		chunks = append(chunks, d)
		iter = d.Iter
	}
	for _, dst := range []struct {
		c   *redis.Client
		key string
	}{{c, "copy"}, {c2, "src"}} {
		for _, d := range chunks {
			if err := dst.c.CFLoadChunk(ctx, dst.key, d.Iter, d.Data).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 5000 {
			if !dst.c.CFExists(ctx, dst.key, fmt.Sprint("k", i)).Val() {
				t.Fatalf("k%d missing after LOADCHUNK", i)
			}
		}
		a, b := c.CFInfo(ctx, "src").Val(), dst.c.CFInfo(ctx, dst.key).Val()
		if a != b {
			t.Errorf("CF.INFO of the copy %+v, of the source %+v", b, a)
		}
	}
	// Malformed chunks are errors, never panics.
	// A header that is neither this server's nor of RedisBloom's length is
	// taken for a damaged one of this server's; one of RedisBloom's 38 bytes
	// but no filter gets RedisBloom's answer. (A server of RedisBloom's
	// layout answers the first "Invalid header", as RedisBloom.)
	wantErr(t, c.CFLoadChunk(ctx, "bad", 1, "garbage").Err(), "Couldn't create filter!")
	wantErr(t, c.CFLoadChunk(ctx, "bad", 1, strings.Repeat("\x00", 38)).Err(), "Couldn't create filter!")
	wantErr(t, c.CFLoadChunk(ctx, "copy", 1, chunks[0].Data).Err(), "ERR item exists")
	wantErr(t, c.CFLoadChunk(ctx, "x", 0, "a").Err(), "Invalid position")
	if err := c.CFLoadChunk(ctx, "half", 1, chunks[0].Data).Err(); err != nil {
		t.Fatal(err)
	}
	bad := []byte(chunks[1].Data)
	bad[len(bad)/2] ^= 1
	if err := c.CFLoadChunk(ctx, "half", 2, string(bad)).Err(); err == nil || !strings.Contains(err.Error(), "Couldn't load chunk") {
		t.Errorf("corrupt chunk: %v", err)
	}
	if err := c.CFLoadChunk(ctx, "half", 3, chunks[1].Data).Err(); err == nil || !strings.Contains(err.Error(), "Couldn't load chunk") {
		t.Errorf("chunk out of order: %v", err)
	}
}

func TestKeyspaceCommands(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	for _, k := range []string{"a1", "a2", "b1"} {
		c.CFAdd(ctx, k, "x")
	}
	if n := c.DBSize(ctx).Val(); n != 3 {
		t.Errorf("DBSIZE = %d", n)
	}
	if n := c.Exists(ctx, "a1", "a2", "zz").Val(); n != 2 {
		t.Errorf("EXISTS = %d", n)
	}
	if ty := c.Type(ctx, "a1").Val(); ty != "MBbloomCF" {
		t.Errorf("TYPE = %q", ty)
	}
	if ty := c.Type(ctx, "zz").Val(); ty != "none" {
		t.Errorf("TYPE of a missing key = %q", ty)
	}
	keys := c.Keys(ctx, "a*").Val()
	if fmt.Sprint(sorted(keys)) != "[a1 a2]" {
		t.Errorf("KEYS a* = %v", keys)
	}
	var all []string
	for cur := uint64(0); ; {
		ks, next, err := c.Scan(ctx, cur, "*", 2).Result()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ks...)
		if next == 0 {
			break
		}
		cur = next
	}
	if fmt.Sprint(sorted(all)) != "[a1 a2 b1]" {
		t.Errorf("SCAN = %v", all)
	}
	if n := c.Del(ctx, "a1", "zz").Val(); n != 1 {
		t.Errorf("DEL = %d", n)
	}
	if c.Echo(ctx, "hi").Val() != "hi" {
		t.Error("ECHO")
	}
	if err := c.Do(ctx, "SELECT", "0").Err(); err != nil {
		t.Error(err)
	}
	wantErr(t, c.Do(ctx, "SELECT", "1").Err(), "ERR DB index is out of range")
	info := c.Info(ctx).Val()
	for _, s := range []string{"# Server", "# Clients", "# Memory", "# Persistence", "# Stats", "# Keyspace", "db0:keys=2"} {
		if !strings.Contains(info, s) {
			t.Errorf("INFO lacks %q", s)
		}
	}
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n := c.DBSize(ctx).Val(); n != 0 {
		t.Errorf("DBSIZE after FLUSHALL = %d", n)
	}
	wantErr(t, c.Do(ctx, "NOSUCH", "a").Err(), "ERR unknown command 'NOSUCH', with args beginning with: 'a' ")
	wantErr(t, c.Do(ctx, "CF.ADD", "k").Err(), "ERR wrong number of arguments for 'cf.add' command")
}

// TestScanUnderChurn checks Redis's SCAN promise while keys come and go
// between calls: a key present for the whole scan is returned exactly once,
// and the scan ends.
func TestScanUnderChurn(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	const stable, churn = 150, 150
	for i := range stable {
		c.CFAdd(ctx, fmt.Sprintf("stable%d", i), "x")
	}
	for i := range churn {
		c.CFAdd(ctx, fmt.Sprintf("gone%d", i), "x")
	}
	seen := map[string]int{}
	calls := 0
	for cur := uint64(0); ; calls++ {
		if calls > stable+churn*2 {
			t.Fatal("SCAN does not end")
		}
		ks, next, err := c.Scan(ctx, cur, "*", 7).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			seen[k]++
		}
		// Between calls, delete five old keys and add five new ones.
		for j := range 5 {
			c.Del(ctx, fmt.Sprintf("gone%d", calls*5+j))
			c.CFAdd(ctx, fmt.Sprintf("new%d", calls*5+j), "x")
		}
		if next == 0 {
			break
		}
		cur = next
	}
	for i := range stable {
		if k := fmt.Sprintf("stable%d", i); seen[k] != 1 {
			t.Errorf("%s returned %d times, want once", k, seen[k])
		}
	}
	if calls < stable/7 {
		t.Errorf("%d SCAN calls for %d keys at COUNT 7", calls, stable)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestAuth(t *testing.T) {
	_, addr := start(t, server.Config{RequirePass: "s3cret"})
	ctx := context.Background()
	bad := client(t, addr)
	wantErr(t, bad.CFAdd(ctx, "k", "a").Err(), "NOAUTH Authentication required.")
	wrong := client(t, addr, func(o *redis.Options) { o.Password = "nope" })
	if err := wrong.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("wrong password: %v", err)
	}
	good := client(t, addr, func(o *redis.Options) { o.Password = "s3cret" })
	if err := good.CFAdd(ctx, "k", "a").Err(); err != nil {
		t.Errorf("authenticated CF.ADD: %v", err)
	}
}

func TestLimits(t *testing.T) {
	_, addr := start(t, server.Config{MaxMemory: 64 << 10, Limits: server.Limits{MaxItem: 100, MaxArgs: 10, MaxClients: 2}})
	c := client(t, addr, func(o *redis.Options) { o.PoolSize = 1 })
	ctx := context.Background()
	wantErr(t, c.CFReserve(ctx, "big", 10_000_000).Err(), "ERR Insufficient memory")
	if err := c.CFAdd(ctx, "k", strings.Repeat("x", 101)).Err(); err == nil || !strings.Contains(err.Error(), "item size limit") {
		t.Errorf("long item: %v", err)
	}
	args := []any{"CF.MEXISTS", "k"}
	for range 20 {
		args = append(args, "x")
	}
	if err := c.Do(ctx, args...).Err(); err == nil || !strings.Contains(err.Error(), "Protocol error: invalid multibulk length") {
		t.Errorf("many arguments: %v", err)
	}
	// Two connections at most: the third is refused with an error.
	var conns []*resptest.Conn
	for range 3 {
		conns = append(conns, resptest.Dial(t, addr))
	}
	refused := 0
	for _, c := range conns {
		c.TCP().Write([]byte("PING\r\n")) // inline; a refused one may be closed already
		c.TCP().SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, v, _ := c.Reader().ReadKind(); strings.HasPrefix(resptest.Sprint(v), "-ERR max number of clients reached") {
			refused++
		}
	}
	if refused < 1 {
		t.Errorf("%d connections refused, want at least 1 (go-redis holds one)", refused)
	}
}

func TestProtocolError(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := resptest.Dial(t, addr)
	c.SendRaw([]byte("*1\r\n$x\r\n"))
	kind, v, _ := c.Reader().ReadKind()
	rest, _ := io.ReadAll(c.Reader()) // the server answers, then closes
	if !strings.HasPrefix(resptest.Sprint(v), "-ERR Protocol error") {
		t.Errorf("reply to a malformed request: %q %#v, then %q", kind, v, rest)
	}
}

// TestProtocolErrorBeforeUnread: a protocol error followed by more requests
// than the server has read is still answered, after the replies before it.
// Closing a socket with bytes unread makes the kernel reset the
// connection, which destroys the replies still in flight; the server shuts
// its side first and reads what the client still sends.
func TestProtocolErrorBeforeUnread(t *testing.T) {
	_, addr := start(t, server.Config{})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	var p []byte
	for range 10 {
		p = append(p, "*1\r\n$4\r\nPING\r\n"...)
	}
	p = append(p, "*x\r\n"...)
	for range 10000 { // 140 KB the server never parses
		p = append(p, "*1\r\n$4\r\nPING\r\n"...)
	}
	go nc.Write(p)
	got, err := io.ReadAll(nc)
	want := strings.Repeat("+PONG\r\n", 10) + "-ERR Protocol error: invalid multibulk length\r\n"
	if err != nil || string(got) != want {
		t.Errorf("read %q, %v; want %q, then the end", got, err, want)
	}
}

// TestConcurrentReadersWriters: many connections add disjoint items and read
// their own back; no false negative, under -race.
func TestConcurrentReadersWriters(t *testing.T) {
	_, addr := start(t, server.Config{})
	ctx := context.Background()
	n := 2000
	if testing.Short() {
		n = 300
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client(t, addr)
			for i := range n {
				item := fmt.Sprint(w, "-", i)
				if err := c.CFAdd(ctx, "shared", item).Err(); err != nil {
					t.Error(err)
					return
				}
				if !c.CFExists(ctx, "shared", item).Val() {
					t.Errorf("%s missing right after CF.ADD", item)
					return
				}
			}
		}()
	}
	wg.Wait()
	c := client(t, addr)
	if got := c.CFInfo(ctx, "shared").Val().NumItemsInserted; got != int64(8*n) {
		t.Errorf("items inserted = %d, want %d", got, 8*n)
	}
}

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
