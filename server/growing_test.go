package server_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/cuckoohash/cuckoo/server"
)

// TestExpandingKeepsKeptItems is issue 13's server scenario: CF.RESERVE k
// 1000 EXPANSION 2, 200,000 distinct CF.ADDs, a CF.DEL of every other one:
// every kept item answers CF.EXISTS 1 (the chain of stages lost about 30).
// Then the same after a restart from the snapshot and log, and in another
// server loaded with CF.SCANDUMP / CF.LOADCHUNK.
func TestExpandingKeepsKeptItems(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 40_000
	}
	ctx := context.Background()
	dir := t.TempDir()
	// Snapshots are taken while the items go in, so the restart replays a
	// snapshot and the log after it.
	cfg := server.Config{Dir: dir, SnapshotLogSize: 1 << 20}
	item := func(i int) string { return fmt.Sprint("item-", i) }
	checkKept := func(c *redis.Client, key string) {
		t.Helper()
		pipe := c.Pipeline()
		for i := 1; i < n; i += 2 {
			pipe.CFExists(ctx, key, item(i))
		}
		cmds, err := pipe.Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lost := 0
		for _, cmd := range cmds {
			if !cmd.(*redis.BoolCmd).Val() {
				lost++
			}
		}
		if lost != 0 {
			t.Fatalf("%s: %d of %d kept items answer CF.EXISTS 0", key, lost, n/2)
		}
		info, err := c.CFInfo(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if info.NumItemsInserted != int64(n/2) || info.NumItemsDeleted != int64(n/2) || info.NumFilters < 5 {
			t.Fatalf("%s: CF.INFO %+v", key, info)
		}
	}
	var chunks []redis.ScanDump
	withServer(t, cfg, func(c *redis.Client, _ *server.Server) {
		if err := c.CFReserveWithArgs(ctx, "k", &redis.CFReserveOptions{Capacity: 1000, Expansion: 2}).Err(); err != nil {
			t.Fatal(err)
		}
		for _, del := range []bool{false, true} {
			pipe := c.Pipeline()
			for i := range n {
				switch {
				case !del:
					pipe.CFAdd(ctx, "k", item(i))
				case i%2 == 0:
					pipe.CFDel(ctx, "k", item(i))
				}
				if pipe.Len() == 10_000 || i == n-1 {
					cmds, err := pipe.Exec(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, cmd := range cmds {
						if !cmd.(*redis.BoolCmd).Val() {
							t.Fatalf("%s answered 0", cmd.Args())
						}
					}
				}
			}
		}
		checkKept(c, "k")
		for iter := int64(0); ; {
			d, err := c.CFScanDump(ctx, "k", iter).Result()
			if errors.Is(err, redis.Nil) || err == nil && d.Iter == 0 {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			chunks = append(chunks, d)
			iter = d.Iter
		}
	})
	withServer(t, cfg, func(c *redis.Client, _ *server.Server) { checkKept(c, "k") })
	withServer(t, server.Config{}, func(c *redis.Client, _ *server.Server) {
		for _, d := range chunks {
			if err := c.CFLoadChunk(ctx, "k", d.Iter, d.Data).Err(); err != nil {
				t.Fatal(err)
			}
		}
		checkKept(c, "k")
	})
}
