package server_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// protocols runs f once with RESP2 and once with RESP3 (go-redis's HELLO 3).
func protocols(t *testing.T, f func(t *testing.T, proto int)) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("resp=%d", proto), func(t *testing.T) { f(t, proto) })
	}
}

func withProto(p int) func(*redis.Options) { return func(o *redis.Options) { o.Protocol = p } }

func TestConfigGet(t *testing.T) {
	protocols(t, func(t *testing.T, proto int) {
		_, addr := start(t, server.Config{MaxMemory: 100 << 20, RequirePass: "pw",
			Limits: server.Limits{MaxClients: 50}})
		c := client(t, addr, withProto(proto), func(o *redis.Options) { o.Password = "pw" })
		ctx := context.Background()
		got, err := c.ConfigGet(ctx, "maxmemory").Result()
		if err != nil || len(got) != 1 || got["maxmemory"] != "104857600" {
			t.Errorf("CONFIG GET maxmemory = %v, %v", got, err)
		}
		got, err = c.ConfigGet(ctx, "CF-*").Result()
		want := map[string]string{"cf-bucket-size": "2", "cf-initial-size": "1024", "cf-expansion-factor": "1",
			"cf-layout": "cuckoo", "cf-max-expansions": "32", "cf-max-iterations": "20"}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("CONFIG GET CF-* = %v, %v; want %v", got, err, want)
		}
		// Several patterns; a setting matched twice is listed once.
		m, err := c.ConfigGet(ctx, "max*").Result()
		if err != nil || len(m) != 6 || m["maxclients"] != "50" || m["maxmemory-clients"] != "0" || m["max-filter-memory"] != "0" || m["max-item-size"] != "65536" {
			t.Errorf("CONFIG GET max* = %v, %v", m, err)
		}
		raw, err := c.Do(ctx, "CONFIG", "GET", "max*", "maxclients", "appendonly", "databases", "nosuch").Result()
		n := 0
		switch r := raw.(type) {
		case []any:
			n = len(r) / 2
		case map[any]any:
			n = len(r)
		}
		if err != nil || n != 8 {
			t.Errorf("CONFIG GET max* maxclients appendonly databases nosuch = %v (%d settings), %v; want 8", raw, n, err)
		}
		all, err := c.ConfigGet(ctx, "*").Result()
		if err != nil || all["appendonly"] != "no" || all["databases"] != "1" || all["requirepass"] != "pw" ||
			all["save"] != "3600 1 300 100 60 10000" || all["bind"] != "127.0.0.1" || all["port"] == "" {
			t.Errorf("CONFIG GET * = %v, %v", all, err)
		}
		if m, err := c.ConfigGet(ctx, "nosuch*").Result(); err != nil || len(m) != 0 {
			t.Errorf("CONFIG GET nosuch* = %v, %v; want empty", m, err)
		}
	})
}

func TestConfigSetTakesEffect(t *testing.T) {
	protocols(t, func(t *testing.T, proto int) {
		_, addr := start(t, server.Config{})
		c := client(t, addr, withProto(proto))
		ctx := context.Background()
		set := func(name, value string) {
			t.Helper()
			if err := c.ConfigSet(ctx, name, value).Err(); err != nil {
				t.Fatalf("CONFIG SET %s %s: %v", name, value, err)
			}
			if got := c.ConfigGet(ctx, name).Val()[name]; got == "" && value != "" {
				t.Errorf("CONFIG GET %s after SET: empty", name)
			}
		}

		// cf-*: a filter CF.ADD creates takes the defaults in force.
		set("cf-initial-size", "5000")
		set("cf-max-iterations", "77")
		set("cf-bucket-size", "2")
		if err := c.CFAdd(ctx, "f", "x").Err(); err != nil {
			t.Fatal(err)
		}
		info, err := c.CFInfo(ctx, "f").Result()
		if err != nil || info.BucketSize != 2 || info.MaxIteration != 77 {
			t.Errorf("CF.INFO after CONFIG SET cf-*: %+v, %v", info, err)
		}
		set("cf-initial-size", "1024")
		if err := c.CFAdd(ctx, "g", "x").Err(); err != nil {
			t.Fatal(err)
		}
		small, _ := c.CFInfo(ctx, "g").Result()
		if small.NumBuckets >= info.NumBuckets {
			t.Errorf("cf-initial-size 5000 built %d buckets, 1024 built %d", info.NumBuckets, small.NumBuckets)
		}

		// maxmemory: a reservation past it is refused, then allowed.
		set("maxmemory", "1mb")
		if got := c.ConfigGet(ctx, "maxmemory").Val()["maxmemory"]; got != "1048576" {
			t.Errorf("CONFIG GET maxmemory = %q, want 1048576", got)
		}
		err = c.CFReserve(ctx, "big", 10_000_000).Err()
		if err == nil || !strings.HasPrefix(err.Error(), "ERR Insufficient memory") {
			t.Errorf("CF.RESERVE past maxmemory 1mb: %v", err)
		}
		set("maxmemory", "0")
		if err := c.CFReserve(ctx, "big", 10_000_000).Err(); err != nil {
			t.Errorf("CF.RESERVE with maxmemory 0: %v", err)
		}

		// requirepass: new connections must AUTH; this one stays in, as in Redis.
		set("requirepass", "s3cret")
		if err := c.Ping(ctx).Err(); err != nil {
			t.Errorf("PING on the connection that set the password: %v", err)
		}
		other := client(t, addr, withProto(2))
		if err := other.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
			t.Errorf("PING without AUTH after CONFIG SET requirepass: %v", err)
		}
		authed := client(t, addr, withProto(proto), func(o *redis.Options) { o.Password = "s3cret" })
		if err := authed.Ping(ctx).Err(); err != nil {
			t.Errorf("PING with the new password: %v", err)
		}
		set("requirepass", "")
		if err := client(t, addr).Ping(ctx).Err(); err != nil {
			t.Errorf("PING after the password is cleared: %v", err)
		}

		// maxclients: the next connection past it is refused.
		set("maxclients", "1")
		extra := client(t, addr)
		if err := extra.Ping(ctx).Err(); err == nil { // the error, or a broken pipe if the close came first
			t.Errorf("a connection past maxclients 1: %v", err)
		}
		set("maxclients", "10000")

		// timeout, proto-max-bulk-len, client-query-buffer-limit: read back.
		set("timeout", "300")
		set("proto-max-bulk-len", "2mb")
		set("client-query-buffer-limit", "1gb")
		got, _ := c.Do(ctx, "CONFIG", "GET", "timeout", "proto-*", "client-query-*").Result()
		if want := "[timeout 300 proto-max-bulk-len 2097152 client-query-buffer-limit 1073741824]"; proto == 2 && fmt.Sprint(got) != want {
			t.Errorf("CONFIG GET in RESP2 = %v, want the flat array %v", got, want)
		}
		if want := "map[client-query-buffer-limit:1073741824 proto-max-bulk-len:2097152 timeout:300]"; proto == 3 && fmt.Sprint(got) != want {
			t.Errorf("CONFIG GET in RESP3 = %v, want the map %v", got, want)
		}
		// A connection made after proto-max-bulk-len 2mb may not send more.
		if err := client(t, addr).Do(ctx, "ECHO", strings.Repeat("x", 2<<20+1)).Err(); err == nil {
			t.Error("an argument past proto-max-bulk-len 2mb was accepted")
		}
	})
}

func TestConfigSetErrors(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"nosuch", "1"}, "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"},
		{[]any{"dir", "/tmp"}, "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set immutable config"},
		{[]any{"port", "1"}, "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config"},
		{[]any{"maxmemory", "lots"}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"},
		{[]any{"maxclients", "x"}, "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer"},
		{[]any{"maxmemory", "1", "MAXMEMORY", "2"}, "ERR CONFIG SET failed (possibly related to argument 'MAXMEMORY') - duplicate parameter"},
		{[]any{"maxmemory", "1", "timeout"}, "ERR wrong number of arguments for 'config|set' command"},
		{[]any{"maxmemory"}, "ERR wrong number of arguments for 'config|set' command"},
	} {
		err := c.Do(ctx, append([]any{"CONFIG", "SET"}, tc.args...)...).Err()
		wantErr(t, err, tc.want)
	}
	wantErr(t, c.Do(ctx, "CONFIG", "REWRITE").Err(), "ERR The server is running without a config file")
	// RedisBloom 8's cf-* settings: its integers, ranges and texts.
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"cf-bucket-size", "256"}, "Value for `cf-bucket-size` must be in the range [1, 255]"},
		{[]any{"cf-bucket-size", "+1"}, "Invalid value for `cf-bucket-size`"},
		{[]any{"cf-initial-size", "3"}, "Value for `cf-initial-size` must be in the range [4, 1073741824]"},
		{[]any{"cf-initial-size", "1073741825"}, "Value for `cf-initial-size` must be in the range [4, 1073741824]"},
		{[]any{"cf-initial-size", "010"}, "Invalid value for `cf-initial-size`"},
		{[]any{"cf-max-iterations", "0"}, "Value for `cf-max-iterations` must be in the range [1, 65535]"},
		{[]any{"cf-expansion-factor", "32769"}, "Value for `cf-expansion-factor` must be in the range [0, 32768]"},
		{[]any{"cf-max-expansions", "65537"}, "Value for `cf-max-expansions` must be in the range [1, 65536]"},
		{[]any{"cf-max-expansions", "x"}, "Invalid value for `cf-max-expansions`"},
		// Each bound follows the other setting, as given in order.
		{[]any{"cf-bucket-size", "100", "cf-initial-size", "100"}, "Value for `cf-initial-size` must be in the range [200, 1073741824]"},
		{[]any{"cf-initial-size", "10", "cf-bucket-size", "6"}, "Value for `cf-bucket-size` must be in the range [1, 5]"},
	} {
		err := c.Do(ctx, append([]any{"CONFIG", "SET"}, tc.args...)...).Err()
		name := tc.args[len(tc.args)-2]
		wantErr(t, err, fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, tc.want))
	}
	// Under 2.6, which has no such settings: the table's ranges, Redis's
	// texts.
	if err := c.Do(ctx, "CONFIG", "SET", "redisbloom-compat", "2.6").Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"cf-bucket-size", "256"}, "argument must be between 1 and 255 inclusive"},
		{[]any{"cf-initial-size", "4294967297"}, "argument must be between 4 and 4294967296 inclusive"},
		{[]any{"cf-max-iterations", "0"}, "argument must be between 1 and 65535 inclusive"},
		{[]any{"cf-expansion-factor", "32769"}, "argument must be between 0 and 32768 inclusive"},
		{[]any{"cf-max-expansions", "65537"}, "argument must be between 1 and 65536 inclusive"},
		{[]any{"cf-bucket-size", "100", "cf-initial-size", "100"}, "cf-initial-size must be at least twice cf-bucket-size (200)"},
		{[]any{"redisbloom-compat", "7.0"}, "argument(s) must be one of the following: 8.6, 2.6"},
	} {
		err := c.Do(ctx, append([]any{"CONFIG", "SET"}, tc.args...)...).Err()
		name := tc.args[len(tc.args)-2]
		wantErr(t, err, fmt.Sprintf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, tc.want))
	}
	if err := c.Do(ctx, "CONFIG", "SET", "cf-initial-size", "4294967296").Err(); err != nil {
		t.Errorf("CONFIG SET cf-initial-size 2^32 under 2.6: %v", err)
	}
	wantErr(t, c.Do(ctx, "CONFIG", "NOSUCH").Err(), "ERR unknown subcommand 'NOSUCH'. Try CONFIG HELP.")
	if help, err := c.Do(ctx, "CONFIG", "HELP").StringSlice(); err != nil || len(help) < 5 || !strings.HasPrefix(help[0], "CONFIG <subcommand>") {
		t.Errorf("CONFIG HELP = %q, %v", help, err)
	}
}

// TestConfigSetAtomic: a CONFIG SET with one bad value changes nothing, the
// settings before it included.
func TestConfigSetAtomic(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	before := c.ConfigGet(ctx, "*").Val()
	for _, bad := range [][]any{
		{"maxmemory", "1mb", "cf-initial-size", "2048", "timeout", "-1"},
		{"requirepass", "x", "maxclients", "5", "appendfsync", "always"},
		{"cf-max-iterations", "9", "nosuch", "1"},
	} {
		if err := c.Do(ctx, append([]any{"CONFIG", "SET"}, bad...)...).Err(); err == nil {
			t.Errorf("CONFIG SET %v succeeded", bad)
		}
		if after := c.ConfigGet(ctx, "*").Val(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("CONFIG SET %v changed the settings:\n%v\nwas\n%v", bad, after, before)
		}
	}
	if err := c.Do(ctx, "CONFIG", "SET", "maxmemory", "1mb", "cf-initial-size", "2048", "timeout", "5").Err(); err != nil {
		t.Fatal(err)
	}
	got := c.ConfigGet(ctx, "*").Val()
	if got["maxmemory"] != "1048576" || got["cf-initial-size"] != "2048" || got["timeout"] != "5" {
		t.Errorf("after a good multi-SET: %v", got)
	}
}

func TestConfigResetstat(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	c.CFAdd(ctx, "k", "a")
	c.CFExists(ctx, "k", "a")
	c.CFExists(ctx, "k", "b")
	c.Do(ctx, "NOSUCH")
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	info := c.Info(ctx, "stats").Val()
	for _, f := range []string{"keyspace_hits:0\r", "keyspace_misses:0\r", "total_error_replies:0\r", "total_connections_received:0\r", "total_commands_processed:1\r"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO stats after CONFIG RESETSTAT lacks %q:\n%s", f, info)
		}
	}
}

// TestConfigRewrite: REWRITE keeps the file's comments and order, replaces
// the lines of the settings changed, appends those it lacked; a server
// started from the file has the new values.
func TestConfigRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cuckoo.conf")
	orig := "# cuckoo test configuration\n" +
		"maxmemory 10mb   \n" +
		"\n" +
		"# the filters\n" +
		"cf-initial-size 4096\n" +
		"cf-max-iterations 30\n" +
		"cf-max-iterations 40\n" +
		"save \"\"\n"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{}
	if _, err := server.ReadConfigFile(path, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxMemory != 10<<20 || cfg.FilterDefaults.InitialSize != 4096 || cfg.FilterDefaults.MaxIterations != 40 ||
		cfg.SnapshotLogSize != -1 || cfg.ConfigFile != path {
		t.Fatalf("ReadConfigFile: %+v", cfg)
	}
	_, addr := start(t, cfg)
	c := client(t, addr)
	ctx := context.Background()
	if err := c.Do(ctx, "CONFIG", "SET", "maxmemory", "2gb", "cf-max-iterations", "50", "timeout", "60", "requirepass", "a \"b\"").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	text := string(b)
	wantPrefix := "# cuckoo test configuration\n" +
		"maxmemory 2gb\n" +
		"\n" +
		"# the filters\n" +
		"cf-initial-size 4096\n" +
		"cf-max-iterations 50\n" +
		"save \"\"\n" +
		"# Generated by CONFIG REWRITE\n"
	if !strings.HasPrefix(text, wantPrefix) || !strings.Contains(text, "\ntimeout 60\n") ||
		!strings.Contains(text, "\nrequirepass \"a \\\"b\\\"\"\n") || strings.Contains(text, "cf-bucket-size") {
		t.Errorf("rewritten file:\n%s\nwant it to start with:\n%s", text, wantPrefix)
	}
	// A second rewrite with nothing changed leaves the file as it is.
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); string(again) != text {
		t.Errorf("a second rewrite changed the file:\n%s", again)
	}
	cfg2 := server.Config{}
	if _, err := server.ReadConfigFile(path, &cfg2); err != nil {
		t.Fatal(err)
	}
	_, addr2 := start(t, cfg2)
	c2 := client(t, addr2, func(o *redis.Options) { o.Password = `a "b"` })
	got, err := c2.ConfigGet(ctx, "*").Result()
	if err != nil || got["maxmemory"] != "2147483648" || got["cf-max-iterations"] != "50" || got["timeout"] != "60" ||
		got["cf-initial-size"] != "4096" || got["save"] != "" || got["requirepass"] != `a "b"` {
		t.Errorf("a server started from the rewritten file: %v, %v", got, err)
	}
	// The file is gone: REWRITE creates it.
	os.Remove(path)
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		t.Errorf("REWRITE of a removed file: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}

func TestConfigReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ src, want string }{
		{"maxmemory 1mb\nnosuch 5\n", ":2: unknown setting 'nosuch'"},
		{"# c\nmaxmemory lots\n", ":2: maxmemory: argument must be a memory value"},
		{"maxmemory 1 2\n", ":1: maxmemory: wrong number of arguments (want one value)"},
		{"appendfsync sometimes\n", ":1: appendfsync: argument(s) must be one of the following: always, everysec, no"},
		{"appendonly no\n", ":1: appendonly: every write is logged when dir is set"},
		{"databases 16\n", ":1: databases: argument must be between 1 and 1 inclusive"},
		{"save 900\n", ":1: save: Invalid save parameters"},
		{"bind 127.0.0.1 ::1\n", ":1: bind: this server listens on one address"},
		{"port 70000\n", ":1: port: argument must be between 0 and 65535 inclusive"},
		{"requirepass \"open\n", ":1: unbalanced quotes"},
		{"include other.conf\n", ":1: include is not supported"},
		{"cf-bucket-size 10\ncf-initial-size 8\n", ": cf-initial-size: cf-initial-size must be at least twice cf-bucket-size (20)"},
	} {
		path := filepath.Join(dir, "c.conf")
		os.WriteFile(path, []byte(tc.src), 0o644)
		cfg := server.Config{MaxMemory: 7}
		_, err := server.ReadConfigFile(path, &cfg)
		if err == nil || !strings.HasPrefix(err.Error(), path+tc.want) {
			t.Errorf("ReadConfigFile(%q) = %v, want %q", tc.src, err, path+tc.want)
		}
		if cfg.MaxMemory != 7 {
			t.Errorf("a failed ReadConfigFile changed cfg: %+v", cfg)
		}
	}
	if _, err := server.ReadConfigFile(filepath.Join(dir, "missing.conf"), &server.Config{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadConfigFile of a missing file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "ok.conf"), []byte("bind 0.0.0.0\nport 7000\nappendonly yes\nsave 900 1\n"), 0o644)
	l, err := server.ReadConfigFile(filepath.Join(dir, "ok.conf"), &server.Config{SnapshotLogSize: -1})
	if err != nil || l.Bind != "0.0.0.0" || l.Port != 7000 {
		t.Errorf("ReadConfigFile's listen address: %+v, %v", l, err)
	}
}

// TestConfigSetRace: CONFIG SET of every runtime setting while clients run
// commands that read them (run with -race).
func TestConfigSetRace(t *testing.T) {
	_, addr := start(t, server.Config{})
	ctx := context.Background()
	done := make(chan struct{})
	errs := make(chan error, 4)
	for i := range 3 {
		c := client(t, addr)
		go func() {
			defer func() { errs <- nil }()
			for j := 0; ; j++ {
				select {
				case <-done:
					return
				default:
				}
				c.CFAdd(ctx, fmt.Sprintf("k%d-%d", i, j%50), "x")
				c.ConfigGet(ctx, "*")
			}
		}()
	}
	c := client(t, addr)
	for i := range 200 {
		err := c.Do(ctx, "CONFIG", "SET", "maxmemory", fmt.Sprint(1<<20+i), "cf-initial-size", fmt.Sprint(1024+i),
			"timeout", fmt.Sprint(100+i%3), "maxclients", fmt.Sprint(100+i), "proto-max-bulk-len", fmt.Sprint(1<<20+i),
			"client-query-buffer-limit", fmt.Sprint(1<<20+i), "requirepass", "").Err()
		if err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 3 {
		<-errs
	}
}

// TestConfigItemAndArgLimits: max-item-size and max-args, the limits an
// operator sets on items and requests, apply at runtime (max-args to the
// connections made after the change) and refuse before anything changes.
func TestConfigItemAndArgLimits(t *testing.T) {
	ctx := context.Background()
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	if err := c.ConfigSet(ctx, "max-item-size", "10").Err(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, c.CFAdd(ctx, "k", "eleven bytes").Err(), "ERR argument of 12 bytes exceeds the item size limit of 10 bytes")
	if c.Exists(ctx, "k").Val() != 0 {
		t.Error("a refused CF.ADD created its key")
	}
	if err := c.CFAdd(ctx, "k", "ten bytes!").Err(); err != nil {
		t.Errorf("an item at the limit: %v", err)
	}
	if err := c.ConfigSet(ctx, "max-args", "4").Err(); err != nil {
		t.Fatal(err)
	}
	d := client(t, addr, func(o *redis.Options) { o.Protocol = 2 })
	if err := d.CFMExists(ctx, "k", "a", "b").Err(); err != nil {
		t.Errorf("4 arguments: %v", err)
	}
	if err := d.CFMExists(ctx, "k", "a", "b", "c").Err(); err == nil || !strings.Contains(err.Error(), "Protocol error") {
		t.Errorf("5 arguments with max-args 4: %v", err)
	}
	if got := c.ConfigGet(ctx, "max-*").Val(); got["max-item-size"] != "10" || got["max-args"] != "4" {
		t.Errorf("CONFIG GET max-*: %v", got)
	}
}

// TestConfigRewriteEmulatedCluster: CONFIG REWRITE of a node emulating a
// cluster alone writes cluster-emulated too, so that the file starts the
// same node again, not a cluster node owning no slots.
func TestConfigRewriteEmulatedCluster(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cuckoo.conf")
	_, addr := start(t, server.Config{ConfigFile: file, ClusterEnabled: true, ClusterEmulated: true})
	if r := resptest.Dial(t, addr).Do("CONFIG", "REWRITE"); r != "OK" {
		t.Fatalf("CONFIG REWRITE = %v", r)
	}
	var cfg server.Config
	if _, err := server.ReadConfigFile(file, &cfg); err != nil {
		t.Fatal(err)
	}
	if !cfg.ClusterEmulated {
		b, _ := os.ReadFile(file)
		t.Errorf("the rewritten file does not start an emulated cluster node:\n%s", b)
	}
}

// TestConfigSetExpansionZero: CONFIG SET cf-expansion-factor 0 makes
// filters that never grow, as RedisBloom's do; 0 is a value, not "unset".
func TestConfigSetExpansionZero(t *testing.T) {
	ctx := context.Background()
	_, addr := start(t, rbConfig(""))
	c := client(t, addr)
	if err := c.ConfigSet(ctx, "cf-expansion-factor", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.CFReserve(ctx, "k", 100).Err(); err != nil {
		t.Fatal(err)
	}
	if info, err := c.CFInfo(ctx, "k").Result(); err != nil || info.ExpansionRate != 0 {
		t.Errorf("CF.INFO after CONFIG SET cf-expansion-factor 0: %+v, %v; want expansion 0", info, err)
	}
}
