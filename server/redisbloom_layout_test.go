package server_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// rbConfig is a server whose new filters take RedisBloom's layout.
func rbConfig(dir string) server.Config {
	return server.Config{Dir: dir, Logger: quiet(), FilterDefaults: server.FilterDefaults{Layout: cf.LayoutRedisBloom}}
}

// scanDump is key's whole CF.SCANDUMP: each iterator and chunk.
func scanDump(t *testing.T, c *redis.Client, key string) []redis.ScanDump {
	t.Helper()
	var out []redis.ScanDump
	for iter := int64(0); ; {
		d, err := c.CFScanDump(context.Background(), key, iter).Result()
		if err == redis.Nil { // [0, nil]: the end
			return out
		}
		if err != nil {
			t.Fatalf("CF.SCANDUMP %s %d: %v", key, iter, err)
		}
		if d.Iter == 0 {
			return out
		}
		out = append(out, d)
		iter = d.Iter
	}
}

// fillRB makes keys of several RedisBloom shapes: grown to several
// sub-filters, with deletes (and so an automatic compaction), a fixed
// one filled up, and one CF.ADD created.
func fillRB(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	for _, args := range [][]any{
		{"CF.RESERVE", "grown", 100, "EXPANSION", 2, "BUCKETSIZE", 3},
		{"CF.RESERVE", "fixed", 64, "EXPANSION", 0, "BUCKETSIZE", 4, "MAXITERATIONS", 5},
	} {
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	pipe := c.Pipeline()
	for i := range 2000 {
		pipe.CFAdd(ctx, "grown", fmt.Sprint("item", i))
		pipe.CFAdd(ctx, "auto", fmt.Sprint("item", i))
		if i < 100 {
			pipe.Do(ctx, "CF.ADD", "fixed", fmt.Sprint("item", i))
		}
	}
	for i := range 300 {
		pipe.CFDel(ctx, "grown", fmt.Sprint("item", i))
	}
	pipe.Exec(ctx) // "fixed" answers "Filter is full" once full
}

// TestRedisBloomLayoutFigures: with cf-layout redisbloom, CF.RESERVE,
// CF.ADD and CF.INSERT make RedisBloom's filters, with its figures, and
// OBJECT ENCODING names the layout.
func TestRedisBloomLayoutFigures(t *testing.T) {
	ctx := context.Background()
	_, addr := start(t, rbConfig(""))
	c := client(t, addr)
	if err := c.CFReserve(ctx, "k", 1000).Err(); err != nil {
		t.Fatal(err)
	}
	c.CFAdd(ctx, "k", "foo")
	c.CFAdd(ctx, "k", "bar")
	info, err := c.CFInfo(ctx, "k").Result()
	if err != nil {
		t.Fatal(err)
	}
	// RedisBloom 2.6.28's figures after the same commands.
	want := redis.CFInfo{Size: 1080, NumBuckets: 512, NumFilters: 1, NumItemsInserted: 2, BucketSize: 2, ExpansionRate: 1, MaxIteration: 20}
	if info != want {
		t.Errorf("CF.INFO %+v, want %+v", info, want)
	}
	if got := c.Do(ctx, "CF.DEBUG", "k").Val(); got != "bktsize:2 buckets:512 items:2 deletes:0 filters:1 max_iterations:20 expansion:1" {
		t.Errorf("CF.DEBUG %v", got)
	}
	if enc := c.ObjectEncoding(ctx, "k").Val(); enc != "redisbloom" {
		t.Errorf("OBJECT ENCODING %q", enc)
	}
	d := scanDump(t, c, "k")
	if len(d) != 2 || len(d[1].Data) != 1024 || d[1].Data[514] == 0 || d[1].Data[764] == 0 {
		t.Errorf("CF.SCANDUMP: %d chunks", len(d))
	}
	// CF.INSERT creates RedisBloom's default shape too; EXPANSION 3 is
	// rounded up to 4, as RedisBloom does.
	c.Do(ctx, "CF.INSERT", "ins", "CAPACITY", 100, "ITEMS", "a", "b")
	c.Do(ctx, "CF.RESERVE", "e3", 100, "EXPANSION", 3)
	for key, want := range map[string]string{
		"ins": "bktsize:2 buckets:64 items:2 deletes:0 filters:1 max_iterations:20 expansion:1",
		"e3":  "bktsize:2 buckets:64 items:0 deletes:0 filters:1 max_iterations:20 expansion:4",
	} {
		if got := c.Do(ctx, "CF.DEBUG", key).Val(); got != want {
			t.Errorf("CF.DEBUG %s: %v, want %s", key, got, want)
		}
	}
	// CONFIG SET switches back: new filters take this server's layout,
	// the existing ones keep theirs.
	if err := c.ConfigSet(ctx, "cf-layout", "cuckoo").Err(); err != nil {
		t.Fatal(err)
	}
	c.CFAdd(ctx, "ours", "x")
	if enc := c.ObjectEncoding(ctx, "ours").Val(); enc != "growing" {
		t.Errorf("after CONFIG SET cf-layout cuckoo: OBJECT ENCODING %q", enc)
	}
	if enc := c.ObjectEncoding(ctx, "k").Val(); enc != "redisbloom" {
		t.Errorf("an existing key changed layout: %q", enc)
	}
	wantErr(t, c.ConfigSet(ctx, "cf-layout", "bloom").Err(),
		"ERR CONFIG SET failed (possibly related to argument 'cf-layout') - argument(s) must be one of the following: cuckoo, redisbloom")
}

// TestRedisBloomLayoutPersists: RedisBloom filters come back the same
// after a restart from the log alone and from a snapshot, and on a
// replica: the same chunks, byte for byte.
func TestRedisBloomLayoutPersists(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := rbConfig(dir)
	cfg.SnapshotLogSize = -1 // no snapshot: the restart replays every write
	psrv, paddr := start(t, cfg)
	p := client(t, paddr)
	host, port, _ := net.SplitHostPort(paddr)
	rcfg := rbConfig(t.TempDir())
	rcfg.ReplicaOf = host + " " + port
	_, raddr := start(t, rcfg)
	r := client(t, raddr)
	fillRB(t, p)
	caughtUp(t, p, r)
	keys := []string{"grown", "fixed", "auto"}
	live := map[string][]redis.ScanDump{}
	for _, k := range keys {
		live[k] = scanDump(t, p, k)
		if len(live[k]) < 2 {
			t.Fatalf("%s dumps %d chunks", k, len(live[k]))
		}
	}
	if n := c2int(p.Do(ctx, "CF.DEBUG", "grown").Val()); n == "" {
		t.Fatal("no CF.DEBUG")
	}
	same := func(where string, c *redis.Client) {
		t.Helper()
		for _, k := range keys {
			if got := scanDump(t, c, k); !slices.EqualFunc(got, live[k], func(a, b redis.ScanDump) bool { return a == b }) {
				t.Errorf("%s: key %s dumps differently", where, k)
			}
			if enc := c.ObjectEncoding(ctx, k).Val(); enc != "redisbloom" {
				t.Errorf("%s: key %s has encoding %q", where, k, enc)
			}
		}
	}
	same("replica", r)
	if err := psrv.CloseWithoutSnapshot(); err != nil {
		t.Fatal(err)
	}
	srv, addr := start(t, rbConfig(dir))
	c := client(t, addr)
	same("replayed", c)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.CloseWithoutSnapshot(); err != nil {
		t.Fatal(err)
	}
	_, addr = start(t, rbConfig(dir))
	same("from the snapshot", client(t, addr))
}

func c2int(v any) string { return fmt.Sprint(v) }

// TestRedisBloomMemoryUsage: MEMORY USAGE of a RedisBloom-layout key is
// what Redis 7.0.15 with RedisBloom 2.6.28 answered for the same key and
// CF.RESERVE (measured there: the key's name is allocated as an sds in a
// jemalloc size class).
func TestRedisBloomMemoryUsage(t *testing.T) {
	ctx := context.Background()
	_, addr := start(t, rbConfig(""))
	c := client(t, addr)
	for _, tc := range []struct {
		keyLen   int
		capacity int
		want     int64
	}{
		{2, 1000, 1112}, {1, 1000, 1112}, {8, 1000, 1120}, {13, 1000, 1120}, {29, 1000, 1136},
		{38, 1000, 1152}, {100, 1000, 1216}, {300, 1000, 1424}, {5000, 1000, 6224}, {3, 100000, 131160},
	} {
		key := strings.Repeat("k", tc.keyLen)
		c.Del(ctx, key)
		if err := c.CFReserve(ctx, key, int64(tc.capacity)).Err(); err != nil {
			t.Fatal(err)
		}
		if got, err := c.MemoryUsage(ctx, key).Result(); err != nil || got != tc.want {
			t.Errorf("MEMORY USAGE of a %d-byte key, CF.RESERVE %d: %d, %v; Redis with RedisBloom answers %d",
				tc.keyLen, tc.capacity, got, err, tc.want)
		}
	}
}

// TestRedisBloomArgumentReplies: argument errors, option lookup and
// CF.LOADCHUNK's refusals answer as RedisBloom did to the same commands in
// the same order (transcribed from redis-cli): 8.6.2 in Redis 8.6.3 by
// default, 2.6.28 in Redis 7.0.15 under redisbloom-compat 2.6.
func TestRedisBloomArgumentReplies(t *testing.T) {
	for _, compat := range []cf.Compat{cf.Compat86, cf.Compat26} {
		t.Run("redisbloom-compat="+compat.String(), func(t *testing.T) { testArgumentReplies(t, compat) })
	}
}

func testArgumentReplies(t *testing.T, compat cf.Compat) {
	ctx := context.Background()
	cfg := rbConfig("")
	cfg.FilterDefaults.Compat = compat
	_, addr := start(t, cfg)
	c := client(t, addr, func(o *redis.Options) { o.Protocol = 2 }) // as redis-cli
	for _, tc := range []struct {
		cmd            string
		want86, want26 string // a reply, or an error's text; want26 "" if the same
	}{
		{"CF.RESERVE k 9223372036854775807", "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", "ERR Insufficient memory to create filter"},
		{"CF.RESERVE k 100 SIZE 4", "OK", ""},
		{"CF.RESERVE k2 100 BUCKETSIZE 4 BUCKETSIZE 300", "OK", ""},
		{"CF.RESERVE k3 100 EXPANSION x BUCKETSIZE 0 MAXITERATIONS 0", "MAXITERATIONS: value must be in the range [1, 65535]", "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."},
		{"CF.RESERVE k3 100 EXPANSION x BUCKETSIZE 0", "BUCKETSIZE: value must be in the range [1, 255]", "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."},
		{"CF.RESERVE k3 3", "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", "Capacity must be at least (BucketSize * 2)"},
		{"CF.RESERVE k3 -3", "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", "Capacity must be at least (BucketSize * 2)"},
		{"CF.LOADCHUNK k 1 short", "ERR item exists", ""},
		{"CF.LOADCHUNK nokey 1 short", "Invalid header", ""},
		{"CF.LOADCHUNK nokey -5 data", "ERR not found", ""},
		{"CF.LOADCHUNK k -5 data", "Couldn't load chunk!", ""},
		{"CF.LOADCHUNK k 0 data", "Invalid position", ""},
		{"CF.INSERT k4 cap 100 i a b", "[1 1]", ""},
		{"CF.INSERT k5 nosuch i a", "ERR not found", ""},
		{"CF.INSERT k5 xyz i a", "Unknown argument received", ""},
		{"CF.INSERT k5 c 3 i a", "Capacity must be in the range [cf-bucket-size * 2, 1073741824]", "Capacity must be at least (BucketSize * 2)"},
		{"CF.INSERT k6 c 99999999999999999 i a", "Capacity must be in the range [cf-bucket-size * 2, 1073741824]", "ERR Insufficient memory to create filter"},
	} {
		var args []any
		for _, f := range strings.Fields(tc.cmd) {
			args = append(args, f)
		}
		v, err := c.Do(ctx, args...).Result()
		got := fmt.Sprint(v)
		if err != nil {
			got = err.Error()
		}
		want := tc.want86
		if compat == cf.Compat26 && tc.want26 != "" {
			want = tc.want26
		}
		if got != want {
			t.Errorf("%s: %q, RedisBloom %s answers %q", tc.cmd, got, compat, want)
		}
	}
	// A header whose filter would take 2^49 bytes: RedisBloom 8.6.2 cannot
	// allocate it (its flow test test_scandump_invalid_header_alloc);
	// 2.6.28 aborts.
	h := make([]byte, 38)
	h[14] = 1                      // 2^48 buckets
	h[24], h[32], h[34] = 1, 2, 20 // one filter of 2-slot buckets, 20 iterations
	wantErr(t, c.Do(ctx, "CF.LOADCHUNK", "huge", 1, string(h)).Err(), "Couldn't create filter!")
	// RedisBloom 8 checks a header's bucket size against cf-bucket-size's
	// bound, half of cf-initial-size; 2.6 against 255.
	h = make([]byte, 38)
	h[8], h[24], h[32], h[34] = 32, 1, 4, 20 // 32 buckets of 4 slots
	if err := c.ConfigSet(ctx, "cf-initial-size", "4").Err(); err != nil {
		t.Fatal(err)
	}
	err := c.Do(ctx, "CF.LOADCHUNK", "b4", 1, string(h)).Err()
	if compat == cf.Compat26 {
		if err != nil {
			t.Errorf("CF.LOADCHUNK of a 4-slot header, cf-initial-size 4: %v", err)
		}
	} else {
		wantErr(t, err, "Couldn't create filter!")
		wantErr(t, c.Do(ctx, "CF.LOADCHUNK", "k", 1, string(h)).Err(), "ERR item exists")
	}
	c.ConfigSet(ctx, "cf-initial-size", "1024")
	// What the repeated and the abbreviated options made.
	for key, want := range map[string][2]int64{"k2": {32, 4}, "k4": {64, 2}} {
		info, err := c.CFInfo(ctx, key).Result()
		if err != nil || info.NumBuckets != want[0] || info.BucketSize != want[1] {
			t.Errorf("CF.INFO %s: %+v, %v; RedisBloom has %d buckets of %d", key, info, err, want[0], want[1])
		}
	}
}
