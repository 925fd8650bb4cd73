package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// keyStates is every key's DUMP payload, TTL and CF.INFO.
func keyStates(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, k := range c.Keys(ctx, "*").Val() {
		dump, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		ttl := c.TTL(ctx, k).Val().Round(time.Minute)
		out[k] = fmt.Sprintf("%x ttl=%v info=%v", dump, ttl, c.Do(ctx, "CF.INFO", k).Val())
	}
	return out
}

// TestDebugReload: DEBUG RELOAD writes every key out and reads it back:
// the same payloads, TTLs and figures after, for both layouts, nothing
// logged; refused unless enable-debug-command allows it, as in Redis.
func TestDebugReload(t *testing.T) {
	ctx := context.Background()
	log := &logBuffer{}
	cfg := server.Config{Dir: t.TempDir(), Logger: log.logger(), EnableDebugCommand: server.DebugCommandYes}
	_, addr := start(t, cfg)
	c := client(t, addr)
	fillRB(t, c) // RedisBloom-layout keys need the layout: made below
	c.Do(ctx, "CONFIG", "SET", "cf-layout", "redisbloom")
	c.Do(ctx, "CF.RESERVE", "rb", 1000, "BUCKETSIZE", 3)
	for i := range 500 {
		c.Do(ctx, "CF.ADD", "rb", fmt.Sprint("item", i))
	}
	c.Expire(ctx, "rb", time.Hour)
	c.Expire(ctx, "grown", 2*time.Hour)
	before := keyStates(t, c)
	changes := infoField(t, c, "rdb_changes_since_last_save")
	if err := c.Do(ctx, "DEBUG", "RELOAD", "nosave").Err(); err != nil { // as RedisBloom's test suite sends it
		t.Fatal(err)
	}
	if want := fmt.Sprintf("keys=%d", len(before)); !strings.Contains(log.String(), want) {
		t.Errorf("the server's log does not say DEBUG RELOAD reloaded %s", want)
	}
	after := keyStates(t, c)
	if len(after) != len(before) || len(before) < 4 {
		t.Fatalf("%d keys before DEBUG RELOAD, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("key %s changed by DEBUG RELOAD:\n before %.200s\n after  %.200s", k, v, after[k])
		}
	}
	if got := infoField(t, c, "rdb_changes_since_last_save"); got != changes {
		t.Errorf("rdb_changes_since_last_save %d after DEBUG RELOAD, %d before: it logged", got, changes)
	}
	if enc := c.ObjectEncoding(ctx, "rb").Val(); enc != "redisbloom" {
		t.Errorf("OBJECT ENCODING rb after DEBUG RELOAD: %q", enc)
	}
	// In a transaction, which holds the gate.
	pipe := c.TxPipeline()
	pipe.Do(ctx, "CF.ADD", "rb", "in-multi")
	pipe.Do(ctx, "DEBUG", "RELOAD")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("DEBUG RELOAD in MULTI: %v", err)
	}
	if !c.CFExists(ctx, "rb", "in-multi").Val() {
		t.Error("an item added before DEBUG RELOAD in the same EXEC is gone")
	}
	for _, tc := range []struct{ args, want string }{
		{"DEBUG NOSUCH", "ERR unknown subcommand or wrong number of arguments for 'NOSUCH'. Try DEBUG HELP."},
		{"DEBUG RELOAD NOSUCH", "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."},
	} {
		var args []any
		for _, f := range strings.Fields(tc.args) {
			args = append(args, f)
		}
		if err := c.Do(ctx, args...).Err(); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.args, err, tc.want)
		}
	}
	if help, err := c.Do(ctx, "DEBUG", "HELP").StringSlice(); err != nil || len(help) < 3 || !strings.HasPrefix(help[1], "RELOAD") {
		t.Errorf("DEBUG HELP: %q, %v", help, err)
	}
}

// TestDebugNotAllowed: enable-debug-command no (the default) refuses
// DEBUG with Redis's text; local allows loopback clients.
func TestDebugNotAllowed(t *testing.T) {
	ctx := context.Background()
	_, addr := start(t, server.Config{Logger: quiet(), FilterDefaults: server.FilterDefaults{Layout: cf.LayoutCuckoo}})
	c := client(t, addr)
	err := c.Do(ctx, "DEBUG", "RELOAD").Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\"") {
		t.Errorf("DEBUG RELOAD with enable-debug-command no: %v", err)
	}
	if v := c.ConfigGet(ctx, "enable-debug-command").Val()["enable-debug-command"]; v != "no" {
		t.Errorf("CONFIG GET enable-debug-command: %q", v)
	}
	if err := c.ConfigSet(ctx, "enable-debug-command", "yes").Err(); err == nil {
		t.Error("CONFIG SET enable-debug-command: accepted; Redis allows it only at start")
	}
	_, addr = start(t, server.Config{Logger: quiet(), EnableDebugCommand: server.DebugCommandLocal})
	if err := client(t, addr).Do(ctx, "DEBUG", "RELOAD").Err(); err != nil {
		t.Errorf("DEBUG RELOAD from 127.0.0.1 with enable-debug-command local: %v", err)
	}
}
