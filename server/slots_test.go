package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/cuckoohash/cuckoo/server"
)

// The bucket shape of a filter is chosen when it is made and recorded with
// it: 5 slots of 12 bits for a filter sized by its client, 4 for one
// created at cf-initial-size and for BUCKETSIZE 3 or 4, 2 for BUCKETSIZE 1
// or 2. Servers before 5-slot buckets built 4 slots for BUCKETSIZE 3..255;
// what they wrote must load as they built it.

// debugSlots returns CF.DEBUG's bktsize of key.
func debugSlots(t *testing.T, c *redis.Client, key string) int {
	t.Helper()
	line, err := c.Do(context.Background(), "CF.DEBUG", key).Text()
	if err != nil {
		t.Fatalf("CF.DEBUG %s: %v", key, err)
	}
	f := strings.Fields(line)
	n, err := strconv.Atoi(strings.TrimPrefix(f[0], "bktsize:"))
	if err != nil {
		t.Fatalf("CF.DEBUG %s = %q", key, line)
	}
	return n
}

// allPresent fails unless every item prefix1..prefixN is in key.
func allPresent(t *testing.T, c *redis.Client, key, prefix string, n int) {
	t.Helper()
	items := make([]any, n)
	for i := range n {
		items[i] = fmt.Sprint(prefix, i+1)
	}
	got, err := c.CFMExists(context.Background(), key, items...).Result()
	if err != nil {
		t.Fatalf("CF.MEXISTS %s: %v", key, err)
	}
	for i, ok := range got {
		if !ok {
			t.Fatalf("%s: %v absent", key, items[i])
		}
	}
}

// TestLegacySlotsLoad starts on a directory the previous server wrote
// (testdata/legacy-slots, whose README says how): its filters of
// BUCKETSIZE 8 and 16, and none given, keep their 4 slots through the
// snapshot, the log, a new snapshot and a restart, and so do its DUMP
// payload and CF.SCANDUMP chunks given to RESTORE and CF.LOADCHUNK.
func TestLegacySlotsLoad(t *testing.T) {
	src := filepath.Join("testdata", "legacy-slots")
	dir := t.TempDir()
	for _, name := range []string{"appendonly.0000000000000000.log", "appendonly.0000000000000001.log", "snapshot.cks"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ctx := context.Background()
	want := map[string]string{
		"b8":      "bktsize:4 buckets:278 items:300 deletes:0 filters:1 max_iterations:20 expansion:1",
		"b4":      "bktsize:4 buckets:278 items:300 deletes:0 filters:1 max_iterations:20 expansion:1",
		"logged8": "bktsize:4 buckets:556 items:500 deletes:0 filters:1 max_iterations:20 expansion:1",
		"auto":    "bktsize:4 buckets:285 items:1 deletes:0 filters:1 max_iterations:20 expansion:1",
	}
	check := func(c *redis.Client, keys ...string) {
		t.Helper()
		for _, k := range keys {
			if line := c.Do(ctx, "CF.DEBUG", k).String(); !strings.HasSuffix(line, want[strings.TrimSuffix(k, "-copy")]) {
				t.Errorf("%s", line)
			}
		}
		allPresent(t, c, "b8", "item", 300)
		allPresent(t, c, "b4", "item", 300)
		allPresent(t, c, "logged8", "item", 500)
	}
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) {
		check(c, "b8", "b4", "logged8", "auto")
		if err := c.Do(ctx, "RESTORE", "b8-copy", 0, read("b8.payload")).Err(); err != nil {
			t.Fatalf("RESTORE of the old payload: %v", err)
		}
		for _, it := range []int{1, 279} {
			if err := c.Do(ctx, "CF.LOADCHUNK", "b8-load", it, read(fmt.Sprintf("b8.chunk.%d", it))).Err(); err != nil {
				t.Fatalf("CF.LOADCHUNK %d of the old dump: %v", it, err)
			}
		}
		want["b8-load"] = want["b8"]
		check(c, "b8-copy", "b8-load")
		allPresent(t, c, "b8-copy", "item", 300)
		allPresent(t, c, "b8-load", "item", 300)
		// A new filter of BUCKETSIZE 8 takes 5 slots beside them.
		if err := c.Do(ctx, "CF.RESERVE", "new8", 1000, "BUCKETSIZE", 8).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	})
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) {
		check(c, "b8", "b4", "logged8", "auto", "b8-copy", "b8-load")
		if n := debugSlots(t, c, "new8"); n != 5 {
			t.Errorf("new8 after a restart: bktsize %d, want 5", n)
		}
	})
}

// TestSlotsPersist makes filters of each shape and moves each every way a
// filter moves: the log replayed, a snapshot loaded, DUMP and RESTORE,
// CF.SCANDUMP and CF.LOADCHUNK. Each keeps its shape and its items.
func TestSlotsPersist(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	shapes := []struct {
		key     string
		args    []any // CF.RESERVE's, after the key; nil: created by CF.ADD
		slots   int
		buckets string
	}{
		{"sized", []any{10_000}, 5, "buckets:2174 "},
		{"b8", []any{10_000, "BUCKETSIZE", 8}, 5, "buckets:2174 "},
		{"b4", []any{10_000, "BUCKETSIZE", 4}, 4, "buckets:2778 "},
		{"b2", []any{10_000, "BUCKETSIZE", 2}, 2, "buckets:6250 "},
		{"fixed", []any{10_000, "EXPANSION", 0}, 5, "buckets:2174 "},
		{"fixed8", []any{10_000, "BUCKETSIZE", 8, "EXPANSION", 0}, 5, "buckets:2174 "},
		{"fixed4", []any{10_000, "BUCKETSIZE", 4, "EXPANSION", 0}, 4, ""},
		{"auto", nil, 4, "buckets:285 "},
	}
	const n = 5000
	check := func(c *redis.Client, suffix string) {
		t.Helper()
		for _, s := range shapes {
			k := s.key + suffix
			if got := debugSlots(t, c, k); got != s.slots {
				t.Errorf("%s: bktsize %d, want %d", k, got, s.slots)
			}
			if line := c.Do(ctx, "CF.DEBUG", k).String(); !strings.Contains(line, s.buckets) || !strings.Contains(line, fmt.Sprintf("items:%d ", n)) {
				t.Errorf("%s", line)
			}
			allPresent(t, c, k, "item", n)
		}
	}
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) {
		for _, s := range shapes {
			if s.args != nil {
				if err := c.Do(ctx, append([]any{"CF.RESERVE", s.key}, s.args...)...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			items := make([]any, n)
			for i := range n {
				items[i] = fmt.Sprint("item", i+1)
			}
			if err := c.CFInsert(ctx, s.key, nil, items...).Err(); err != nil {
				t.Fatalf("CF.INSERT %s: %v", s.key, err)
			}
		}
		check(c, "")
	})
	// The log alone.
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) {
		check(c, "")
		for _, s := range shapes {
			payload, err := c.Dump(ctx, s.key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Restore(ctx, s.key+"-restored", 0, payload).Err(); err != nil {
				t.Fatalf("RESTORE %s: %v", s.key, err)
			}
			for it := int64(0); ; {
				r, err := c.CFScanDump(ctx, s.key, it).Result()
				if err == redis.Nil || err == nil && r.Iter == 0 {
					break // [0, nil]: go-redis says Nil for the nil
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := c.CFLoadChunk(ctx, s.key+"-loaded", r.Iter, r.Data).Err(); err != nil {
					t.Fatalf("CF.LOADCHUNK %s at %d: %v", s.key, r.Iter, err)
				}
				it = r.Iter
			}
		}
		check(c, "-restored")
		check(c, "-loaded")
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	})
	// The snapshot.
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) {
		check(c, "")
		check(c, "-restored")
		check(c, "-loaded")
	})
}
