package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/prereq"
	"github.com/cuckoohash/cuckoo/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The cuckoo binary is built once per test binary (go build takes seconds)
// and removed by TestMain.
var cuckooBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	m.Run() // the testing package exits with m.Run's status when TestMain returns
	if cuckooBinary.dir != "" {
		os.RemoveAll(cuckooBinary.dir)
	}
}

func cuckooBin(t *testing.T) string {
	t.Helper()
	b := &cuckooBinary
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "cuckoo-bin-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "cuckoo")
		if out, err := exec.Command("go", "build", "-o", b.path, ".").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// serveProcess is one `cuckoo serve` process.
type serveProcess struct {
	cmd     *exec.Cmd
	pid     int
	addr    string
	pass    string
	out     *lineWriter
	exited  chan struct{} // closed once the process has exited
	waitErr error         // cmd.Wait's result, set before exited is closed
	watch   *memWatch
}

// readyRE is the ready line: the plain address (addr, unless --port 0)
// and the TLS address (tls_addr, if any).
var readyRE = regexp.MustCompile(`msg="ready to accept connections"(?: addr=(\S+))?(?: tls_addr=(\S+))?`)

// serveProc starts "cuckoo serve" on 127.0.0.1:0 and waits for its ready
// line, which names the address.
func serveProc(t *testing.T, bin string, args ...string) (*exec.Cmd, string, *syncBuf) {
	t.Helper()
	cmd, addr, _, log := serveProcTLS(t, bin, args...)
	return cmd, addr, log
}

// serveProcTLS is serveProc that also returns the TLS address (""
// without one); the plain address is "" with --port 0.
func serveProcTLS(t *testing.T, bin string, args ...string) (cmd *exec.Cmd, addr, tlsAddr string, log *syncBuf) {
	t.Helper()
	return serveArgs(t, bin, append([]string{"--addr", "127.0.0.1:0"}, args...)...)
}

// serveArgs starts "cuckoo serve" with args alone and waits for its ready
// line, as serveProcTLS does.
func serveArgs(t *testing.T, bin string, args ...string) (cmd *exec.Cmd, addr, tlsAddr string, log *syncBuf) {
	t.Helper()
	return serveCmd(t, exec.Command(bin, append([]string{"serve"}, args...)...))
}

// serveCmd starts cmd, a "cuckoo serve" (or a command that runs one, such as
// ip netns exec), and waits for its ready line, as serveArgs does.
func serveCmd(t *testing.T, cmd *exec.Cmd) (_ *exec.Cmd, addr, tlsAddr string, log *syncBuf) {
	t.Helper()
	redistest.DieWithTest(cmd)
	// A pipe of our own, not StderrPipe: Wait closes that one, which can
	// lose the last lines (a crash's panic) before they are read.
	stderr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		stderr.Close()
		t.Fatal(err)
	}
	log = &syncBuf{}
	ready := make(chan []string, 1)
	go func() {
		defer stderr.Close()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.add(sc.Text())
			if m := readyRE.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m
			}
		}
		close(ready)
	}()
	m, ok := <-ready
	if !ok {
		cmd.Wait()
		t.Fatalf("cuckoo serve exited before it was ready:\n%s", log)
	}
	return cmd, m[1], m[2], log
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
	bin := cuckooBin(t)
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

// TestServeRefusesBadFlags: nonsense flags and an address that cannot be
// bound are refused with a message before the data directory is created
// (issue 14: --maxclients 0 became 10000, --maxmemory -1 was accepted, and
// the directory was created before a failed bind).
func TestServeRefusesBadFlags(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--maxclients", "0"}, `serve: invalid value "0" for flag -maxclients: argument must be between 1 and 1000000 inclusive`},
		{[]string{"--maxmemory", "-1"}, `serve: invalid value "-1" for flag -maxmemory: argument must be a memory value`},
		{[]string{"--maxmemory", "2tb"}, `serve: invalid value "2tb" for flag -maxmemory: argument must be a memory value`},
		{[]string{"--proto-max-bulk-len", "0"}, `serve: invalid value "0" for flag -proto-max-bulk-len: argument must be between 1 and`},
		{[]string{"--client-query-buffer-limit", "-5mb"}, `serve: invalid value "-5mb" for flag -client-query-buffer-limit: argument must be a memory value`},
		{[]string{"--snapshot-log-size", "0"}, `serve: invalid value "0" for flag -snapshot-log-size: give a size (such as 64mb), or -1 for never`},
		{[]string{"--snapshot-log-size", "-2"}, `serve: invalid value "-2" for flag -snapshot-log-size: argument must be a memory value`},
		{[]string{"--timeout", "-1"}, `serve: invalid value "-1" for flag -timeout: argument must be between 0 and 2147483647 inclusive`},
		{[]string{"--client-output-buffer-limit", "master 1mb 1mb 1"}, `serve: invalid value "master 1mb 1mb 1" for flag -client-output-buffer-limit: Invalid client class specified in buffer limit configuration.`},
		{[]string{"--client-output-buffer-limit", "normal 1mb 1mb -1"}, `serve: invalid value "normal 1mb 1mb -1" for flag -client-output-buffer-limit: Error in hard, soft or soft_seconds setting`},
		{[]string{"--maxmemory-clients", "150%"}, `serve: invalid value "150%" for flag -maxmemory-clients: percentage argument must be less or equal to 100`},
		{[]string{"--maxmemory-clients", "-1mb"}, `serve: invalid value "-1mb" for flag -maxmemory-clients: argument must be a memory or percent value`},
		{[]string{"--appendfsync", "sometimes"}, `serve: invalid value "sometimes" for flag -appendfsync: argument(s) must be one of the following: always, everysec, no`},
		{[]string{"--addr", busy.Addr().String()}, "serve: --addr " + busy.Addr().String() + ": listen tcp " + busy.Addr().String() + ": bind: address already in use"},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", busy.Addr().String()}, "serve: --metrics-addr " + busy.Addr().String() + ": listen tcp"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--dir", dir}, tc.args...)
		code, _, stderr := cuckoo(t, "", args...)
		if code != exitError || !strings.HasPrefix(stderr, "cuckoo: "+tc.want) {
			t.Errorf("cuckoo %q: exit %d, stderr %q; want 2 and %q", args, code, stderr, tc.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cuckoo %q created the data directory (%v)", args, err)
		}
	}
}

// TestServeSizes: byte flags take redis.conf's sizes, and the server runs
// with them (INFO shows maxmemory in bytes).
func TestServeSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it; skipped with -short")
	}
	bin := cuckooBin(t)
	cmd, addr, log := serveProc(t, bin, "--dir", "", "--maxmemory", "100mb", "--proto-max-bulk-len", "1MB",
		"--client-query-buffer-limit", "2gb", "--snapshot-log-size", "-1", "--max-filter-memory", "1mb")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil || !strings.Contains(info, "maxmemory:104857600\r\n") {
		t.Errorf("INFO memory with --maxmemory 100mb: %v\n%s\n%s", err, info, log)
	}
	// One filter may take 1 MiB: a reservation of about 2 MiB is refused.
	err = c.CFReserve(context.Background(), "big", 1_000_000).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Insufficient memory: one filter may take at most 1048576 bytes") {
		t.Errorf("a reservation past --max-filter-memory 1mb: %v", err)
	}
	// 1MB bounds an argument: one of 1 MiB + 1 is refused.
	if err := c.Do(context.Background(), "CF.ADD", "k", strings.Repeat("x", 1<<20+1)).Err(); err == nil {
		t.Errorf("an argument past --proto-max-bulk-len 1MB was accepted")
	}
}

// TestServeConfigFile: --config's settings apply, flags given explicitly
// override them (serveProc's --addr overrides the file's port), CONFIG
// REWRITE writes the settings back to the file, and an unknown setting stops
// startup with the file and line.
func TestServeConfigFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it; skipped with -short")
	}
	bin := cuckooBin(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "cuckoo.conf")
	src := "# the test's settings\nport 1\nmaxmemory 100mb\nrequirepass secret\n\ncf-initial-size 2048\nsave \"\"\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, addr, log := serveProc(t, bin, "--dir", "", "--config", path, "--maxmemory", "200mb")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, Password: "secret"})
	defer c.Close()
	got, err := c.ConfigGet(ctx, "*").Result()
	if err != nil || got["maxmemory"] != "209715200" || got["cf-initial-size"] != "2048" || got["requirepass"] != "secret" || got["save"] != "" {
		t.Fatalf("CONFIG GET * with --config and --maxmemory 200mb: %v, %v\n%s", got, err, log)
	}
	if err := c.ConfigSet(ctx, "cf-max-iterations", "33").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := "# the test's settings\nport "; !strings.HasPrefix(string(b), want) ||
		!strings.Contains(string(b), "\nmaxmemory 200mb\nrequirepass \"secret\"\n\ncf-initial-size 2048\nsave \"\"\n") ||
		!strings.Contains(string(b), "\ncf-max-iterations 33\n") {
		t.Errorf("the rewritten file:\n%s", b)
	}

	bad := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(bad, []byte("maxmemory 1mb\nnosuch 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	code, _, stderr := cuckoo(t, "", "serve", "--addr", "127.0.0.1:0", "--dir", data, "--config", bad)
	if want := "cuckoo: serve: --config: " + bad + ":2: unknown setting 'nosuch'"; code != exitError || !strings.HasPrefix(stderr, want) {
		t.Errorf("serve --config with an unknown setting: exit %d, %q; want 2 and %q", code, stderr, want)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("a refused --config created the data directory (%v)", err)
	}
}

// TestServeClientLimits: --client-output-buffer-limit and
// --maxmemory-clients reach the server; the flag's classes override the
// --config file's, whose other classes stand.
func TestServeClientLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it; skipped with -short")
	}
	bin := cuckooBin(t)
	path := filepath.Join(t.TempDir(), "cuckoo.conf")
	src := "client-output-buffer-limit pubsub 1mb 512kb 5 normal 1gb 0 0\nmaxmemory-clients 10mb\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, addr, log := serveProc(t, bin, "--dir", "", "--config", path, "--maxmemory", "1gb", "--maxmemory-clients", "5%",
		"--client-output-buffer-limit", "normal 8mb 4mb 10 replica 512mb 128mb 120")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	got, err := c.ConfigGet(context.Background(), "*").Result()
	if want := "normal 8388608 4194304 10 slave 536870912 134217728 120 pubsub 1048576 524288 5"; err != nil ||
		got["client-output-buffer-limit"] != want || got["maxmemory-clients"] != "5%" {
		t.Errorf("CONFIG GET: client-output-buffer-limit %q, maxmemory-clients %q, %v; want %q and 5%%\n%s",
			got["client-output-buffer-limit"], got["maxmemory-clients"], err, want, log)
	}
}

// TestServeRedisCLIShutdown: redis-cli SHUTDOWN stops a `cuckoo serve`
// process, which exits 0 with its data saved; SHUTDOWN NOSAVE loses nothing
// either (the log holds every write).
func TestServeRedisCLIShutdown(t *testing.T) {
	cli := prereq.Program(t, "redis-cli")
	dir := t.TempDir()
	for _, mode := range []string{"SAVE", "NOSAVE"} {
		cmd, addr, log := serveProc(t, cuckooBin(t), "--dir", dir)
		host, port, _ := net.SplitHostPort(addr)
		rc := func(args ...string) string {
			out, _ := exec.Command(cli, append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
			return strings.TrimSpace(string(out))
		}
		if got := rc("CF.ADD", "k", mode); got != "1" {
			t.Fatalf("CF.ADD: %q", got)
		}
		rc("SHUTDOWN", mode)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("SHUTDOWN %s: the process exited with %v\n%s", mode, err, log)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("SHUTDOWN %s: the process is still running\n%s", mode, log)
		}
	}
	cmd, addr, _ := serveProc(t, cuckooBin(t), "--dir", dir)
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command(cli, "-h", host, "-p", port, "CF.MEXISTS", "k", "SAVE", "NOSAVE").CombinedOutput()
	if err != nil || strings.Fields(string(out))[0] != "1" || strings.Fields(string(out))[1] != "1" {
		t.Errorf("after the restarts: %q %v", out, err)
	}
}

// TestServeACLFile: --aclfile names the users' file: ACL SAVE writes it, a
// restarted server loads it, and its users are what AUTH checks.
func TestServeACLFile(t *testing.T) {
	cli := prereq.Program(t, "redis-cli")
	file := filepath.Join(t.TempDir(), "users.acl")
	run := func(addr string, args ...string) string {
		host, port, _ := net.SplitHostPort(addr)
		out, _ := exec.Command(cli, append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	cmd, addr, _ := serveProc(t, cuckooBin(t), "--dir", "", "--aclfile", file)
	host, port, _ := net.SplitHostPort(addr)
	session := func(input string) string {
		c := exec.Command(cli, "-h", host, "-p", port)
		c.Stdin = strings.NewReader(input)
		out, _ := c.CombinedOutput()
		return string(out)
	}
	// One connection: the default user's connections stay authenticated
	// when it is turned off, as in Redis.
	if got := session("ACL SETUSER reader on >s3cret ~* +@read\nACL SETUSER default off\nACL SAVE\n"); got != "OK\nOK\nOK\n" {
		t.Fatalf("setting the users up: %q", got)
	}
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	cmd, addr, _ = serveProc(t, cuckooBin(t), "--dir", "", "--aclfile", file)
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	if got := run(addr, "PING"); !strings.Contains(got, "NOAUTH") {
		t.Errorf("PING as the disabled default user: %q", got)
	}
	host, port, _ = net.SplitHostPort(addr)
	if got := session("AUTH reader s3cret\nCF.ADD k x\n"); !strings.HasPrefix(got, "OK\n") || !strings.Contains(got, "NOPERM") {
		t.Errorf("as reader: %q", got)
	}
}

// TestServeCluster: --cluster-emulated serves a cluster client alone; the
// config file's cluster-enabled yes starts a node of no slots whose id is
// kept in --dir across restarts.
func TestServeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it; skipped with -short")
	}
	bin := cuckooBin(t)
	ctx := context.Background()
	cmd, addr, log := serveProc(t, bin, "--dir", "", "--cluster-emulated")
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}})
	if err := cc.CFAdd(ctx, "k", "x").Err(); err != nil {
		t.Errorf("ClusterClient CF.ADD on --cluster-emulated: %v\n%s", err, log)
	}
	if ok, err := cc.CFExists(ctx, "k", "x").Result(); !ok || err != nil {
		t.Errorf("ClusterClient CF.EXISTS = %v, %v", ok, err)
	}
	cc.Close()
	cmd.Process.Kill()
	cmd.Wait()

	dir := t.TempDir()
	conf := filepath.Join(dir, "cuckoo.conf")
	if err := os.WriteFile(conf, []byte("cluster-enabled yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		cmd, addr, _ := serveProc(t, bin, "--dir", filepath.Join(dir, "data"), "--config", conf)
		c := redis.NewClient(&redis.Options{Addr: addr})
		ids = append(ids, c.ClusterMyID(ctx).Val())
		if info := c.ClusterInfo(ctx).Val(); !strings.Contains(info, "cluster_state:fail\r\n") {
			t.Errorf("CLUSTER INFO of a new node:\n%s", info)
		}
		if err := c.CFAdd(ctx, "k", "x").Err(); err == nil || err.Error() != "CLUSTERDOWN Hash slot not served" {
			t.Errorf("CF.ADD on a node of no slots: %v", err)
		}
		c.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}
	if len(ids[0]) != 40 || ids[0] != ids[1] {
		t.Errorf("node ids across a restart: %q, %q", ids[0], ids[1])
	}
}

// TestServeAddrAndPortDisagree: --addr with one port and --port with
// another is refused, naming both, instead of listening on one of them.
func TestServeAddrAndPortDisagree(t *testing.T) {
	code, _, stderr := cuckoo(t, "", "serve", "--dir", "", "--addr", "127.0.0.1:16430", "--port", "16431")
	if want := "cuckoo: serve: --addr 127.0.0.1:16430 and --port 16431 name two ports"; code != 2 || !strings.HasPrefix(stderr, want) {
		t.Errorf("serve --addr HOST:16430 --port 16431: exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}

// TestServeCPUProfile: --cpuprofile writes a gzipped pprof profile of the
// run when the server stops, by SHUTDOWN or by a signal, and a file that
// cannot be created stops startup with its name.
func TestServeCPUProfile(t *testing.T) {
	dir := t.TempDir()
	for _, stop := range []string{"SHUTDOWN", "SIGTERM"} {
		file := filepath.Join(dir, stop+".pprof")
		cmd, addr, log := serveProc(t, cuckooBin(t), "--dir", filepath.Join(dir, "data"), "--cpuprofile", file)
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		for i := range 1000 {
			if err := rdb.Do(context.Background(), "CF.ADD", "k", i).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if stop == "SHUTDOWN" {
			rdb.Do(context.Background(), "SHUTDOWN", "NOSAVE")
		} else {
			cmd.Process.Signal(syscall.SIGTERM)
		}
		rdb.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", stop, err, log)
		}
		f, err := os.Open(file)
		if err != nil {
			t.Fatalf("%s: %v\n%s", stop, err, log)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: the profile is not gzipped: %v", stop, err)
		}
		body, err := io.ReadAll(zr)
		f.Close()
		if err != nil || len(body) == 0 {
			t.Fatalf("%s: the profile's body: %d bytes, %v", stop, len(body), err)
		}
		// The log is read by a goroutine of its own, which may be a line
		// behind the exit.
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(log.String(), "cpu profile written") {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no log line for the profile:\n%s", stop, log)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	out, err := exec.Command(cuckooBin(t), "serve", "--addr", "127.0.0.1:0", "--dir", filepath.Join(dir, "data"),
		"--cpuprofile", filepath.Join(dir, "missing", "cpu.pprof")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--cpuprofile") || !strings.Contains(string(out), "missing") {
		t.Errorf("a profile in a missing directory: %v\n%s", err, out)
	}
}
