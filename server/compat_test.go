package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// The compatibility tests: each gap of issue 15 driven through go-redis in
// RESP2 and RESP3, and through redis-cli, against RedisBloom's and Redis's
// documented behaviour.

// bothProtocols runs f with a go-redis client speaking RESP2, then RESP3.
func bothProtocols(t *testing.T, f func(t *testing.T, c *redis.Client, proto int)) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			_, addr := start(t, server.Config{})
			f(t, client(t, addr, func(o *redis.Options) { o.Protocol = proto }), proto)
		})
	}
}

// TestCompatReserveRanges: without BUCKETSIZE, RedisBloom's ranges (its
// default bucket size 2), its texts, and every error reply with a code or
// RedisBloom's own text.
func TestCompatReserveRanges(t *testing.T) {
	bothProtocols(t, func(t *testing.T, c *redis.Client, proto int) {
		ctx := context.Background()
		if err := c.CFReserve(ctx, "k4", 4).Err(); err != nil {
			t.Errorf("CF.RESERVE k4 4: %v", err)
		}
		rng := "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"
		wantErr(t, c.CFReserve(ctx, "x", 3).Err(), rng)
		wantErr(t, c.CFReserve(ctx, "x", 0).Err(), rng)
		wantErr(t, c.CFReserve(ctx, "x", 10_000_000_000).Err(), rng)
		wantErr(t, c.CFReserveBucketSize(ctx, "x", 7, 4).Err(), rng)
		wantErr(t, c.Do(ctx, "CF.RESERVE", "x", "ten").Err(), "Bad capacity")
		wantErr(t, c.Do(ctx, "CF.RESERVE", "x", 100, "MAXITERATIONS", "many").Err(), "Couldn't parse MAXITERATIONS")
		wantErr(t, c.Do(ctx, "CF.RESERVE", "x", 100, "MAXITERATIONS", 0).Err(), "MAXITERATIONS: value must be in the range [1, 65535]")
		wantErr(t, c.Do(ctx, "CF.RESERVE", "x", 100, "EXPANSION", 40000).Err(), "EXPANSION: value must be in the range [0, 32768]")
		wantErr(t, c.Do(ctx, "CF.RESERVE", "x", 100, "BUCKETSIZE").Err(), "ERR wrong number of arguments for 'cf.reserve' command")
		wantErr(t, c.Do(ctx, "CF.INSERT", "x", "CAPACITY", "-1", "ITEMS", "a").Err(), "Capacity must be in the range [cf-bucket-size * 2, 1073741824]")
		wantErr(t, c.Do(ctx, "CF.INSERT", "x", "CAPACITY", "x", "ITEMS", "a").Err(), "Bad capacity")
		wantErr(t, c.Do(ctx, "CF.INSERT", "x", "DONTEXIST", "ITEMS", "a").Err(), "Unknown argument received")
		wantErr(t, c.Do(ctx, "CF.INSERT", "x", "NOCREATE", "ITEMS").Err(), "ERR wrong number of arguments for 'cf.insert' command")
	})
}

// TestCompatInfoDebug: CF.INFO's "Number of buckets" is the first
// sub-filter's, CF.INFO is a map in RESP3, and CF.DEBUG answers
// RedisBloom's line with this filter's figures.
func TestCompatInfoDebug(t *testing.T) {
	bothProtocols(t, func(t *testing.T, c *redis.Client, proto int) {
		ctx := context.Background()
		if err := c.CFReserveExpansion(ctx, "k", 1000, 2).Err(); err != nil {
			t.Fatal(err)
		}
		first := c.CFInfo(ctx, "k").Val()
		for i := range 20_000 {
			c.CFAdd(ctx, "k", fmt.Sprint(i))
		}
		info, err := c.CFInfo(ctx, "k").Result()
		if err != nil {
			t.Fatal(err)
		}
		if info.NumFilters < 2 || info.NumBuckets != first.NumBuckets {
			t.Errorf("after growth: %d filters, %d buckets; the first sub-filter had %d", info.NumFilters, info.NumBuckets, first.NumBuckets)
		}
		raw, err := c.Do(ctx, "CF.INFO", "k").Result()
		if err != nil {
			t.Fatal(err)
		}
		switch raw.(type) {
		case map[any]any:
			if proto != 3 {
				t.Errorf("CF.INFO in RESP%d is a map", proto)
			}
		case []any:
			if proto != 2 {
				t.Errorf("CF.INFO in RESP%d is an array", proto)
			}
		default:
			t.Errorf("CF.INFO reply %T", raw)
		}
		line, err := c.Do(ctx, "CF.DEBUG", "k").Text()
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("bktsize:5 buckets:%d items:20000 deletes:0 filters:%d max_iterations:20 expansion:2", info.NumBuckets, info.NumFilters)
		if line != want {
			t.Errorf("CF.DEBUG = %q, want %q", line, want)
		}
		wantErr(t, c.Do(ctx, "CF.DEBUG", "missing").Err(), "ERR not found")
		wantErr(t, c.Do(ctx, "CF.DEBUG").Err(), "ERR wrong number of arguments for 'cf.debug' command")
	})
}

// TestCompatReplyTypes: RedisBloom's RESP3 replies are booleans for
// CF.ADD, CF.ADDNX, CF.EXISTS, CF.MEXISTS, CF.DEL and CF.INSERT, integers
// for CF.COUNT and CF.INSERTNX; RESP2 has integers throughout.
func TestCompatReplyTypes(t *testing.T) {
	bothProtocols(t, func(t *testing.T, c *redis.Client, proto int) {
		ctx := context.Background()
		one := any(int64(1))
		zero := any(int64(0))
		if proto == 3 {
			one, zero = true, false
		}
		for _, tc := range []struct {
			args []any
			want any
		}{
			{[]any{"CF.ADD", "k", "a"}, one},
			{[]any{"CF.ADDNX", "k", "a"}, zero},
			{[]any{"CF.EXISTS", "k", "a"}, one},
			{[]any{"CF.EXISTS", "k", "b"}, zero},
			{[]any{"CF.EXISTS", "missing", "b"}, zero},
			{[]any{"CF.MEXISTS", "k", "a", "b"}, []any{one, zero}},
			{[]any{"CF.COUNT", "k", "a"}, int64(1)},
			{[]any{"CF.INSERT", "k", "ITEMS", "c"}, []any{one}},
			{[]any{"CF.INSERTNX", "k", "ITEMS", "c", "d"}, []any{int64(0), int64(1)}},
			{[]any{"CF.DEL", "k", "a"}, one},
			{[]any{"CF.DEL", "k", "a"}, zero},
		} {
			got, err := c.Do(ctx, tc.args...).Result()
			if err != nil {
				t.Errorf("%v: %v", tc.args, err)
				continue
			}
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) {
				t.Errorf("%v = %#v, want %#v", tc.args, got, tc.want)
			}
		}
	})
}

// TestCompatDumpTexts: SCANDUMP of an empty filter answers [0, nil]; a
// damaged header chunk, a damaged data chunk and a header on an existing key
// answer RedisBloom's texts.
func TestCompatDumpTexts(t *testing.T) {
	bothProtocols(t, func(t *testing.T, c *redis.Client, proto int) {
		ctx := context.Background()
		c.CFReserve(ctx, "empty", 100)
		raw, err := c.Do(ctx, "CF.SCANDUMP", "empty", 0).Slice()
		if err != nil || len(raw) != 2 || raw[0] != int64(0) || raw[1] != nil {
			t.Errorf("CF.SCANDUMP of an empty filter = %#v, %v; want [0, nil]", raw, err)
		}
		for i := range 3000 {
			c.CFAdd(ctx, "src", fmt.Sprint(i))
		}
		chunks := dump(t, c, "src")
		if len(chunks) < 2 {
			t.Fatalf("%d chunks", len(chunks))
		}
		// A header that is neither this server's nor of RedisBloom's length is
		// taken for a damaged one of this server's; one of RedisBloom's 38 bytes
		// but no filter gets RedisBloom's answer. (A server of RedisBloom's
		// layout answers the first "Invalid header", as RedisBloom.)
		wantErr(t, c.CFLoadChunk(ctx, "bad", 1, "garbage").Err(), "Couldn't create filter!")
		wantErr(t, c.CFLoadChunk(ctx, "bad", 1, strings.Repeat("\x00", 38)).Err(), "Couldn't create filter!")
		wantErr(t, c.CFLoadChunk(ctx, "src", 1, chunks[0].Data).Err(), "ERR item exists")
		if err := c.CFLoadChunk(ctx, "copy", chunks[0].Iter, chunks[0].Data).Err(); err != nil {
			t.Fatal(err)
		}
		damaged := []byte(chunks[1].Data)
		damaged[len(damaged)/2] ^= 0x40
		wantErr(t, c.CFLoadChunk(ctx, "copy", chunks[1].Iter, string(damaged)).Err(), "Couldn't load chunk!")
		wantErr(t, c.CFLoadChunk(ctx, "nokey", 2, chunks[1].Data).Err(), "ERR not found")
	})
}

// TestCompatHello: HELLO 3 switches to RESP3 and answers a map; HELLO 2
// back; other versions NOPROTO; a failed HELLO changes nothing.
func TestCompatHello(t *testing.T) {
	_, addr := start(t, server.Config{RequirePass: "pw"})
	c := resptest.Dial(t, addr)
	if got := c.Do("HELLO", "4"); got != resptest.Error("NOPROTO unsupported protocol version") {
		t.Errorf("HELLO 4: %#v", got)
	}
	if got, _ := c.Do("HELLO", "3").(resptest.Error); !strings.HasPrefix(string(got), "NOAUTH") {
		t.Errorf("HELLO 3 unauthenticated: %#v", got)
	}
	if got, _ := c.Do("HELLO", "3", "AUTH", "default", "wrong").(resptest.Error); !strings.HasPrefix(string(got), "WRONGPASS") {
		t.Errorf("HELLO with a wrong password: %#v", got)
	}
	if got, _ := c.Do("HELLO", "3", "SETNAME", "a b").(resptest.Error); !strings.HasPrefix(string(got), "ERR Client names") {
		t.Errorf("HELLO with a bad name: %#v", got)
	}
	if got := c.Do("CLIENT", "GETNAME"); got != resptest.Error("NOAUTH Authentication required.") {
		t.Errorf("after failed HELLOs: %#v", got)
	}
	m, ok := c.Do("HELLO", "3", "AUTH", "default", "pw", "SETNAME", "app").(resptest.Map)
	if !ok || len(m) != 7 || m[0] != [2]any{"server", "cuckoo"} || m[2] != [2]any{"proto", int64(3)} || m[5] != [2]any{"role", "master"} {
		t.Errorf("HELLO 3 = %#v", m)
	}
	if got := c.Do("CLIENT", "GETNAME"); got != "app" {
		t.Errorf("CLIENT GETNAME = %#v", got)
	}
	if got := c.Do("CF.ADD", "k", "a"); got != true {
		t.Errorf("CF.ADD in RESP3 = %#v", got)
	}
	if got, _ := c.Do("HELLO", "2").([]any); len(got) != 14 || got[5] != int64(2) {
		t.Errorf("HELLO 2 = %#v", got)
	}
	if got := c.Do("CF.EXISTS", "k", "a"); got != int64(1) {
		t.Errorf("CF.EXISTS in RESP2 = %#v", got)
	}
	if got := c.Do("PING"); got != "PONG" {
		t.Errorf("PING = %#v", got)
	}
}

// TestCompatErrorCodes: a protocol error carries its prefix once.
func TestCompatErrorCodes(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := resptest.Dial(t, addr)
	c.SendRaw([]byte("*1\r\n!3\r\n"))
	if got := c.Read(); got != resptest.Error("ERR Protocol error: expected '$', got '!'") {
		t.Errorf("protocol error reply %#v", got)
	}
}

// TestCompatCommand: go-redis parses COMMAND (cluster clients find key
// positions in it), COMMAND COUNT matches the list, DOCS has RedisBloom's
// arguments, GETKEYS finds keys.
func TestCompatCommand(t *testing.T) {
	bothProtocols(t, func(t *testing.T, c *redis.Client, proto int) {
		ctx := context.Background()
		cmds, err := c.Command(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		add := cmds["cf.add"]
		if add == nil || add.Arity != 3 || add.FirstKeyPos != 1 || add.LastKeyPos != 1 || add.StepCount != 1 ||
			!slices.Contains(add.Flags, "write") || !slices.Contains(add.ACLFlags, "@cuckoo") || add.ReadOnly {
			t.Errorf("COMMAND's cf.add: %+v", add)
		}
		if ex := cmds["cf.exists"]; ex == nil || !ex.ReadOnly || !slices.Contains(ex.ACLFlags, "@read") {
			t.Errorf("COMMAND's cf.exists: %+v", ex)
		}
		if del := cmds["del"]; del == nil || del.LastKeyPos != -1 {
			t.Errorf("COMMAND's del: %+v", del)
		}
		n, err := c.CommandList(ctx, nil).Result()
		if err != nil {
			t.Fatal(err)
		}
		count := c.Do(ctx, "COMMAND", "COUNT").Val()
		top := 0
		for _, name := range n {
			if !strings.Contains(name, "|") {
				top++
			}
		}
		if count != int64(top) || int64(len(cmds)) != count {
			t.Errorf("COMMAND COUNT %v, COMMAND LIST %d top-level names, COMMAND %d", count, top, len(cmds))
		}
		cf, err := c.CommandList(ctx, &redis.FilterBy{Module: "bf"}).Result()
		if err != nil || len(cf) != 14 {
			t.Errorf("COMMAND LIST FILTERBY MODULE bf: %v", cf)
		}
		docs, err := c.Do(ctx, "COMMAND", "DOCS", "cf.reserve").Result()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(fmt.Sprint(docs), "BUCKETSIZE") || !strings.Contains(fmt.Sprint(docs), "module") {
			t.Errorf("COMMAND DOCS cf.reserve: %v", docs)
		}
		keys, err := c.CommandGetKeys(ctx, "CF.INSERT", "f", "ITEMS", "a").Result()
		if err != nil || !slices.Equal(keys, []string{"f"}) {
			t.Errorf("COMMAND GETKEYS CF.INSERT: %v %v", keys, err)
		}
		keys, err = c.CommandGetKeys(ctx, "DEL", "a", "b").Result()
		if err != nil || !slices.Equal(keys, []string{"a", "b"}) {
			t.Errorf("COMMAND GETKEYS DEL: %v %v", keys, err)
		}
		wantErr(t, c.CommandGetKeys(ctx, "PING").Err(), "ERR The command has no key arguments")
		wantErr(t, c.Do(ctx, "COMMAND", "NOPE").Err(), "ERR unknown subcommand 'NOPE'. Try COMMAND HELP.")
		// A table entry is served exactly when it has a handler: every name
		// COMMAND LIST gives is a known command.
		for _, name := range n {
			args := strings.Split(name, "|")
			if err := c.Do(ctx, append([]any{"COMMAND", "INFO"}, name)...).Err(); err != nil {
				t.Errorf("COMMAND INFO %s: %v", name, err)
			}
			if len(args) == 2 {
				err := c.Do(ctx, args[0], args[1], "x", "y", "z", "w", "v", "u", "t", "s").Err()
				if err != nil && strings.Contains(err.Error(), "unknown subcommand '") { // not "unknown subcommand or wrong number of arguments"
					t.Errorf("%s is listed but unknown", name)
				}
			}
		}
	})
}

// TestCompatDocsComplexity: COMMAND DOCS gives a CF command's complexity
// in RedisBloom's words while new filters take RedisBloom's layout (its
// flow test test_docs_help.py compares them), in this server's otherwise.
func TestCompatDocsComplexity(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := resptest.Dial(t, addr)
	complexity := func() any {
		docs, _ := c.Do("COMMAND", "DOCS", "cf.exists").([]any)
		if len(docs) != 2 {
			t.Fatalf("COMMAND DOCS cf.exists: %#v", docs)
		}
		fields, _ := docs[1].([]any)
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "complexity" {
				return fields[i+1]
			}
		}
		return nil
	}
	for _, tc := range []struct{ layout, want string }{
		{"redisbloom", "O(k), where k is the number of sub-filters"},
		{"cuckoo", "O(1): two buckets, however far the filter grew"},
	} {
		if got := c.Do("CONFIG", "SET", "cf-layout", tc.layout); got != "OK" {
			t.Fatalf("CONFIG SET cf-layout %s: %#v", tc.layout, got)
		}
		if got := complexity(); got != tc.want {
			t.Errorf("cf-layout %s: complexity %#v, want %q", tc.layout, got, tc.want)
		}
	}
}

// TestCompatClient: CLIENT's subcommands with Redis's replies.
func TestCompatClient(t *testing.T) {
	bothProtocols(t, func(t *testing.T, c *redis.Client, proto int) {
		ctx := context.Background()
		id := c.ClientID(ctx).Val()
		if err := c.Do(ctx, "CLIENT", "SETNAME", "guard").Err(); err != nil {
			t.Fatal(err)
		}
		wantErr(t, c.Do(ctx, "CLIENT", "SETNAME", "a b").Err(), "ERR Client names cannot contain spaces, newlines or special characters.")
		if err := c.Do(ctx, "CLIENT", "SETINFO", "LIB-NAME", "mylib").Err(); err != nil {
			t.Fatal(err)
		}
		info, err := c.ClientInfo(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if info.ID != id || info.Name != "guard" || info.LibName != "mylib" || info.Resp != proto || info.LastCmd != "client|info" {
			t.Errorf("CLIENT INFO: %+v", info)
		}
		list, err := c.ClientList(ctx).Result()
		if err != nil || !strings.Contains(list, fmt.Sprintf("id=%d ", id)) || !strings.Contains(list, "name=guard") {
			t.Errorf("CLIENT LIST: %q %v", list, err)
		}
		help, err := c.Do(ctx, "CLIENT", "HELP").StringSlice()
		if err != nil || len(help) < 10 {
			t.Errorf("CLIENT HELP: %v %v", help, err)
		}
		// CLIENT KILL of another connection, by id and by address.
		_, addr := start(t, server.Config{})
		a, b := client(t, addr), client(t, addr)
		a.Ping(ctx)
		b.Ping(ctx)
		bid := b.ClientID(ctx).Val()
		if n, err := a.ClientKillByFilter(ctx, "ID", fmt.Sprint(bid)).Result(); err != nil || n != 1 {
			t.Errorf("CLIENT KILL ID: %d %v", n, err)
		}
		if n, err := a.ClientKillByFilter(ctx, "ID", fmt.Sprint(bid)).Result(); err != nil || n != 0 {
			t.Errorf("CLIENT KILL ID again: %d %v", n, err)
		}
		wantErr(t, a.Do(ctx, "CLIENT", "KILL", "127.0.0.1:1").Err(), "ERR No such client")
		wantErr(t, a.Do(ctx, "CLIENT", "KILL", "TYPE", "nope").Err(), "ERR Unknown client type 'nope'")
		if n, err := a.ClientKillByFilter(ctx, "TYPE", "normal").Result(); err != nil || n != 0 {
			t.Errorf("CLIENT KILL TYPE normal (SKIPME yes by default): %d %v", n, err)
		}
	})
}

// TestCompatClientReply: CLIENT REPLY OFF and SKIP mute replies.
func TestCompatClientReply(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := resptest.Dial(t, addr)
	c.SendRaw([]byte("CLIENT REPLY OFF\r\nPING a\r\nCLIENT REPLY ON\r\nCLIENT REPLY SKIP\r\nPING b\r\nPING c\r\n"))
	if got := c.Read(); got != "OK" {
		t.Errorf("first reply %#v, want OK (of CLIENT REPLY ON)", got)
	}
	if got := c.Read(); got != "c" {
		t.Errorf("second reply %#v, want c", got)
	}
}

// TestCompatMulti: go-redis transactions, WATCH, EXECABORT, and a
// transaction's writes surviving a restart as one unit.
func TestCompatMulti(t *testing.T) {
	bothProtocols(t, func(t *testing.T, c *redis.Client, proto int) {
		ctx := context.Background()
		cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.CFAdd(ctx, "a", "x")
			p.CFAdd(ctx, "b", "y")
			p.CFExists(ctx, "a", "x")
			return nil
		})
		if err != nil || len(cmds) != 3 || !cmds[2].(*redis.BoolCmd).Val() {
			t.Fatalf("TxPipelined: %v %v", cmds, err)
		}
		// WATCH: a change by another client between WATCH and EXEC aborts.
		other := client(t, c.Options().Addr)
		err = c.Watch(ctx, func(tx *redis.Tx) error {
			other.CFAdd(ctx, "a", "z")
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.CFAdd(ctx, "a", "w")
				return nil
			})
			return err
		}, "a")
		if !errors.Is(err, redis.TxFailedErr) {
			t.Errorf("EXEC after a watched key changed: %v, want TxFailedErr", err)
		}
		if c.CFExists(ctx, "a", "w").Val() {
			t.Error("the aborted transaction ran")
		}
		// An unchanged watched key lets EXEC run; a no-op add does not count.
		err = c.Watch(ctx, func(tx *redis.Tx) error {
			other.CFAddNX(ctx, "a", "x")
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.CFAdd(ctx, "a", "w")
				return nil
			})
			return err
		}, "a")
		if err != nil {
			t.Errorf("EXEC with an untouched watched key: %v", err)
		}
		r := resptest.Dial(t, c.Options().Addr)
		for _, step := range []struct {
			args []string
			want any
		}{
			{[]string{"EXEC"}, "-ERR EXEC without MULTI"},
			{[]string{"DISCARD"}, "-ERR DISCARD without MULTI"},
			{[]string{"MULTI"}, "OK"},
			{[]string{"MULTI"}, "-ERR MULTI calls can not be nested"},
			{[]string{"WATCH", "a"}, "-ERR WATCH inside MULTI is not allowed"},
			{[]string{"CF.ADD", "q", "1"}, "QUEUED"},
			{[]string{"NOPE"}, "-ERR unknown command 'NOPE', with args beginning with: "},
			{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors."},
			{[]string{"EXISTS", "q"}, int64(0)},
			{[]string{"MULTI"}, "OK"},
			{[]string{"CF.ADD", "q", "1"}, "QUEUED"},
			{[]string{"DISCARD"}, "OK"},
			{[]string{"EXISTS", "q"}, int64(0)},
			{[]string{"MULTI"}, "OK"},
			{[]string{"SAVE"}, "-ERR Command not allowed inside a transaction"},
			{[]string{"DISCARD"}, "OK"},
		} {
			if got := r.Do(resptest.Args(step.args...)...); resptest.Sprint(got) != fmt.Sprint(step.want) {
				t.Errorf("%v = %#v, want %#v", step.args, got, step.want)
			}
		}
	})
}

// TestCompatMultiDurable: a transaction's ops are one log record: after a
// crash the restart replays all of them, and with the record torn, none.
func TestCompatMultiDurable(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	cfg := server.Config{Dir: dir, AppendFsync: server.FsyncAlways, SnapshotLogSize: -1, Logger: quiet()}
	_, addr := startNoCleanup(t, cfg) // never shut down: as after kill -9
	c := client(t, addr)
	if err := c.CFAdd(ctx, "before", "x").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.CFReserve(ctx, "t", 100)
		p.CFAdd(ctx, "t", "x")
		p.CFAdd(ctx, "u", "y")
		p.Del(ctx, "before")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	logs := logFiles(t, dir)
	if len(logs) != 1 {
		t.Fatalf("logs: %v", logs)
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	restart := func(log []byte) *redis.Client {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, filepath.Base(logs[0])), log, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := server.New(server.Config{Dir: d, Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		_, addr := serveOn(t, s)
		return client(t, addr)
	}
	whole := restart(data)
	if !whole.CFExists(ctx, "t", "x").Val() || !whole.CFExists(ctx, "u", "y").Val() || whole.Exists(ctx, "before").Val() != 0 {
		t.Error("after a restart, the transaction is not whole")
	}
	torn := restart(data[:len(data)-3])
	if torn.Exists(ctx, "t", "u").Val() != 0 || torn.Exists(ctx, "before").Val() != 1 {
		t.Error("with its record torn, part of the transaction survived")
	}
}

// TestCompatTimeMonitorShutdown: TIME, MONITOR's lines, SHUTDOWN.
func TestCompatTimeMonitorShutdown(t *testing.T) {
	ctx := context.Background()
	srv, addr := start(t, server.Config{})
	c := client(t, addr)
	tm, err := c.Time(ctx).Result()
	if err != nil || time.Since(tm).Abs() > time.Minute {
		t.Errorf("TIME = %v, %v", tm, err)
	}
	m := resptest.Dial(t, addr)
	if got := m.Do("MONITOR"); got != "OK" {
		t.Fatalf("MONITOR = %#v", got)
	}
	c.CFAdd(ctx, "k", "a \"b\"\n")
	c.Do(ctx, "AUTH", "secret")
	c.Ping(ctx)
	line, _ := m.Read().(string)
	if !regexp.MustCompile(`^\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] "CF\.ADD" "k" "a \\"b\\"\\n"$`).MatchString(line) {
		t.Errorf("MONITOR line %q", line)
	}
	if line, _ := m.Read().(string); !strings.HasSuffix(line, `"ping"`) {
		t.Errorf("MONITOR line after AUTH %q, want the PING (AUTH is not shown)", line)
	}
	// SHUTDOWN closes the connection with no reply and stops the server.
	r := resptest.Dial(t, addr)
	r.SendRaw([]byte("SHUTDOWN NOSAVE\r\n"))
	r.TCP().SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := r.Reader().Peek(); err == nil {
		t.Errorf("SHUTDOWN replied %q", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := net.DialTimeout("tcp", addr, time.Second); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts connections after SHUTDOWN")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = srv
}

// TestLoadChunkRoundTrip: a filter of 10^7 items (10^6 under the race
// detector, 10^5 with -short) goes through CF.SCANDUMP into another server
// with CF.LOADCHUNK, chunks of megabytes included (items and keys are held to
// the item size limit, dump chunks only to proto-max-bulk-len), and every
// item is found there.
func TestLoadChunkRoundTrip(t *testing.T) {
	n := 10_000_000
	switch {
	case testing.Short():
		n = 100_000
	case raceEnabled:
		n = 1_000_000
	}
	ctx := context.Background()
	_, srcAddr := start(t, server.Config{})
	_, dstAddr := start(t, server.Config{})
	src, dst := client(t, srcAddr), client(t, dstAddr)
	if err := src.CFReserve(ctx, "big", int64(n)).Err(); err != nil {
		t.Fatal(err)
	}
	const batch = 1000
	items := func(from int) []any {
		out := make([]any, 0, batch)
		for i := from; i < min(from+batch, n); i++ {
			out = append(out, fmt.Sprint("item:", i))
		}
		return out
	}
	for from := 0; from < n; from += 100 * batch {
		p := src.Pipeline()
		for b := from; b < min(from+100*batch, n); b += batch {
			p.CFInsert(ctx, "big", &redis.CFInsertOptions{NoCreate: true}, items(b)...)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	chunks := dump(t, src, "big")
	largest := 0
	for _, ch := range chunks {
		largest = max(largest, len(ch.Data))
		if err := dst.CFLoadChunk(ctx, "copy", ch.Iter, ch.Data).Err(); err != nil {
			t.Fatalf("CF.LOADCHUNK of a %d-byte chunk: %v", len(ch.Data), err)
		}
	}
	if largest <= 64<<10 {
		t.Errorf("the largest chunk has %d bytes: the test must pass chunks beyond the item size limit", largest)
	}
	missing := 0
	for from := 0; from < n; from += 100 * batch {
		p := dst.Pipeline()
		var cmds []*redis.BoolSliceCmd
		for b := from; b < min(from+100*batch, n); b += batch {
			cmds = append(cmds, p.CFMExists(ctx, "copy", items(b)...))
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			for _, ok := range c.Val() {
				if !ok {
					missing++
				}
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d items missing after the round trip", missing, n)
	}
	a, b := src.CFInfo(ctx, "big").Val(), dst.CFInfo(ctx, "copy").Val()
	if a != b {
		t.Errorf("CF.INFO of the copy %+v, of the source %+v", b, a)
	}
	t.Logf("%d items, %d chunks, the largest %d bytes", n, len(chunks), largest)
}
