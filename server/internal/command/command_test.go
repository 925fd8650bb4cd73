package command_test

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// table is the server's command table: Redis's rows and the CF family's,
// which the server keeps beside their handlers.
var table = server.CommandTable()

// every returns every command and subcommand.
func every() []*command.Spec {
	var out []*command.Spec
	for _, c := range table.All() {
		out = append(out, c)
		out = append(out, c.Subs...)
	}
	return out
}

func walkArgs(args []command.Arg, f func(command.Arg)) {
	for _, a := range args {
		f(a)
		walkArgs(a.Args, f)
	}
}

var keySpecFlags = []string{"RO", "RW", "OW", "RM", "access", "update", "insert", "delete",
	"not_key", "incomplete", "variable_flags"}

// TestTableInvariants checks what doc.go promises of every spec.
func TestTableInvariants(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range every() {
		t.Run(s.Name, func(t *testing.T) {
			if s.Name == "" || s.Name != strings.ToLower(s.Name) || seen[s.Name] {
				t.Fatalf("name %q: empty, not lower case or not unique", s.Name)
			}
			seen[s.Name] = true
			if s.Arity == 0 {
				t.Error("arity 0")
			}
			if s.Flags&command.Write != 0 && s.Flags&command.ReadOnly != 0 {
				t.Error("both write and readonly")
			}
			if s.Since == "" || s.Group == "" || s.Summary == "" || s.Complexity == "" {
				t.Errorf("docs missing: since %q group %q summary %q complexity %q",
					s.Since, s.Group, s.Summary, s.Complexity)
			}
			if c := s.Container(); c != nil {
				if !slices.Contains(c.Subs, s) || !strings.HasPrefix(s.Name, c.Name+"|") {
					t.Errorf("container %s does not hold it", c.Name)
				}
				if s.Arity > 0 && s.Arity < 2 || s.Arity < 0 && s.Arity > -2 {
					t.Errorf("arity %d: a subcommand counts its container's name too", s.Arity)
				}
				if len(s.Subs) > 0 {
					t.Error("subcommands nest one level only")
				}
			} else if strings.Contains(s.Name, "|") {
				t.Error("a subcommand name outside a container")
			}
			for _, sub := range s.Subs {
				if sub.Container() != s {
					t.Errorf("%s: container %v", sub.Name, sub.Container())
				}
			}
			for _, tip := range s.Tips {
				if tip != strings.ToLower(tip) {
					t.Errorf("tip %q not lower case", tip)
				}
			}
			for i, k := range s.Keys {
				if k.Begin < 1 && k.Keyword == "" {
					t.Errorf("key spec %d: begin %d", i, k.Begin)
				}
				access := 0
				for _, f := range k.Flags {
					if !slices.Contains(keySpecFlags, f) {
						t.Errorf("key spec %d: unknown flag %q", i, f)
					}
					if len(f) == 2 {
						access++
					}
				}
				if access != 1 {
					t.Errorf("key spec %d: flags %v: want one of RO, RW, OW, RM", i, k.Flags)
				}
			}
			keyArgs := 0
			walkArgs(s.Args, func(a command.Arg) {
				if a.Name != strings.ToLower(a.Name) || a.Display != strings.ToLower(a.Display) {
					t.Errorf("arg %q: name or display %q not lower case", a.Name, a.Display)
				}
				group := a.Type == command.OneOf || a.Type == command.Block
				if group != (len(a.Args) > 0) {
					t.Errorf("arg %q of type %s with %d args", a.Name, a.Type, len(a.Args))
				}
				if a.Type == command.PureToken && a.Token == "" {
					t.Errorf("pure-token arg %q without a token", a.Name)
				}
				if a.MultipleToken && !a.Multiple {
					t.Errorf("arg %q: multiple_token without multiple", a.Name)
				}
				if a.Type == command.Key {
					keyArgs++
					if a.KeySpec < 0 || a.KeySpec >= len(s.Keys) {
						t.Errorf("key arg %q: key spec %d of %d", a.Name, a.KeySpec, len(s.Keys))
					}
				} else if a.KeySpec != 0 {
					t.Errorf("arg %q of type %s has a key spec", a.Name, a.Type)
				}
			})
			if len(s.Keys) > 0 && keyArgs == 0 {
				t.Error("key specs but no key argument")
			}
		})
	}
}

// TestCommandsPresent checks that the commands the server serves are all in
// the table, in the groups Redis documents them in.
func TestCommandsPresent(t *testing.T) {
	groups := map[string]string{
		"ping": "connection", "echo": "connection", "quit": "connection", "select": "connection",
		"auth": "connection", "hello": "connection", "client": "connection",
		"del": "generic", "unlink": "generic", "exists": "generic", "type": "generic",
		"keys": "generic", "scan": "generic", "dbsize": "server", "flushall": "server",
		"flushdb": "server", "save": "server", "bgsave": "server", "lastsave": "server",
		"info": "server", "time": "server", "command": "server",
		"client|setname": "connection", "client|getname": "connection", "client|setinfo": "connection",
		"client|id": "connection", "client|list": "connection", "client|info": "connection",
		"client|kill": "connection", "client|help": "connection", "client|no-evict": "connection",
		"client|no-touch": "connection", "client|reply": "connection",
		"command|count": "server", "command|info": "server", "command|docs": "server",
		"command|list": "server", "command|getkeys": "server", "command|getkeysandflags": "server",
		"command|help": "server",
	}
	for name, group := range groups {
		s := table.Find(name)
		if s == nil {
			t.Errorf("%s: missing", name)
			continue
		}
		if s.Group != group {
			t.Errorf("%s: group %q, want %q", name, s.Group, group)
		}
	}
	if n := len(table.Find("client").Subs); n != 11 {
		t.Errorf("client has %d subcommands, want 11", n)
	}
	if n := len(table.Find("command").Subs); n != 7 {
		t.Errorf("command has %d subcommands, want 7", n)
	}
}

// TestFacts spot-checks facts against Redis 7.2's command files.
func TestFacts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		arity int
		flags command.Flag
		acl   string
		tips  string
	}{
		{"del", -2, command.Write, "keyspace", "request_policy:multi_shard response_policy:agg_sum"},
		{"unlink", -2, command.Write | command.Fast, "keyspace", "request_policy:multi_shard response_policy:agg_sum"},
		{"keys", 2, command.ReadOnly, "keyspace dangerous", "request_policy:all_shards nondeterministic_output_order"},
		{"scan", -2, command.ReadOnly, "keyspace", "nondeterministic_output request_policy:special response_policy:special"},
		{"ping", -1, command.Fast, "connection", "request_policy:all_shards response_policy:all_succeeded"},
		{"quit", -1, command.AllowBusy | command.NoScript | command.Loading | command.Stale | command.Fast | command.NoAuth, "connection", ""},
		{"save", 1, command.Admin | command.NoScript | command.NoMulti, "", ""},
		{"client", -2, 0, "", ""},
		{"client|kill", -3, command.Admin | command.NoScript | command.Loading | command.Stale, "connection", ""},
		{"command|getkeys", -3, command.Loading | command.Stale, "connection", ""},
		{"subscribe", -2, command.PubSub | command.NoScript | command.Loading | command.Stale, "", ""},
		{"publish", 3, command.PubSub | command.Loading | command.Stale | command.Fast | command.MayReplicate, "", ""},
		{"pubsub|numpat", 2, command.PubSub | command.Loading | command.Stale, "", ""},
		{"pubsub|help", 2, command.Loading | command.Stale, "", ""},
	} {
		s := table.Find(tc.name)
		if s == nil {
			t.Errorf("%s: missing", tc.name)
			continue
		}
		if s.Arity != tc.arity || s.Flags != tc.flags || s.ACL != tc.acl || strings.Join(s.Tips, " ") != tc.tips {
			t.Errorf("%s: arity %d flags %v acl %q tips %v; want %d %v %q %q",
				tc.name, s.Arity, s.Flags.Names(), s.ACL, s.Tips, tc.arity, tc.flags.Names(), tc.acl, tc.tips)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, name := range []string{"del", "DEL", "Del", "cf.add", "CF.ADD", "Cf.Add", "client"} {
		s := table.Lookup([]byte(name))
		if s == nil || s.Name != strings.ToLower(name) {
			t.Errorf("Lookup(%q) = %v", name, s)
		}
	}
	for _, name := range []string{"", "nosuch", "client|list", "client list", strings.Repeat("a", 40)} {
		if s := table.Lookup([]byte(name)); s != nil {
			t.Errorf("Lookup(%q) = %s, want nil", name, s.Name)
		}
	}
	client := table.Lookup([]byte("client"))
	if s := client.LookupSub([]byte("LiSt")); s == nil || s.Name != "client|list" {
		t.Errorf("LookupSub(LiSt) = %v", s)
	}
	if s := client.LookupSub([]byte("nosuch")); s != nil {
		t.Errorf("LookupSub(nosuch) = %s", s.Name)
	}
	for _, name := range []string{"client|list", "CLIENT|LIST", "client list"} {
		if s := table.Find(name); s == nil || s.Name != "client|list" {
			t.Errorf("Find(%q) = %v", name, s)
		}
	}
	for _, name := range []string{"client|nosuch", "del|x", "client|list|x", "nosuch"} {
		if s := table.Find(name); s != nil {
			t.Errorf("Find(%q) = %s, want nil", name, s.Name)
		}
	}

	name, sub := []byte("CF.Exists"), []byte("LIST")
	allocs := testing.AllocsPerRun(100, func() {
		if table.Lookup(name) == nil || client.LookupSub(sub) == nil {
			t.Fatal("not found")
		}
	})
	if allocs != 0 {
		t.Errorf("Lookup and LookupSub allocate %v times", allocs)
	}
}

func TestCategories(t *testing.T) {
	// Redis's order: its own categories in its table's order, then a
	// module's (cuckoo).
	for name, want := range map[string]string{
		"del":         "keyspace write slow",
		"exists":      "keyspace read fast",
		"keys":        "keyspace read slow dangerous",
		"save":        "admin slow dangerous",
		"lastsave":    "admin fast dangerous",
		"info":        "slow dangerous",
		"ping":        "fast connection",
		"client":      "slow",
		"client|list": "admin slow dangerous connection",
		"command":     "slow connection",
	} {
		for _, m := range []command.ModuleACL{command.ModuleACLAsGiven, command.ModuleACLImplied} {
			if got := strings.Join(table.Find(name).Categories(m), " "); got != want {
				t.Errorf("%s (ModuleACL %d): categories %q, want %q", name, m, got, want)
			}
		}
	}
	// A module's commands: in Redis 7 with the categories their flags
	// imply, in Redis 8 in those the module names only (RedisBloom 8.6.2:
	// CF.EXISTS is fast but not in @fast, CF.RESERVE in @fast as it says).
	for _, tc := range []struct {
		name           string
		redis8, redis7 string
	}{
		{"cf.exists", "read cuckoo", "read fast cuckoo"},
		{"cf.add", "write cuckoo", "write slow cuckoo"},
		{"cf.reserve", "write fast cuckoo", "write fast cuckoo"},
		{"cf.info", "read fast cuckoo", "read fast cuckoo"},
	} {
		if got := strings.Join(table.Find(tc.name).Categories(command.ModuleACLAsGiven), " "); got != tc.redis8 {
			t.Errorf("%s as Redis 8: categories %q, want %q", tc.name, got, tc.redis8)
		}
		if got := strings.Join(table.Find(tc.name).Categories(command.ModuleACLImplied), " "); got != tc.redis7 {
			t.Errorf("%s as Redis 7: categories %q, want %q", tc.name, got, tc.redis7)
		}
	}
	if !table.Find("flushall").InCategory("dangerous", 0) || table.Find("del").InCategory("read", 0) {
		t.Error("InCategory")
	}
	if table.Find("cf.add").InCategory("slow", command.ModuleACLAsGiven) || !table.Find("cf.add").InCategory("slow", command.ModuleACLImplied) {
		t.Error("InCategory(cf.add, slow)")
	}
	s := &command.Spec{Flags: command.ReadOnly, ACL: "scripting"}
	if got := strings.Join(s.Categories(0), " "); got != "slow scripting" {
		t.Errorf("a readonly scripting command: %q, want %q (no @read)", got, "slow scripting")
	}
}

func TestFlagNames(t *testing.T) {
	f := command.AllowBusy | command.Module | command.Write | command.MayReplicate | command.NoAuth
	if got := strings.Join(f.Names(), " "); got != "write module no_auth allow_busy" {
		t.Errorf("Names = %q", got)
	}
}

func split(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

func TestKeyPositions(t *testing.T) {
	for _, tc := range []struct {
		req  string
		want []int
	}{
		{"DEL a b c", []int{1, 2, 3}},
		{"DEL", nil},
		{"EXISTS a", []int{1}},
		{"TYPE k", []int{1}},
		{"CF.ADD k x", []int{1}},
		{"CF.INSERT k CAPACITY 10 ITEMS a b", []int{1}},
		{"PING", nil},
	} {
		args := split(tc.req)
		got := table.Lookup(args[0]).KeyPositions(args)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.req, got, tc.want)
		}
	}

	// Specs this table does not use yet, as Redis reads them.
	for _, tc := range []struct {
		name string
		spec command.KeySpec
		req  string
		want []int
	}{
		{"mset", command.KeySpec{Begin: 1, LastKey: -1, Step: 2}, "MSET a 1 b 2", []int{1, 3}},
		{"keyword", command.KeySpec{Begin: 1, Keyword: "STREAMS", LastKey: -1, Step: 1, Limit: 2},
			"XREAD COUNT 2 STREAMS a b 0 0", []int{4, 5}},
		{"keyword absent", command.KeySpec{Begin: 1, Keyword: "STREAMS", LastKey: -1, Step: 1},
			"XREAD COUNT 2", nil},
		{"keyword last", command.KeySpec{Begin: 1, Keyword: "STORE", Step: 1}, "SORT k STORE", nil},
		{"keyword backwards", command.KeySpec{Begin: -2, Keyword: "KEYS", LastKey: -1, Step: 1},
			"MIGRATE h p x 0 5 KEYS a b", []int{7, 8}},
		{"past the end", command.KeySpec{Begin: 2, LastKey: 1, Step: 1}, "CMD x y", nil},
	} {
		s := &command.Spec{Keys: []command.KeySpec{tc.spec}}
		if got := s.KeyPositions(split(tc.req)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %s: %v, want %v", tc.name, tc.req, got, tc.want)
		}
	}
}

func TestLegacyKeys(t *testing.T) {
	rng := func(begin, last, step int, flags ...string) command.KeySpec {
		return command.KeySpec{Flags: flags, Begin: begin, LastKey: last, Step: step}
	}
	for _, tc := range []struct {
		name    string
		keys    []command.KeySpec
		want    [3]int
		movable bool
	}{
		{"none", nil, [3]int{}, false},
		{"one", []command.KeySpec{rng(1, 0, 1)}, [3]int{1, 1, 1}, false},
		{"to the end", []command.KeySpec{rng(1, -1, 1)}, [3]int{1, -1, 1}, false},
		{"step 2", []command.KeySpec{rng(1, -1, 2)}, [3]int{1, -1, 2}, false},
		{"incomplete", []command.KeySpec{rng(1, 0, 1, "RO", "incomplete")}, [3]int{1, 1, 1}, true},
		{"consecutive", []command.KeySpec{rng(1, 0, 1), rng(2, 0, 1)}, [3]int{1, 2, 1}, false},
		{"gap", []command.KeySpec{rng(1, 0, 1), rng(3, 0, 1)}, [3]int{1, 1, 1}, true},
		{"keyword first", []command.KeySpec{{Begin: 1, Keyword: "STORE", Step: 1}, rng(1, 0, 1)},
			[3]int{1, 1, 1}, true},
		{"keyword only", []command.KeySpec{{Begin: 1, Keyword: "STREAMS", LastKey: -1, Step: 1}},
			[3]int{}, true},
	} {
		s := &command.Spec{Keys: tc.keys}
		first, last, step, movable := s.LegacyKeys()
		if [3]int{first, last, step} != tc.want || movable != tc.movable {
			t.Errorf("%s: %d %d %d %v, want %v %v", tc.name, first, last, step, movable, tc.want, tc.movable)
		}
	}
}

// reply runs f on a writer of protocol proto and returns the bytes.
func reply(t *testing.T, proto int, f func(w *resp.Writer)) string {
	t.Helper()
	var buf bytes.Buffer
	w := resp.NewWriter(&buf)
	w.SetProtocol(proto)
	f(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// lines joins RESP lines, each ended by CRLF.
func lines(l ...string) string { return strings.Join(l, "\r\n") + "\r\n" }

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s }

func bulks(names ...string) string {
	out := "*" + strconv.Itoa(len(names)) + "\r\n"
	for _, n := range names {
		out += bulk(n) + "\r\n"
	}
	return out
}

func TestReplyGetKeys(t *testing.T) {
	for _, tc := range []struct {
		req, want, err string
		flags          bool
	}{
		{req: "DEL a b c", want: bulks("a", "b", "c")},
		{req: "del a", want: bulks("a")},
		{req: "CF.ADD k x", want: bulks("k")},
		{req: "EXISTS a", want: bulks("a")},
		{req: "DEL a", flags: true, want: lines("*1", "*2", bulk("a"), "~2", "+RM", "+delete")},
		{req: "CF.EXISTS k x", flags: true, want: lines("*1", "*2", bulk("k"), "~1", "+RO")},
		{req: "NOSUCH a", err: "ERR Invalid command specified"},
		{req: "CLIENT NOSUCH", err: "ERR Invalid command specified"},
		{req: "PING", err: "ERR The command has no key arguments"},
		{req: "CLIENT LIST", err: "ERR The command has no key arguments"},
		{req: "TYPE", err: "ERR Invalid number of arguments specified for command"},
		{req: "TYPE a b", err: "ERR Invalid number of arguments specified for command"},
		{req: "DEL", err: "ERR Invalid number of arguments specified for command"},
		{req: "CF.ADD k", err: "ERR Invalid number of arguments specified for command"},
		{req: "MIGRATE h 1 k 0 1", want: bulks("k")},
		{req: "MIGRATE h 1 k 0 1 COPY AUTH keys", want: bulks("k")},
		{req: "MIGRATE h 1 k 0 1 AUTH2 u keys REPLACE", want: bulks("k")},
	} {
		args := split("COMMAND GETKEYS " + tc.req)
		var msg string
		got := reply(t, 3, func(w *resp.Writer) { msg = table.ReplyGetKeys(w, args, tc.flags) })
		if msg != tc.err || got != tc.want {
			t.Errorf("GETKEYS %s: %q, error %q; want %q, error %q", tc.req, got, msg, tc.want, tc.err)
		}
	}
}

// cfAddInfo is COMMAND INFO cf.add's reply, in RESP3 (resp2 false) or RESP2.
func cfAddInfo(resp3 bool) string {
	set, m := "*", func(n int) string { return "*" + strconv.Itoa(2*n) }
	if resp3 {
		set, m = "~", func(n int) string { return "%" + strconv.Itoa(n) }
	}
	return lines(
		"*1",
		"*10",
		bulk("cf.add"),
		":3",
		set+"3", "+write", "+denyoom", "+module",
		":1", ":1", ":1",
		set+"3", "+@write", "+@slow", "+@cuckoo",
		set+"0",
		set+"1",
		m(3),
		bulk("flags"), set+"1", "+RW",
		bulk("begin_search"), m(2), bulk("type"), bulk("index"), bulk("spec"), m(1), bulk("index"), ":1",
		bulk("find_keys"), m(2), bulk("type"), bulk("range"), bulk("spec"), m(3),
		bulk("lastkey"), ":0", bulk("keystep"), ":1", bulk("limit"), ":0",
		set+"0",
	)
}

func TestReplyInfo(t *testing.T) {
	args := split("COMMAND INFO CF.ADD")
	for proto, want := range map[int]string{2: cfAddInfo(false), 3: cfAddInfo(true)} {
		if got := reply(t, proto, func(w *resp.Writer) { table.ReplyInfo(w, args, command.ModuleACLImplied) }); got != want {
			t.Errorf("RESP%d:\n got %q\nwant %q", proto, got, want)
		}
	}

	// Unknown names are nulls; a subcommand is named with '|' only; the
	// legacy key fields of DEL.
	got := reply(t, 2, func(w *resp.Writer) {
		table.ReplyInfo(w, [][]byte{[]byte("COMMAND"), []byte("INFO"), []byte("nosuch"), []byte("client list")}, 0)
	})
	if got != lines("*2", "$-1", "$-1") {
		t.Errorf("unknown names: %q", got)
	}
	got = reply(t, 2, func(w *resp.Writer) { table.ReplyInfo(w, split("COMMAND INFO del"), 0) })
	if !strings.HasPrefix(got, lines("*1", "*10", bulk("del"), ":-2", "*1", "+write", ":1", ":-1", ":1")) {
		t.Errorf("del: %q", got)
	}
	got = reply(t, 3, func(w *resp.Writer) { table.ReplyInfo(w, split("COMMAND INFO client|list"), 0) })
	if !strings.HasPrefix(got, lines("*1", "*10", bulk("client|list"), ":-2")) {
		t.Errorf("client|list: %q", got)
	}
}

func TestReplyDocs(t *testing.T) {
	cf := table.Find("cf.add")
	if cf.ModuleComplexity == "" || cf.ModuleComplexity == cf.Complexity {
		t.Fatalf("cf.add's ModuleComplexity %q, Complexity %q", cf.ModuleComplexity, cf.Complexity)
	}
	for _, c := range []struct {
		proto      int
		module     bool
		complexity string
	}{{2, false, cf.Complexity}, {3, false, cf.Complexity}, {2, true, cf.ModuleComplexity}, {3, true, cf.ModuleComplexity}} {
		proto := c.proto
		m := func(n int) string { return "*" + strconv.Itoa(2*n) }
		if proto == 3 {
			m = func(n int) string { return "%" + strconv.Itoa(n) }
		}
		want := lines(
			m(1),
			bulk("cf.add"),
			m(6),
			bulk("summary"), bulk(cf.Summary),
			bulk("since"), bulk("1.0.0"),
			bulk("group"), bulk("module"),
			bulk("complexity"), bulk(c.complexity),
			bulk("module"), bulk("bf"),
			bulk("arguments"), "*2",
			m(4), bulk("name"), bulk("key"), bulk("type"), bulk("key"),
			bulk("display_text"), bulk("key"), bulk("key_spec_index"), ":0",
			m(3), bulk("name"), bulk("item"), bulk("type"), bulk("string"),
			bulk("display_text"), bulk("item"),
		)
		got := reply(t, proto, func(w *resp.Writer) { table.ReplyDocs(w, split("COMMAND DOCS cf.add nosuch"), c.module) })
		if got != want {
			t.Errorf("RESP%d, module %v:\n got %q\nwant %q", proto, c.module, got, want)
		}
	}
	// A command without a module's complexity keeps its own.
	for _, module := range []bool{false, true} {
		got := reply(t, 2, func(w *resp.Writer) { table.ReplyDocs(w, split("COMMAND DOCS cf.reserve"), module) })
		if !strings.Contains(got, lines(bulk("complexity"), bulk("O(1)"))) {
			t.Errorf("cf.reserve, module %v: %q", module, got)
		}
	}

	got := reply(t, 3, func(w *resp.Writer) { table.ReplyDocs(w, split("COMMAND DOCS quit"), false) })
	for _, part := range []string{
		lines(bulk("doc_flags"), "~1", "+deprecated"),
		lines(bulk("deprecated_since"), bulk("7.2.0")),
		bulk("replaced_by"),
	} {
		if !strings.Contains(got, part) {
			t.Errorf("quit docs %q lack %q", got, part)
		}
	}
	got = reply(t, 3, func(w *resp.Writer) { table.ReplyDocs(w, split("COMMAND DOCS client|kill"), false) })
	want := lines("%4", bulk("name"), bulk("old-format"), bulk("type"), bulk("string"),
		bulk("display_text"), bulk("ip:port"), bulk("deprecated_since"), bulk("2.8.12"))
	if !strings.Contains(got, want) {
		t.Errorf("client|kill docs %q lack %q", got, want)
	}
}

// TestRepliesWellFormed parses COMMAND, COMMAND INFO and COMMAND DOCS for
// every command in both protocols: each aggregate holds exactly the
// elements its header counts.
func TestRepliesWellFormed(t *testing.T) {
	for _, proto := range []int{2, 3} {
		for name, f := range map[string]func(w *resp.Writer){
			"COMMAND":      func(w *resp.Writer) { table.ReplyCommand(w, command.ModuleACLAsGiven) },
			"COMMAND as 7": func(w *resp.Writer) { table.ReplyCommand(w, command.ModuleACLImplied) },
			"COMMAND DOCS": func(w *resp.Writer) { table.ReplyDocs(w, split("COMMAND DOCS"), false) },
			"COMMAND LIST": func(w *resp.Writer) { table.ReplyList(w, split("COMMAND LIST"), 0) },
			"COMMAND HELP": command.ReplyHelp,
		} {
			b := []byte(reply(t, proto, f))
			rest, err := parse(b)
			if err != nil || len(rest) != 0 {
				t.Errorf("RESP%d %s: %v, %d bytes left", proto, name, err, len(rest))
			}
		}
	}
}

// parse reads one RESP2 or RESP3 value and returns what follows it.
func parse(b []byte) ([]byte, error) {
	line, rest, ok := bytes.Cut(b, []byte("\r\n"))
	if !ok || len(line) == 0 {
		return nil, fmt.Errorf("no line in %q", b)
	}
	n, err := strconv.Atoi(string(line[1:]))
	switch line[0] {
	case '+', '-', ':':
		return rest, nil
	case '$':
		if err != nil || n < -1 {
			return nil, fmt.Errorf("bad bulk %q", line)
		}
		if n == -1 {
			return rest, nil
		}
		if len(rest) < n+2 || string(rest[n:n+2]) != "\r\n" {
			return nil, fmt.Errorf("short bulk %q", line)
		}
		return rest[n+2:], nil
	case '*', '~', '%':
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad aggregate %q", line)
		}
		if line[0] == '%' {
			n *= 2
		}
		for range n {
			if rest, err = parse(rest); err != nil {
				return nil, err
			}
		}
		return rest, nil
	}
	return nil, fmt.Errorf("unknown type %q", line)
}

func TestReplyList(t *testing.T) {
	var cfs []string
	for _, s := range table.All() {
		if strings.HasPrefix(s.Name, "cf.") {
			cfs = append(cfs, s.Name)
		}
	}
	if len(cfs) != 14 {
		t.Fatalf("%d cf commands: %v", len(cfs), cfs)
	}
	var clientSubs []string
	for _, s := range table.Find("client").Subs {
		clientSubs = append(clientSubs, s.Name)
	}
	for _, tc := range []struct {
		req  string
		want string
		err  string
	}{
		{req: "COMMAND LIST FILTERBY MODULE bf", want: bulks(cfs...)},
		{req: "COMMAND LIST filterby module BF", want: bulks(cfs...)},
		{req: "COMMAND LIST FILTERBY ACLCAT cuckoo", want: bulks(cfs...)},
		{req: "COMMAND LIST FILTERBY PATTERN cf.*", want: bulks(cfs...)},
		{req: "COMMAND LIST FILTERBY PATTERN CLIENT|*", want: bulks(clientSubs...)},
		{req: "COMMAND LIST FILTERBY PATTERN cf.add*", want: bulks("cf.add", "cf.addnx")},
		{req: "COMMAND LIST FILTERBY MODULE nosuch", want: bulks()},
		{req: "COMMAND LIST FILTERBY ACLCAT nosuch", want: bulks()},
		{req: "COMMAND LIST FILTERBY NAME x", err: "ERR syntax error"},
		{req: "COMMAND LIST FILTERBY MODULE", err: "ERR syntax error"},
		{req: "COMMAND LIST bf", err: "ERR syntax error"},
	} {
		var msg string
		got := reply(t, 2, func(w *resp.Writer) { msg = table.ReplyList(w, split(tc.req), 0) })
		if msg != tc.err || got != tc.want {
			t.Errorf("%s: %q, error %q; want %q, error %q", tc.req, got, msg, tc.want, tc.err)
		}
	}
	// An empty module name lists no command (Redis finds no such module).
	got := reply(t, 2, func(w *resp.Writer) {
		table.ReplyList(w, [][]byte{[]byte("COMMAND"), []byte("LIST"), []byte("FILTERBY"), []byte("MODULE"), {}}, 0)
	})
	if got != bulks() {
		t.Errorf("module \"\": %q", got)
	}
	got = reply(t, 2, func(w *resp.Writer) { table.ReplyList(w, split("COMMAND LIST"), 0) })
	if want := bulks(namesOf(every())...); got != want {
		t.Errorf("COMMAND LIST: %q, want %q", got, want)
	}
}

func namesOf(specs []*command.Spec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

func TestReplyCount(t *testing.T) {
	want := fmt.Sprintf(":%d\r\n", len(table.All()))
	for _, proto := range []int{2, 3} {
		if got := reply(t, proto, table.ReplyCount); got != want {
			t.Errorf("RESP%d: %q, want %q", proto, got, want)
		}
	}
	if n := len(table.All()); n < 36 {
		t.Errorf("%d commands, want at least the 36 the server serves", n)
	}
}

// TestSoleKey: the one-key fast path is taken exactly by commands whose
// only key is one argument named by index, and agrees with KeyPositions.
func TestSoleKey(t *testing.T) {
	for name, want := range map[string]int{"cf.add": 1, "cf.exists": 1, "restore-asking": 1, "memory|usage": 2,
		"del": 0, "exists": 0, "migrate": 0, "rename": 0, "ping": 0, "cuckoo.cluster|setconfig": 0} {
		s := table.Find(name)
		if s == nil {
			t.Fatalf("%s is not in the table", name)
		}
		if got := s.SoleKey(); got != want {
			t.Errorf("%s: SoleKey = %d, want %d", name, got, want)
		}
	}
	for _, s := range table.All() {
		for _, x := range append([]*command.Spec{s}, s.Subs...) {
			k := x.SoleKey()
			if k == 0 {
				continue
			}
			args := make([][]byte, k+3)
			for i := range args {
				args[i] = []byte("a")
			}
			if pos := x.KeyPositions(args); len(pos) != 1 || pos[0] != k {
				t.Errorf("%s: SoleKey %d, but KeyPositions %v", x.Name, k, pos)
			}
		}
	}
}

// TestMigrateKeys: MIGRATE's keys are those after KEYS when the key
// argument is empty (Redis's migrateGetKeys), so COMMAND GETKEYS, the ACL
// and the cluster see them, and never the empty key.
func TestMigrateKeys(t *testing.T) {
	s := table.Find("migrate")
	for _, tc := range []struct {
		req  []string
		want []int
	}{
		{[]string{"MIGRATE", "h", "1", "k", "0", "1"}, []int{3}},
		{[]string{"MIGRATE", "h", "1", "", "0", "1", "KEYS", "a", "b"}, []int{7, 8}},
		{[]string{"MIGRATE", "h", "1", "", "0", "1", "AUTH", "KEYS", "KEYS", "a"}, []int{9}},
		{[]string{"MIGRATE", "h", "1", "", "0", "1", "AUTH2", "u", "KEYS", "KEYS", "a", "b"}, []int{10, 11}},
		{[]string{"MIGRATE", "h", "1", "", "0", "1", "KEYS"}, nil},
	} {
		args := make([][]byte, len(tc.req))
		for i, a := range tc.req {
			args[i] = []byte(a)
		}
		if got := s.KeyPositions(args); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%q: KeyPositions = %v, want %v", tc.req, got, tc.want)
		}
	}
}
