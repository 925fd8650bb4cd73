package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// migrateCLI runs "cuckoo migrate args..." in process and returns its exit
// status, standard output and standard error.
func migrateCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(append([]string{"migrate", "--progress=false"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// fillSource makes filters of both layouts on a cuckoo serve: two of
// RedisBloom's (one grown, one with a deadline), an empty one, and one of
// cuckoo serve's own.
func fillSource(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.ConfigSet(ctx, "cf-layout", "redisbloom").Err())
	must(c.Do(ctx, "CF.RESERVE", "rb:grown", 100, "EXPANSION", 2).Err())
	pipe := c.Pipeline()
	for i := range 3000 {
		pipe.CFAdd(ctx, "rb:grown", fmt.Sprint("item", i))
	}
	_, err := pipe.Exec(ctx)
	must(err)
	must(c.CFAdd(ctx, "rb:ttl", "x").Err())
	must(c.Expire(ctx, "rb:ttl", time.Hour).Err())
	must(c.CFReserve(ctx, "rb:empty", 100).Err())
	must(c.ConfigSet(ctx, "cf-layout", "cuckoo").Err())
	must(c.CFAdd(ctx, "own", "x").Err())
}

func dumpsOf(t *testing.T, c *redis.Client, keys ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range keys {
		d, err := readDump(context.Background(), c, k)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		out[k] = fmt.Sprint(d.iters, d.chunks, c.Do(context.Background(), "CF.DEBUG", k).Val())
	}
	return out
}

// TestMigrateBetweenServes copies every filter of one cuckoo serve to
// another: the same dumps, figures and deadlines; a rerun skips them all;
// a key the target holds otherwise is left unless --replace; --dry-run
// and --match do as they say.
func TestMigrateBetweenServes(t *testing.T) {
	ctx := context.Background()
	bin := cuckooBin(t)
	_, from, _ := serveProc(t, bin, "--dir", t.TempDir())
	_, to, _ := serveProc(t, bin, "--dir", t.TempDir())
	src, dst := redis.NewClient(&redis.Options{Addr: from}), redis.NewClient(&redis.Options{Addr: to})
	defer src.Close()
	defer dst.Close()
	fillSource(t, src)
	keys := []string{"rb:grown", "rb:ttl", "rb:empty", "own"}

	code, out, errOut := migrateCLI("--from", from, "--to", to, "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "would copy 4 keys (3002 items") || dst.DBSize(ctx).Val() != 0 {
		t.Fatalf("--dry-run: status %d, %q %q; the target holds %d keys", code, out, errOut, dst.DBSize(ctx).Val())
	}
	code, out, errOut = migrateCLI("--from", from, "--to", to, "--match", "rb:g*")
	if code != 0 || !strings.HasPrefix(out, "copied 1 keys (3000 items") {
		t.Fatalf("--match: status %d, %q %q", code, out, errOut)
	}
	code, out, errOut = migrateCLI("--from", from, "--to", to)
	if code != 0 || !strings.HasPrefix(out, "copied 3 keys") || !strings.Contains(out, "skipped 1 already there") {
		t.Fatalf("status %d, %q %q", code, out, errOut)
	}
	if a, b := dumpsOf(t, src, keys...), dumpsOf(t, dst, keys...); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("the copies differ:\n%.300v\n%.300v", a, b)
	}
	for _, k := range []string{"rb:grown", "rb:empty"} {
		if enc := dst.ObjectEncoding(ctx, k).Val(); enc != "redisbloom" {
			t.Errorf("%s copied as %q", k, enc)
		}
	}
	if ttl := dst.TTL(ctx, "rb:ttl").Val(); ttl < 59*time.Minute || ttl > time.Hour {
		t.Errorf("the deadline was not kept: TTL %v", ttl)
	}
	code, out, _ = migrateCLI("--from", from, "--to", to)
	if code != 0 || !strings.HasPrefix(out, "copied 0 keys") || !strings.Contains(out, "skipped 4 already there") {
		t.Fatalf("a rerun: status %d, %q", code, out)
	}

	// The target's key changes: reported and left, then replaced.
	dst.CFAdd(ctx, "rb:grown", "only on the target")
	code, out, errOut = migrateCLI("--from", from, "--to", to)
	if code != exitError || !strings.Contains(out, "1 failed") || !strings.Contains(errOut, `"rb:grown": the target holds another value under this key (--replace replaces it)`) {
		t.Fatalf("a conflicting key: status %d, %q %q", code, out, errOut)
	}
	code, out, errOut = migrateCLI("--from", from, "--to", to, "--replace")
	if code != 0 || !strings.HasPrefix(out, "copied 1 keys") {
		t.Fatalf("--replace: status %d, %q %q", code, out, errOut)
	}
	if a, b := dumpsOf(t, src, "rb:grown"), dumpsOf(t, dst, "rb:grown"); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("--replace did not make the copy its source's")
	}
}

// TestMigrateRefuses: usage errors, and servers that do not answer.
func TestMigrateRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--from HOST:PORT is required"},
		{[]string{"--from", closed, "extra"}, `unexpected argument "extra"`},
		{[]string{"--from", closed, "--cacert", "ca.pem"}, "--cacert, --cert and --key need --tls"},
		{[]string{"--from", closed, "--to", closed}, "migrate: --from " + closed},
	} {
		code, _, errOut := migrateCLI(c.args...)
		if code != exitError || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: status %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
}

// TestMigrateFromAndToRedisBloom moves filters from a real RedisBloom to
// cuckoo serve and back, for Redis 7.0 with RedisBloom 2.6 (Redis Stack)
// and Redis 8, whose filters are built in and whose DUMP payloads carry
// RDB version 13: grown, small and empty filters (an empty one goes by
// DUMP and RESTORE), with and without deadlines, every key checked (the
// same dumps, CF.INFO, deadlines and CF.EXISTS answers) both ways; a key
// of cuckoo serve's own layout is refused, saying why. Each skips where
// its Redis is not built (redistest).
func TestMigrateFromAndToRedisBloom(t *testing.T) {
	t.Run("redis-7", func(t *testing.T) { testMigrateRedisBloom(t, redistest.StartRedisBloom(t)) })
	t.Run("redis-8", func(t *testing.T) { testMigrateRedisBloom(t, redistest.StartRedis8(t)) })
}

func testMigrateRedisBloom(t *testing.T, stack string) {
	ctx := context.Background()
	_, serve, _ := serveProc(t, cuckooBin(t), "--dir", t.TempDir())
	rs, cs := redis.NewClient(&redis.Options{Addr: stack}), redis.NewClient(&redis.Options{Addr: serve})
	defer rs.Close()
	defer cs.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(rs.Do(ctx, "CF.RESERVE", "a", 1000, "BUCKETSIZE", 4, "EXPANSION", 2).Err())
	pipe := rs.Pipeline()
	for i := range 5000 {
		pipe.CFAdd(ctx, "a", fmt.Sprint("item", i))
	}
	_, err := pipe.Exec(ctx)
	must(err)
	must(rs.CFReserve(ctx, "empty", 64).Err())
	must(rs.Do(ctx, "CF.RESERVE", "empty:ttl", 1000, "BUCKETSIZE", 1).Err())
	must(rs.Expire(ctx, "empty:ttl", time.Hour).Err())
	must(rs.CFAdd(ctx, "small:ttl", "x").Err())
	must(rs.Expire(ctx, "small:ttl", 2*time.Hour).Err())
	must(rs.Set(ctx, "plain", "a string", 0).Err()) // not a filter: not copied
	keys := []string{"a", "empty", "empty:ttl", "small:ttl"}
	code, out, errOut := migrateCLI("--from", stack, "--to", serve)
	if code != 0 || !strings.HasPrefix(out, "copied 4 keys (5001 items") {
		t.Fatalf("from RedisBloom: status %d, %q %q", code, out, errOut)
	}
	checkMigrated(t, rs, cs, keys...)
	if cs.Exists(ctx, "plain").Val() != 0 {
		t.Error("a string key was copied")
	}
	code, out, _ = migrateCLI("--from", stack, "--to", serve)
	if code != 0 || !strings.Contains(out, "skipped 4 already there") {
		t.Fatalf("a rerun: status %d, %q", code, out)
	}

	// Back: new keys of RedisBloom's layout go, empty or not, with their
	// deadlines; one of cuckoo serve's does not.
	must(cs.ConfigSet(ctx, "cf-layout", "redisbloom").Err())
	must(cs.CFAdd(ctx, "back", "x").Err())
	must(cs.CFReserve(ctx, "back:empty", 500).Err())
	must(cs.Expire(ctx, "back:empty", time.Hour).Err())
	must(cs.ConfigSet(ctx, "cf-layout", "cuckoo").Err())
	must(cs.CFAdd(ctx, "own", "x").Err())
	code, out, errOut = migrateCLI("--from", serve, "--to", stack)
	if code != exitError || !strings.HasPrefix(out, "copied 2 keys") || !strings.Contains(out, "skipped 4 already there") ||
		!strings.Contains(out, "1 refused") || !strings.Contains(errOut, `"own": a filter of cuckoo serve's own layout`) {
		t.Fatalf("to RedisBloom: status %d, %q %q", code, out, errOut)
	}
	checkMigrated(t, cs, rs, "back", "back:empty")
	if rs.Exists(ctx, "own").Val() != 0 {
		t.Fatal("RedisBloom holds a filter of cuckoo serve's own layout")
	}
}

// checkMigrated requires each key on dst to be its copy on src: the same
// CF.SCANDUMP chunks, CF.INFO figures, deadline (within a second) and
// CF.EXISTS answers for item0 to item9999 and x.
func checkMigrated(t *testing.T, src, dst *redis.Client, keys ...string) {
	t.Helper()
	ctx := context.Background()
	if a, b := dumpsOf(t, src, keys...), dumpsOf(t, dst, keys...); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("the copies' dumps differ from their sources':\n%.300v\n%.300v", a, b)
	}
	probes := []any{"x"}
	for i := range 10000 {
		probes = append(probes, fmt.Sprint("item", i))
	}
	for _, k := range keys {
		a, err := src.CFInfo(ctx, k).Result()
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if b := dst.CFInfo(ctx, k).Val(); a != b {
			t.Errorf("%s: CF.INFO %+v, its source %+v", k, b, a)
		}
		ta, tb := src.PExpireTime(ctx, k).Val(), dst.PExpireTime(ctx, k).Val()
		if (ta < 0) != (tb < 0) || (ta-tb).Abs() > time.Second {
			t.Errorf("%s: PEXPIRETIME %v, its source %v", k, tb, ta)
		}
		if ea, eb := src.CFMExists(ctx, k, probes...).Val(), dst.CFMExists(ctx, k, probes...).Val(); fmt.Sprint(ea) != fmt.Sprint(eb) {
			t.Errorf("%s: CF.MEXISTS answers differ from its source's", k)
		}
	}
}

// TestMigrateRedis8ToRedis7: Redis 7.0 refuses Redis 8's DUMP payloads
// (RDB version 13), so an empty filter, which goes by DUMP and RESTORE,
// goes to Redis 7.0 as Redis 7.0 writes it; the rest go by CF.SCANDUMP,
// the same in both. Skipped unless both are built.
func TestMigrateRedis8ToRedis7(t *testing.T) {
	ctx := context.Background()
	from, to := redistest.StartRedis8(t), redistest.StartRedisBloom(t)
	r8, r7 := redis.NewClient(&redis.Options{Addr: from}), redis.NewClient(&redis.Options{Addr: to})
	defer r8.Close()
	defer r7.Close()
	for _, err := range []error{
		r8.CFReserve(ctx, "empty", 100).Err(),
		r8.Do(ctx, "CF.RESERVE", "empty:ttl", 5000, "BUCKETSIZE", 4).Err(),
		r8.Expire(ctx, "empty:ttl", time.Hour).Err(),
		r8.CFAdd(ctx, "small", "x").Err(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := migrateCLI("--from", from, "--to", to)
	if code != 0 || !strings.HasPrefix(out, "copied 3 keys (1 items") {
		t.Fatalf("status %d, %q %q", code, out, errOut)
	}
	checkMigrated(t, r8, r7, "empty", "empty:ttl", "small")
}

// TestRedis7Payload: Redis 8.6.3's payload of an empty filter becomes,
// byte for byte, Redis 7.0.15's payload of the same filter (both captured
// with RedisBloom, redisbloom/testdata); one already at version 10, or not
// a filter's, is left.
func TestRedis7Payload(t *testing.T) {
	r8, r7 := fixtureDump(t, "fixtures-redis8"), fixtureDump(t, "fixtures")
	older, ok := redis7Payload(r8)
	if !ok || older != string(r7) {
		t.Fatalf("redis7Payload of Redis 8's empty filter: %v, %x\nRedis 7.0's: %x", ok, older, r7)
	}
	if _, ok := redis7Payload(r7); ok {
		t.Error("a payload of version 10 was rewritten")
	}
	bad := append([]byte(nil), r8...)
	bad[1] ^= 1
	for _, p := range [][]byte{nil, []byte("short"), bad} {
		if _, ok := redis7Payload(p); ok {
			t.Errorf("redis7Payload(%q) rewrote it", p)
		}
	}
}

// fixtureDump is the DUMP payload of the fixture "empty" (CF.RESERVE 1000
// BUCKETSIZE 4) in redisbloom/testdata/dir.
func fixtureDump(t *testing.T, dir string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "redisbloom", "testdata", dir, "empty.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Dump []byte `json:"dump"`
	}
	if err := json.NewDecoder(zr).Decode(&fx); err != nil {
		t.Fatal(err)
	}
	return fx.Dump
}
