package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// keyState is what a key looks like from outside: CF.INFO and its dump.
type keyState struct {
	info   redis.CFInfo
	chunks []redis.ScanDump
}

func state(t *testing.T, c *redis.Client) map[string]keyState {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	out := map[string]keyState{}
	for _, k := range keys {
		out[k] = keyState{c.CFInfo(ctx, k).Val(), dump(t, c, k)}
	}
	return out
}

// TestSnapshotUnderWrites saves snapshots again and again while writers
// change every key (adds, deletes, DEL and re-creation, loads, FLUSHALL),
// then stops as a crash would, after the last snapshot and more writes, and
// restarts: the key space is exactly what it was, dump for dump. This is the
// replay of the log a snapshot stands in part for, with each key captured
// at its own position (snapshot.go).
func TestSnapshotUnderWrites(t *testing.T) {
	for _, flush := range []bool{false, true} {
		t.Run(fmt.Sprintf("flushall=%v", flush), func(t *testing.T) { snapshotUnderWrites(t, flush) })
	}
}

func snapshotUnderWrites(t *testing.T, flush bool) {
	dir := t.TempDir()
	cfg := server.Config{Dir: dir, SnapshotLogSize: -1, Logger: quiet()}
	srv, addr := startNoCleanup(t, cfg)
	ctx := context.Background()
	c := client(t, addr)
	c.CFReserveWithArgs(ctx, "src", &redis.CFReserveOptions{Capacity: 200, Expansion: 2})
	for i := range 1000 {
		c.CFAdd(ctx, "src", i)
	}
	chunks := dump(t, c, "src")

	var stop atomic.Bool
	var done atomic.Int64 // ops run by all writers
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			wc := client(t, addr)
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			key := fmt.Sprint("k", w)
			for !stop.Load() {
				done.Add(1)
				switch r := rng.IntN(100); {
				case r < 60:
					wc.CFAdd(ctx, key, rng.IntN(500))
				case r < 80:
					wc.CFDel(ctx, key, rng.IntN(500))
				case r < 83:
					wc.Del(ctx, key)
				case r < 85:
					wc.CFReserveWithArgs(ctx, key, &redis.CFReserveOptions{Capacity: 50, Expansion: 2})
				case r < 90 && w == 0:
					// A load, sometimes left unfinished across a snapshot.
					for j, d := range chunks {
						if j > 0 && rng.IntN(3) == 0 {
							break
						}
						wc.CFLoadChunk(ctx, "copy", d.Iter, d.Data)
					}
				case r < 92 && w == 0:
					wc.Del(ctx, "copy")
				}
			}
		})
	}
	// Each snapshot pauses after every key, so that writes land in the log
	// between the rotation and the capture of each key, and after it.
	server.SetSnapshotEntryHook(func() { time.Sleep(2 * time.Millisecond) })
	defer server.SetSnapshotEntryHook(nil)
	waitOps := func(n int64) {
		for target := done.Load() + n; done.Load() < target; {
			time.Sleep(time.Millisecond)
		}
	}
	waitOps(200)
	for i := range 8 {
		if flush && i == 7 {
			// A FLUSHALL while the last snapshot is part-way through its
			// keys.
			go func() {
				time.Sleep(5 * time.Millisecond)
				c.FlushAll(ctx)
			}()
		}
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if i < 7 {
			waitOps(100)
		}
	}
	// A few writes after the last snapshot, too few for DEL to make every
	// key's state come from the log alone.
	waitOps(20)
	stop.Store(true)
	wg.Wait()
	before := state(t, c)
	if len(before) == 0 {
		t.Fatal("no keys at the end; the test checks nothing")
	}
	c.Close()
	if err := srv.CloseWithoutSnapshot(); err != nil {
		t.Fatal(err)
	}
	withServer(t, cfg, func(c *redis.Client, _ *server.Server) {
		after := state(t, c)
		if !reflect.DeepEqual(before, after) {
			for k := range before {
				if !reflect.DeepEqual(before[k], after[k]) {
					t.Errorf("key %s: before %+v, after restart %+v", k, before[k].info, after[k].info)
				}
			}
			for k := range after {
				if _, ok := before[k]; !ok {
					t.Errorf("key %s appeared after restart", k)
				}
			}
		}
	})
}
