package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// withServer starts a server on cfg.Dir, runs fn against it, and shuts it
// down before returning, so that the next server can take the directory.
func withServer(t *testing.T, cfg server.Config, fn func(c *redis.Client, srv *server.Server)) {
	t.Helper()
	cfg.Logger = quiet()
	srv, addr := start(t, cfg)
	c := client(t, addr)
	fn(c, srv)
	c.Close()
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestDataDirLocked: a second server on a directory in use is refused (the
// two would rotate and delete each other's logs); once the first has shut
// down, the directory opens again.
func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	cfg := server.Config{Dir: dir, Logger: quiet()}
	first, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.New(cfg); err == nil || !strings.Contains(err.Error(), "in use by another server") {
		t.Fatalf("second server on %s: %v, want an in-use error", dir, err)
	}
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, err := server.New(cfg)
	if err != nil {
		t.Fatalf("after the first shut down: %v", err)
	}
	if err := again.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func logFiles(t *testing.T, dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "appendonly.*.log"))
	return m
}

func TestRestartReplaysLogAndSnapshot(t *testing.T) {
	for _, mode := range []server.FsyncMode{server.FsyncAlways, server.FsyncEverysec, server.FsyncNo} {
		t.Run("appendfsync="+mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			cfg := server.Config{Dir: dir, AppendFsync: mode, SnapshotLogSize: 20000}
			ctx := context.Background()
			withServer(t, cfg, func(c *redis.Client, _ *server.Server) {
				c.Do(ctx, "CF.RESERVE", "fixed", 64, "EXPANSION", 0)
				pipe := c.Pipeline()
				for i := range 3000 {
					pipe.CFAdd(ctx, fmt.Sprint("k", i%7), fmt.Sprint("item", i))
				}
				pipe.CFDel(ctx, "k0", "item0")
				pipe.Del(ctx, "k6")
				pipe.CFAdd(ctx, "fixed", "x")
				if _, err := pipe.Exec(ctx); err != nil {
					t.Fatal(err)
				}
			})
			withServer(t, cfg, func(c *redis.Client, _ *server.Server) {
				if n := c.DBSize(ctx).Val(); n != 7 {
					t.Errorf("DBSIZE after restart = %d, want 7", n)
				}
				for i := range 3000 {
					k := i % 7
					got := c.CFExists(ctx, fmt.Sprint("k", k), fmt.Sprint("item", i)).Val()
					if k != 6 && i != 0 && !got {
						t.Fatalf("item%d lost in k%d", i, k)
					}
				}
				info := c.CFInfo(ctx, "k0").Val()
				if info.NumItemsDeleted != 1 {
					t.Errorf("k0 deleted = %d", info.NumItemsDeleted)
				}
				if c.CFInfo(ctx, "fixed").Val().ExpansionRate != 0 {
					t.Error("fixed lost EXPANSION 0")
				}
			})
		})
	}
}

// TestTornTail truncates the log at every byte offset of its last record: the
// server starts, with every record before it.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	srvCfg := server.Config{Dir: dir, AppendFsync: server.FsyncAlways, SnapshotLogSize: -1, Logger: quiet()}
	// Write the records with a server that is never shut down (no snapshot),
	// as after kill -9.
	func() {
		s2, addr := startNoCleanup(t, srvCfg)
		_ = s2
		c := client(t, addr)
		for i := range 10 {
			if err := c.CFAdd(ctx, "k", fmt.Sprint("item", i)).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}()
	logs := logFiles(t, dir)
	if len(logs) != 1 {
		t.Fatalf("logs: %v", logs)
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	// The last record is "CF.ADD k item9": find its start by replaying
	// lengths.
	var starts []int
	for off := 0; off < len(data); {
		starts = append(starts, off)
		n := int(data[off]) | int(data[off+1])<<8 | int(data[off+2])<<16 | int(data[off+3])<<24
		off += 8 + n
	}
	last := starts[len(starts)-1]
	for cut := last; cut < len(data); cut++ {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, filepath.Base(logs[0])), data[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := server.New(server.Config{Dir: d, Logger: quiet()})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		_, addr := serveOn(t, s)
		c := client(t, addr)
		for i := range 9 {
			if !c.CFExists(ctx, "k", fmt.Sprint("item", i)).Val() {
				t.Fatalf("cut at %d: item%d lost", cut, i)
			}
		}
		if n := c.CFInfo(ctx, "k").Val().NumItemsInserted; n != 9 {
			t.Errorf("cut at %d: %d items", cut, n)
		}
		c.Close()
	}
	// A corrupted middle record is refused, naming the file and offset.
	bad := append([]byte(nil), data...)
	bad[starts[2]+9] ^= 0xff
	d := t.TempDir()
	name := filepath.Join(d, filepath.Base(logs[0]))
	os.WriteFile(name, bad, 0o644)
	_, err = server.New(server.Config{Dir: d, Logger: quiet()})
	want := fmt.Sprintf("%s: corrupt record at offset %d", name, starts[2])
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--repair") {
		t.Fatalf("corrupt middle: %v, want it to contain %q", err, want)
	}
	// --repair cuts the log there and starts.
	s, err := server.New(server.Config{Dir: d, Repair: true, Logger: quiet()})
	if err != nil {
		t.Fatalf("--repair: %v", err)
	}
	_, addr := serveOn(t, s)
	c := client(t, addr)
	if n := c.CFInfo(ctx, "k").Val().NumItemsInserted; n != 1 {
		t.Errorf("after --repair: %d items, want 1 (the records before the damage)", n)
	}
}

// startNoCleanup serves cfg and never shuts the server down cleanly: the test
// sees the data directory as a crash would leave it (the log is written
// before every reply).
func startNoCleanup(t *testing.T, cfg server.Config) (*server.Server, string) {
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, srv)
}

func serveOn(t *testing.T, srv *server.Server) (*server.Server, string) {
	t.Helper()
	ln, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { ln.Close() })
	return srv, ln.Addr().String()
}

func TestCorruptSnapshotRefused(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) {
		c.CFAdd(ctx, "k", "a")
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	})
	p := filepath.Join(dir, "snapshot.cks")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	os.WriteFile(p, data, 0o644)
	_, err = server.New(server.Config{Dir: dir, Logger: quiet()})
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("corrupt snapshot: %v", err)
	}
}
