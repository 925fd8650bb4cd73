//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/bench/internal/uring"
	"github.com/redis/go-redis/v9"
)

// startUring starts the uring loops on 127.0.0.1 with an OS-chosen port and
// returns the address once every loop is listening.
func startUring(t *testing.T, loops int) string {
	t.Helper()
	ready := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- serveUring("127.0.0.1:0", loops, func(a net.Addr) { ready <- a }) }()
	select {
	case a := <-ready:
		return a.String()
	case err := <-errc:
		if errors.Is(err, uring.ErrUnavailable) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return ""
}

func TestUringLoop(t *testing.T) {
	for _, loops := range []int{1, 2} {
		t.Run(fmt.Sprintf("loops=%d", loops), func(t *testing.T) {
			addr := startUring(t, loops)
			ctx := context.Background()

			t.Run("single", func(t *testing.T) {
				rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, Protocol: 2, DisableIdentity: true})
				defer rdb.Close()
				for range 100 {
					if got, err := rdb.Ping(ctx).Result(); err != nil || got != "PONG" {
						t.Fatalf("PING: %q, %v", got, err)
					}
					if _, err := rdb.Get(ctx, "k").Result(); err != redis.Nil {
						t.Fatalf("GET: %v, want redis.Nil", err)
					}
					if got, err := rdb.Do(ctx, "CF.EXISTS", "f", "x").Int(); err != nil || got != 0 {
						t.Fatalf("CF.EXISTS: %d, %v", got, err)
					}
				}
			})

			t.Run("pipelined", func(t *testing.T) {
				rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, Protocol: 2, DisableIdentity: true})
				defer rdb.Close()
				// Large enough that requests and replies span several
				// provided buffers and may be sent short.
				for _, depth := range []int{16, 5000} {
					pipe := rdb.Pipeline()
					pings := make([]*redis.StatusCmd, depth)
					gets := make([]*redis.StringCmd, depth)
					for i := range depth {
						pings[i] = pipe.Ping(ctx)
						gets[i] = pipe.Get(ctx, strings.Repeat("k", i%300))
					}
					if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
						t.Fatalf("depth %d: %v", depth, err)
					}
					for i := range depth {
						if pings[i].Val() != "PONG" || gets[i].Err() != redis.Nil {
							t.Fatalf("depth %d, #%d: %q, %v", depth, i, pings[i].Val(), gets[i].Err())
						}
					}
				}
			})

			t.Run("connections=300", func(t *testing.T) {
				var wg sync.WaitGroup
				errs := make(chan error, 300)
				for range 300 {
					wg.Go(func() {
						rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, Protocol: 2, DisableIdentity: true})
						defer rdb.Close()
						for range 20 {
							if got, err := rdb.Ping(ctx).Result(); err != nil || got != "PONG" {
								errs <- fmt.Errorf("PING: %q, %v", got, err)
								return
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
			})

			t.Run("split", func(t *testing.T) {
				// A command in pieces, one byte a write.
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				for _, b := range []byte("*1\r\n$4\r\nPING\r\n") {
					nc.Write([]byte{b})
					time.Sleep(time.Millisecond)
				}
				line, err := bufio.NewReader(nc).ReadString('\n')
				if err != nil || line != "+PONG\r\n" {
					t.Fatalf("reply %q, %v", line, err)
				}
			})

			t.Run("protocol error", func(t *testing.T) {
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(5 * time.Second))
				nc.Write([]byte("*1\r\n$x\r\n"))
				got, err := io.ReadAll(nc)
				if err != nil || !strings.HasPrefix(string(got), "-ERR ") {
					t.Fatalf("reply %q, %v; want -ERR then the connection closed", got, err)
				}
			})
		})
	}
}
