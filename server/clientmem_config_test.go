package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
)

// The settings client-output-buffer-limit and maxmemory-clients: CONFIG
// GET, SET (and its errors), REWRITE, the configuration file, and their Go
// types.

const defaultOutputLimits = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"

// TestClientMemConfigSet: CONFIG GET answers Redis's forms and defaults;
// CONFIG SET changes only the classes it names, takes sizes with units and
// percentages, and refuses bad values with Redis's texts (and the value
// at fault), changing nothing.
func TestClientMemConfigSet(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	get := func(name string) string {
		t.Helper()
		v, err := c.ConfigGet(ctx, name).Result()
		if err != nil {
			t.Fatal(err)
		}
		return v[name]
	}
	if got := get("client-output-buffer-limit"); got != defaultOutputLimits {
		t.Errorf("CONFIG GET client-output-buffer-limit = %q, want %q", got, defaultOutputLimits)
	}
	if got := get("maxmemory-clients"); got != "0" {
		t.Errorf("CONFIG GET maxmemory-clients = %q, want 0", got)
	}
	for _, tc := range []struct{ name, value, want string }{
		{"client-output-buffer-limit", "pubsub 1mb 512kb 10 replica 128MB 32mb 30",
			"normal 0 0 0 slave 134217728 33554432 30 pubsub 1048576 524288 10"},
		{"client-output-buffer-limit", "NORMAL 1gb 0 0 slave 256mb 64mb 60",
			"normal 1073741824 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 10"},
		{"client-output-buffer-limit", "", // no class: nothing changes, as in Redis
			"normal 1073741824 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 10"},
		{"client-output-buffer-limit", "normal 0 0 0 pubsub 32mb 8mb 60", defaultOutputLimits},
		{"maxmemory-clients", "5%", "5%"},
		{"maxmemory-clients", "10mb", "10485760"},
		{"maxmemory-clients", "100%", "100%"},
		{"maxmemory-clients", "0", "0"},
	} {
		if err := c.ConfigSet(ctx, tc.name, tc.value).Err(); err != nil {
			t.Errorf("CONFIG SET %s %q: %v", tc.name, tc.value, err)
		}
		if got := get(tc.name); got != tc.want {
			t.Errorf("after CONFIG SET %s %q: %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
	const pre = "ERR CONFIG SET failed (possibly related to argument '"
	for _, tc := range []struct{ name, value, want string }{
		{"client-output-buffer-limit", "master 1mb 1mb 1", `client-output-buffer-limit') - Invalid client class specified in buffer limit configuration. ("master": want normal, replica or pubsub)`},
		{"client-output-buffer-limit", "normal 1mb 0", `client-output-buffer-limit') - Wrong number of arguments in buffer limit configuration.`},
		{"client-output-buffer-limit", "normal -1 0 0", `client-output-buffer-limit') - Error in hard, soft or soft_seconds setting in buffer limit configuration. ("normal -1 0 0": want sizes such as 32mb and seconds, none negative)`},
		{"client-output-buffer-limit", "normal 1mb lots 0", `client-output-buffer-limit') - Error in hard, soft or soft_seconds setting in buffer limit configuration. ("normal 1mb lots 0": want sizes such as 32mb and seconds, none negative)`},
		{"client-output-buffer-limit", "normal 1mb 1mb -5", `client-output-buffer-limit') - Error in hard, soft or soft_seconds setting in buffer limit configuration. ("normal 1mb 1mb -5": want sizes such as 32mb and seconds, none negative)`},
		{"client-output-buffer-limit", "pubsub 1mb 0 0 normal 1x 0 0", `client-output-buffer-limit') - Error in hard, soft or soft_seconds setting in buffer limit configuration. ("normal 1x 0 0": want sizes such as 32mb and seconds, none negative)`},
		{"maxmemory-clients", "101%", `maxmemory-clients') - percentage argument must be less or equal to 100`},
		{"maxmemory-clients", "-1", `maxmemory-clients') - argument must be a memory or percent value`},
		{"maxmemory-clients", "5.5%", `maxmemory-clients') - argument must be a memory or percent value`},
		{"maxmemory-clients", "lots", `maxmemory-clients') - argument must be a memory or percent value`},
		{"maxmemory-clients", "%", `maxmemory-clients') - argument must be a memory or percent value`},
	} {
		wantErr(t, c.ConfigSet(ctx, tc.name, tc.value).Err(), pre+tc.want)
	}
	if got := get("client-output-buffer-limit"); got != defaultOutputLimits {
		t.Errorf("refused values changed client-output-buffer-limit: %q", got)
	}
	if got := get("maxmemory-clients"); got != "0" {
		t.Errorf("refused values changed maxmemory-clients: %q", got)
	}
}

// TestClientMemConfigFile: the file's lines apply (several lines of
// client-output-buffer-limit, each its classes); CONFIG REWRITE writes one
// line a class where the file had the setting, and maxmemory-clients as
// given; a server started from the rewritten file has the same values; a
// default server's REWRITE adds neither; bad lines name the file and line.
func TestClientMemConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cuckoo.conf")
	orig := "# limits\n" +
		"client-output-buffer-limit pubsub 64mb 16mb 90\n" +
		"maxmemory-clients 5%\n" +
		"client-output-buffer-limit normal 0 0 0 replica 512mb 128mb 120\n"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	var cfg server.Config
	if _, err := server.ReadConfigFile(path, &cfg); err != nil {
		t.Fatal(err)
	}
	ob := cfg.Limits.OutputBuffer
	if cfg.Limits.MaxMemoryClients != -5 || ob.PubSub == nil || *ob.PubSub != (server.OutputLimit{Hard: 64 << 20, Soft: 16 << 20, SoftSeconds: 90}) ||
		ob.Replica == nil || ob.Replica.Hard != 512<<20 || ob.Normal == nil || *ob.Normal != (server.OutputLimit{}) {
		t.Fatalf("ReadConfigFile: %+v, output %v", cfg.Limits, ob)
	}
	_, addr := start(t, cfg)
	c := client(t, addr)
	ctx := context.Background()
	if err := c.ConfigSet(ctx, "client-output-buffer-limit", "normal 10mb 5mb 30").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := "# limits\n" +
		"client-output-buffer-limit normal 10mb 5mb 30\n" +
		"client-output-buffer-limit replica 512mb 128mb 120\n" +
		"client-output-buffer-limit pubsub 64mb 16mb 90\n" +
		"maxmemory-clients 5%\n" +
		"# Generated by CONFIG REWRITE\n" // then port, which the test's listener sets
	if !strings.HasPrefix(string(b), want) {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", b, want)
	}
	var cfg2 server.Config
	if _, err := server.ReadConfigFile(path, &cfg2); err != nil {
		t.Fatal(err)
	}
	_, addr2 := start(t, cfg2)
	got, err := client(t, addr2).ConfigGet(ctx, "*").Result()
	if want := "normal 10485760 5242880 30 slave 536870912 134217728 120 pubsub 67108864 16777216 90"; err != nil ||
		got["client-output-buffer-limit"] != want || got["maxmemory-clients"] != "5%" {
		t.Errorf("a server started from the rewritten file: %q, %q, %v", got["client-output-buffer-limit"], got["maxmemory-clients"], err)
	}

	// A server with the defaults writes neither setting.
	plain := filepath.Join(dir, "plain.conf")
	os.WriteFile(plain, []byte("maxmemory 1gb\n"), 0o644)
	var cfg3 server.Config
	if _, err := server.ReadConfigFile(plain, &cfg3); err != nil {
		t.Fatal(err)
	}
	_, addr3 := start(t, cfg3)
	if err := client(t, addr3).ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(plain); strings.Contains(string(b), "client-output-buffer-limit") || strings.Contains(string(b), "maxmemory-clients") {
		t.Errorf("a default server's rewrite:\n%s", b)
	}

	for _, tc := range []struct{ src, want string }{
		{"maxmemory 1mb\nclient-output-buffer-limit master 1 1 1\n", ":2: client-output-buffer-limit: Invalid client class specified in buffer limit configuration."},
		{"client-output-buffer-limit normal 1mb\n", ":1: client-output-buffer-limit: Wrong number of arguments in buffer limit configuration."},
		{"maxmemory-clients 200%\n", ":1: maxmemory-clients: percentage argument must be less or equal to 100"},
		{"maxmemory-clients 1 2\n", ":1: maxmemory-clients: wrong number of arguments (want one value)"},
	} {
		bad := filepath.Join(dir, "bad.conf")
		os.WriteFile(bad, []byte(tc.src), 0o644)
		var cfg server.Config
		if _, err := server.ReadConfigFile(bad, &cfg); err == nil || !strings.HasPrefix(err.Error(), bad+tc.want) {
			t.Errorf("ReadConfigFile of %q: %v, want %q", tc.src, err, bad+tc.want)
		}
	}
}

// TestOutputBufferLimitsValue: the Go types, which cuckoo serve uses as
// flags: Set names classes (others stay), String writes the classes set
// as redis.conf does, and a bad spec changes nothing.
func TestOutputBufferLimitsValue(t *testing.T) {
	var l server.OutputBufferLimits
	if l.String() != "" {
		t.Errorf("zero OutputBufferLimits: %q", l.String())
	}
	if err := l.Set("slave 1gb 100mb 5"); err != nil {
		t.Fatal(err)
	}
	if err := l.Set("pubsub 1000 0 0"); err != nil {
		t.Fatal(err)
	}
	if got, want := l.String(), "replica 1gb 100mb 5 pubsub 1000 0 0"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if err := l.Set("normal 1mb 0 0 pubsub 1mb 0 x"); err == nil || l.Normal != nil {
		t.Errorf("a bad spec: %v, and Normal %v", err, l.Normal)
	}
	var m server.MemoryOrPercent
	for in, want := range map[string]string{"5%": "5%", "0%": "0", "1kb": "1024", "2": "2"} {
		if err := m.Set(in); err != nil || m.String() != want {
			t.Errorf("MemoryOrPercent.Set(%q): %v, String %q; want %q", in, err, m.String(), want)
		}
	}
	for _, in := range []string{"", "+5%", "-5%", "5 %", "x%"} {
		if err := m.Set(in); err == nil {
			t.Errorf("MemoryOrPercent.Set(%q) accepted", in)
		}
	}
}

// TestClientMemResetstat: CONFIG RESETSTAT zeroes evicted_clients and the
// disconnection counters, and INFO has every field this file's tests read.
func TestClientMemResetstat(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	c.ConfigSet(ctx, "client-output-buffer-limit", "normal 64kb 0 0")
	big := client(t, addr)
	big.Echo(ctx, strings.Repeat("x", 64<<10)) // a reply past 64 KiB: closed
	if got := infoField(t, c, "client_output_buffer_limit_disconnections"); got != 1 {
		t.Errorf("client_output_buffer_limit_disconnections %d, want 1", got)
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"evicted_clients", "client_output_buffer_limit_disconnections", "client_query_buffer_limit_disconnections"} {
		if got := infoField(t, c, f); got != 0 {
			t.Errorf("%s %d after CONFIG RESETSTAT", f, got)
		}
	}
	if got := infoField(t, c, "mem_clients_slaves"); got != 0 {
		t.Errorf("mem_clients_slaves %d with no replica", got)
	}
	if got := infoField(t, c, "mem_clients_normal"); got <= 0 {
		t.Errorf("mem_clients_normal %d with two clients", got)
	}
}
