package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// These tests fill the log's disk under a running server: writes are refused
// with MISCONF until space is freed, then resume by themselves, and a restart
// finds every acknowledged write.

// isMisconf reports whether a write was refused because the log failed.
func isMisconf(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "MISCONF Errors writing to the append-only log")
}

// acked adds item to key and records it if the server answered 1. An error
// reply or a closed connection (the reply to the write that hit the full
// disk) leaves the item's fate open; anything else fails the test.
func acked(t *testing.T, c *redis.Client, key, item string, ok map[string]bool) error {
	t.Helper()
	added, err := c.CFAdd(context.Background(), key, item).Result()
	if err == nil {
		if !added {
			t.Fatalf("CF.ADD %s %s = 0 for a new item", key, item)
		}
		ok[item] = true
	}
	return err
}

// untilWritable retries CF.ADD with fresh items until one is acknowledged.
func untilWritable(t *testing.T, c *redis.Client, key, prefix string, ok map[string]bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		err := acked(t, c, key, fmt.Sprint(prefix, i), ok)
		if err == nil {
			return
		}
		if !isMisconf(err) {
			t.Fatalf("CF.ADD while the log heals: %v, want MISCONF", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("writes still refused 10s after space was freed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkAcked restarts a server on cfg.Dir and checks every acknowledged item.
func checkAcked(t *testing.T, cfg server.Config, key string, ok map[string]bool) {
	t.Helper()
	withServer(t, cfg, func(c *redis.Client, _ *server.Server) {
		ctx := context.Background()
		for item := range ok {
			if !c.CFExists(ctx, key, item).Val() {
				t.Errorf("%s: acknowledged but lost after restart", item)
			}
		}
	})
}

func TestLogHealsAfterDiskFull(t *testing.T) {
	dir := t.TempDir()
	faults := server.InjectLogFaults(t)
	cfg := server.Config{Dir: dir, AppendFsync: server.FsyncAlways}
	ctx := context.Background()
	ok := map[string]bool{}
	withServer(t, cfg, func(c *redis.Client, _ *server.Server) {
		for i := range 10 {
			if err := acked(t, c, "k", fmt.Sprint("before", i), ok); err != nil {
				t.Fatal(err)
			}
		}
		// The next record fits only in part: a short write.
		faults.Full(10)
		if err := acked(t, c, "k", "hit", ok); err == nil {
			t.Fatal("CF.ADD on a full disk succeeded")
		}
		// Until the log heals, writes are refused and reads work.
		for i := range 3 {
			if err := acked(t, c, "k", fmt.Sprint("refused", i), ok); !isMisconf(err) {
				t.Fatalf("CF.ADD on a failed log: %v, want MISCONF", err)
			}
		}
		if err := c.Save(ctx).Err(); !isMisconf(err) {
			t.Errorf("SAVE on a failed log: %v, want MISCONF", err)
		}
		if !c.CFExists(ctx, "k", "before0").Val() {
			t.Error("CF.EXISTS on a failed log")
		}
		faults.Free()
		untilWritable(t, c, "k", "after", ok)
		for i := range 10 {
			if err := acked(t, c, "k", fmt.Sprint("more", i), ok); err != nil {
				t.Fatal(err)
			}
		}
	})
	checkAcked(t, cfg, "k", ok)
}

// TestLogHealsOnRealFullDisk fills a 4 MiB tmpfs with the log, then deletes
// a file to make room.
func TestLogHealsOnRealFullDisk(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("needs a tmpfs to fill, and mounting one is not permitted here (root or CAP_SYS_ADMIN): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	// No snapshot while filling: the log alone takes the space.
	cfg := server.Config{Dir: filepath.Join(mnt, "data"), AppendFsync: server.FsyncAlways, SnapshotLogSize: -1}
	ok := map[string]bool{}
	big := strings.Repeat("x", 4000)
	withServer(t, cfg, func(c *redis.Client, _ *server.Server) {
		full := false
		for i := 0; i < 2000 && !full; i++ {
			err := acked(t, c, "k", fmt.Sprint(i, big), ok)
			full = err != nil
		}
		if !full {
			t.Fatal("2000 CF.ADDs of 4 KB into 4 MiB did not fill it")
		}
		if err := acked(t, c, "k", "refused", ok); !isMisconf(err) {
			t.Fatalf("CF.ADD on a full disk: %v, want MISCONF", err)
		}
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		untilWritable(t, c, "k", "after", ok)
		for i := range 20 {
			if err := acked(t, c, "k", fmt.Sprint("more", i, big), ok); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%d writes acknowledged", len(ok))
	})
	checkAcked(t, cfg, "k", ok)
}
