package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

// buildCuckoo builds the cuckoo binary into a temporary directory.
func buildCuckoo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cuckoo")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

var readyRE = regexp.MustCompile(`msg="ready to accept connections" addr=(\S+)`)

// serveProc starts "cuckoo serve" on 127.0.0.1:0 and waits for its ready
// line, which names the address.
func serveProc(t *testing.T, bin string, args ...string) (*exec.Cmd, string, *syncBuf) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := &syncBuf{}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.add(sc.Text())
			if m := readyRE.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
		close(ready)
	}()
	addr, ok := <-ready
	if !ok {
		cmd.Wait()
		t.Fatalf("cuckoo serve exited before it was ready:\n%s", log)
	}
	return cmd, addr, log
}

type syncBuf struct {
	mu    sync.Mutex
	lines []string
}

func (b *syncBuf) add(s string) { b.mu.Lock(); b.lines = append(b.lines, s); b.mu.Unlock() }
func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmt.Sprint(b.lines)
}

// TestServeKill9 kills the server with SIGKILL while concurrent clients add
// items with --appendfsync always, restarts it, and checks that every
// acknowledged item is present; three rounds on one data directory.
func TestServeKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it; skipped with -short")
	}
	bin := buildCuckoo(t)
	dir := t.TempDir()
	ctx := context.Background()
	var acked []string
	var mu sync.Mutex
	for round := range 3 {
		cmd, addr, log := serveProc(t, bin, "--dir", dir, "--appendfsync", "always", "--snapshot-log-size", "50000")
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 16})
		// Everything acknowledged in earlier rounds is there.
		for _, it := range acked {
			if !c.CFExists(ctx, "k", it).Val() {
				t.Fatalf("round %d: acknowledged %s lost\n%s", round, it, log)
			}
		}
		var n atomic.Int64
		enough := make(chan struct{})
		var once sync.Once
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					it := fmt.Sprintf("r%d-w%d-%d", round, w, i)
					if err := c.CFAdd(ctx, "k", it).Err(); err != nil {
						return // the server died: this one was not acknowledged
					}
					mu.Lock()
					acked = append(acked, it)
					mu.Unlock()
					if n.Add(1) == 3000 {
						once.Do(func() { close(enough) })
					}
				}
			}()
		}
		<-enough
		if err := cmd.Process.Kill(); err != nil { // SIGKILL, mid-load
			t.Fatal(err)
		}
		cmd.Wait()
		wg.Wait()
		c.Close()
		t.Logf("round %d: %d items acknowledged in all", round, len(acked))
	}
	cmd, addr, log := serveProc(t, bin, "--dir", dir)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	pipe := c.Pipeline()
	for _, it := range acked {
		pipe.CFExists(ctx, "k", it)
	}
	cmds, err := pipe.Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range cmds {
		if !r.(*redis.BoolCmd).Val() {
			t.Fatalf("acknowledged %s lost\n%s", acked[i], log)
		}
	}
	// SIGTERM: a graceful stop, exit status 0.
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v\n%s", err, log)
	}
}

// TestServeRefusesCorruptLog: startup names the file and offset, exit 2.
func TestServeRefusesCorruptLog(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "appendonly.0000000000000000.log")
	if err := os.WriteFile(name, []byte("\x05\x00\x00\x00garbagegarbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cuckoo(t, "", "serve", "--addr", "127.0.0.1:0", "--dir", dir)
	if code != exitError || !regexp.MustCompile(regexp.QuoteMeta(name)+`: corrupt record at offset 0`).MatchString(stderr) {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}
