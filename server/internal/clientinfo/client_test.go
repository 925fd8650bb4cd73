package clientinfo_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/clientinfo"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

var t0 = time.Unix(1_700_000_000, 0)

// TestLine: CLIENT LIST's line, every field in Redis's order.
func TestLine(t *testing.T) {
	c := clientinfo.Client{
		ID: 7, Addr: "127.0.0.1:50000", LAddr: "127.0.0.1:6379", FD: 9, Name: "app",
		Created: t0, LastActive: t0.Add(40 * time.Second),
		InMulti: true, Queued: 3, Watch: 2, Sub: 1, PSub: 2, SSub: 0,
		QbufCap: 100, Qbuf: 30, MultiMem: 50, Omem: 20,
		Cmd: "exec", User: "alice", Resp: 3, LibName: "go-redis", LibVer: "9.0",
	}
	now := t0.Add(42*time.Second + 900*time.Millisecond)
	want := "id=7 addr=127.0.0.1:50000 laddr=127.0.0.1:6379 fd=9 name=app age=42 idle=2 flags=Px db=0 sub=1 psub=2 ssub=0 multi=3 watch=2 qbuf=30 qbuf-free=70 multi-mem=50 omem=20 tot-mem=170 cmd=exec user=alice redir=-1 resp=3 lib-name=go-redis lib-ver=9.0"
	if got := c.Line(now); got != want {
		t.Errorf("Line:\n got %s\nwant %s", got, want)
	}
	// Outside MULTI multi is -1; a request buffer fuller than its capacity
	// (a figure read mid-change) has no room left, never less.
	c = clientinfo.Client{ID: 1, FD: -1, Created: t0, LastActive: t0, QbufCap: 10, Qbuf: 16, Cmd: "NULL", Resp: 2}
	want = "id=1 addr= laddr= fd=-1 name= age=0 idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 watch=0 qbuf=16 qbuf-free=0 multi-mem=0 omem=0 tot-mem=10 cmd=NULL user= redir=-1 resp=2 lib-name= lib-ver="
	if got := c.Line(t0); got != want {
		t.Errorf("Line:\n got %s\nwant %s", got, want)
	}
}

// TestFlagsAndType: the flags in Redis's order, N for none; the type a
// replica's link before a subscriber.
func TestFlagsAndType(t *testing.T) {
	for _, tc := range []struct {
		c           clientinfo.Client
		flags, kind string
	}{
		{clientinfo.Client{}, "N", "normal"},
		{clientinfo.Client{Replica: true}, "S", "slave"},
		{clientinfo.Client{SSub: 1}, "P", "pubsub"},
		{clientinfo.Client{PSub: 1, NoTouch: true}, "PT", "pubsub"},
		{clientinfo.Client{Replica: true, Sub: 1, InMulti: true, NoEvict: true, NoTouch: true}, "SPxeT", "slave"},
		{clientinfo.Client{InMulti: true, NoEvict: true}, "xe", "normal"},
	} {
		if got := tc.c.Flags(); got != tc.flags {
			t.Errorf("%+v: Flags = %q, want %q", tc.c, got, tc.flags)
		}
		if got := tc.c.Type(); got != tc.kind {
			t.Errorf("%+v: Type = %q, want %q", tc.c, got, tc.kind)
		}
	}
}

// TestArgs: the CLIENT subcommands' arguments and their refusals.
func TestArgs(t *testing.T) {
	for _, name := range []string{"", "app-1", "!~"} {
		if err := clientinfo.ValidName([]byte(name)); err != nil {
			t.Errorf("ValidName(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"a b", "a\nb", "é"} {
		if err := clientinfo.ValidName([]byte(name)); err != clientinfo.ErrName {
			t.Errorf("ValidName(%q) = %v, want ErrName", name, err)
		}
	}
	if want := "ERR Client names cannot contain spaces, newlines or special characters."; clientinfo.ErrName.Error() != want {
		t.Errorf("ErrName = %q", clientinfo.ErrName)
	}

	for _, tc := range []struct {
		opt, val, field, err string
	}{
		{"LIB-NAME", "redis-py", clientinfo.LibName, ""},
		{"lib-ver", "5.0", clientinfo.LibVer, ""},
		{"lib-name", "", clientinfo.LibName, ""},
		{"lib-name", "a b", "", "ERR LIB-NAME cannot contain spaces, newlines or special characters."},
		{"other", "a b", "", "ERR OTHER cannot contain spaces, newlines or special characters."},
		{"ot\nher", "x", "", "ERR Unrecognized option 'ot?her'"},
	} {
		field, err := clientinfo.ParseSetInfo([]byte(tc.opt), []byte(tc.val))
		if errText(err) != tc.err || field != tc.field {
			t.Errorf("ParseSetInfo(%q, %q) = %q, %v; want %q, %q", tc.opt, tc.val, field, err, tc.field, tc.err)
		}
	}

	for arg, want := range map[string]bool{"on": true, "ON": true, "off": false, "Off": false} {
		if on, err := clientinfo.ParseOnOff([]byte(arg)); err != nil || on != want {
			t.Errorf("ParseOnOff(%q) = %v, %v", arg, on, err)
		}
	}
	if _, err := clientinfo.ParseOnOff([]byte("yes")); errText(err) != "ERR syntax error" {
		t.Errorf("ParseOnOff(yes) = %v", err)
	}
	for arg, want := range map[string]clientinfo.Reply{"on": clientinfo.ReplyOn, "OFF": clientinfo.ReplyOff, "skip": clientinfo.ReplySkip} {
		if r, err := clientinfo.ParseReply([]byte(arg)); err != nil || r != want {
			t.Errorf("ParseReply(%q) = %v, %v", arg, r, err)
		}
	}
	if _, err := clientinfo.ParseReply([]byte("maybe")); errText(err) != "ERR syntax error" {
		t.Errorf("ParseReply(maybe) = %v", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestWriteHelp: CLIENT HELP's lines as status replies, Redis's first
// line first and HELP last.
func TestWriteHelp(t *testing.T) {
	w := resp.NewWriter(nil)
	clientinfo.WriteHelp(w)
	got := string(w.Bytes())
	if !strings.HasPrefix(got, "*") || !strings.Contains(got, "\r\n+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n") ||
		!strings.HasSuffix(got, "+HELP\r\n+    Print this help.\r\n") {
		t.Errorf("WriteHelp = %q", got)
	}
}
