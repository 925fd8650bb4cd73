package settings_test

import (
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/config"
	"github.com/cuckoohash/cuckoo/server/internal/settings"
)

// state is a test's settings; live is its server.
type state struct {
	n      int64
	mem    int64
	mode   string
	str    string
	save   string
	bind   string
	output string
	pct    int64
	lag    int64
}

type live struct{ port string }

type row = settings.Setting[*live, state]

// table has a row of every kind, one fixed and one with a Check.
var table = settings.Table[*live, state]{
	{Name: "n", Kind: settings.Int, Lo: -5, Hi: 100, Mutable: true, Def: "3", Doc: "`N` things",
		Get: func(l *live, st *state) string { return itoa(st.n) }, Set: func(st *state, v settings.Value) { st.n = v.N }},
	{Name: "mem", Kind: settings.Memory, Lo: -1, Hi: math.MaxInt64, Mutable: true, Def: "0", Doc: "`bytes` | at most",
		Get: func(l *live, st *state) string { return itoa(st.mem) }, Set: func(st *state, v settings.Value) { st.mem = v.N },
		Check: func(v settings.Value) string {
			if v.N == 7 {
				return "not seven"
			}
			return ""
		}},
	{Name: "small", Kind: settings.Memory, Lo: 1, Hi: 1 << 20, Mutable: true, Def: "1024", Doc: "a size",
		Get: func(l *live, st *state) string { return itoa(st.mem) }, Set: func(st *state, v settings.Value) { st.mem = v.N }},
	{Name: "mode", Kind: settings.Enum, Enum: []string{"yes", "no"}, Mutable: true, Def: "no", Doc: "a switch",
		Get: func(l *live, st *state) string { return st.mode }, Set: func(st *state, v settings.Value) { st.mode = v.S }},
	{Name: "str", Kind: settings.String, Mutable: true, Def: "", Doc: "a `word`",
		Get: func(l *live, st *state) string { return st.str }, Set: func(st *state, v settings.Value) { st.str = v.S }},
	{Name: "save", Kind: settings.Save, Mutable: true, Def: "1 2", Doc: "a schedule",
		Get: func(l *live, st *state) string { return st.save }, Set: func(st *state, v settings.Value) { st.save = v.S }},
	{Name: "bind", Kind: settings.Bind, NoFlag: true, Def: "127.0.0.1", Doc: "an address",
		Get: func(l *live, st *state) string { return st.bind }, Set: func(st *state, v settings.Value) { st.bind = v.S }},
	{Name: "output", Kind: settings.Output, Mutable: true, Def: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", Doc: "limits",
		Get: func(l *live, st *state) string { return st.output }, Set: func(st *state, v settings.Value) { st.output = v.S }},
	{Name: "pct", Kind: settings.MemoryPercent, Mutable: true, Def: "0", Doc: "a size or a percentage",
		Get: func(l *live, st *state) string { return itoa(st.pct) }, Set: func(st *state, v settings.Value) { st.pct = v.N }},
	{Name: "port", Kind: settings.Int, Lo: 0, Hi: 65535, NoFlag: true, Def: "6379", Doc: "the port",
		Get: func(l *live, st *state) string { return l.port }, Set: func(st *state, v settings.Value) {}},
	{Name: "fixed", Kind: settings.Int, Lo: 1, Hi: 1, Def: "1", Doc: "one",
		Get: func(l *live, st *state) string { return "1" }, Set: func(st *state, v settings.Value) {}},
	{Name: "lag", Alias: "old-lag", Kind: settings.Int, Lo: 0, Hi: 9, Mutable: true, Def: "1", Doc: "`seconds` behind",
		Get: func(l *live, st *state) string { return itoa(st.lag) }, Set: func(st *state, v settings.Value) { st.lag = v.N }},
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestParse: every kind's values, and every refusal with Redis's text.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     settings.Value
		why      string
	}{
		{"n", "42", settings.Value{N: 42}, ""},
		{"n", "-5", settings.Value{N: -5}, ""},
		{"n", "101", settings.Value{}, "argument must be between -5 and 100 inclusive"},
		{"n", "-6", settings.Value{}, "argument must be between -5 and 100 inclusive"},
		{"n", "1k", settings.Value{}, "argument couldn't be parsed into an integer"},
		{"n", "", settings.Value{}, "argument couldn't be parsed into an integer"},
		{"mem", "64mb", settings.Value{N: 64 << 20}, ""},
		{"mem", "2k", settings.Value{N: 2000}, ""},
		{"mem", "-1", settings.Value{N: -1}, ""},
		{"mem", "7", settings.Value{}, "not seven"},
		{"mem", "-2", settings.Value{}, "argument must be a memory value"},
		{"mem", "lots", settings.Value{}, "argument must be a memory value"},
		{"small", "-1", settings.Value{}, "argument must be a memory value"},
		{"small", "0", settings.Value{}, "argument must be between 1 and 1048576 inclusive"},
		{"small", "2mb", settings.Value{}, "argument must be between 1 and 1048576 inclusive"},
		{"mode", "YES", settings.Value{S: "yes"}, ""},
		{"mode", "maybe", settings.Value{}, "argument(s) must be one of the following: yes, no"},
		{"str", "a b", settings.Value{S: "a b"}, ""},
		{"save", " 3600 1  300 100 ", settings.Value{S: "3600 1 300 100"}, ""},
		{"save", "", settings.Value{S: ""}, ""},
		{"save", "3600", settings.Value{}, "Invalid save parameters"},
		{"save", "3600 x", settings.Value{}, "Invalid save parameters"},
		{"save", "3600 -1", settings.Value{}, "Invalid save parameters"},
		{"save", "1 4294967296", settings.Value{}, "Invalid save parameters"},
		{"bind", " 0.0.0.0 ", settings.Value{S: "0.0.0.0"}, ""},
		{"bind", "a b", settings.Value{}, "this server listens on one address"},
		{"bind", "", settings.Value{}, "this server listens on one address"},
		{"output", "pubsub 1mb 1kb 5", settings.Value{S: "pubsub 1mb 1kb 5"}, ""},
		{"output", "pubsub 1", settings.Value{}, "Wrong number of arguments in buffer limit configuration."},
		{"output", "master 0 0 0", settings.Value{}, `Invalid client class specified in buffer limit configuration. ("master": want normal, replica or pubsub)`},
		{"pct", "5%", settings.Value{N: -5}, ""},
		{"pct", "1gb", settings.Value{N: 1 << 30}, ""},
		{"pct", "101%", settings.Value{}, "percentage argument must be less or equal to 100"},
		{"pct", "x", settings.Value{}, "argument must be a memory or percent value"},
	} {
		x := table.Find(tc.name)
		v, why := x.Parse(tc.in)
		if why != tc.why || (why == "" && v != tc.want) {
			t.Errorf("%s.Parse(%q) = %+v, %q; want %+v, %q", tc.name, tc.in, v, why, tc.want, tc.why)
		}
	}
}

// TestLine: each kind's line in a file, and that it reads back (through
// config.Parse and Apply) to the same value.
func TestLine(t *testing.T) {
	for _, tc := range []struct{ name, v, want string }{
		{"n", "42", "n 42"},
		{"mem", "67108864", "mem 64mb"},
		{"mem", "-1", "mem -1"},
		{"mem", "1000", "mem 1000"},
		{"pct", "5%", "pct 5%"},
		{"pct", "2048", "pct 2kb"},
		{"str", "", `str ""`},
		{"str", "a b", `str "a b"`},
		{"save", "", `save ""`},
		{"save", "1 2", "save 1 2"},
		{"output", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
			"output normal 0 0 0\noutput replica 256mb 64mb 60\noutput pubsub 32mb 8mb 60"},
		{"output", "not limits", "output not limits"},
		{"mode", "yes", "mode yes"},
	} {
		x := table.Find(tc.name)
		got := x.Line(tc.v)
		if got != tc.want {
			t.Errorf("%s.Line(%q) = %q, want %q", tc.name, tc.v, got, tc.want)
			continue
		}
		if tc.name == "output" && tc.v == "not limits" {
			continue
		}
		ds, err := config.Parse("f", []byte(got))
		if err != nil {
			t.Fatal(err)
		}
		var a, b state
		if err := table.Apply("f", ds, &a); err != nil {
			t.Errorf("the line %q does not read back: %v", got, err)
		}
		v, why := x.Parse(tc.v)
		if why != "" {
			t.Fatalf("%s.Parse(%q): %s", tc.name, tc.v, why)
		}
		x.Set(&b, v)
		if x.Get(nil, &a) != x.Get(nil, &b) && tc.name != "output" {
			t.Errorf("%q read back as %q, want %q", got, x.Get(nil, &a), x.Get(nil, &b))
		}
	}
}

// TestChange: CONFIG SET's checks in Redis's order and words, all or none
// for the caller's copy, and the settings changed in the order given.
func TestChange(t *testing.T) {
	var st state
	xs, err := table.Change(&st, []string{"N", "5", "mode", "YES", "output", "pubsub 1 1 1"})
	if err != nil || len(xs) != 3 || xs[0].Name != "n" || xs[1].Name != "mode" || st.n != 5 || st.mode != "yes" || st.output != "pubsub 1 1 1" {
		t.Fatalf("Change: %v, %d settings, %+v", err, len(xs), st)
	}
	for _, tc := range []struct {
		pairs []string
		want  string
	}{
		{[]string{"nosuch", "1"}, "Unknown option or number of arguments for CONFIG SET - 'nosuch'"},
		{[]string{"n", "1", "NoSuch", "1"}, "Unknown option or number of arguments for CONFIG SET - 'NoSuch'"},
		{[]string{"Fixed", "1"}, "CONFIG SET failed (possibly related to argument 'Fixed') - can't set immutable config"},
		{[]string{"bind", "x"}, "CONFIG SET failed (possibly related to argument 'bind') - can't set immutable config"},
		{[]string{"n", "1", "N", "2"}, "CONFIG SET failed (possibly related to argument 'N') - duplicate parameter"},
		{[]string{"N", "x"}, "CONFIG SET failed (possibly related to argument 'n') - argument couldn't be parsed into an integer"},
		// A bad name is found before a bad value given earlier.
		{[]string{"n", "x", "nosuch", "1"}, "Unknown option or number of arguments for CONFIG SET - 'nosuch'"},
		{[]string{"n", "1", "mem", "7"}, "CONFIG SET failed (possibly related to argument 'mem') - not seven"},
	} {
		before := st
		_, err := table.Change(&st, tc.pairs)
		var se *settings.SetError
		if err == nil || err.Error() != tc.want || !errors.As(err, &se) {
			t.Errorf("Change(%q) = %v, want %q", tc.pairs, err, tc.want)
		}
		if tc.want[0] == 'U' && st != before {
			t.Errorf("Change(%q) refused by name changed the settings", tc.pairs)
		}
		st = before
	}
}

// TestAlias: a setting's other name is the same setting to Find, CONFIG
// SET (naming it as given in a refusal; a duplicate only when the same name
// is given twice, as in Redis 7.0), a file, the flags (one value behind
// both), CONFIG REWRITE (a line of the alias becomes the setting's) and the
// doc.
func TestAlias(t *testing.T) {
	if table.Find("old-lag") != table.Find("lag") || table.Find("lag") == nil || table.Find("") != nil {
		t.Fatal("Find by alias")
	}
	var st state
	if _, err := table.Change(&st, []string{"OLD-LAG", "4"}); err != nil || st.lag != 4 {
		t.Errorf("Change by alias: %v, %+v", err, st)
	}
	// Both names: the later value, no duplicate (Redis 7.0.15 says OK).
	if xs, err := table.Change(&st, []string{"lag", "5", "old-lag", "6"}); err != nil || st.lag != 6 || len(xs) != 2 {
		t.Errorf("Change by name and alias: %v, %+v", err, st)
	}
	for _, tc := range []struct {
		pairs []string
		want  string
	}{
		{[]string{"Old-Lag", "x"}, "CONFIG SET failed (possibly related to argument 'old-lag') - argument couldn't be parsed into an integer"},
		{[]string{"old-lag", "10"}, "CONFIG SET failed (possibly related to argument 'old-lag') - argument must be between 0 and 9 inclusive"},
		{[]string{"LAG", "-1"}, "CONFIG SET failed (possibly related to argument 'lag') - argument must be between 0 and 9 inclusive"},
		{[]string{"old-lag", "1", "OLD-lag", "2"}, "CONFIG SET failed (possibly related to argument 'OLD-lag') - duplicate parameter"},
	} {
		if _, err := table.Change(&state{}, tc.pairs); err == nil || err.Error() != tc.want {
			t.Errorf("Change(%q) = %v, want %q", tc.pairs, err, tc.want)
		}
	}
	ds, err := config.Parse("a.conf", []byte("old-lag 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := table.Apply("a.conf", ds, &st); err != nil || st.lag != 3 {
		t.Errorf("Apply of the alias: %v, %+v", err, st)
	}
	ds, _ = config.Parse("a.conf", []byte("old-lag 30\n"))
	if err := table.Apply("a.conf", ds, &st); err == nil || err.Error() != "a.conf:1: old-lag: argument must be between 0 and 9 inclusive" {
		t.Errorf("Apply of a bad value by alias: %v", err)
	}

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fl := table.AddFlags(fs, nil)
	if f := fs.Lookup("old-lag"); f == nil || f.Usage != "the same as --lag" {
		t.Fatalf("the alias's flag: %+v", f)
	}
	if err := fs.Parse([]string{"--old-lag", "7"}); err != nil {
		t.Fatal(err)
	}
	st = state{}
	fl.Apply(&st, true)
	if st.lag != 7 || fs.Lookup("lag").Value.String() != "7" {
		t.Errorf("--old-lag 7: %+v, --lag reads %q", st, fs.Lookup("lag").Value.String())
	}
	if err := fs.Parse([]string{"--old-lag", "10"}); err == nil {
		t.Error("--old-lag 10 was taken")
	}

	lines := table.Lines(&live{}, &state{lag: 2}, func(string) bool { return false })
	got := string(config.Rewrite([]byte("old-lag 5\nlag 6\n# old-lag 8\n"), lines))
	if want := "lag 2\n# old-lag 8\n"; !strings.HasPrefix(got, want) || strings.Count(got, "lag 2") != 1 {
		t.Errorf("Rewrite of the alias's line:\n%s\nwant it to start:\n%s", got, want)
	}

	var b strings.Builder
	if err := table.WriteDoc(&b); err != nil {
		t.Fatal(err)
	}
	if want := "| `lag` | `1` | runtime | seconds behind (0..9); also named old-lag |\n"; !strings.Contains(b.String(), want) {
		t.Errorf("the doc lacks %q:\n%s", want, b.String())
	}
}

// TestApply: a file's directives, and every error naming file and line.
func TestApply(t *testing.T) {
	ds, err := config.Parse("a.conf", []byte("n 7\nsave 10 1 20 2\nbind 0.0.0.0\noutput pubsub 1mb 1mb 1 normal 0 0 0\nstr \"x y\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var st state
	if err := table.Apply("a.conf", ds, &st); err != nil || st.n != 7 || st.save != "10 1 20 2" || st.bind != "0.0.0.0" || st.str != "x y" || st.output != "pubsub 1mb 1mb 1 normal 0 0 0" {
		t.Fatalf("Apply: %v, %+v", err, st)
	}
	for src, want := range map[string]string{
		"n 1\nnosuch 1\n": "a.conf:2: unknown setting 'nosuch'",
		"n 1 2\n":         "a.conf:1: n: wrong number of arguments (want one value)",
		"n\n":             "a.conf:1: n: wrong number of arguments (want one value)",
		"\n\nn 200\n":     "a.conf:3: n: argument must be between -5 and 100 inclusive",
		"bind a b\n":      "a.conf:1: bind: this server listens on one address",
	} {
		ds, err := config.Parse("a.conf", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		err = table.Apply("a.conf", ds, &state{})
		var ce *config.Error
		if err == nil || err.Error() != want || !errors.As(err, &ce) {
			t.Errorf("Apply(%q) = %v, want %q", src, err, want)
		}
	}
}

// TestReadFile: a file applied, and a missing one, a line that does not
// split and a bad setting each an error naming it.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var st state
	if err := table.ReadFile(write("ok.conf", "# a comment\nn 4\nmode YES\n"), &st); err != nil || st.n != 4 || st.mode != "yes" {
		t.Errorf("ReadFile: %v, %+v", err, st)
	}
	missing := filepath.Join(dir, "missing.conf")
	if err := table.ReadFile(missing, &st); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of no file: %v", err)
	}
	quote := write("quote.conf", "str \"open\n")
	if err := table.ReadFile(quote, &st); err == nil || !strings.HasPrefix(err.Error(), quote+":1: ") {
		t.Errorf("ReadFile of an unbalanced quote: %v", err)
	}
	bad := write("bad.conf", "n 4\nmode maybe\n")
	if err := table.ReadFile(bad, &st); err == nil || err.Error() != bad+":2: mode: argument(s) must be one of the following: yes, no" {
		t.Errorf("ReadFile of a bad value: %v", err)
	}
}

// TestLines: CONFIG REWRITE's lines, appended when different from the
// default or changed.
func TestLines(t *testing.T) {
	st := state{n: 3, mem: 64 << 20, mode: "no", save: "1 2", output: table.Find("output").Def}
	lines := table.Lines(&live{port: "6380"}, &st, func(name string) bool { return name == "mode" })
	want := map[string]struct {
		line   string
		append bool
	}{
		"n": {"n 3", false}, "mem": {"mem 64mb", true}, "mode": {"mode no", true}, "port": {"port 6380", true},
		"fixed": {"fixed 1", false}, "save": {"save 1 2", false}, "str": {`str ""`, false},
	}
	if len(lines) != len(table) {
		t.Fatalf("%d lines for %d settings", len(lines), len(table))
	}
	for _, l := range lines {
		if w, ok := want[l.Name]; ok && (l.Line != w.line || l.Append != w.append) {
			t.Errorf("line of %s = %q (append %v), want %q (append %v)", l.Name, l.Line, l.Append, w.line, w.append)
		}
	}
}

// TestFlags: a flag per setting but the NoFlag ones, checked values, bare
// yes/no flags, the tool's defaults, and a default that does not parse.
func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fl := table.AddFlags(fs, map[string]string{"str": "mine", "small": "2048"})
	for _, x := range table {
		if (fs.Lookup(x.Name) == nil) != x.NoFlag {
			t.Errorf("flag of %s: NoFlag %v, defined %v", x.Name, x.NoFlag, fs.Lookup(x.Name) != nil)
		}
	}
	if got := fs.Lookup("small").DefValue; got != "2kb" {
		t.Errorf("small's default shown as %q, want 2kb", got)
	}
	if got := fs.Lookup("n").Usage; got != "`N` things (-5..100)" {
		t.Errorf("n's usage = %q", got)
	}
	if err := fs.Parse([]string{"-mode", "-n", "9"}); err != nil {
		t.Fatal(err)
	}
	st := state{str: "file's"}
	fl.Apply(&st, true)
	if st.mode != "yes" || st.n != 9 || st.str != "file's" || st.mem != 0 {
		t.Errorf("Apply, explicit only: %+v", st)
	}
	fl.Apply(&st, false)
	if st.str != "mine" || st.mem != 2048 {
		t.Errorf("Apply with the tool's defaults: %+v", st)
	}
	if fs.Lookup("n").Value.String() != "9" {
		t.Errorf("n's flag reads %q", fs.Lookup("n").Value.String())
	}
	for _, args := range [][]string{{"-n", "x"}, {"-mode=maybe"}, {"-mem", "7"}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		table.AddFlags(fs, nil)
		if err := fs.Parse(args); err == nil {
			t.Errorf("flags %q were taken", args)
		}
	}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	table.AddFlags(fs, nil)
	if err := fs.Parse([]string{"-mode=false"}); err != nil || fs.Lookup("mode").Value.String() != "no" {
		t.Errorf("-mode=false: %v, %q", err, fs.Lookup("mode").Value.String())
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `the default "huge" of setting n`) {
			t.Errorf("a default that does not parse: %v, want a panic naming it", r)
		}
	}()
	table.AddFlags(flag.NewFlagSet("t", flag.ContinueOnError), map[string]string{"n": "huge"})
}

// TestWriteDoc: a row's line, its range, backquotes gone, | escaped, and
// "" for an empty default.
func TestWriteDoc(t *testing.T) {
	var b strings.Builder
	if err := table.WriteDoc(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| `n` | `3` | runtime | N things (-5..100) |\n",
		"| `mem` | `0` | runtime | bytes \\| at most |\n",
		"| `str` | `\"\"` | runtime | a word |\n",
		"| `fixed` | `1` | startup | one |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the doc lacks %q:\n%s", want, b.String())
		}
	}
	if err := table.WriteDoc(failWriter{}); err == nil {
		t.Error("WriteDoc to a failing writer: no error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("full") }

func TestYesNo(t *testing.T) {
	if settings.YesNo(true) != "yes" || settings.YesNo(false) != "no" {
		t.Error("YesNo")
	}
	var x row = *table.Find("mode")
	if !x.IsBool() || table.Find("n").IsBool() {
		t.Error("IsBool")
	}
}

// FuzzParse: no value makes Parse panic, and every value parsed is set.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1", "64mb", "-1", "5%", "pubsub 1 1 1", "1 2", "yes", ""} {
		f.Add(uint8(0), s)
	}
	f.Fuzz(func(t *testing.T, i uint8, s string) {
		x := table[int(i)%len(table)]
		v, why := x.Parse(s)
		if why != "" {
			return
		}
		var st state
		x.Set(&st, v)
		if x.Line(x.Get(&live{}, &st)) == "" {
			t.Fatal("an empty line")
		}
	})
}

// TestSetParse: a row's SetParse reads CONFIG SET values from the settings
// in force (here, a bound that is the other setting), falls back to Parse
// when it declines, and its refusal is the one reported; WriteDoc gives
// the row's Note after the table.
func TestSetParse(t *testing.T) {
	tab := settings.Table[*live, state]{
		{Name: "lo", Kind: settings.Int, Lo: 0, Hi: 100, Mutable: true, Def: "0",
			Get: func(l *live, st *state) string { return itoa(st.n) }, Set: func(st *state, v settings.Value) { st.n = v.N }},
		{Name: "hi", Kind: settings.Int, Lo: 0, Hi: 100, Mutable: true, Def: "0", Note: "hi is at least lo.",
			Get: func(l *live, st *state) string { return itoa(st.lag) }, Set: func(st *state, v settings.Value) { st.lag = v.N },
			SetParse: func(st *state, v string) (settings.Value, string, bool) {
				if st.mode != "own" {
					return settings.Value{}, "", false
				}
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < st.n {
					return settings.Value{}, "below lo " + itoa(st.n), true
				}
				return settings.Value{N: n}, "", true
			}},
	}
	st := state{mode: "own"}
	if _, err := tab.Change(&st, []string{"lo", "10", "hi", "5"}); err == nil || err.Error() != "CONFIG SET failed (possibly related to argument 'hi') - below lo 10" {
		t.Errorf("hi below the lo set before it: %v", err)
	}
	if _, err := tab.Change(&st, []string{"lo", "10", "hi", "500"}); err != nil || st.lag != 500 {
		t.Errorf("hi 500, above Hi but taken by SetParse: %v, hi %d", err, st.lag)
	}
	st.mode = ""
	if _, err := tab.Change(&st, []string{"hi", "500"}); err == nil || !strings.HasSuffix(err.Error(), "argument must be between 0 and 100 inclusive") {
		t.Errorf("hi 500, SetParse declining: %v, want Parse's refusal", err)
	}
	var b strings.Builder
	if err := tab.WriteDoc(&b); err != nil || !strings.HasSuffix(b.String(), "\n## hi\n\nhi is at least lo.\n") {
		t.Errorf("WriteDoc's end: %q, %v", b.String()[max(0, b.Len()-60):], err)
	}
}
