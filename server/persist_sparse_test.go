package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/redistest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// The server of TestHugeReservationSparse runs in a process of its own, this
// test binary run again with serverDirEnv set, so that its resident memory
// (VmRSS) is its own and not the sum of every test's.
const serverDirEnv = "CUCKOO_TEST_SERVER_DIR"

// TestMain runs the test binary as that server when serverDirEnv is set,
// and the tests otherwise.
func TestMain(m *testing.M) {
	if dir := os.Getenv(serverDirEnv); dir != "" {
		if err := serveProcess(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveProcess is that server: it serves dir on 127.0.0.1:0, prints its
// address, and returns once SHUTDOWN has stopped it and its final snapshot
// is on disk.
func serveProcess(dir string) error {
	srv, err := server.New(server.Config{Dir: dir, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("\naddr %s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, server.ErrServerClosed) {
		return err
	}
	// Serve returns as the listeners close; Shutdown waits for the
	// shutdown SHUTDOWN began, final snapshot included.
	if err := srv.Shutdown(context.Background()); err != nil && !errors.Is(err, server.ErrServerClosed) {
		return err
	}
	return nil
}

// serverProcess is a server running in a child process.
type serverProcess struct {
	cmd  *exec.Cmd
	addr string
	done chan error
}

// startProcess starts a server process on dir and waits for its address.
func startProcess(t *testing.T, dir string) *serverProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	redistest.DieWithTest(cmd)
	cmd.Env = append(os.Environ(), serverDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serverProcess{cmd: cmd, done: make(chan error, 1)}
	t.Cleanup(func() {
		cmd.Process.Kill() // by its id; a no-op once it has exited
		<-p.done
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "addr "); ok {
				lines <- a
			}
		}
		io.Copy(io.Discard, out)
		p.done <- cmd.Wait()
		close(lines)
	}()
	select {
	case a, ok := <-lines:
		if !ok {
			t.Fatal("the server process exited before it listened")
		}
		p.addr = a
	case <-time.After(2 * time.Minute):
		t.Fatal("the server process did not listen within 2 minutes")
	}
	return p
}

// rss returns the process's resident memory, VmRSS of /proc/PID/status.
func (p *serverProcess) rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/PID/status")
	return 0
}

// shutdown sends SHUTDOWN and waits for the process to exit.
func (p *serverProcess) shutdown(t *testing.T, c *redis.Client) {
	t.Helper()
	c.Shutdown(context.Background()) // the connection closes with no reply
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("the server process: %v", err)
		}
		p.done <- nil // for the cleanup
	case <-time.After(5 * time.Minute):
		t.Fatal("the server process did not exit within 5 minutes of SHUTDOWN")
	}
}

// TestHugeReservationSparse is issue 24's scenario: a filter reserved for
// 2^30 items (a 2.4 GB table, 2^26 under -short) holding one item. The
// table is address space the kernel has not backed, and every copy of it
// reads and writes only the block of 512 buckets the item went to: SAVE
// writes a snapshot of a few bytes, DUMP a payload as small, RESTORE and
// CF.LOADCHUNK build copies as sparse, SHUTDOWN saves, and a restart loads
// them all without touching their tables; a replica's full copy is as
// sparse. Through it all the server process's resident memory grows by less
// than 64 MB (reading the table, as SAVE did, committed all of it, and took
// minutes), and after the restart used_memory counts each table once:
// within an eighth of used_memory_filters, where the load allocated every
// table twice. Under -race the resident memory is not checked: the race
// detector's shadow of the tables is its own.
func TestHugeReservationSparse(t *testing.T) {
	if os.Getenv(serverDirEnv) != "" {
		t.Skip("the child process serves only")
	}
	capacity := int64(1 << 30)
	switch {
	case testing.Short() && raceEnabled:
		capacity = 1 << 22 // the race detector's shadow of small segments is resident
	case testing.Short():
		capacity = 1 << 26
	}
	const growth = 64 << 20 // the resident memory the scenario may add
	ctx := context.Background()
	dir := t.TempDir()
	p := startProcess(t, dir)
	c := client(t, p.addr)
	base := p.rss(t)
	if err := c.CFReserve(ctx, "big", capacity).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.CFAdd(ctx, "big", "item").Err(); err != nil {
		t.Fatal(err)
	}
	table := infoField(t, c, "used_memory_filters")
	checkRSS := func(step string) {
		t.Helper()
		rss := p.rss(t)
		switch {
		case raceEnabled:
			// The race detector resets its shadow of each allocation,
			// writing it for the small ones: up to four times a table of
			// 64 KB segments becomes resident. Its figure says nothing of
			// ours.
			t.Logf("%s: resident memory %d, %d before CF.RESERVE (race detector)", step, rss, base)
		case rss-base > growth:
			t.Errorf("%s: resident memory grew from %d to %d bytes", step, base, rss)
		}
	}
	checkRSS("CF.RESERVE")

	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "snapshot.cks"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 1<<10 {
		t.Errorf("the snapshot of a %d-byte table holding one item is %d bytes", table, fi.Size())
	}
	checkRSS("SAVE")

	payload, err := c.Dump(ctx, "big").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(payload) > 1<<10 {
		t.Errorf("DUMP of a %d-byte table holding one item: %d bytes", table, len(payload))
	}
	if err := c.Restore(ctx, "restored", 0, payload).Err(); err != nil {
		t.Fatal(err)
	}
	checkRSS("DUMP and RESTORE")

	chunks := dump(t, c, "big")
	var sent int
	for _, ch := range chunks {
		sent += len(ch.Data)
		if err := c.CFLoadChunk(ctx, "loaded", ch.Iter, ch.Data).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if sent > 64<<10 {
		t.Errorf("CF.SCANDUMP of a %d-byte table holding one item: %d bytes in %d chunks", table, sent, len(chunks))
	}
	checkRSS("CF.SCANDUMP and CF.LOADCHUNK")
	for _, k := range []string{"big", "restored", "loaded"} {
		if ok, err := c.CFExists(ctx, k, "item").Result(); err != nil || !ok {
			t.Fatalf("CF.EXISTS %s item = %v, %v", k, ok, err)
		}
	}
	filters := infoField(t, c, "used_memory_filters")
	if filters != 3*table {
		t.Errorf("used_memory_filters %d for three tables of %d", filters, table)
	}

	// A replica takes a full copy of the three, as sparse.
	rp := startProcess(t, t.TempDir())
	rc := client(t, rp.addr)
	rbase := rp.rss(t)
	replicaOf(t, rc, p.addr)
	for _, k := range []string{"big", "restored", "loaded"} {
		if ok, err := rc.CFExists(ctx, k, "item").Result(); err != nil || !ok {
			t.Fatalf("on the replica, CF.EXISTS %s item = %v, %v", k, ok, err)
		}
	}
	if rss := rp.rss(t); !raceEnabled && rss-rbase > growth {
		t.Errorf("the replica's full copy: resident memory grew from %d to %d bytes", rbase, rss)
	}
	rp.shutdown(t, rc)
	start := time.Now()
	p.shutdown(t, c)
	t.Logf("SHUTDOWN with its snapshot of three tables of %d bytes: %v", table, time.Since(start))

	start = time.Now()
	p = startProcess(t, dir)
	c = client(t, p.addr)
	t.Logf("restart: %v", time.Since(start))
	checkRSS("the restart") // against the first process's resident memory before CF.RESERVE
	for _, k := range []string{"big", "restored", "loaded"} {
		if ok, err := c.CFExists(ctx, k, "item").Result(); err != nil || !ok {
			t.Fatalf("after the restart, CF.EXISTS %s item = %v, %v", k, ok, err)
		}
	}
	if got := infoField(t, c, "used_memory_filters"); got != filters {
		t.Errorf("after the restart, used_memory_filters %d, before %d", got, filters)
	}
	used := infoField(t, c, "used_memory")
	if used < filters || used > filters+filters/8+growth {
		t.Errorf("after the restart, used_memory %d for used_memory_filters %d", used, filters)
	}
	t.Logf("after the restart: used_memory %d, used_memory_filters %d, resident %d (%d before CF.RESERVE)", used, filters, p.rss(t), base)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	checkRSS("SAVE after the restart")
	p.shutdown(t, c)
}
