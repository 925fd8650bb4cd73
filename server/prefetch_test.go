package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/redis/go-redis/v9"
)

// startReadAhead serves a server whose filters take RedisBloom's layout
// (no per-key seed: two servers given the same commands hold the same
// bytes), with requirepass pw, reading ahead or not.
func startReadAhead(t *testing.T, readAhead bool) string {
	t.Helper()
	cfg := server.Config{Dir: t.TempDir(), Logger: quiet(), RequirePass: "pw",
		FilterDefaults: server.FilterDefaults{Layout: cf.LayoutRedisBloom}}
	var before []func(*server.Server)
	if !readAhead {
		before = append(before, (*server.Server).DisableReadAhead)
	}
	_, addr := start(t, cfg, before...)
	return addr
}

// randomPipeline is one write of requests: runs of the single-item
// commands that are read ahead, in any letter case, on two keys, mixed
// with what may change how the rest is read or answered (AUTH, MULTI,
// CLIENT REPLY, a large CF.INSERT, inline requests, an unknown command),
// ending in QUIT or a malformed request.
func randomPipeline(r *rand.Rand) []byte {
	var b strings.Builder
	item := func() string { return fmt.Sprint("item", r.IntN(200)) }
	key := func() string { return []string{"k", "j", "absent"}[r.IntN(3)] }
	single := []string{"CF.ADD", "cf.add", "CF.EXISTS", "Cf.Exists", "CF.ADDNX", "CF.COUNT", "CF.DEL", "cf.del"}
	for n := r.IntN(80); n > 0; n-- {
		switch p := r.IntN(100); {
		case p < 70:
			b.Write(resptest.Request(single[r.IntN(len(single))], key(), item()))
		case p < 73:
			b.Write(resptest.Request("AUTH", []string{"pw", "wrong"}[r.IntN(2)]))
		case p < 76:
			b.Write(resptest.Request([]string{"MULTI", "EXEC", "DISCARD"}[r.IntN(3)]))
		case p < 79:
			b.Write(resptest.Request("CLIENT", "REPLY", []string{"ON", "OFF", "SKIP"}[r.IntN(3)]))
		case p < 82:
			args := []string{"CF.INSERT", key(), "ITEMS"}
			for range 1 + r.IntN(40) {
				args = append(args, item())
			}
			b.Write(resptest.Request(resptest.Args(args...)...))
		case p < 85:
			b.WriteString("CF.EXISTS " + key() + " " + item() + "\r\n") // inline
		case p < 88:
			b.Write(resptest.Request("CF.EXISTS", key())) // wrong arity
		case p < 91:
			b.Write(resptest.Request("CF.RESERVE", key(), fmt.Sprint(2+r.IntN(100))))
		case p < 94:
			b.Write(resptest.Request("NOSUCH", key(), item()))
		case p < 97:
			b.Write(resptest.Request("CF.MEXISTS", key(), item(), item()))
		default:
			b.Write(resptest.Request("PING"))
		}
	}
	switch r.IntN(3) {
	case 0:
		b.WriteString("*3\r\n$6\r\nCF.ADD\r\n$1\r\nk\r\n$x\r\n") // a bad bulk length
	case 1:
		b.WriteString("*x\r\n") // a bad array length
	default:
		b.Write(resptest.Request("QUIT"))
	}
	return []byte(b.String())
}

// exchange writes p in one write and reads every reply until the server
// closes the connection.
func exchange(t *testing.T, addr string, p []byte) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(p); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading the replies: %v", err)
	}
	return out
}

// TestReadAheadAnswersAsOneByOne: reading requests ahead (and touching
// their items' buckets) changes no reply and no key. Random pipelines go
// in one write each to a server that reads ahead and to one that reads a
// request at a time; every reply byte and, at the end, every key's dump
// must be the same.
func TestReadAheadAnswersAsOneByOne(t *testing.T) {
	with, without := startReadAhead(t, true), startReadAhead(t, false)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	pipelines := 400
	if testing.Short() {
		pipelines = 60
	}
	for i := range pipelines {
		p := randomPipeline(r)
		a, b := exchange(t, with, p), exchange(t, without, p)
		if !bytes.Equal(a, b) {
			t.Fatalf("pipeline %d (seed %d) answered differently:\n%q\nreading ahead:\n%q\none at a time:\n%q", i, seed, p, a, b)
		}
	}
	ctx := context.Background()
	pw := func(o *redis.Options) { o.Password = "pw" }
	cw, co := client(t, with, pw), client(t, without, pw)
	for _, k := range []string{"k", "j", "absent"} {
		a, errA := cw.Dump(ctx, k).Result()
		b, errB := co.Dump(ctx, k).Result()
		if a != b || fmt.Sprint(errA) != fmt.Sprint(errB) {
			t.Errorf("key %s differs: %q (%v) against %q (%v)", k, a, errA, b, errB)
		}
	}
}
