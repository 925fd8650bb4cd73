package acl_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/acl"
)

// catalog is a small command table: two plain commands, a container with
// two subcommands.
func catalog() *acl.Catalog {
	return acl.NewCatalog([]acl.Command{
		{ID: 0, Name: "cf.add", Categories: []string{"write", "slow", "cuckoo"}},
		{ID: 1, Name: "cf.exists", Categories: []string{"read", "fast", "cuckoo"}},
		{ID: 2, Name: "client", Categories: []string{"slow"}, Subs: []int{3, 4}},
		{ID: 3, Name: "client|list", Categories: []string{"admin", "slow", "dangerous", "connection"}},
		{ID: 4, Name: "client|id", Categories: []string{"slow", "connection"}},
		{ID: 5, Name: "flushall", Categories: []string{"write", "slow", "keyspace", "dangerous"}},
	})
}

func TestRules(t *testing.T) {
	cat := catalog()
	for _, tc := range []struct {
		rules   []string
		can     []int
		cannot  []int
		cmdDesc string
	}{
		{[]string{"+@all"}, []int{0, 1, 2, 3, 4, 5}, nil, "+@all"},
		{[]string{"+@read"}, []int{1}, []int{0, 2, 3, 4, 5}, "-@all +@read"},
		{[]string{"+@all", "-@dangerous"}, []int{0, 1, 4}, []int{3, 5}, "+@all -@dangerous"},
		{[]string{"+client"}, []int{2, 3, 4}, []int{0, 1, 5}, "-@all +client"},
		{[]string{"+client|id"}, []int{4}, []int{2, 3}, "-@all +client|id"},
		{[]string{"+@cuckoo", "-cf.add"}, []int{1}, []int{0}, "-@all +@cuckoo -cf.add"},
		{[]string{"allcommands", "nocommands", "+CF.EXISTS"}, []int{1}, []int{0}, "-@all +cf.exists"},
	} {
		u, err := acl.NewUser("u", cat).Apply(tc.rules...)
		if err != nil {
			t.Fatalf("%v: %v", tc.rules, err)
		}
		for _, id := range tc.can {
			if !u.CanRun(id) {
				t.Errorf("%v: cannot run %s", tc.rules, cat.Name(id))
			}
		}
		for _, id := range tc.cannot {
			if u.CanRun(id) {
				t.Errorf("%v: can run %s", tc.rules, cat.Name(id))
			}
		}
		if got := u.Commands(); got != tc.cmdDesc {
			t.Errorf("%v: Commands() = %q, want %q", tc.rules, got, tc.cmdDesc)
		}
	}
}

func TestKeys(t *testing.T) {
	u, err := acl.NewUser("u", catalog()).Apply("~cache:*", "%R~shared:*", "%W~log:*")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key         string
		read, write bool
		ok          bool
	}{
		{"cache:1", true, true, true},
		{"shared:x", true, false, true},
		{"shared:x", false, true, false},
		{"log:1", false, true, true},
		{"log:1", true, false, false},
		{"other", true, false, false},
	} {
		if got := u.CanAccess([]byte(tc.key), tc.read, tc.write); got != tc.ok {
			t.Errorf("%s read=%v write=%v: %v", tc.key, tc.read, tc.write, got)
		}
	}
	if got := u.Keys(); got != "~cache:* %R~shared:* %W~log:*" {
		t.Errorf("Keys() = %q", got)
	}
	if _, err := u.Apply("allkeys", "~more"); err == nil || !strings.Contains(err.Error(), "Try 'resetkeys'") {
		t.Errorf("a pattern after allkeys: %v", err)
	}
}

func TestPasswords(t *testing.T) {
	cat := catalog()
	u, err := acl.NewUser("u", cat).Apply("on", ">s3cret", "#"+acl.Hash("other"))
	if err != nil {
		t.Fatal(err)
	}
	if !u.CheckPassword("s3cret") || !u.CheckPassword("other") || u.CheckPassword("wrong") {
		t.Error("password checks")
	}
	off, _ := u.Apply("off")
	if off.CheckPassword("s3cret") {
		t.Error("a disabled user authenticated")
	}
	rm, err := u.Apply("<s3cret")
	if err != nil || rm.CheckPassword("s3cret") {
		t.Errorf("<s3cret: %v", err)
	}
	for rule, want := range map[string]string{
		"<nope":            "The password you are trying to remove from the user does not exist",
		"#abc":             "The password hash must be exactly 64 characters",
		"+nosuchcommand":   "Unknown command or category name in ACL",
		"+@nosuchcat":      "Unknown command or category name in ACL",
		"bogus":            "Syntax error",
		"%X~k":             "Syntax error",
		"(~k +@all)":       "Selectors are not supported",
		"+client|list|x":   "Unknown command or category name in ACL",
		"+cf.add|firstarg": "Allowing first-arg of a subcommand is not supported",
	} {
		_, err := u.Apply("on", rule)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "Error in ACL SETUSER modifier '"+rule+"'") {
			t.Errorf("%s: %v, want %q", rule, err, want)
		}
	}
	// All or none: a bad rule after good ones changes nothing.
	same, err := u.Apply("off", "+@all", "bogus")
	if err == nil || same != u || !u.Enabled {
		t.Error("a failed Apply changed the user")
	}
	// nopass, resetpass, reset.
	np, _ := u.Apply("nopass")
	if !np.CheckPassword("anything") || len(np.Passwords()) != 0 {
		t.Error("nopass")
	}
	r, _ := u.Apply("+@all", "allkeys", "reset")
	if r.Enabled || r.CheckPassword("s3cret") || r.CanRun(0) || r.CanAccess([]byte("k"), true, false) {
		t.Errorf("reset left %s", r.Describe())
	}
}

// TestDescribeRoundTrip: a user described as ACL LIST and files write it
// rebuilds the same user.
func TestDescribeRoundTrip(t *testing.T) {
	cat := catalog()
	for _, rules := range [][]string{
		{"on", ">a", ">b", "~k*", "%R~r*", "&ch", "+@read", "-cf.exists", "+client|id"},
		{"off", "resetpass", "+@all", "-@dangerous"},
		{"on", "nopass", "allkeys", "allchannels", "+@all"},
	} {
		u, err := acl.NewUser("u", cat).Apply(rules...)
		if err != nil {
			t.Fatal(err)
		}
		line := u.Describe()
		defs, err := acl.ParseFile("f", line, cat)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		v, err := acl.NewUser("u", cat).Apply(defs[0].Rules...)
		if err != nil || v.Describe() != line {
			t.Errorf("%v: %q rebuilt as %q (%v)", rules, line, v.Describe(), err)
		}
		for id := range cat.Len() {
			if u.CanRun(id) != v.CanRun(id) {
				t.Errorf("%q: command %d differs after the round trip", line, id)
			}
		}
	}
}

func TestRegistryAndFile(t *testing.T) {
	cat := catalog()
	r := acl.NewRegistry(cat)
	if err := r.SetUser("alice", "on", ">pw", "~app:*", "+@cuckoo"); err != nil {
		t.Fatal(err)
	}
	ref := r.Get("alice")
	if err := r.SetUser("alice", "-cf.add"); err != nil {
		t.Fatal(err)
	}
	if ref.Load().CanRun(0) {
		t.Error("a held Ref did not see the change")
	}
	if _, err := r.DelUsers("default"); err == nil {
		t.Error("DelUsers default")
	}
	if n, _ := r.DelUsers("alice", "nobody"); n != 1 || !ref.Deleted() {
		t.Errorf("DelUsers: %d, deleted %v", n, ref.Deleted())
	}
	for _, bad := range []string{"user a on +nosuch", "usr a on", "user a on\nuser a off"} {
		if _, err := acl.ParseFile("users.acl", bad, cat); err == nil || !strings.HasPrefix(err.Error(), "users.acl:") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	defs, err := acl.ParseFile("users.acl", "# comment\nuser bob on nopass ~* +@read\n\n", cat)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Replace(defs); err != nil {
		t.Fatal(err)
	}
	if got := len(r.Users()); got != 2 {
		t.Errorf("%d users after Replace", got)
	}
	if !strings.Contains(r.File(), "user bob on nopass ~* resetchannels -@all +@read") {
		t.Errorf("File():\n%s", r.File())
	}
}

func TestLog(t *testing.T) {
	l := acl.NewLog(3)
	now := time.Now()
	e := acl.LogEntry{Reason: "command", Context: "toplevel", Object: "cf.add", Username: "u"}
	l.Add(e, now)
	l.Add(e, now.Add(time.Second))
	if got := l.Entries(10); len(got) != 1 || got[0].Count != 2 {
		t.Errorf("a repeated denial: %+v", got)
	}
	l.Add(e, now.Add(2*time.Minute))
	for i := range 5 {
		e.Object = string(rune('a' + i))
		l.Add(e, now)
	}
	if got := l.Entries(10); len(got) != 3 || got[0].Object != "e" {
		t.Errorf("bounded log: %+v", got)
	}
	l.Reset()
	if len(l.Entries(10)) != 0 {
		t.Error("Reset")
	}
}

// FuzzRules: any rules give a user or a RuleError, never a panic; a user
// rebuilds itself from its description.
func FuzzRules(f *testing.F) {
	for _, s := range []string{"on >pw ~k* +@read", "%RW~x &c -@all +client|id", "reset allkeys nopass", "<x #zz (a)", "%~ ~ + - +@ &"} {
		f.Add(s)
	}
	cat := catalog()
	f.Fuzz(func(t *testing.T, s string) {
		u, err := acl.NewUser("u", cat).Apply(strings.Fields(s)...)
		if err != nil {
			var re *acl.RuleError
			if !asRuleError(err, &re) {
				t.Fatalf("%q: %T %v", s, err, err)
			}
			return
		}
		line := u.Describe()
		defs, err := acl.ParseFile("f", line, cat)
		if err != nil {
			t.Fatalf("%q: its description %q does not parse: %v", s, line, err)
		}
		v, _ := acl.NewUser("u", cat).Apply(defs[0].Rules...)
		if v.Describe() != line {
			t.Fatalf("%q: %q rebuilt as %q", s, line, v.Describe())
		}
	})
}

func asRuleError(err error, target **acl.RuleError) bool {
	re, ok := err.(*acl.RuleError)
	*target = re
	return ok
}

// TestChannels: a channel matches a user's channel patterns as a glob; a
// pattern subscription must name one of them literally, as Redis checks;
// allchannels (&*) grants everything, a new user nothing.
func TestChannels(t *testing.T) {
	cat := catalog()
	u, err := acl.NewUser("u", cat).Apply("&news.*", "&__sentinel__:hello")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		channel   string
		isPattern bool
		ok        bool
	}{
		{"news.sport", false, true},
		{"news.", false, true},
		{"news", false, false},
		{"__sentinel__:hello", false, true},
		{"__sentinel__:hellox", false, false},
		{"other", false, false},
		{"news.*", true, true},             // the rule itself, literally
		{"news.sport", true, false},        // matches a rule, but is not one
		{"news.s*", true, false},           // narrower than a rule, yet not one of them
		{"*", true, false},                 // wider
		{"__sentinel__:hello", true, true}, // a rule without globs
	} {
		if got := u.CanChannel(tc.channel, tc.isPattern); got != tc.ok {
			t.Errorf("CanChannel(%q, pattern=%v) = %v, want %v", tc.channel, tc.isPattern, got, tc.ok)
		}
	}
	if got := u.Channels(); got != "&news.* &__sentinel__:hello" {
		t.Errorf("Channels() = %q", got)
	}
	if u.Unrestricted() {
		t.Error("a user with channel rules is unrestricted")
	}
	fresh := acl.NewUser("v", cat)
	if fresh.CanChannel("x", false) || fresh.CanChannel("*", true) {
		t.Error("a new user may use channels (Redis 7: resetchannels)")
	}
	all, err := fresh.Apply("allchannels")
	if err != nil {
		t.Fatal(err)
	}
	if !all.CanChannel("anything", false) || !all.CanChannel("any*", true) {
		t.Error("allchannels does not grant every channel and pattern")
	}
	def := acl.DefaultUser(cat)
	if !def.CanChannel("x", false) || !def.CanChannel("*", true) || !def.Unrestricted() {
		t.Error("the default user is restricted")
	}
	if u2, _ := def.Apply("resetchannels"); u2.Unrestricted() || u2.CanChannel("x", false) {
		t.Error("resetchannels leaves the default user unrestricted")
	}
	if _, err := all.Apply("&more"); err == nil || !strings.Contains(err.Error(), "Try 'resetchannels'") {
		t.Errorf("a pattern after allchannels: %v", err)
	}
}
