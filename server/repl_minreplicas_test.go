package server_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/redistest"
	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

const noReplicas = "NOREPLICAS Not enough good replicas to write."

// infoOrder is the names of INFO section's fields, in order.
func infoOrder(t *testing.T, c *redis.Client, section string) []string {
	t.Helper()
	text, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(text, "\r\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			names = append(names, k)
		}
	}
	return names
}

// minReplicasSteps are requests and the replies Redis 7.0.15 gives them on
// a primary with no replica, checked against it by
// TestMinReplicasAsRedis. "other:" sends the request on a second
// connection. DEL and EXPIRE are writes in both servers.
var minReplicasSteps = []struct {
	args string
	want string
}{
	{"CONFIG SET min-replicas-to-write 1", "OK"},
	{"DEL k", "-" + noReplicas},
	{"EXPIRE k 10", "-" + noReplicas},
	{"EXISTS k", "0"},
	{"PUBLISH ch x", "0"}, // not a write
	// Inside MULTI: refused when queued, so EXEC aborts.
	{"MULTI", "OK"},
	{"DEL k", "-" + noReplicas},
	{"EXISTS k", "QUEUED"},
	{"EXEC", "-EXECABORT Transaction discarded because of previous errors."},
	// A queue of reads runs.
	{"MULTI", "OK"},
	{"EXISTS k", "QUEUED"},
	{"EXEC", "[0]"},
	// Queued while writes were allowed, refused at EXEC as a whole, and
	// discarded; NOREPLICAS comes before the queue's own errors.
	{"CONFIG SET min-replicas-to-write 0", "OK"},
	{"MULTI", "OK"},
	{"DEL k", "QUEUED"},
	{"NOPE", "-ERR unknown command 'NOPE', with args beginning with: "},
	{"other:CONFIG SET min-replicas-to-write 1", "OK"},
	{"EXEC", "-EXECABORT Transaction discarded because of: " + noReplicas},
	{"EXEC", "-ERR EXEC without MULTI"},
	{"CONFIG SET min-replicas-to-write 0", "OK"},
	{"MULTI", "OK"},
	{"DEL k", "QUEUED"},
	{"other:CONFIG SET min-replicas-to-write 1", "OK"},
	{"EXEC", "-EXECABORT Transaction discarded because of: " + noReplicas},
	// min-replicas-max-lag 0 turns the refusal off.
	{"CONFIG SET min-replicas-max-lag 0", "OK"},
	{"DEL k", "0"},
	{"CONFIG SET min-slaves-max-lag 10", "OK"},
	{"DEL k", "-" + noReplicas},
	{"CONFIG SET min-slaves-to-write 0", "OK"},
	{"DEL k", "0"},
	// The settings' values and Redis's refusals.
	{"CONFIG SET min-replicas-to-write -1", "-ERR CONFIG SET failed (possibly related to argument 'min-replicas-to-write') - argument must be between 0 and 2147483647 inclusive"},
	{"CONFIG SET min-replicas-to-write 2147483648", "-ERR CONFIG SET failed (possibly related to argument 'min-replicas-to-write') - argument must be between 0 and 2147483647 inclusive"},
	{"CONFIG SET min-replicas-to-write abc", "-ERR CONFIG SET failed (possibly related to argument 'min-replicas-to-write') - argument couldn't be parsed into an integer"},
	{"CONFIG SET min-replicas-to-write 1.5", "-ERR CONFIG SET failed (possibly related to argument 'min-replicas-to-write') - argument couldn't be parsed into an integer"},
	{"CONFIG SET MIN-SLAVES-MAX-LAG abc", "-ERR CONFIG SET failed (possibly related to argument 'min-slaves-max-lag') - argument couldn't be parsed into an integer"},
	{"CONFIG SET min-replicas-max-lag -1", "-ERR CONFIG SET failed (possibly related to argument 'min-replicas-max-lag') - argument must be between 0 and 2147483647 inclusive"},
	{"CONFIG SET min-slaves-to-write 1 min-slaves-to-write 2", "-ERR CONFIG SET failed (possibly related to argument 'min-slaves-to-write') - duplicate parameter"},
	{"CONFIG SET min-replicas-to-write 3 min-replicas-max-lag -1", "-ERR CONFIG SET failed (possibly related to argument 'min-replicas-max-lag') - argument must be between 0 and 2147483647 inclusive"},
	{"CONFIG GET min-replicas-to-write", "[min-replicas-to-write 0]"},
	{"CONFIG SET min-replicas-to-write 2147483647 min-replicas-max-lag 2147483647", "OK"},
	{"CONFIG GET min-slaves-to-write", "[min-slaves-to-write 2147483647]"},
	{"CONFIG GET min-slaves-max-lag", "[min-slaves-max-lag 2147483647]"},
	// Both names in one CONFIG SET: not a duplicate, the later wins.
	{"CONFIG SET min-replicas-to-write 1 min-slaves-to-write 2", "OK"},
	{"CONFIG GET min-replicas-to-write", "[min-replicas-to-write 2]"},
	{"CONFIG SET min-replicas-to-write 0 min-replicas-max-lag 10", "OK"},
}

// TestMinReplicasAsRedis: the requests above answer the replies above,
// here and, where redis-server is installed, on a real Redis, so that the
// replies are Redis's; and CONFIG GET of a glob lists both names of each
// setting, as Redis's does.
func TestMinReplicasAsRedis(t *testing.T) {
	_, addr := start(t, server.Config{})
	targets := map[string]string{"cuckoo serve": addr}
	if redistest.Installed() {
		targets["redis-server"] = redistest.Start(t)
	}
	for name, a := range targets {
		c, other := resptest.Dial(t, a), resptest.Dial(t, a)
		for _, step := range minReplicasSteps {
			conn, args := c, step.args
			if rest, ok := strings.CutPrefix(args, "other:"); ok {
				conn, args = other, rest
			}
			if got := resptest.Sprint(conn.Do(resptest.Args(strings.Fields(args)...)...)); got != step.want {
				t.Errorf("%s: %s = %q, want %q", name, args, got, step.want)
			}
		}
		got := c.Do("CONFIG", "GET", "min-*")
		var pairs []string
		switch m := got.(type) {
		case resptest.Map:
			for _, kv := range m {
				pairs = append(pairs, fmt.Sprint(kv[0], "=", kv[1]))
			}
		case []any:
			for i := 0; i+1 < len(m); i += 2 {
				pairs = append(pairs, fmt.Sprint(m[i], "=", m[i+1]))
			}
		}
		slices.Sort(pairs)
		if want := "[min-replicas-max-lag=10 min-replicas-to-write=0 min-slaves-max-lag=10 min-slaves-to-write=0]"; fmt.Sprint(pairs) != want {
			t.Errorf("%s: CONFIG GET min-* = %v, want %s", name, pairs, want)
		}
		// INFO: min_slaves_good_slaves after connected_slaves, while both
		// settings are set.
		rc := client(t, a)
		ctx := context.Background()
		if f := infoOrder(t, rc, "replication"); slices.Contains(f, "min_slaves_good_slaves") {
			t.Errorf("%s: INFO replication with min-replicas-to-write 0: %v", name, f)
		}
		rc.ConfigSet(ctx, "min-replicas-to-write", "1")
		f := infoOrder(t, rc, "replication")
		if i := slices.Index(f, "connected_slaves"); i < 0 || i+1 >= len(f) || f[i+1] != "min_slaves_good_slaves" || f[i+2] != "master_failover_state" {
			t.Errorf("%s: INFO replication's fields: %v", name, f)
		}
		if v := infoFields(t, rc, "replication")["min_slaves_good_slaves"]; v != "0" {
			t.Errorf("%s: min_slaves_good_slaves:%s, want 0", name, v)
		}
		rc.ConfigSet(ctx, "min-replicas-max-lag", "0")
		if f := infoOrder(t, rc, "replication"); slices.Contains(f, "min_slaves_good_slaves") {
			t.Errorf("%s: INFO replication with min-replicas-max-lag 0: %v", name, f)
		}
		rc.ConfigSet(ctx, "min-replicas-to-write", "0")
		rc.ConfigSet(ctx, "min-replicas-max-lag", "10")
	}
}

// TestMinReplicasReplica: writes are refused while the primary has no good
// replica, accepted once one is online, and refused again once it is gone;
// INFO counts it; the replica, whatever its own setting, answers READONLY.
func TestMinReplicasReplica(t *testing.T) {
	ctx := context.Background()
	_, paddr := start(t, server.Config{MinReplicasToWrite: 1})
	p := client(t, paddr)
	wantErr(t, p.CFAdd(ctx, "f", "a").Err(), noReplicas)
	if p.Exists(ctx, "f").Val() != 0 {
		t.Error("a refused write changed the key space")
	}
	if got := p.ConfigGet(ctx, "min-*").Val(); got["min-replicas-to-write"] != "1" || got["min-slaves-max-lag"] != "10" {
		t.Errorf("CONFIG GET min-* = %v", got)
	}
	rsrv, raddr := start(t, server.Config{MinReplicasToWrite: 1})
	r := client(t, raddr)
	replicaOf(t, r, paddr)
	// The count is taken when the link goes online, which may follow the
	// replica's "up" by a moment.
	waitFor(t, "a write accepted with the replica online", func() bool { return p.CFAdd(ctx, "f", "a").Err() == nil })
	if v := infoFields(t, p, "replication")["min_slaves_good_slaves"]; v != "1" {
		t.Errorf("min_slaves_good_slaves:%s with the replica online, want 1", v)
	}
	if n, err := p.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 5000 = %d, %v", n, err)
	}
	wantErr(t, r.CFAdd(ctx, "f", "b").Err(), "READONLY You can't write against a read only replica.")
	if v := infoFields(t, r, "replication")["min_slaves_good_slaves"]; v != "0" {
		t.Errorf("the replica's min_slaves_good_slaves:%s, want 0", v)
	}

	// A transaction queued now, EXEC'd after the replica is gone.
	tx := resptest.Dial(t, paddr)
	for _, step := range [][2]string{{"MULTI", "OK"}, {"CF.ADD f c", "QUEUED"}, {"CF.EXISTS f a", "QUEUED"}} {
		if got := resptest.Sprint(tx.Do(resptest.Args(strings.Fields(step[0])...)...)); got != step[1] {
			t.Fatalf("%s = %q, want %q", step[0], got, step[1])
		}
	}
	// Its link dropped, the replica is forgotten at once, not at the
	// next second's count.
	if err := rsrv.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replica's link dropped", func() bool {
		return infoFields(t, p, "replication")["connected_slaves"] == "0"
	})
	if v := infoFields(t, p, "replication")["min_slaves_good_slaves"]; v != "0" {
		t.Errorf("min_slaves_good_slaves:%s with the link dropped, want 0", v)
	}
	wantErr(t, p.CFAdd(ctx, "f", "c").Err(), noReplicas)
	if got := resptest.Sprint(tx.Do("EXEC")); got != "-EXECABORT Transaction discarded because of: "+noReplicas {
		t.Errorf("EXEC = %q", got)
	}
	if p.CFExists(ctx, "f", "c").Val() {
		t.Error("the discarded transaction ran")
	}
	// The setting off, writes are accepted again.
	p.ConfigSet(ctx, "min-replicas-to-write", "0")
	if err := p.CFAdd(ctx, "f", "c").Err(); err != nil {
		t.Errorf("CF.ADD with min-replicas-to-write 0: %v", err)
	}
}

// silentReplica is a replica link that takes its full copy and then never
// acknowledges: a replica behind a partition, its connection still open.
func silentReplica(t *testing.T, addr string) {
	t.Helper()
	c := resptest.Dial(t, addr)
	c.SendAll([]any{"REPLCONF", "listening-port", "1234"}, []any{"PSYNC", "?", "-1"})
	if kind, v := c.ReadKind(); kind != '+' || v != "OK" {
		t.Fatalf("REPLCONF: %q %#v", kind, v)
	}
	if kind, v := c.ReadKind(); kind != '+' || !strings.HasPrefix(fmt.Sprint(v), "FULLRESYNC ") {
		t.Fatalf("PSYNC: %q %#v", kind, v)
	}
	// Drain the copy and the stream, so that the primary's writes to the
	// link never block; never write again.
	c.TCP().SetReadDeadline(time.Time{})
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := c.Reader().Read(buf); err != nil {
				return
			}
		}
	}()
}

// TestMinReplicasLag: a replica that stops acknowledging, its link still
// open, stops being good once its last acknowledgement is more than
// min-replicas-max-lag seconds old: writes are refused within max-lag + 2
// seconds (whole seconds, counted once a second, as Redis does).
func TestMinReplicasLag(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a replica's lag to pass 1 s; skipped with -short")
	}
	ctx := context.Background()
	_, paddr := start(t, server.Config{})
	p := client(t, paddr)
	if err := p.ConfigSet(ctx, "min-slaves-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.ConfigSet(ctx, "min-slaves-max-lag", "1").Err(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, p.CFAdd(ctx, "f", "a").Err(), noReplicas)
	silentReplica(t, paddr)
	online := time.Now()
	waitFor(t, "a write accepted with the replica online", func() bool { return p.CFAdd(ctx, "f", "a").Err() == nil })
	var refused time.Duration
	for i := 0; ; i++ {
		err := p.CFAdd(ctx, "f", fmt.Sprint(i)).Err()
		if err != nil {
			wantErr(t, err, noReplicas)
			refused = time.Since(online)
			break
		}
		if time.Since(online) > 4*time.Second {
			t.Fatalf("writes still accepted %v after the replica's last acknowledgement (max-lag 1 s)", time.Since(online))
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The link went online, acknowledged, at most a moment after online
	// was taken: the lag passes 1 s then, and the count follows at once
	// (a timer set for that moment), within Redis's range of 1 to 3 s.
	// online is taken as the test sees the copy begin, a moment before or
	// after the primary notes the link's first acknowledgement: 100 ms of
	// slack either way.
	if refused < time.Second-100*time.Millisecond {
		t.Errorf("writes refused %v after the replica's last acknowledgement, before max-lag 1 s passed", refused)
	}
	if refused > 2*time.Second {
		t.Errorf("writes refused %v after the replica's last acknowledgement; want within max-lag + 1 s", refused)
	}
	t.Logf("writes refused %v after the silent replica's last acknowledgement (min-replicas-max-lag 1)", refused.Round(time.Millisecond))
	f := infoFields(t, p, "replication")
	if f["min_slaves_good_slaves"] != "0" || f["connected_slaves"] != "1" {
		t.Errorf("INFO replication with the replica silent: %v", f)
	}
	// A longer max-lag makes it good again at once (the count is taken
	// when the setting changes).
	if err := p.ConfigSet(ctx, "min-replicas-max-lag", "3600").Err(); err != nil {
		t.Fatal(err)
	}
	if err := p.CFAdd(ctx, "f", "b").Err(); err != nil {
		t.Errorf("CF.ADD with max-lag 3600: %v", err)
	}
}

// TestMinReplicasFlagsAndRewrite: the settings from Config, the command
// line (either name), a configuration file (either name) and back through
// CONFIG REWRITE, which writes a line of the old name under the new one.
func TestMinReplicasFlagsAndRewrite(t *testing.T) {
	newFlags := func() (*flag.FlagSet, *server.SettingFlags) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return fs, server.AddSettingFlags(fs, nil)
	}
	fs, sf := newFlags()
	if err := fs.Parse([]string{"--min-slaves-to-write", "2", "--min-replicas-max-lag", "0"}); err != nil {
		t.Fatal(err)
	}
	var cfg server.Config
	if err := sf.Apply(&cfg, true); err != nil || cfg.MinReplicasToWrite != 2 || cfg.MinReplicasMaxLag != -1 {
		t.Fatalf("flags: %v, %d, %d", err, cfg.MinReplicasToWrite, cfg.MinReplicasMaxLag)
	}
	if fs, _ := newFlags(); fs.Parse([]string{"--min-replicas-to-write", "-1"}) == nil {
		t.Error("--min-replicas-to-write -1 was taken")
	}
	ctx := context.Background()
	_, addr := start(t, cfg)
	c := client(t, addr)
	if got := c.ConfigGet(ctx, "min-replicas-*").Val(); got["min-replicas-to-write"] != "2" || got["min-replicas-max-lag"] != "0" {
		t.Errorf("CONFIG GET after the flags: %v", got)
	}
	// max-lag 0: no refusal, as in Redis.
	if err := c.CFAdd(ctx, "f", "a").Err(); err != nil {
		t.Errorf("CF.ADD with min-replicas-max-lag 0: %v", err)
	}

	path := filepath.Join(t.TempDir(), "cuckoo.conf")
	if err := os.WriteFile(path, []byte("min-slaves-to-write 1\nmin-slaves-max-lag 7\nmin-replicas-max-lag 8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = server.Config{}
	if _, err := server.ReadConfigFile(path, &cfg); err != nil || cfg.MinReplicasToWrite != 1 || cfg.MinReplicasMaxLag != 8 {
		t.Fatalf("ReadConfigFile: %v, %d, %d", err, cfg.MinReplicasToWrite, cfg.MinReplicasMaxLag)
	}
	_, addr = start(t, cfg)
	c = client(t, addr)
	if err := c.ConfigSet(ctx, "min-replicas-to-write", "2").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// As Redis 7.0.15 rewrites the same file.
	if want := "min-replicas-to-write 2\nmin-replicas-max-lag 8\n"; !strings.HasPrefix(string(data), want) || strings.Count(string(data), "min-") != 2 {
		t.Errorf("the rewritten file:\n%s\nwant it to start:\n%s", data, want)
	}
	bad := filepath.Join(t.TempDir(), "bad.conf")
	os.WriteFile(bad, []byte("min-slaves-max-lag -1\n"), 0o600)
	if _, err := server.ReadConfigFile(bad, &server.Config{}); err == nil || err.Error() != bad+":1: min-slaves-max-lag: argument must be between 0 and 2147483647 inclusive" {
		t.Errorf("ReadConfigFile of a bad value: %v", err)
	}
}
