package server_test

import (
	"context"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// infoFields parses INFO's reply into its fields.
func infoFields(t *testing.T, c *redis.Client, section ...string) map[string]string {
	t.Helper()
	text, err := c.Info(context.Background(), section...).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(text, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			out[k] = v
		}
	}
	return out
}

// statmRSS is this process's resident bytes, as ps reports them.
func statmRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm")
	}
	pages, _ := strconv.ParseInt(strings.Fields(string(b))[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestInfoTrue: the INFO fields tools read are measured, in RESP2 and RESP3:
// memory (resident bytes as ps sees them, filters back to 0 after DEL and
// FLUSHALL), clients, stats (hits and misses of key lookups, bytes in,
// expired keys), persistence, server.
func TestInfoTrue(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(strconv.Itoa(proto), func(t *testing.T) {
			ctx := context.Background()
			_, addr := start(t, server.Config{Dir: t.TempDir(), Logger: quiet()})
			c := client(t, addr, func(o *redis.Options) { o.Protocol = proto })

			// Server.
			f := infoFields(t, c, "server")
			_, port, _ := net.SplitHostPort(addr)
			if f["tcp_port"] != port || !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(f["run_id"]) || f["process_id"] != strconv.Itoa(os.Getpid()) {
				t.Errorf("server section: tcp_port %q (listening on %s), run_id %q, process_id %q", f["tcp_port"], port, f["run_id"], f["process_id"])
			}

			// Memory: the filters' bytes, and resident bytes as ps reports them.
			c.CFReserve(ctx, "big", 4_000_000)
			size := c.CFInfo(ctx, "big").Val().Size
			if got := infoField(t, c, "used_memory_filters"); got != size {
				t.Errorf("used_memory_filters %d, CF.INFO Size %d", got, size)
			}
			rss, ps := infoField(t, c, "used_memory_rss"), statmRSS(t)
			if d := float64(rss-ps) / float64(ps); d > 0.2 || d < -0.2 {
				t.Errorf("used_memory_rss %d, resident per /proc/self/statm %d", rss, ps)
			}
			c.Del(ctx, "big")
			if got := infoField(t, c, "used_memory_filters"); got != 0 {
				t.Errorf("used_memory_filters %d after DEL", got)
			}
			c.CFAdd(ctx, "k", "a")
			c.FlushAll(ctx)
			if got := infoField(t, c, "used_memory_filters"); got != 0 {
				t.Errorf("used_memory_filters %d after FLUSHALL", got)
			}
			if fr, err := strconv.ParseFloat(infoFields(t, c, "memory")["mem_fragmentation_ratio"], 64); err != nil || fr <= 0 {
				t.Errorf("mem_fragmentation_ratio %v %v", fr, err)
			}

			// Stats: a hit is a read command that found its key.
			hits, misses := infoField(t, c, "keyspace_hits"), infoField(t, c, "keyspace_misses")
			c.CFAdd(ctx, "k", "a")
			c.CFExists(ctx, "k", "a")
			c.CFExists(ctx, "k", "absent item")
			c.CFMExists(ctx, "k", "a", "b", "c")
			c.CFExists(ctx, "missing", "a")
			if h, m := infoField(t, c, "keyspace_hits")-hits, infoField(t, c, "keyspace_misses")-misses; h != 3 || m != 1 {
				t.Errorf("after 3 lookups of a key and 1 of a missing one: %d hits, %d misses", h, m)
			}
			in := infoField(t, c, "total_net_input_bytes")
			c.Echo(ctx, strings.Repeat("x", 10_000))
			if got := infoField(t, c, "total_net_input_bytes") - in; got < 10_000 {
				t.Errorf("total_net_input_bytes grew by %d after a 10,000-byte ECHO", got)
			}
			cmds := infoField(t, c, "total_commands_processed")
			c.Ping(ctx)
			if got := infoField(t, c, "total_commands_processed") - cmds; got != 2 { // PING and INFO
				t.Errorf("total_commands_processed grew by %d", got)
			}

			// Clients.
			for range 3 {
				o := client(t, addr)
				o.Ping(ctx)
			}
			if got := infoField(t, c, "connected_clients"); got != 4 {
				t.Errorf("connected_clients %d with 4 connections", got)
			}

			// Expired keys.
			c.CFAdd(ctx, "short", "a")
			// 100 ms, not 1: a deadline that has passed when PEXPIRE runs
			// deletes the key at once, which Redis (and this server) does
			// not count as expired, and a loaded machine can take 1 ms.
			c.PExpire(ctx, "short", 100*time.Millisecond)
			deadline := time.Now().Add(5 * time.Second)
			for infoField(t, c, "expired_keys") != 1 {
				if time.Now().After(deadline) {
					t.Fatalf("expired_keys %d, want 1", infoField(t, c, "expired_keys"))
				}
				time.Sleep(20 * time.Millisecond)
			}

			// Persistence.
			if got := infoField(t, c, "rdb_changes_since_last_save"); got == 0 {
				t.Error("rdb_changes_since_last_save 0 after writes")
			}
			before := time.Now().Unix()
			if err := c.Save(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			p := infoFields(t, c, "persistence")
			if p["rdb_changes_since_last_save"] != "0" || p["rdb_last_bgsave_status"] != "ok" || p["aof_enabled"] != "1" {
				t.Errorf("after SAVE: %v", p)
			}
			if at, _ := strconv.ParseInt(p["rdb_last_save_time"], 10, 64); at < before {
				t.Errorf("rdb_last_save_time %d before the SAVE at %d", at, before)
			}
		})
	}
}
