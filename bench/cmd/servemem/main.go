// Command servemem fills one filter of a server that speaks RedisBloom's
// CF.* commands (cuckoo serve, or redis-server with RedisBloom) and
// measures it: CF.RESERVE key n, n distinct items in pipelined CF.INSERTs,
// then CF.INFO's Size and the false-positive rate of items never added,
// looked up with CF.MEXISTS. bench/scripts/serve-vs-redisbloom.sh runs it
// against both servers (MEMORY=...) and adds the servers' resident memory.
//
//	go run ./cmd/servemem --addr 127.0.0.1:6379 --key m --n 1000000
//
// --options adds CF.RESERVE options ("EXPANSION 0"). It prints one line: n,
// Size, items inserted, sub-filters, bucket size, items the filter refused
// (full), absent items looked up, those found, and the rate.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "the server")
	key := flag.String("key", "m", "the filter's key, reserved afresh")
	n := flag.Int("n", 1_000_000, "CF.RESERVE's capacity and the items added")
	absent := flag.Int("absent", 1_000_000, "items never added to look up")
	batch := flag.Int("batch", 1000, "items a CF.INSERT or CF.MEXISTS")
	depth := flag.Int("pipeline", 16, "requests in flight")
	options := flag.String("options", "", "CF.RESERVE's options, as words: EXPANSION 0")
	flag.Parse()
	if err := run(*addr, *key, *n, *absent, *batch, *depth, strings.Fields(*options)); err != nil {
		fmt.Fprintln(os.Stderr, "servemem:", err)
		os.Exit(1)
	}
}

func run(addr, key string, n, absent, batch, depth int, options []string) error {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	if err := c.Del(ctx, key).Err(); err != nil {
		return err
	}
	reserve := []any{"CF.RESERVE", key, n}
	for _, o := range options {
		reserve = append(reserve, o)
	}
	if err := c.Do(ctx, reserve...).Err(); err != nil {
		return fmt.Errorf("CF.RESERVE %s %d %v: %w", key, n, options, err)
	}
	// each sends items [lo, hi) of a kind in pipelined requests of batch
	// items, and hands every reply to use.
	each := func(cmd []any, prefix string, lo, hi int, use func(redis.Cmder) error) error {
		for start := lo; start < hi; {
			p := c.Pipeline()
			for range depth {
				if start >= hi {
					break
				}
				end := min(start+batch, hi)
				args := append([]any(nil), cmd...)
				for i := start; i < end; i++ {
					args = append(args, prefix+strconv.Itoa(i))
				}
				p.Do(ctx, args...)
				start = end
			}
			cmds, err := p.Exec(ctx)
			if err != nil {
				return err
			}
			for _, r := range cmds {
				if err := use(r); err != nil {
					return err
				}
			}
		}
		return nil
	}
	refused := 0 // -1: the filter is full, and may not grow
	added := func(r redis.Cmder) error {
		vals, err := r.(*redis.Cmd).Slice()
		if err != nil {
			return fmt.Errorf("CF.INSERT: %w", err)
		}
		for _, v := range vals {
			switch v {
			case int64(1):
			case int64(-1):
				refused++
			default:
				return fmt.Errorf("CF.INSERT answered %v for an item", v)
			}
		}
		return nil
	}
	if err := each([]any{"CF.INSERT", key, "ITEMS"}, "item:", 0, n, added); err != nil {
		return err
	}
	found := 0
	count := func(r redis.Cmder) error {
		vals, err := r.(*redis.Cmd).Slice()
		if err != nil {
			return fmt.Errorf("CF.MEXISTS: %w", err)
		}
		for _, v := range vals {
			if v == int64(1) {
				found++
			}
		}
		return nil
	}
	if err := each([]any{"CF.MEXISTS", key}, "absent:", 0, absent, count); err != nil {
		return err
	}
	info, err := c.CFInfo(ctx, key).Result()
	if err != nil {
		return err
	}
	fmt.Printf("n %d size %d items %d filters %d bucket %d refused %d absent %d found %d rate %.5f\n",
		n, info.Size, info.NumItemsInserted, info.NumFilters, info.BucketSize, refused, absent, found, float64(found)/float64(absent))
	return nil
}
