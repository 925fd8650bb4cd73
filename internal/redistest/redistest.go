// Package redistest starts the real Redis that tests compare against:
// redis-server on a loopback port the OS picked, with RedisBloom's module
// when one was built, stopped by its process id when the test ends and
// killed with the test process if that dies first. Nothing here is for use
// outside tests.
package redistest

import (
	"bufio"
	"cmp"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/prereq"
)

// DefaultModule is where RedisBloom's module (2.6, for Debian's Redis
// 7.0) is looked for when CUCKOO_REDISBLOOM_MODULE is unset: where
// scripts/build-redis-peers builds it.
const DefaultModule = "/tmp/redisbloom-build/redisbloom.so"

// RedisBloomModule returns the RedisBloom module to test against
// ($CUCKOO_REDISBLOOM_MODULE, else DefaultModule), or "" and the reason a
// test that needs it skips.
func RedisBloomModule() (path, why string) {
	path = os.Getenv("CUCKOO_REDISBLOOM_MODULE")
	if path == "" {
		path = DefaultModule
	}
	if !Installed() {
		return "", notInstalled
	}
	if _, err := os.Stat(path); err != nil {
		return "", "no RedisBloom module at " + path +
			" (set CUCKOO_REDISBLOOM_MODULE, or build one from a RedisBloom v2.6.28 checkout: scripts/build-redis-peers redisbloom SRC)"
	}
	return path, ""
}

const notInstalled = "redis-server is not installed (Debian package redis-server; scripts/test-prereqs installs it)"

// Installed reports whether redis-server is on the PATH.
func Installed() bool {
	_, err := exec.LookPath("redis-server")
	return err == nil
}

// StartRedisBloom starts redis-server with RedisBloom's module and returns
// its address, or skips the test when either is missing.
func StartRedisBloom(t testing.TB) string {
	t.Helper()
	module, why := RedisBloomModule()
	if module == "" {
		t.Skip(why)
	}
	return Start(t, "--loadmodule", module)
}

// Since Redis 8.0, RedisBloom's filters are part of Redis, and a filter
// there DUMPs with Redis 8's RDB version (13) in its payload's footer,
// which Redis 7.0 refuses: the tests that compare with Redis 8, or move
// filters from and to it, need a Redis 8 beside Debian's 7.0. Its
// defaults are where scripts/build-redis-peers builds redis-server 8.6.3
// and RedisBloom 8.6.2 (a build that does not embed the module, so it is
// loaded as 2.6's is).
const (
	DefaultRedis8       = "/tmp/redis8/bin/redis-server"
	DefaultRedis8Module = "/tmp/redis8/redisbloom.so"
)

// Redis8 returns redis-server 8 ($CUCKOO_REDIS8_SERVER, else
// DefaultRedis8) and its RedisBloom module ($CUCKOO_REDIS8_MODULE, else
// DefaultRedis8Module), or "" and the reason a test that needs them skips.
func Redis8() (server, module, why string) {
	server = cmp.Or(os.Getenv("CUCKOO_REDIS8_SERVER"), DefaultRedis8)
	module = cmp.Or(os.Getenv("CUCKOO_REDIS8_MODULE"), DefaultRedis8Module)
	for _, p := range []string{server, module} {
		if _, err := os.Stat(p); err != nil {
			return "", "", "no Redis 8 at " + p + " (set CUCKOO_REDIS8_SERVER and CUCKOO_REDIS8_MODULE, or build them from Redis 8.6.3's and RedisBloom v8.6.2's sources: scripts/build-redis-peers redis SRC, then scripts/build-redis-peers redisbloom SRC /tmp/redis8)"
		}
	}
	return server, module, ""
}

// StartRedis8 starts redis-server 8 with RedisBloom 8's module (Redis8)
// and the extra arguments given, and returns its address, or skips the
// test when either is missing.
func StartRedis8(t testing.TB, args ...string) string {
	t.Helper()
	server, module, why := Redis8()
	if server == "" {
		t.Skip(why)
	}
	return StartAt(t, server, append([]string{"--loadmodule", module}, args...)...)
}

// Start starts redis-server with no persistence and the extra arguments
// given, waits until it accepts connections and returns its address. It
// skips the test when redis-server is not installed, and fails it, with
// the server's log, when the server exits before it is ready (a module it
// cannot load, an argument it refuses).
func Start(t testing.TB, args ...string) string {
	t.Helper()
	path := prereq.Program(t, "redis-server")
	return StartAt(t, path, args...)
}

// StartAt is Start with the redis-server at path.
func StartAt(t testing.TB, path string, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command(path, append([]string{"--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir()}, args...)...)
	DieWithTest(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Redis logs this line once it listens.
	var log strings.Builder
	sc := bufio.NewScanner(out)
	for !strings.Contains(log.String(), "Ready to accept connections") {
		if !sc.Scan() {
			t.Fatalf("redis-server exited before it was ready:\n%s", log.String())
		}
		log.WriteString(sc.Text() + "\n")
	}
	go io.Copy(io.Discard, out) // keep the log pipe drained
	return net.JoinHostPort("127.0.0.1", port)
}
