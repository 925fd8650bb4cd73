package redistest

import (
	"os"
	"testing"
)

// Since Redis 8.0, RedisBloom's filters are part of Redis, and a filter
// there DUMPs with Redis 8's RDB version (13) in its payload's footer,
// which Redis 7.0 refuses; the tests that move filters from and to Redis 8
// need a Redis 8 beside Debian's 7.0. Redis 8.6.3's own build, without the
// modules it may bundle, loads RedisBloom 8.6.2 as a module like 7.0 does.

// DefaultRedis8 and DefaultRedis8Module are where Redis 8's redis-server
// and its RedisBloom module are looked for when CUCKOO_REDIS8_SERVER and
// CUCKOO_REDIS8_MODULE are unset: where the project's notes build them.
const (
	DefaultRedis8       = "/tmp/redis8/bin/redis-server"
	DefaultRedis8Module = "/tmp/redis8/redisbloom.so"
)

// Redis8 returns Redis 8's redis-server and RedisBloom module
// ($CUCKOO_REDIS8_SERVER and $CUCKOO_REDIS8_MODULE, else the defaults), or
// "" and the reason a test that needs them skips.
func Redis8() (server, module, why string) {
	server, module = os.Getenv("CUCKOO_REDIS8_SERVER"), os.Getenv("CUCKOO_REDIS8_MODULE")
	if server == "" {
		server = DefaultRedis8
	}
	if module == "" {
		module = DefaultRedis8Module
	}
	for _, p := range []struct{ path, env string }{{server, "CUCKOO_REDIS8_SERVER"}, {module, "CUCKOO_REDIS8_MODULE"}} {
		if _, err := os.Stat(p.path); err != nil {
			return "", "", "no Redis 8 at " + p.path + " (set " + p.env +
				" to Redis 8's redis-server and its RedisBloom module; CI builds neither)"
		}
	}
	return server, module, ""
}

// StartRedis8 starts Redis 8 with RedisBloom's module (Start's settings)
// and returns its address, or skips the test when either is missing.
func StartRedis8(t testing.TB, args ...string) string {
	t.Helper()
	server, module, why := Redis8()
	if server == "" {
		t.Skip(why)
	}
	return startBinary(t, server, append([]string{"--loadmodule", module}, args...)...)
}
