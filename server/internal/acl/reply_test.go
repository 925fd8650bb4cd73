package acl_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/acl"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// written returns what write wrote on a writer of protocol proto (2 or 3).
func written(proto int, write func(w *resp.Writer)) string {
	w := resp.NewWriter(nil)
	w.SetProtocol(proto)
	write(w)
	return string(w.Bytes())
}

// bulks is RESP's bulk strings of s, one after the other.
func bulks(s ...string) string {
	var b strings.Builder
	for _, v := range s {
		b.WriteString("$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n")
	}
	return b.String()
}

// TestWriteUser: ACL GETUSER's map, in RESP2 (a flat array) and RESP3 (a
// map, its flags a set); a null for no user.
func TestWriteUser(t *testing.T) {
	u, err := acl.NewUser("alice", catalog()).Apply("on", ">pw", "+cf.exists", "~k*", "%R~r*", "&ch")
	if err != nil {
		t.Fatal(err)
	}
	fields := func(mapHeader, setHeader string) string {
		return mapHeader + bulks("flags") + setHeader + bulks("on") +
			bulks("passwords") + "*1\r\n" + bulks(acl.Hash("pw")) +
			bulks("commands", "-@all +cf.exists", "keys", "~k* %R~r*", "channels", "&ch", "selectors") + "*0\r\n"
	}
	for _, tc := range []struct {
		proto    int
		want     string
		wantNull string
	}{
		{2, fields("*12\r\n", "*1\r\n"), "$-1\r\n"},
		{3, fields("%6\r\n", "~1\r\n"), "_\r\n"},
	} {
		if got := written(tc.proto, func(w *resp.Writer) { acl.WriteUser(w, u) }); got != tc.want {
			t.Errorf("RESP%d: WriteUser = %q, want %q", tc.proto, got, tc.want)
		}
		if got := written(tc.proto, func(w *resp.Writer) { acl.WriteUser(w, nil) }); got != tc.wantNull {
			t.Errorf("RESP%d: WriteUser(nil) = %q, want %q", tc.proto, got, tc.wantNull)
		}
	}
}

// TestWriteUsersAndList: ACL USERS's names and ACL LIST's rules, in the
// registry's order, the same in both protocols.
func TestWriteUsersAndList(t *testing.T) {
	r := acl.NewRegistry(catalog())
	if err := r.SetUser("bob", "on", "nopass", "+@read", "allkeys"); err != nil {
		t.Fatal(err)
	}
	users := r.Users()
	var names, lines []string
	for _, u := range users {
		names = append(names, u.Name)
		lines = append(lines, u.Describe())
	}
	if !slices.Equal(names, []string{"bob", "default"}) {
		t.Fatalf("users %q, want bob and default", names)
	}
	for proto := 2; proto <= 3; proto++ {
		if got, want := written(proto, func(w *resp.Writer) { acl.WriteUsers(w, users) }), "*2\r\n"+bulks(names...); got != want {
			t.Errorf("RESP%d: WriteUsers = %q, want %q", proto, got, want)
		}
		if got, want := written(proto, func(w *resp.Writer) { acl.WriteList(w, users) }), "*2\r\n"+bulks(lines...); got != want {
			t.Errorf("RESP%d: WriteList = %q, want %q", proto, got, want)
		}
	}
	if want := "user bob on nopass ~* resetchannels -@all +@read"; lines[0] != want {
		t.Errorf("bob is %q, want %q", lines[0], want)
	}
}

// TestWriteCat: every category without one, a category's commands with
// or without '@' in any case, Redis's error for an unknown one (nothing
// written).
func TestWriteCat(t *testing.T) {
	cat := catalog()
	all := written(2, func(w *resp.Writer) {
		if err := acl.WriteCat(w, cat, nil); err != nil {
			t.Fatal(err)
		}
	})
	if want := "*" + strconv.Itoa(len(acl.Categories)) + "\r\n" + bulks(acl.Categories...); all != want {
		t.Errorf("WriteCat(nil) = %q, want %q", all, want)
	}
	for _, arg := range []string{"read", "@read", "READ"} {
		got := written(3, func(w *resp.Writer) {
			if err := acl.WriteCat(w, cat, []byte(arg)); err != nil {
				t.Fatal(err)
			}
		})
		if want := "*1\r\n" + bulks("cf.exists"); got != want {
			t.Errorf("WriteCat(%q) = %q, want %q", arg, got, want)
		}
	}
	w := resp.NewWriter(nil)
	err := acl.WriteCat(w, cat, []byte("no\nsuch"))
	if want := "ERR Unknown category 'no?such'"; err == nil || err.Error() != want {
		t.Errorf("WriteCat(unknown) = %v, want %q", err, want)
	}
	if w.Len() != 0 {
		t.Errorf("WriteCat(unknown) wrote %q", w.Bytes())
	}
}

// TestWriteLog: each entry as Redis's ten fields; age-seconds a double
// (a bulk string in RESP2), the timestamps in milliseconds.
func TestWriteLog(t *testing.T) {
	created := time.UnixMilli(1_700_000_000_000)
	e := acl.LogEntry{Count: 2, Reason: "key", Context: "multi", Object: "k1", Username: "alice",
		ClientInfo: "id=7", ID: 3, Created: created, Updated: created.Add(time.Second)}
	now := created.Add(1500 * time.Millisecond)
	entry := func(mapHeader, age string) string {
		return "*1\r\n" + mapHeader +
			bulks("count") + ":2\r\n" + bulks("reason", "key", "context", "multi", "object", "k1", "username", "alice") +
			bulks("age-seconds") + age + bulks("client-info", "id=7", "entry-id") + ":3\r\n" +
			bulks("timestamp-created") + ":1700000000000\r\n" + bulks("timestamp-last-updated") + ":1700000001000\r\n"
	}
	for _, tc := range []struct {
		proto int
		want  string
	}{
		{2, entry("*20\r\n", bulks("1.5"))},
		{3, entry("%10\r\n", ",1.5\r\n")},
	} {
		if got := written(tc.proto, func(w *resp.Writer) { acl.WriteLog(w, []acl.LogEntry{e}, now) }); got != tc.want {
			t.Errorf("RESP%d: WriteLog = %q, want %q", tc.proto, got, tc.want)
		}
	}
	if got := written(3, func(w *resp.Writer) { acl.WriteLog(w, nil, now) }); got != "*0\r\n" {
		t.Errorf("WriteLog(none) = %q", got)
	}
}

// TestCheck: a refused command, key or channel as NOPERM, ACL DRYRUN's
// text and ACL LOG's object, in Redis's words.
func TestCheck(t *testing.T) {
	u, err := acl.NewUser("alice", catalog()).Apply("on", "nopass", "+cf.exists", "%R~k*", "&news.*")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id              int
		name            string
		keys            acl.KeySpec
		pubsub          bool
		args            [][]byte
		err, dry, logAs string // "" for allowed
	}{
		{1, "cf.exists", keyAt{read: []int{1}}, false, request("cf.exists", "k1", "x"), "", "", ""},
		{0, "cf.add", keyAt{write: []int{1}}, false, request("cf.add", "k1", "x"),
			"NOPERM User alice has no permissions to run the 'cf.add' command",
			"User alice has no permissions to run the 'cf.add' command", "cf.add"},
		{1, "cf.exists", keyAt{read: []int{1}}, false, request("cf.exists", "other", "x"),
			"NOPERM No permissions to access a key",
			"User alice has no permissions to access the 'other' key", "other"},
	} {
		d := u.Check(tc.id, tc.name, tc.keys, tc.pubsub, tc.args)
		if tc.err == "" {
			if d != nil {
				t.Errorf("%s: denied: %v", tc.args, d)
			}
			continue
		}
		if d == nil {
			t.Errorf("%s: allowed, want %q", tc.args, tc.err)
			continue
		}
		if d.Error() != tc.err || d.DryRun() != tc.dry || d.LogObject() != tc.logAs {
			t.Errorf("%s: %q, %q, %q; want %q, %q, %q", tc.args, d.Error(), d.DryRun(), d.LogObject(), tc.err, tc.dry, tc.logAs)
		}
	}
	// Channels are checked only for a pub/sub command.
	pub, err := u.Apply("+cf.add")
	if err != nil {
		t.Fatal(err)
	}
	if d := pub.Check(0, "publish", nil, true, request("publish", "sports", "m")); d == nil || d.Reason != acl.DeniedChannel ||
		d.Error() != "NOPERM No permissions to access a channel" || d.DryRun() != "User alice has no permissions to access the 'sports' channel" {
		t.Errorf("PUBLISH sports: %#v", d)
	}
	if d := pub.Check(0, "publish", nil, false, request("publish", "sports", "m")); d != nil {
		t.Errorf("not pub/sub: %v", d)
	}
}

// TestUnpermitted: each subscriber that lost a channel or pattern, once,
// in the order met; none before authentication.
func TestUnpermitted(t *testing.T) {
	cat := catalog()
	news, _ := acl.NewUser("news", cat).Apply("&news.*")
	all := acl.DefaultUser(cat)
	users := map[string]*acl.User{"a": news, "b": news, "c": all, "d": nil}
	subs := []struct {
		c   string
		sub acl.Subscription
	}{
		{"a", acl.Subscription{Name: "news.1"}},
		{"a", acl.Subscription{Name: "sports"}},
		{"a", acl.Subscription{Name: "x*", Pattern: true}},
		{"b", acl.Subscription{Name: "news.*", Pattern: true}},
		{"b", acl.Subscription{Name: "news.*x", Pattern: true}},
		{"c", acl.Subscription{Name: "sports"}},
		{"d", acl.Subscription{Name: "sports"}},
	}
	seq := func(yield func(string, acl.Subscription) bool) {
		for _, s := range subs {
			if !yield(s.c, s.sub) {
				return
			}
		}
	}
	got := acl.Unpermitted(seq, func(c string) *acl.User { return users[c] })
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("Unpermitted = %q, want %q (users %v)", got, want, slices.Sorted(maps.Keys(users)))
	}
}

// TestSaveLoad: Save writes what Load reads back; Load's failures leave
// the users unchanged and name the cause without the file's directory;
// Save's answer is Redis's, its cause kept for the log.
func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.acl")
	r := acl.NewRegistry(catalog())
	if err := r.SetUser("bob", "on", ">pw", "+@read", "~k*"); err != nil {
		t.Fatal(err)
	}
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	r2 := acl.NewRegistry(catalog())
	if err := r2.Load(path); err != nil {
		t.Fatal(err)
	}
	if r2.File() != r.File() {
		t.Errorf("loaded %q, saved %q", r2.File(), r.File())
	}

	err := r2.Load(filepath.Join(dir, "missing.acl"))
	var le *acl.LoadError
	if !errors.As(err, &le) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load(missing) = %v, want a *LoadError of os.ErrNotExist", err)
	}
	if want := "ERR Error loading ACLs, leaving the current users unchanged: open missing.acl: no such file or directory"; err.Error() != want {
		t.Errorf("Load(missing) = %q, want %q", err, want)
	}
	if err := os.WriteFile(path, []byte("user carol on +nosuch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r2.Load(path); err == nil || !strings.HasPrefix(err.Error(), "ERR Error loading ACLs, leaving the current users unchanged: ") ||
		strings.Contains(err.Error(), dir) {
		t.Errorf("Load(bad rule) = %v", err)
	}
	if r2.File() != r.File() {
		t.Errorf("after a failed load: %q, want %q", r2.File(), r.File())
	}

	err = r.Save(filepath.Join(dir, "no", "such", "dir", "users.acl"))
	var se *acl.SaveError
	if !errors.As(err, &se) || se.Err == nil || err.Error() != acl.ErrSave.Error() {
		t.Errorf("Save(bad path) = %v, want a *SaveError", err)
	}
}

// TestErrorTexts: the fixed replies, as Redis words them.
func TestErrorTexts(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{acl.ErrNoAuth, "NOAUTH Authentication required."},
		{acl.ErrWrongPass, "WRONGPASS invalid username-password pair or user is disabled."},
		{acl.ErrSave, "ERR There was an error trying to save the ACLs. Please check the server logs for more information"},
		{acl.UserNotFound([]byte("a\rb")), "ERR User 'a?b' not found"},
		{acl.CommandNotFound([]byte(strings.Repeat("x", 200))), "ERR Command '" + strings.Repeat("x", 128) + "' not found"},
	} {
		if tc.err.Error() != tc.want {
			t.Errorf("%q, want %q", tc.err, tc.want)
		}
	}
	if !strings.HasPrefix(acl.ErrNoFile.Error(), "ERR This Redis instance is not configured to use an ACL file.") {
		t.Errorf("ErrNoFile = %q", acl.ErrNoFile)
	}
}

// TestWriteHelp: ACL HELP's lines as status replies, Redis's first line
// first and HELP last.
func TestWriteHelp(t *testing.T) {
	got := written(2, func(w *resp.Writer) { acl.WriteHelp(w) })
	if !strings.HasPrefix(got, "*") || !strings.Contains(got, "\r\n+ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n") ||
		!strings.HasSuffix(got, "+HELP\r\n+    Print this help.\r\n") {
		t.Errorf("WriteHelp = %q", got)
	}
}
