package server_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/redis/go-redis/v9"
)

// TestLiveReplayReplicaAgree: random sequences of writes of every record
// kind (creates with every parameter, adds, deletes, growth, DEL, FLUSHALL,
// deadlines set, cleared and passed, RENAME, RESTORE of growing tables and
// of chains of stages, CF.LOADCHUNK, CF.COMPACT, MULTI/EXEC) run on a
// primary with a replica. Then the live primary, its replica, and a server
// that replays the primary's log (stopped without a snapshot) must hold the
// same keys, with the same DUMP payloads and deadlines.
func TestLiveReplayReplicaAgree(t *testing.T) {
	seeds, ops := 4, 600
	if testing.Short() {
		seeds, ops = 1, 200
	}
	for _, layout := range []cf.Layout{cf.LayoutCuckoo, cf.LayoutRedisBloom} {
		for seed := range seeds {
			t.Run(fmt.Sprintf("layout=%s/seed=%d", layout, seed), func(t *testing.T) { liveReplayReplica(t, uint64(seed), ops, layout) })
		}
	}
}

// doer is a client or a transaction's pipeline.
type doer interface {
	redis.Cmdable
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// liveReplayReplica runs n random writes on a primary whose new filters take
// layout (filters restored from the chain's payload keep this server's), then
// compares its keys with its replica's and with a restart's.
func liveReplayReplica(t *testing.T, seed uint64, n int, layout cf.Layout) {
	defaults := server.FilterDefaults{Layout: layout}
	ctx := context.Background()
	pdir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "snapshot-v1", "snapshot.cks"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pdir, "snapshot.cks"), data, 0o644)
	// No snapshot while the test runs: the restart replays every write.
	psrv, paddr := start(t, server.Config{Dir: pdir, SnapshotLogSize: -1, Logger: quiet(), FilterDefaults: defaults})
	p := client(t, paddr)
	host, port, _ := net.SplitHostPort(paddr)
	_, raddr := start(t, server.Config{Dir: t.TempDir(), ReplicaOf: host + " " + port, Logger: quiet(), FilterDefaults: defaults})
	r := client(t, raddr)
	// A chain of stages (snapshot-v1) whose later stages are empty, so that
	// CF.COMPACT of a key restored from it drops them.
	for i := 2; i < 1000; i++ {
		p.CFDel(ctx, "grow", fmt.Sprint("item", i))
	}
	chain := mustDump(t, p, "grow")

	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	key := func() string { return fmt.Sprint("k", rng.IntN(6)) }
	item := func() string { return fmt.Sprint("i", rng.IntN(300)) }
	var write func(c doer, inTx bool)
	write = func(c doer, inTx bool) {
		k := key()
		switch op := rng.IntN(22); {
		case op < 2:
			args := []any{"CF.RESERVE", k, 20 + rng.IntN(200)}
			if rng.IntN(2) == 0 {
				args = append(args, "BUCKETSIZE", 1+rng.IntN(6))
			}
			if rng.IntN(2) == 0 {
				args = append(args, "EXPANSION", rng.IntN(3))
			}
			c.Do(ctx, args...)
		case op < 8:
			for range 1 + rng.IntN(40) {
				c.CFAdd(ctx, k, item())
			}
		case op < 9:
			c.CFAddNX(ctx, k, item())
		case op < 10:
			c.Do(ctx, "CF.INSERT", k, "CAPACITY", 50, "ITEMS", item(), item(), item())
		case op < 12:
			c.CFDel(ctx, k, item())
		case op < 15:
			switch rng.IntN(4) {
			case 0:
				c.Expire(ctx, k, time.Duration(1+rng.IntN(9))*time.Hour)
			case 1:
				c.Persist(ctx, k)
			case 2:
				c.PExpireAt(ctx, k, time.Now().Add(48*time.Hour))
			default:
				c.PExpire(ctx, k, time.Millisecond) // dropped as it expires
			}
		case op < 16:
			if rng.IntN(2) == 0 {
				c.Rename(ctx, k, key())
			} else {
				c.RenameNX(ctx, k, key())
			}
		case op < 17:
			c.Del(ctx, k)
		case op < 18:
			payload := chain
			if rng.IntN(2) == 0 && !inTx {
				if d, err := p.Dump(ctx, key()).Result(); err == nil {
					payload = d
				}
			}
			c.RestoreReplace(ctx, k, 0, payload)
		case op < 19:
			c.Do(ctx, "CF.COMPACT", k)
		case op < 20 && !inTx:
			src := key()
			p.Del(ctx, k)
			for iter := int64(0); ; {
				d, err := p.CFScanDump(ctx, src, iter).Result()
				if err != nil || d.Iter == 0 {
					break
				}
				p.CFLoadChunk(ctx, k, d.Iter, d.Data)
				iter = d.Iter
			}
		case op < 21 && !inTx:
			p.TxPipelined(ctx, func(pp redis.Pipeliner) error {
				for range 2 + rng.IntN(3) {
					write(pp, true)
				}
				return nil
			})
		default:
			if rng.IntN(10) == 0 {
				c.FlushAll(ctx)
			}
		}
	}
	for range n {
		write(p, false)
	}
	// Every kind once more where nothing overwrites it.
	p.RestoreReplace(ctx, "tail-chain", 0, chain)
	p.Do(ctx, "CF.COMPACT", "tail-chain")
	p.CFAdd(ctx, "tail-expire", "x")
	p.Expire(ctx, "tail-expire", 3*time.Hour)
	p.CFAdd(ctx, "tail-rename", "x")
	p.Rename(ctx, "tail-rename", "tail-renamed")
	for iter := int64(0); ; {
		d, err := p.CFScanDump(ctx, "grow", iter).Result()
		if err != nil || d.Iter == 0 {
			break
		}
		p.CFLoadChunk(ctx, "tail-load", d.Iter, d.Data)
		iter = d.Iter
	}
	p.TxPipelined(ctx, func(pp redis.Pipeliner) error {
		pp.CFAdd(ctx, "tail-tx", "a")
		pp.CFDel(ctx, "tail-tx", "a")
		pp.CFAdd(ctx, "tail-tx", "b")
		return nil
	})
	time.Sleep(5 * time.Millisecond) // past the last 1 ms deadline
	caughtUp(t, p, r)
	live := dataState(t, p)
	if len(live) == 0 {
		t.Fatal("the sequence left no key: it tests nothing")
	}
	if layout == cf.LayoutRedisBloom && !slices.ContainsFunc(slices.Collect(maps.Values(live)), func(d string) bool { return strings.HasPrefix(d, "07") }) {
		t.Fatal("no key of RedisBloom's layout is left: the layout is not tested")
	}
	if err := psrv.CloseWithoutSnapshot(); err != nil {
		t.Fatal(err)
	}
	_, addr := start(t, server.Config{Dir: pdir, Logger: quiet(), FilterDefaults: defaults})
	if replayed := dataState(t, client(t, addr)); !maps.Equal(replayed, live) {
		for k := range live {
			if live[k] != replayed[k] {
				t.Errorf("key %s: live %.80s, replayed %.80s", k, live[k], replayed[k])
			}
		}
		for k := range replayed {
			if _, ok := live[k]; !ok {
				t.Errorf("key %s: only after replay", k)
			}
		}
	}
}
