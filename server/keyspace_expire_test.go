package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// eachProtocol runs f against a fresh in-memory server, with a client
// speaking RESP2, then RESP3.
func eachProtocol(t *testing.T, f func(t *testing.T, c *redis.Client)) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp=%d", proto), func(t *testing.T) {
			_, addr := start(t, server.Config{})
			f(t, client(t, addr, func(o *redis.Options) { o.Protocol = proto }))
		})
	}
}

func wantInt(t *testing.T, what string, got *redis.Cmd, want int64) {
	t.Helper()
	v, err := got.Int64()
	if err != nil || v != want {
		t.Errorf("%s = %v, %v; want %d", what, v, err, want)
	}
}

func TestExpireCommands(t *testing.T) {
	eachProtocol(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		do := func(args ...any) *redis.Cmd { return c.Do(ctx, args...) }
		wantInt(t, "EXPIRE missing", do("EXPIRE", "nokey", 10), 0)
		wantInt(t, "TTL missing", do("TTL", "nokey"), -2)
		wantInt(t, "PTTL missing", do("PTTL", "nokey"), -2)
		wantInt(t, "EXPIRETIME missing", do("EXPIRETIME", "nokey"), -2)
		wantInt(t, "PERSIST missing", do("PERSIST", "nokey"), 0)
		c.CFAdd(ctx, "k", "a")
		wantInt(t, "TTL no deadline", do("TTL", "k"), -1)
		wantInt(t, "PEXPIRETIME no deadline", do("PEXPIRETIME", "k"), -1)
		wantInt(t, "PERSIST no deadline", do("PERSIST", "k"), 0)
		wantInt(t, "EXPIRE XX no deadline", do("EXPIRE", "k", 100, "XX"), 0)
		wantInt(t, "EXPIRE GT no deadline", do("EXPIRE", "k", 100, "GT"), 0)
		wantInt(t, "EXPIRE NX", do("EXPIRE", "k", 100, "NX"), 1)
		wantInt(t, "TTL", do("TTL", "k"), 100)
		if v := do("PTTL", "k").Val().(int64); v <= 99000 || v > 100000 {
			t.Errorf("PTTL = %d", v)
		}
		wantInt(t, "EXPIRE NX again", do("EXPIRE", "k", 50, "nx"), 0)
		wantInt(t, "EXPIRE GT smaller", do("EXPIRE", "k", 50, "GT"), 0)
		wantInt(t, "EXPIRE LT larger", do("EXPIRE", "k", 500, "LT"), 0)
		wantInt(t, "EXPIRE LT smaller", do("EXPIRE", "k", 50, "LT"), 1)
		wantInt(t, "EXPIRE GT larger", do("EXPIRE", "k", 200, "GT", "XX"), 1)
		wantInt(t, "TTL after GT", do("TTL", "k"), 200)
		at := time.Now().Add(time.Hour).Unix()
		wantInt(t, "EXPIREAT", do("EXPIREAT", "k", at), 1)
		wantInt(t, "EXPIRETIME", do("EXPIRETIME", "k"), at)
		wantInt(t, "PEXPIRETIME", do("PEXPIRETIME", "k"), at*1000)
		atMs := time.Now().Add(time.Hour).UnixMilli()
		wantInt(t, "PEXPIREAT", do("PEXPIREAT", "k", atMs), 1)
		wantInt(t, "PEXPIRETIME", do("PEXPIRETIME", "k"), atMs)
		wantInt(t, "PEXPIRE", do("PEXPIRE", "k", 100000), 1)
		wantInt(t, "TTL after PEXPIRE", do("TTL", "k"), 100)
		wantInt(t, "PERSIST", do("PERSIST", "k"), 1)
		wantInt(t, "TTL after PERSIST", do("TTL", "k"), -1)
		wantInt(t, "EXPIRE LT no deadline", do("EXPIRE", "k", 100, "LT"), 1)

		// A deadline that is not in the future deletes the key.
		for _, args := range [][]any{{"EXPIRE", "k", 0}, {"PEXPIRE", "k", -5}, {"EXPIREAT", "k", 1}, {"PEXPIREAT", "k", 0}} {
			c.CFAdd(ctx, "k", "a")
			wantInt(t, fmt.Sprint(args...), do(args...), 1)
			if n := c.Exists(ctx, "k").Val(); n != 0 {
				t.Errorf("%v left the key", args)
			}
		}

		c.CFAdd(ctx, "k", "a")
		for _, tc := range []struct {
			args []any
			err  string
		}{
			{[]any{"EXPIRE", "k", "x"}, "ERR value is not an integer or out of range"},
			{[]any{"EXPIRE", "k", 10, "YY"}, "ERR Unsupported option YY"},
			{[]any{"EXPIRE", "k", 10, "NX", "XX"}, "ERR NX and XX, GT or LT options at the same time are not compatible"},
			{[]any{"EXPIRE", "k", 10, "NX", "GT"}, "ERR NX and XX, GT or LT options at the same time are not compatible"},
			{[]any{"EXPIRE", "k", 10, "GT", "LT"}, "ERR GT and LT options at the same time are not compatible"},
			{[]any{"EXPIRE", "k", "9223372036854775807"}, "ERR invalid expire time in 'expire' command"},
			{[]any{"PEXPIRE", "k", "9223372036854775807"}, "ERR invalid expire time in 'pexpire' command"},
			{[]any{"EXPIREAT", "k", "-9223372036854775807"}, "ERR invalid expire time in 'expireat' command"},
			{[]any{"EXPIRE", "k"}, "ERR wrong number of arguments for 'expire' command"},
			{[]any{"TTL"}, "ERR wrong number of arguments for 'ttl' command"},
			{[]any{"PERSIST", "k", "x"}, "ERR wrong number of arguments for 'persist' command"},
		} {
			wantErr(t, do(tc.args...).Err(), tc.err)
		}
		wantInt(t, "TTL after errors", do("TTL", "k"), -1)
	})
}

// TestLazyExpiry: the moment the deadline passes the key is gone for every
// command, before any sweep could have run; a write creates a new filter
// with no deadline.
func TestLazyExpiry(t *testing.T) {
	eachProtocol(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		c.CFAdd(ctx, "k", "a")
		c.CFAdd(ctx, "k2", "a")
		deadline := time.Now().Add(30 * time.Millisecond).UnixMilli()
		c.Do(ctx, "PEXPIREAT", "k", deadline)
		c.Do(ctx, "PEXPIREAT", "k2", deadline)
		if !c.CFExists(ctx, "k", "a").Val() {
			t.Fatal("CF.EXISTS before the deadline = false")
		}
		for time.Now().UnixMilli() <= deadline {
			time.Sleep(time.Millisecond)
		}
		if c.CFExists(ctx, "k", "a").Val() {
			t.Error("CF.EXISTS after the deadline = true")
		}
		wantInt(t, "TTL after the deadline", c.Do(ctx, "TTL", "k"), -2)
		wantInt(t, "EXISTS", c.Do(ctx, "EXISTS", "k", "k2"), 0)
		if typ := c.Type(ctx, "k2").Val(); typ != "none" {
			t.Errorf("TYPE = %q", typ)
		}
		if keys := c.Keys(ctx, "*").Val(); len(keys) != 0 {
			t.Errorf("KEYS = %v", keys)
		}
		if keys, _ := c.Scan(ctx, 0, "*", 100).Val(); len(keys) != 0 {
			t.Errorf("SCAN = %v", keys)
		}
		if err := c.RandomKey(ctx).Err(); err != redis.Nil {
			t.Errorf("RANDOMKEY = %v", err)
		}
		if err := c.Do(ctx, "DUMP", "k2").Err(); err != redis.Nil {
			t.Errorf("DUMP = %v", err)
		}
		wantErr(t, c.Rename(ctx, "k2", "k3").Err(), "ERR no such key")
		wantInt(t, "DEL", c.Do(ctx, "DEL", "k2"), 0)
		// A write creates a new filter, with no deadline.
		if !c.CFAdd(ctx, "k", "b").Val() {
			t.Error("CF.ADD = false")
		}
		if c.CFExists(ctx, "k", "a").Val() {
			t.Error("the new filter holds the expired one's item")
		}
		wantInt(t, "TTL of the new filter", c.Do(ctx, "TTL", "k"), -1)
	})
}

// TestActiveExpiry: keys that are never accessed again are dropped by the
// sweeper and their memory released.
func TestActiveExpiry(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	c.CFAdd(ctx, "keep", "x")
	keep := infoField(t, c, "used_memory_filters")
	for i := range 50 {
		k := fmt.Sprint("day", i)
		c.CFReserve(ctx, k, 10000)
		c.CFAdd(ctx, k, "x")
		c.Do(ctx, "PEXPIRE", k, 20+i)
	}
	if !strings.Contains(c.Info(ctx, "keyspace").Val(), "db0:keys=51,expires=50,avg_ttl=") {
		t.Errorf("INFO keyspace: %q", c.Info(ctx, "keyspace").Val())
	}
	if m := infoField(t, c, "used_memory_filters"); m <= keep {
		t.Fatalf("used_memory_filters %d with 51 keys", m)
	}
	end := time.Now().Add(5 * time.Second)
	for c.DBSize(ctx).Val() != 1 && time.Now().Before(end) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := c.DBSize(ctx).Val(); n != 1 {
		t.Fatalf("DBSIZE %d after the sweeps", n)
	}
	if m := infoField(t, c, "used_memory_filters"); m != keep {
		t.Errorf("used_memory_filters %d, want %d", m, keep)
	}
	if info := c.Info(ctx, "keyspace").Val(); !strings.Contains(info, "db0:keys=1,expires=0,avg_ttl=0") {
		t.Errorf("INFO keyspace: %q", info)
	}
}

// TestInfoKeyspaceAvgTTL: avg_ttl is the mean time to live, exact.
func TestInfoKeyspaceAvgTTL(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	c.CFAdd(ctx, "a", "x")
	c.CFAdd(ctx, "b", "x")
	c.CFAdd(ctx, "c", "x")
	c.Expire(ctx, "a", 100*time.Second)
	c.Expire(ctx, "b", 300*time.Second)
	var keys, expires, avg int64
	fmt.Sscanf(strings.TrimSpace(strings.Split(c.Info(ctx, "keyspace").Val(), "db0:")[1]), "keys=%d,expires=%d,avg_ttl=%d", &keys, &expires, &avg)
	if keys != 3 || expires != 2 || avg < 199000 || avg > 200000 {
		t.Errorf("keys=%d expires=%d avg_ttl=%d", keys, expires, avg)
	}
	c.Persist(ctx, "b")
	c.Rename(ctx, "a", "z")
	fmt.Sscanf(strings.TrimSpace(strings.Split(c.Info(ctx, "keyspace").Val(), "db0:")[1]), "keys=%d,expires=%d,avg_ttl=%d", &keys, &expires, &avg)
	if keys != 3 || expires != 1 || avg < 99000 || avg > 100000 {
		t.Errorf("after PERSIST and RENAME: keys=%d expires=%d avg_ttl=%d", keys, expires, avg)
	}
	c.FlushAll(ctx)
	c.CFAdd(ctx, "a", "x")
	if info := c.Info(ctx, "keyspace").Val(); !strings.Contains(info, "db0:keys=1,expires=0,avg_ttl=0") {
		t.Errorf("after FLUSHALL: %q", info)
	}
}

// TestExpirySurvivesRestart: deadlines come back from the log alone, and
// from a snapshot, exactly; a key that expired while the server was down
// is gone at once.
func TestExpirySurvivesRestart(t *testing.T) {
	for _, how := range []string{"log", "snapshot"} {
		t.Run("from="+how, func(t *testing.T) {
			dir := t.TempDir()
			cfg := server.Config{Dir: dir}
			ctx := context.Background()
			far := time.Now().Add(time.Hour).UnixMilli()
			soon := time.Now().Add(300 * time.Millisecond).UnixMilli()
			withServer(t, cfg, func(c *redis.Client, srv *server.Server) {
				for _, k := range []string{"far", "soon", "gone", "persisted", "moved", "restored"} {
					c.CFAdd(ctx, k, "item-"+k)
				}
				c.Do(ctx, "PEXPIREAT", "far", far)
				c.Do(ctx, "PEXPIREAT", "soon", soon)
				c.Do(ctx, "PEXPIREAT", "gone", time.Now().Add(20*time.Millisecond).UnixMilli())
				c.Do(ctx, "PEXPIREAT", "persisted", far)
				c.Do(ctx, "PERSIST", "persisted")
				c.Do(ctx, "PEXPIREAT", "moved", far+1)
				c.Rename(ctx, "moved", "renamed")
				payload := c.Dump(ctx, "restored").Val()
				c.Do(ctx, "RESTORE", "restored", far+2, payload, "REPLACE", "ABSTTL")
				// An expire then the drop of the expired key: replay is exact.
				time.Sleep(30 * time.Millisecond)
				if n := c.Exists(ctx, "gone").Val(); n != 0 {
					t.Fatal("gone still there")
				}
				c.CFAdd(ctx, "gone", "new")
				if how == "snapshot" {
					if err := c.Save(ctx).Err(); err != nil {
						t.Fatal(err)
					}
				} else {
					c.Close()
					if err := srv.CloseWithoutSnapshot(); err != nil {
						t.Fatal(err)
					}
				}
			})
			withServer(t, cfg, func(c *redis.Client, _ *server.Server) {
				wantInt(t, "PEXPIRETIME far", c.Do(ctx, "PEXPIRETIME", "far"), far)
				wantInt(t, "PEXPIRETIME renamed", c.Do(ctx, "PEXPIRETIME", "renamed"), far+1)
				wantInt(t, "PEXPIRETIME restored", c.Do(ctx, "PEXPIRETIME", "restored"), far+2)
				wantInt(t, "TTL persisted", c.Do(ctx, "TTL", "persisted"), -1)
				wantInt(t, "TTL moved", c.Do(ctx, "TTL", "moved"), -2)
				wantInt(t, "TTL gone", c.Do(ctx, "TTL", "gone"), -1)
				if !c.CFExists(ctx, "gone", "new").Val() || c.CFExists(ctx, "gone", "item-gone").Val() {
					t.Error("gone: not the filter created after the expiry")
				}
				if !c.CFExists(ctx, "renamed", "item-moved").Val() || !c.CFExists(ctx, "restored", "item-restored").Val() {
					t.Error("renamed or restored filter lost its item")
				}
				for time.Now().UnixMilli() <= soon {
					time.Sleep(5 * time.Millisecond)
				}
				if c.CFExists(ctx, "soon", "item-soon").Val() {
					t.Error("soon still answers after its deadline")
				}
			})
			// The drop of "soon" (lookup or sweeper) was logged: a third start
			// agrees.
			withServer(t, cfg, func(c *redis.Client, _ *server.Server) {
				wantInt(t, "EXISTS soon", c.Do(ctx, "EXISTS", "soon"), 0)
				wantInt(t, "DBSIZE", c.Do(ctx, "DBSIZE"), 5)
			})
		})
	}
}

func TestRenameAndRandomKey(t *testing.T) {
	eachProtocol(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		if err := c.RandomKey(ctx).Err(); err != redis.Nil {
			t.Errorf("RANDOMKEY on an empty server: %v", err)
		}
		wantErr(t, c.Rename(ctx, "a", "b").Err(), "ERR no such key")
		wantErr(t, c.RenameNX(ctx, "a", "b").Err(), "ERR no such key")
		wantErr(t, c.Rename(ctx, "a", "a").Err(), "ERR no such key")
		c.CFAdd(ctx, "a", "1")
		if k := c.RandomKey(ctx).Val(); k != "a" {
			t.Errorf("RANDOMKEY = %q", k)
		}
		if err := c.Rename(ctx, "a", "a").Err(); err != nil {
			t.Errorf("RENAME a a: %v", err)
		}
		if ok := c.RenameNX(ctx, "a", "a").Val(); ok {
			t.Error("RENAMENX a a = 1")
		}
		c.Expire(ctx, "a", time.Hour)
		if err := c.Rename(ctx, "a", "b").Err(); err != nil {
			t.Fatal(err)
		}
		if c.Exists(ctx, "a").Val() != 0 || !c.CFExists(ctx, "b", "1").Val() {
			t.Error("RENAME did not move the filter")
		}
		wantInt(t, "TTL moved", c.Do(ctx, "TTL", "b"), 3600)
		c.CFAdd(ctx, "c", "2")
		if ok := c.RenameNX(ctx, "b", "c").Val(); ok {
			t.Error("RENAMENX onto an existing key = 1")
		}
		if ok, err := c.RenameNX(ctx, "b", "d").Result(); !ok || err != nil {
			t.Errorf("RENAMENX = %v, %v", ok, err)
		}
		if err := c.Rename(ctx, "c", "d").Err(); err != nil {
			t.Fatal(err)
		}
		if c.CFExists(ctx, "d", "1").Val() || !c.CFExists(ctx, "d", "2").Val() {
			t.Error("RENAME did not replace the target's filter")
		}
		wantInt(t, "TTL replaced", c.Do(ctx, "TTL", "d"), -1)
		wantInt(t, "DBSIZE", c.Do(ctx, "DBSIZE"), 1)
		seen := map[string]bool{}
		for i := range 5 {
			c.CFAdd(ctx, fmt.Sprint("r", i), "x")
		}
		for range 200 {
			seen[c.RandomKey(ctx).Val()] = true
		}
		if len(seen) != 6 {
			t.Errorf("RANDOMKEY returned %d distinct keys of 6", len(seen))
		}
		wantErr(t, c.Do(ctx, "RENAME", "d").Err(), "ERR wrong number of arguments for 'rename' command")
		wantErr(t, c.Do(ctx, "RANDOMKEY", "x").Err(), "ERR wrong number of arguments for 'randomkey' command")
	})
}

// TestRenameConcurrent renames two keys back and forth (through a third
// name) while writers add to both names, and snapshots run: no acknowledged
// item is lost, live and after a restart. The writers use NOCREATE, so that
// no rename overwrites a filter a writer created in a moment a name was
// free (that loses items by design, as in Redis).
func TestRenameConcurrent(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	n := 2000
	if testing.Short() {
		n = 300
	}
	var added sync.Map // item -> true, acknowledged
	withServer(t, server.Config{Dir: dir, SnapshotLogSize: 4000}, func(c *redis.Client, srv *server.Server) {
		c.CFAdd(ctx, "x", "seed-x")
		c.CFAdd(ctx, "y", "seed-y")
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := []string{"x", "y"}[w%2]
				for i := range n {
					item := fmt.Sprint("w", w, "-", i)
					if r, err := c.Do(ctx, "CF.INSERT", key, "NOCREATE", "ITEMS", item).Slice(); err == nil && len(r) == 1 && (r[0] == int64(1) || r[0] == true) {
						added.Store(item, true)
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n / 4 {
				if i%2 == 0 {
					c.Rename(ctx, "x", "tmp")
					c.Rename(ctx, "y", "x")
					c.Rename(ctx, "tmp", "y")
				} else {
					c.Do(ctx, "RENAMENX", "x", "y")
				}
			}
		}()
		wg.Wait()
		checkItems(t, c, &added)
	})
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) { checkItems(t, c, &added) })
}

func checkItems(t *testing.T, c *redis.Client, added *sync.Map) {
	t.Helper()
	ctx := context.Background()
	{
		keys := c.Keys(ctx, "*").Val()
		missing := 0
		added.Range(func(item, _ any) bool {
			found := false
			for _, k := range keys {
				if c.CFExists(ctx, k, item.(string)).Val() {
					found = true
					break
				}
			}
			if !found {
				missing++
			}
			return true
		})
		if missing > 0 {
			t.Errorf("%d acknowledged items missing (keys %v)", missing, keys)
		}
	}
}

// TestDumpRestore moves a grown filter to another server through DUMP and
// RESTORE: every item is still found; damaged payloads are refused.
func TestDumpRestore(t *testing.T) {
	eachProtocol(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		_, addr2 := start(t, server.Config{})
		c2 := client(t, addr2)
		if err := c.Dump(ctx, "missing").Err(); err != redis.Nil {
			t.Errorf("DUMP missing: %v", err)
		}
		c.CFReserve(ctx, "grown", 100)
		items := 20000
		pipe := c.Pipeline()
		for i := range items {
			pipe.CFAdd(ctx, "grown", fmt.Sprint("item", i))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		c.CFDel(ctx, "grown", "item0")
		payload, err := c.Dump(ctx, "grown").Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := c2.Restore(ctx, "copy", 0, payload).Err(); err != nil {
			t.Fatal(err)
		}
		pipe = c2.Pipeline()
		var cmds []*redis.BoolCmd
		for i := 1; i < items; i++ {
			cmds = append(cmds, pipe.CFExists(ctx, "copy", fmt.Sprint("item", i)))
		}
		pipe.Exec(ctx)
		for i, cmd := range cmds {
			if !cmd.Val() {
				t.Fatalf("item%d missing from the restored filter", i+1)
			}
		}
		a, b := c.CFInfo(ctx, "grown").Val(), c2.CFInfo(ctx, "copy").Val()
		if a != b {
			t.Errorf("CF.INFO differs: %+v, restored %+v", a, b)
		}
		wantInt(t, "TTL copy", c2.Do(ctx, "TTL", "copy"), -1)
		wantErr(t, c2.Restore(ctx, "copy", 0, payload).Err(), "BUSYKEY Target key name already exists.")
		if err := c2.RestoreReplace(ctx, "copy", time.Hour, payload).Err(); err != nil {
			t.Fatal(err)
		}
		wantInt(t, "TTL replaced copy", c2.Do(ctx, "TTL", "copy"), 3600)
		abs := time.Now().Add(2 * time.Hour).UnixMilli()
		if err := c2.Do(ctx, "RESTORE", "abs", abs, payload, "ABSTTL", "IDLETIME", 10).Err(); err != nil {
			t.Fatal(err)
		}
		wantInt(t, "PEXPIRETIME abs", c2.Do(ctx, "PEXPIRETIME", "abs"), abs)
		if err := c2.Do(ctx, "RESTORE", "freq", 0, payload, "FREQ", 5).Err(); err != nil {
			t.Fatal(err)
		}
		// A TTL already past: the replaced key goes, nothing is created.
		if err := c2.Do(ctx, "RESTORE", "freq", 1, payload, "REPLACE", "ABSTTL").Err(); err != nil {
			t.Fatal(err)
		}
		wantInt(t, "EXISTS freq", c2.Do(ctx, "EXISTS", "freq"), 0)

		for i := 0; i < len(payload); i += max(1, len(payload)/50) {
			bad := []byte(payload)
			bad[i] ^= 0x40
			wantErr(t, c2.Restore(ctx, "bad", 0, string(bad)).Err(), "ERR DUMP payload version or checksum are wrong")
		}
		wantErr(t, c2.Restore(ctx, "bad", 0, "short").Err(), "ERR DUMP payload version or checksum are wrong")
		wantErr(t, c2.Restore(ctx, "bad", 0, payload[:len(payload)-1]).Err(), "ERR DUMP payload version or checksum are wrong")
		for _, tc := range []struct {
			args []any
			err  string
		}{
			{[]any{"RESTORE", "bad", -1, payload}, "ERR Invalid TTL value, must be >= 0"},
			{[]any{"RESTORE", "bad", "x", payload}, "ERR value is not an integer or out of range"},
			{[]any{"RESTORE", "bad", 0, payload, "BOGUS"}, "ERR syntax error"},
			{[]any{"RESTORE", "bad", 0, payload, "IDLETIME"}, "ERR syntax error"},
			{[]any{"RESTORE", "bad", 0, payload, "IDLETIME", -1}, "ERR Invalid IDLETIME value, must be >= 0"},
			{[]any{"RESTORE", "bad", 0, payload, "IDLETIME", "x"}, "ERR value is not an integer or out of range"},
			{[]any{"RESTORE", "bad", 0, payload, "FREQ", 256}, "ERR Invalid FREQ value, must be >= 0 and <= 255"},
			{[]any{"RESTORE", "bad", 0, payload, "FREQ", 1, "IDLETIME", 1}, "ERR syntax error"},
			{[]any{"RESTORE", "copy", 0, "x"}, "BUSYKEY Target key name already exists."},
			{[]any{"RESTORE", "bad", 0}, "ERR wrong number of arguments for 'restore' command"},
		} {
			wantErr(t, c2.Do(ctx, tc.args...).Err(), tc.err)
		}
		wantInt(t, "EXISTS bad", c2.Do(ctx, "EXISTS", "bad"), 0)
	})
}

// TestRestoreCharged: RESTORE charges the filter to --maxmemory before
// building it, and a payload above the item size limit is accepted.
func TestRestoreCharged(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	c.CFReserve(ctx, "big", 200000)
	c.CFAdd(ctx, "big", "x")
	payload := c.Dump(ctx, "big").Val()
	_, addr2 := start(t, server.Config{MaxMemory: 64 << 10, Limits: server.Limits{MaxItem: 16}})
	c2 := client(t, addr2)
	wantErr(t, c2.Restore(ctx, "big", 0, payload).Err(), "ERR Insufficient memory")
	if m := infoField(t, c2, "used_memory_filters"); m != 0 {
		t.Errorf("used_memory_filters %d after a refused RESTORE", m)
	}
	_, addr3 := start(t, server.Config{Limits: server.Limits{MaxItem: 16}})
	c3 := client(t, addr3)
	if len(payload) <= 16 {
		t.Fatalf("payload of %d bytes", len(payload))
	}
	if err := c3.Restore(ctx, "big", 0, payload).Err(); err != nil {
		t.Fatalf("RESTORE of a payload above the item limit: %v", err)
	}
}

func TestObjectAndMemory(t *testing.T) {
	eachProtocol(t, func(t *testing.T, c *redis.Client) {
		ctx := context.Background()
		c.CFAdd(ctx, "growing", "x")
		c.CFReserveExpansion(ctx, "fixed", 1000, 0)
		if v := c.ObjectEncoding(ctx, "growing").Val(); v != "growing" {
			t.Errorf("OBJECT ENCODING growing = %q", v)
		}
		if v := c.ObjectEncoding(ctx, "fixed").Val(); v != "fixed" {
			t.Errorf("OBJECT ENCODING fixed = %q", v)
		}
		if err := c.ObjectEncoding(ctx, "missing").Err(); err != redis.Nil {
			t.Errorf("OBJECT ENCODING missing: %v", err)
		}
		if v := c.ObjectRefCount(ctx, "growing").Val(); v != 1 {
			t.Errorf("OBJECT REFCOUNT = %d", v)
		}
		if v, err := c.ObjectIdleTime(ctx, "growing").Result(); err != nil || v > time.Second {
			t.Errorf("OBJECT IDLETIME = %v, %v", v, err)
		}
		if err := c.Do(ctx, "OBJECT", "IDLETIME", "missing").Err(); err != redis.Nil {
			t.Errorf("OBJECT IDLETIME missing: %v", err)
		}
		wantErr(t, c.Do(ctx, "OBJECT", "FREQ", "growing").Err(), "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
		wantErr(t, c.Do(ctx, "OBJECT", "NOPE", "growing").Err(), "ERR unknown subcommand 'NOPE'. Try OBJECT HELP.")
		wantErr(t, c.Do(ctx, "OBJECT", "ENCODING").Err(), "ERR wrong number of arguments for 'object|encoding' command")
		help, err := c.Do(ctx, "OBJECT", "HELP").StringSlice()
		if err != nil || len(help) < 4 || !strings.HasPrefix(help[0], "OBJECT <subcommand>") {
			t.Errorf("OBJECT HELP = %q, %v", help, err)
		}
		help, err = c.Do(ctx, "MEMORY", "HELP").StringSlice()
		if err != nil || len(help) < 2 || !strings.HasPrefix(help[0], "MEMORY <subcommand>") {
			t.Errorf("MEMORY HELP = %q, %v", help, err)
		}
		size := c.CFInfo(ctx, "fixed").Val().Size
		usage, err := c.MemoryUsage(ctx, "fixed").Result()
		if err != nil || usage <= size || usage > size+1024 {
			t.Errorf("MEMORY USAGE fixed = %d, %v; CF.INFO Size %d", usage, err, size)
		}
		if u, err := c.MemoryUsage(ctx, "fixed", 5).Result(); err != nil || u != usage {
			t.Errorf("MEMORY USAGE SAMPLES 5 = %d, %v", u, err)
		}
		if err := c.MemoryUsage(ctx, "missing").Err(); err != redis.Nil {
			t.Errorf("MEMORY USAGE missing: %v", err)
		}
		wantErr(t, c.Do(ctx, "MEMORY", "USAGE", "fixed", "SAMPLES").Err(), "ERR syntax error")
		wantErr(t, c.Do(ctx, "MEMORY", "USAGE", "fixed", "SAMPLES", -1).Err(), "ERR syntax error")
		wantErr(t, c.Do(ctx, "MEMORY", "USAGE", "fixed", "SAMPLES", "x").Err(), "ERR value is not an integer or out of range")
		wantErr(t, c.Do(ctx, "MEMORY", "USAGE", "fixed", "BOGUS", 1).Err(), "ERR syntax error")
		wantErr(t, c.Do(ctx, "MEMORY", "DOCTOR").Err(), "ERR unknown subcommand 'DOCTOR'. Try MEMORY HELP.")
	})
}

// TestObjectEncodingChain: a filter loaded from a format 2 snapshot is a
// chain of stages.
func TestObjectEncodingChain(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "snapshot-v1", "snapshot.cks"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "snapshot.cks"), data, 0o644)
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) {
		if v := c.ObjectEncoding(context.Background(), "grow").Val(); v != "chain" {
			t.Errorf("OBJECT ENCODING of a chain = %q", v)
		}
	})
}

// TestSnapshotV3Compatible starts on a snapshot of the previous format
// (testdata/snapshot-v3, CKSNAP03, no deadlines: "grow", reserved 100 with
// g0..g1999 added, and "fixed", 128 EXPANSION 0 with f0..f49), saves it in
// the current one and restarts.
func TestSnapshotV3Compatible(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "snapshot-v3", "snapshot.cks"))
	if err != nil {
		t.Fatal(err)
	}
	if string(data[:8]) != "CKSNAP03" {
		t.Fatalf("testdata/snapshot-v3 is %q", data[:8])
	}
	os.WriteFile(filepath.Join(dir, "snapshot.cks"), data, 0o644)
	ctx := context.Background()
	check := func(c *redis.Client) {
		t.Helper()
		for i := range 2000 {
			if !c.CFExists(ctx, "grow", fmt.Sprint("g", i)).Val() {
				t.Fatalf("g%d missing", i)
			}
		}
		for i := range 50 {
			if !c.CFExists(ctx, "fixed", fmt.Sprint("f", i)).Val() {
				t.Fatalf("f%d missing", i)
			}
		}
		wantInt(t, "TTL grow", c.Do(ctx, "TTL", "grow"), -1)
	}
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) {
		check(c)
		c.Expire(ctx, "grow", time.Hour)
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "snapshot.cks")); string(b[:8]) != "CKSNAP04" {
		t.Errorf("saved as %q", b[:8])
	}
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) {
		for i := range 2000 {
			if !c.CFExists(ctx, "grow", fmt.Sprint("g", i)).Val() {
				t.Fatalf("g%d missing", i)
			}
		}
		wantInt(t, "TTL grow", c.Do(ctx, "TTL", "grow"), 3600)
	})
}

// FuzzDecodeOp: any bytes decode to an op or an error, never a panic; the
// new ops' encodings are seeds, and RESTORE's payload decoder is fuzzed on
// the same bytes.
func FuzzDecodeOp(f *testing.F) {
	f.Add([]byte{8, 1, 'k', 0x80, 0x01})        // opExpire
	f.Add([]byte{8, 1, 'k', 0})                 // opExpire with no deadline
	f.Add([]byte{9, 1, 'k'})                    // opPersist
	f.Add([]byte{10, 1, 'a', 1, 'b'})           // opRename
	f.Add([]byte{11, 1, 'k', 0, 3, 'a', 'b'})   // opRestore
	f.Add([]byte{11, 1, 'k', 0xff, 0xff, 0xff}) // truncated
	f.Fuzz(func(t *testing.T, b []byte) {
		server.DecodeOp(b)
		server.LoadPayload(b)
	})
}
