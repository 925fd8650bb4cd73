package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// TestACLPermissions: a user's commands and keys are checked before anything
// runs; a denial answers NOPERM, changes nothing and is in ACL LOG.
func TestACLPermissions(t *testing.T) {
	bothProtocols(t, func(t *testing.T, admin *redis.Client, proto int) {
		ctx := context.Background()
		admin.CFAdd(ctx, "cache:a", "x")
		if err := admin.ACLSetUser(ctx, "reader", "on", ">pw", "~cache:*", "+@read", "+@connection", "+acl|whoami").Err(); err != nil {
			t.Fatal(err)
		}
		if err := admin.ACLSetUser(ctx, "logger", "on", ">pw", "%W~log:*", "%R~cache:*", "+@all").Err(); err != nil {
			t.Fatal(err)
		}
		r := client(t, admin.Options().Addr, func(o *redis.Options) { o.Username, o.Password, o.Protocol = "reader", "pw", proto })
		if who := r.Do(ctx, "ACL", "WHOAMI").Val(); who != "reader" {
			t.Fatalf("ACL WHOAMI = %v", who)
		}
		if !r.CFExists(ctx, "cache:a", "x").Val() {
			t.Error("reader cannot read cache:a")
		}
		dirty := infoField(t, admin, "rdb_changes_since_last_save")
		wantErr(t, r.CFAdd(ctx, "cache:a", "y").Err(), "NOPERM User reader has no permissions to run the 'cf.add' command")
		wantErr(t, r.CFExists(ctx, "other", "x").Err(), "NOPERM No permissions to access a key")
		wantErr(t, r.Do(ctx, "FLUSHALL").Err(), "NOPERM User reader has no permissions to run the 'flushall' command")
		wantErr(t, r.Do(ctx, "CONFIG", "GET", "*").Err(), "NOPERM User reader has no permissions to run the 'config|get' command")
		if got := infoField(t, admin, "rdb_changes_since_last_save"); got != dirty || admin.CFExists(ctx, "cache:a", "y").Val() || admin.Exists(ctx, "cache:a").Val() != 1 {
			t.Error("a denied command changed the data")
		}
		// Key access by kind: %W~ allows a delete (write only), not a read;
		// %R~ a read, not a delete.
		l := client(t, admin.Options().Addr, func(o *redis.Options) { o.Username, o.Password, o.Protocol = "logger", "pw", proto })
		admin.CFAdd(ctx, "log:1", "x")
		if n, err := l.Del(ctx, "log:1").Result(); err != nil || n != 1 {
			t.Errorf("DEL log:1 with %%W~log:*: %d %v", n, err)
		}
		wantErr(t, l.CFExists(ctx, "log:2", "x").Err(), "NOPERM No permissions to access a key")
		wantErr(t, l.Del(ctx, "cache:a").Err(), "NOPERM No permissions to access a key")
		if !l.CFExists(ctx, "cache:a", "x").Val() {
			t.Error("%R~cache:* cannot read")
		}
		// ACL LOG has the denials, newest first.
		entries, err := admin.ACLLog(ctx, 10).Result()
		if err != nil {
			t.Fatal(err)
		}
		var reasons []string
		for _, e := range entries {
			reasons = append(reasons, e.Reason+":"+e.Object+":"+e.Username)
		}
		for _, want := range []string{"command:cf.add:reader", "key:other:reader", "key:cache:a:logger"} {
			if !slices.Contains(reasons, want) {
				t.Errorf("ACL LOG %v lacks %s", reasons, want)
			}
		}
		// Inside MULTI a denied command aborts the transaction.
		_, err = r.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.CFExists(ctx, "cache:a", "x")
			p.CFAdd(ctx, "cache:a", "z")
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "NOPERM") {
			t.Errorf("a transaction with a denied command: %v", err)
		}
		// A user changed applies to its connections at once; a deleted
		// user's connections are closed.
		admin.ACLSetUser(ctx, "reader", "+cf.add")
		if err := r.CFAdd(ctx, "cache:b", "x").Err(); err != nil {
			t.Errorf("after +cf.add: %v", err)
		}
		admin.ACLSetUser(ctx, "reader", "-cf.add")
		wantErr(t, r.CFAdd(ctx, "cache:b", "x").Err(), "NOPERM User reader has no permissions to run the 'cf.add' command")
		if n := admin.ACLDelUser(ctx, "reader").Val(); n != 1 {
			t.Errorf("ACL DELUSER = %d", n)
		}
		r.Options().MaxRetries = -1
		if err := r.Ping(ctx).Err(); err == nil {
			t.Error("a deleted user's connection still works")
		}
	})
}

// TestACLAuth: AUTH and HELLO AUTH with users, requirepass as the default
// user's password, WRONGPASS recorded in ACL LOG.
func TestACLAuth(t *testing.T) {
	ctx := context.Background()
	_, addr := start(t, server.Config{RequirePass: "top"})
	anon := client(t, addr, func(o *redis.Options) { o.Protocol = 2 })
	wantErr(t, anon.Ping(ctx).Err(), "NOAUTH Authentication required.")
	admin := client(t, addr, func(o *redis.Options) { o.Password = "top" })
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	admin.ACLSetUser(ctx, "app", "on", ">apppw", "~*", "+@all")
	app := client(t, addr, func(o *redis.Options) { o.Username, o.Password = "app", "apppw" })
	if err := app.Ping(ctx).Err(); err != nil {
		t.Errorf("AUTH app via HELLO 3: %v", err)
	}
	r := resptest.Dial(t, addr)
	if got := r.Do("AUTH", "app", "wrong"); got != resptest.Error("WRONGPASS invalid username-password pair or user is disabled.") {
		t.Errorf("AUTH app wrong = %v", got)
	}
	if got := r.Do("AUTH", "nobody", "x"); got != resptest.Error("WRONGPASS invalid username-password pair or user is disabled.") {
		t.Errorf("AUTH nobody = %v", got)
	}
	if got := r.Do("AUTH", "top"); got != "OK" {
		t.Errorf("AUTH top = %v", got)
	}
	if got := r.Do("ACL", "WHOAMI"); got != "default" {
		t.Errorf("ACL WHOAMI = %v", got)
	}
	found := false
	for _, e := range admin.ACLLog(ctx, 10).Val() {
		found = found || (e.Reason == "auth" && e.Object == "AUTH" && e.Username == "nobody")
	}
	if !found {
		t.Errorf("ACL LOG lacks the failed AUTH: %+v", admin.ACLLog(ctx, 10).Val())
	}
	// CONFIG SET requirepass changes the default user's password; a
	// disabled user cannot authenticate.
	admin.ConfigSet(ctx, "requirepass", "new")
	if got := r.Do("AUTH", "top"); got == "OK" {
		t.Error("the old requirepass still works")
	}
	if got := r.Do("AUTH", "new"); got != "OK" {
		t.Errorf("AUTH new = %v", got)
	}
	admin.ACLSetUser(ctx, "app", "off")
	if got := r.Do("AUTH", "app", "apppw"); got == "OK" {
		t.Error("a disabled user authenticated")
	}
	if got := r.Do("ACL", "DELUSER", "default"); got != resptest.Error("ERR The 'default' user cannot be removed") {
		t.Errorf("ACL DELUSER default = %v", got)
	}
}

// TestACLCommands: GETUSER, USERS, LIST, CAT, GENPASS, DRYRUN, LOG RESET,
// SETUSER errors.
func TestACLCommands(t *testing.T) {
	bothProtocols(t, func(t *testing.T, c *redis.Client, proto int) {
		ctx := context.Background()
		if err := c.ACLSetUser(ctx, "bob", "on", ">pw", "~k*", "+@cuckoo", "-cf.del").Err(); err != nil {
			t.Fatal(err)
		}
		u, err := c.Do(ctx, "ACL", "GETUSER", "bob").Result()
		if err != nil || !strings.Contains(fmtAny(u), "+@cuckoo -cf.del") || !strings.Contains(fmtAny(u), "~k*") {
			t.Errorf("ACL GETUSER bob = %v %v", fmtAny(u), err)
		}
		if v, _ := c.Do(ctx, "ACL", "GETUSER", "nobody").Result(); v != nil {
			t.Errorf("ACL GETUSER nobody = %v", v)
		}
		if users := c.Do(ctx, "ACL", "USERS").Val(); fmtAny(users) != "[bob default]" {
			t.Errorf("ACL USERS = %v", users)
		}
		list, _ := c.ACLList(ctx).Result()
		if len(list) != 2 || !strings.HasPrefix(list[0], "user bob on #") || list[1] != "user default on nopass ~* &* +@all" {
			t.Errorf("ACL LIST = %q", list)
		}
		cat, _ := c.ACLCatArgs(ctx, &redis.ACLCatArgs{Category: "cuckoo"}).Result()
		if !slices.Contains(cat, "cf.add") || slices.Contains(cat, "del") {
			t.Errorf("ACL CAT cuckoo = %v", cat)
		}
		if all, _ := c.ACLCat(ctx).Result(); !slices.Contains(all, "keyspace") || !slices.Contains(all, "cuckoo") {
			t.Errorf("ACL CAT = %v", all)
		}
		wantErr(t, c.Do(ctx, "ACL", "CAT", "nope").Err(), "ERR Unknown category 'nope'")
		if p := c.Do(ctx, "ACL", "GENPASS").Val(); len(p.(string)) != 64 {
			t.Errorf("ACL GENPASS = %v", p)
		}
		if p := c.Do(ctx, "ACL", "GENPASS", 5).Val(); len(p.(string)) != 2 {
			t.Errorf("ACL GENPASS 5 = %v", p)
		}
		for _, tc := range []struct {
			args []any
			want string
		}{
			{[]any{"bob", "CF.ADD", "k1", "x"}, "OK"},
			{[]any{"bob", "CF.DEL", "k1", "x"}, "User bob has no permissions to run the 'cf.del' command"},
			{[]any{"bob", "CF.ADD", "z", "x"}, "User bob has no permissions to access the 'z' key"},
		} {
			if got, err := c.Do(ctx, append([]any{"ACL", "DRYRUN"}, tc.args...)...).Result(); err != nil || got != tc.want {
				t.Errorf("ACL DRYRUN %v = %v %v", tc.args, got, err)
			}
		}
		wantErr(t, c.Do(ctx, "ACL", "DRYRUN", "nobody", "PING").Err(), "ERR User 'nobody' not found")
		wantErr(t, c.Do(ctx, "ACL", "DRYRUN", "bob", "NOPE").Err(), "ERR Command 'NOPE' not found")
		wantErr(t, c.ACLSetUser(ctx, "bob", "+@nope").Err(), "ERR Error in ACL SETUSER modifier '+@nope': Unknown command or category name in ACL")
		wantErr(t, c.ACLSetUser(ctx, "bob", "on", "bogus").Err(), "ERR Error in ACL SETUSER modifier 'bogus': Syntax error")
		if err := c.ACLLogReset(ctx).Err(); err != nil || len(c.ACLLog(ctx, 10).Val()) != 0 {
			t.Errorf("ACL LOG RESET: %v", err)
		}
		wantErr(t, c.Do(ctx, "ACL", "SAVE").Err(), "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.")
	})
}

func fmtAny(v any) string {
	switch v := v.(type) {
	case map[any]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, fmtAny(k)+"="+fmtAny(v[k]))
		}
		slices.Sort(keys)
		return "{" + strings.Join(keys, " ") + "}"
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmtAny(x)
		}
		return "[" + strings.Join(parts, " ") + "]"
	default:
		return fmt.Sprint(v)
	}
}

// TestACLFile: --aclfile loads users at start, ACL SAVE writes them
// atomically, ACL LOAD replaces them (all or none), a bad file refuses
// startup with file:line.
func TestACLFile(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "users.acl")
	srv, addr := start(t, server.Config{ACLFile: file})
	c := client(t, addr)
	c.ACLSetUser(ctx, "ops", "on", ">pw", "~*", "+@all", "-@dangerous")
	if err := c.Do(ctx, "ACL", "SAVE").Err(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	if !strings.Contains(string(b), "user ops on #") || !strings.Contains(string(b), "user default on nopass") {
		t.Errorf("the ACL file:\n%s", b)
	}
	c.ACLSetUser(ctx, "temp", "on", "nopass")
	if err := c.Do(ctx, "ACL", "LOAD").Err(); err != nil {
		t.Fatal(err)
	}
	if users := c.Do(ctx, "ACL", "USERS").Val(); fmtAny(users) != "[default ops]" {
		t.Errorf("after ACL LOAD: %v", users)
	}
	os.WriteFile(file, []byte("user ops on +nosuch\n"), 0o600)
	if err := c.Do(ctx, "ACL", "LOAD").Err(); err == nil || !strings.Contains(err.Error(), "users.acl:1:") {
		t.Errorf("ACL LOAD of a bad file: %v", err)
	}
	if users := c.Do(ctx, "ACL", "USERS").Val(); fmtAny(users) != "[default ops]" {
		t.Errorf("a failed ACL LOAD changed the users: %v", users)
	}
	_ = srv
	if _, err := server.New(server.Config{ACLFile: file, Logger: quiet()}); err == nil || !strings.Contains(err.Error(), "users.acl:1:") {
		t.Errorf("a server on a bad ACL file: %v", err)
	}
	os.WriteFile(file, []byte("user default off\nuser admin on >pw ~* +@all\n"), 0o600)
	_, addr2 := start(t, server.Config{ACLFile: file})
	anon := client(t, addr2, func(o *redis.Options) { o.Protocol = 2 })
	wantErr(t, anon.Ping(ctx).Err(), "NOAUTH Authentication required.")
	adm := client(t, addr2, func(o *redis.Options) { o.Username, o.Password = "admin", "pw" })
	if err := adm.Ping(ctx).Err(); err != nil {
		t.Errorf("admin from the file: %v", err)
	}
}

// TestCFCategoriesCompat: the CF commands' ACL categories follow
// redisbloom-compat: as Redis 8.6.3 lists RedisBloom 8.6.2's (CF.ADD in
// @write and @cuckoo only), or as Redis 7.0.15 lists 2.6.28's (also @slow).
func TestCFCategoriesCompat(t *testing.T) {
	ctx := context.Background()
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	for _, tc := range []struct {
		compat     string
		add, exist []any
		inSlow     bool
	}{
		{"8.6", []any{"@write", "@cuckoo"}, []any{"@read", "@cuckoo"}, false},
		{"2.6", []any{"@write", "@slow", "@cuckoo"}, []any{"@read", "@fast", "@cuckoo"}, true},
	} {
		if err := c.ConfigSet(ctx, "redisbloom-compat", tc.compat).Err(); err != nil {
			t.Fatal(err)
		}
		v, err := c.Do(ctx, "COMMAND", "INFO", "cf.add", "cf.exists").Slice()
		if err != nil || len(v) != 2 {
			t.Fatalf("COMMAND INFO: %v, %v", v, err)
		}
		for i, want := range [][]any{tc.add, tc.exist} {
			if got := v[i].([]any)[6]; !reflect.DeepEqual(got, want) {
				t.Errorf("redisbloom-compat %s: COMMAND INFO %s categories %v, want %v", tc.compat, v[i].([]any)[0], got, want)
			}
		}
		slow, err := c.Do(ctx, "ACL", "CAT", "slow").StringSlice()
		if err != nil || slices.Contains(slow, "cf.add") != tc.inSlow {
			t.Errorf("redisbloom-compat %s: ACL CAT slow lists cf.add: %v (%v)", tc.compat, !tc.inSlow, err)
		}
		listed, err := c.Do(ctx, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "slow").StringSlice()
		if err != nil || slices.Contains(listed, "cf.add") != tc.inSlow {
			t.Errorf("redisbloom-compat %s: COMMAND LIST FILTERBY ACLCAT slow lists cf.add: %v (%v)", tc.compat, !tc.inSlow, err)
		}
	}
}
