package conf

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/repl"
)

// fakeLive is a Live with fixed values, as a server listening on
// 10.0.0.1:7000 with no TLS listener, replica of 10.0.0.2 6379.
type fakeLive struct{}

func (fakeLive) ListenAddr(tls bool) (string, string) {
	if tls {
		return "10.0.0.1", "0"
	}
	return "10.0.0.1", "7000"
}
func (fakeLive) ReplicaOf() string  { return "10.0.0.2 6379" }
func (fakeLive) BacklogSize() int64 { return 2 << 20 }

// defaultLive is a Live that reports what a server of a zero Config
// reports with no listener: the rows' defaults.
type defaultLive struct{}

func (defaultLive) ListenAddr(tls bool) (string, string) {
	if tls {
		return "127.0.0.1", "0"
	}
	return "127.0.0.1", "6379"
}
func (defaultLive) ReplicaOf() string  { return "" }
func (defaultLive) BacklogSize() int64 { return repl.DefaultBacklog }

// get is the value of the setting name in st, as CONFIG GET answers it.
func get(t *testing.T, l Live, st *State, name string) string {
	t.Helper()
	ps := Get(l, st, []string{name})
	if len(ps) != 1 || ps[0].Name != name {
		t.Fatalf("Get(%q) = %v, want one setting", name, ps)
	}
	return ps[0].Value
}

// TestDefaults: a zero Config's State reads back every row's default,
// which is also what a file or CONFIG SET of that default leaves.
func TestDefaults(t *testing.T) {
	zero := NewState(Config{})
	for _, x := range table {
		if got := x.Get(defaultLive{}, &zero); got != x.Def {
			t.Errorf("%s: a zero Config reads %q, want the default %q", x.Name, got, x.Def)
		}
	}
	st := NewState(Config{})
	if st.Config.ReplicaPriority != 100 || st.Config.MinReplicasMaxLag != repl.DefaultMinReplicasMaxLag {
		t.Errorf("NewState: replica-priority %d, min-replicas-max-lag %d; want 100, %d",
			st.Config.ReplicaPriority, st.Config.MinReplicasMaxLag, repl.DefaultMinReplicasMaxLag)
	}
	if st.Config.Limits.MaxClients == 0 || st.Config.FilterDefaults.InitialSize == 0 {
		t.Errorf("NewState left the limits or the filter defaults unset: %+v %+v", st.Config.Limits, st.Config.FilterDefaults)
	}
	if off := NewState(Config{SnapshotLogSize: -1}); get(t, defaultLive{}, &off, "save") != "" {
		t.Errorf("snapshot-log-size -1: save should read \"\"")
	}
}

// TestSetEachKind: CONFIG SET of a setting of each kind that CONFIG SET
// may change reads back as CONFIG GET writes it, and a bad value of each
// is refused with Redis's text. (TestReadFile reads the others: the
// address, the save schedule.)
func TestSetEachKind(t *testing.T) {
	for _, tc := range []struct {
		name, value, want string // want: the value read back
		bad, why          string
	}{
		{"maxclients", "500", "500", "x", "argument couldn't be parsed into an integer"},
		{"maxclients", "1000000", "1000000", "1000001", "argument must be between 1 and 1000000 inclusive"},
		{"maxmemory", "1mb", "1048576", "lots", "argument must be a memory value"},
		{"maxmemory-clients", "10%", "10%", "-5", "argument must be a memory or percent value"},
		{"tls-auth-clients", "OPTIONAL", "optional", "sometimes", "argument(s) must be one of the following: yes, no, optional"},
		{"requirepass", "s3cret", "s3cret", "", ""},
		{"client-output-buffer-limit", "pubsub 1mb 512kb 30", "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 30",
			"pubsub 1mb", "Wrong number of arguments in buffer limit configuration."},
		{"timeout", "30", "30", "-1", "argument must be between 0 and 2147483647 inclusive"},
	} {
		st := NewState(Config{})
		names, err := Set(&st, []string{tc.name, tc.value})
		if err != nil || len(names) != 1 || names[0] != tc.name {
			t.Errorf("Set %s %q: %v, %v", tc.name, tc.value, names, err)
			continue
		}
		if got := get(t, fakeLive{}, &st, tc.name); got != tc.want {
			t.Errorf("Set %s %q reads back %q, want %q", tc.name, tc.value, got, tc.want)
		}
		if tc.why == "" {
			continue
		}
		before := st
		_, err = Set(&st, []string{tc.name, tc.bad})
		var se *SetError
		if !errors.As(err, &se) || se.Name != tc.name || !strings.HasPrefix(se.Why, tc.why) {
			t.Errorf("Set %s %q: %v, want a refusal of %s: %q", tc.name, tc.bad, err, tc.name, tc.why)
		}
		if get(t, fakeLive{}, &st, tc.name) != get(t, fakeLive{}, &before, tc.name) {
			t.Errorf("Set %s %q refused changed the setting", tc.name, tc.bad)
		}
	}
	if st := NewState(Config{}); true {
		Set(&st, []string{"timeout", "30"})
		if st.Config.Limits.Timeout != 30*time.Second {
			t.Errorf("timeout 30: Config.Limits.Timeout = %v", st.Config.Limits.Timeout)
		}
	}
}

// TestSetAllOrNone: a CONFIG SET refused for any one of its settings, by
// name, by value or by the check of the settings together, changes none.
func TestSetAllOrNone(t *testing.T) {
	for _, tc := range []struct {
		pairs []string
		want  string
	}{
		{[]string{"maxmemory", "1mb", "maxclients", "0"}, "CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 1000000 inclusive"},
		{[]string{"maxmemory", "1mb", "nosuch", "1"}, "Unknown option or number of arguments for CONFIG SET - 'nosuch'"},
		{[]string{"maxmemory", "1mb", "dir", "/tmp"}, "CONFIG SET failed (possibly related to argument 'dir') - can't set immutable config"},
		{[]string{"maxmemory", "1mb", "MAXMEMORY", "2mb"}, "CONFIG SET failed (possibly related to argument 'MAXMEMORY') - duplicate parameter"},
		{[]string{"maxmemory", "1mb", "redisbloom-compat", "2.6", "cf-bucket-size", "8", "cf-initial-size", "12"}, "CONFIG SET failed (possibly related to argument 'cf-initial-size') - cf-initial-size must be at least twice cf-bucket-size (16)"},
	} {
		st := NewState(Config{})
		before := st
		names, err := Set(&st, tc.pairs)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Set %q: %v, %v; want %q", tc.pairs, names, err, tc.want)
		}
		if st.Config.MaxMemory != 0 || st.Config.FilterDefaults != before.Config.FilterDefaults {
			t.Errorf("Set %q refused changed st: maxmemory %d, filter defaults %+v", tc.pairs, st.Config.MaxMemory, st.Config.FilterDefaults)
		}
	}
	st := NewState(Config{})
	names, err := Set(&st, []string{"cf-bucket-size", "8", "cf-initial-size", "16", "min-slaves-to-write", "2"})
	if err != nil || strings.Join(names, " ") != "cf-bucket-size cf-initial-size min-replicas-to-write" {
		t.Fatalf("Set of three settings: %v, %v", names, err)
	}
	if d := st.Config.FilterDefaults; d.BucketSize != 8 || d.InitialSize != 16 || st.Config.MinReplicasToWrite != 2 {
		t.Errorf("Set of three settings: %+v, min-replicas-to-write %d", d, st.Config.MinReplicasToWrite)
	}
}

// TestLiveRows: the rows of the server's own values read them from Live,
// and a row's value, set again, reads back the same.
func TestLiveRows(t *testing.T) {
	st := NewState(Config{ReplicaOf: "ignored 1", ReplBacklogSize: 1 << 30})
	for name, want := range map[string]string{
		"bind": "10.0.0.1", "port": "7000", "tls-port": "0",
		"replicaof": "10.0.0.2 6379", "repl-backlog-size": "2097152",
	} {
		if got := get(t, fakeLive{}, &st, name); got != want {
			t.Errorf("%s = %q, want Live's %q", name, got, want)
		}
	}
	for _, x := range table {
		if !x.Mutable {
			continue
		}
		v := x.Get(fakeLive{}, &st)
		next := st
		if _, err := Set(&next, []string{x.Name, v}); err != nil {
			t.Errorf("Set %s %q, its own value: %v", x.Name, v, err)
			continue
		}
		if got := x.Get(fakeLive{}, &next); got != v {
			t.Errorf("Set %s %q reads back %q", x.Name, v, got)
		}
	}
}

// TestZeroStoredAsMinusOne: 0 is the default of a Config's
// ReplicaPriority and MinReplicasMaxLag, so the setting 0 is kept as -1,
// and reads back 0.
func TestZeroStoredAsMinusOne(t *testing.T) {
	st := NewState(Config{})
	if _, err := Set(&st, []string{"replica-priority", "0", "min-replicas-max-lag", "0"}); err != nil {
		t.Fatal(err)
	}
	if st.Config.ReplicaPriority != -1 || st.Config.MinReplicasMaxLag != -1 {
		t.Errorf("Config: %d %d, want -1 -1", st.Config.ReplicaPriority, st.Config.MinReplicasMaxLag)
	}
	for _, name := range []string{"replica-priority", "min-replicas-max-lag"} {
		if got := get(t, fakeLive{}, &st, name); got != "0" {
			t.Errorf("%s = %q, want 0", name, got)
		}
	}
	again := NewState(st.Config)
	if again.Config.ReplicaPriority != -1 {
		t.Errorf("NewState of a Config with replica-priority 0 took the default")
	}
}

// TestGetPatterns: glob patterns in any case, a setting listed under each
// of its names a pattern matches, once however many match.
func TestGetPatterns(t *testing.T) {
	st := NewState(Config{})
	var names []string
	for _, p := range Get(fakeLive{}, &st, []string{"MIN-*-TO-WRITE", "min-replicas-*", "nosuch"}) {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "min-replicas-to-write min-slaves-to-write min-replicas-max-lag" {
		t.Errorf("Get: %s", got)
	}
}

// TestReadFile: a file's settings, bind and ports; errors name the file,
// the line and the setting, and leave cfg unchanged.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cuckoo.conf")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# comment\nbind 0.0.0.0\nport 7000\nmaxmemory 2mb\nsave \"\"\nenable-debug-command local\nappendfsync always\n")
	var cfg Config
	l, err := ReadFile(path, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l != (Listen{Bind: "0.0.0.0", Port: 7000, TLSPort: -1}) {
		t.Errorf("Listen: %+v", l)
	}
	if cfg.MaxMemory != 2<<20 || cfg.SnapshotLogSize != -1 || cfg.EnableDebugCommand != DebugCommandLocal ||
		cfg.AppendFsync.String() != "always" || cfg.ConfigFile != path {
		t.Errorf("Config: maxmemory %d, snapshot-log-size %d, enable-debug-command %v, file %q",
			cfg.MaxMemory, cfg.SnapshotLogSize, cfg.EnableDebugCommand, cfg.ConfigFile)
	}
	for _, tc := range []struct{ file, want string }{
		{"maxmemory 1mb\nnosuch 5\n", path + ":2: unknown setting 'nosuch'"},
		{"save 3600\n", path + ":1: save: Invalid save parameters"},
		{"bind 0.0.0.0 ::1\n", path + ":1: bind"},
		{"cf-bucket-size 8\ncf-initial-size 12\n", path + ": cf-initial-size: cf-initial-size must be at least twice cf-bucket-size (16)"},
	} {
		write(tc.file)
		cfg := Config{MaxMemory: 5}
		if _, err := ReadFile(path, &cfg); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ReadFile of %q: %v, want %q", tc.file, err, tc.want)
		}
		if cfg.MaxMemory != 5 {
			t.Errorf("ReadFile of %q refused changed cfg", tc.file)
		}
	}
}

// TestRewrite: the file's lines get the values in force, its comments
// stay, and a setting it lacks is appended when CONFIG SET changed it.
func TestRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cuckoo.conf")
	if err := os.WriteFile(path, []byte("# mine\nmaxmemory 1mb\nmaxmemory 2mb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := NewState(Config{})
	if _, err := Set(&st, []string{"maxmemory", "3mb", "timeout", "0"}); err != nil {
		t.Fatal(err)
	}
	changed := func(name string) bool { return name == "maxmemory" || name == "timeout" }
	if err := Rewrite(path, fakeLive{}, &st, changed); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if !strings.HasPrefix(got, "# mine\nmaxmemory 3mb\n") || strings.Contains(got, "maxmemory 2mb") || !strings.Contains(got, "\ntimeout 0\n") {
		t.Errorf("rewritten file:\n%s", got)
	}
}

// TestFlags: a flag sets its setting, the tool's defaults apply unless
// explicitOnly, and the settings are checked together.
func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fl := AddFlags(fs, map[string]string{"dir": "./data"})
	if err := fs.Parse([]string{"--maxmemory", "1mb", "--appendfsync", "always"}); err != nil {
		t.Fatal(err)
	}
	cfg := Config{MaxFilterMemory: 7}
	if err := fl.Apply(&cfg, false); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxMemory != 1<<20 || cfg.AppendFsync.String() != "always" || cfg.Dir != "./data" || cfg.MaxFilterMemory != 7 {
		t.Errorf("Apply: maxmemory %d, appendfsync %v, dir %q, max-filter-memory %d", cfg.MaxMemory, cfg.AppendFsync, cfg.Dir, cfg.MaxFilterMemory)
	}
	cfg = Config{Dir: "/from/file"}
	if err := fl.Apply(&cfg, true); err != nil || cfg.Dir != "/from/file" {
		t.Errorf("Apply explicitOnly: dir %q, %v; want the file's", cfg.Dir, err)
	}
	if err := fs.Parse([]string{"--maxclients", "0"}); err == nil {
		t.Errorf("--maxclients 0 parsed")
	}

	fs = flag.NewFlagSet("serve", flag.ContinueOnError)
	fl = AddFlags(fs, nil)
	if err := fs.Parse([]string{"--cf-bucket-size", "8", "--cf-initial-size", "12"}); err != nil {
		t.Fatal(err)
	}
	if err := fl.Apply(&Config{}, false); err == nil || err.Error() != "--cf-initial-size: cf-initial-size must be at least twice cf-bucket-size (16)" {
		t.Errorf("Apply of settings wrong together: %v", err)
	}
}

// TestDebugCommandNames: enable-debug-command's values read back as their
// type's.
func TestDebugCommandNames(t *testing.T) {
	for _, name := range []string{"no", "yes", "local"} {
		if got := ParseDebugCommand(name).String(); got != name {
			t.Errorf("ParseDebugCommand(%q) = %s", name, got)
		}
	}
	if got := DebugCommand(3).String(); got != "DebugCommand(3)" {
		t.Errorf("DebugCommand(3) = %s", got)
	}
	if ParseDebugCommand("maybe") != DebugCommandNo {
		t.Errorf("ParseDebugCommand of an unknown value is not no")
	}
}

// TestWriteDoc: every setting with a doc is in the Markdown.
func TestWriteDoc(t *testing.T) {
	var b strings.Builder
	if err := WriteDoc(&b); err != nil {
		t.Fatal(err)
	}
	for _, x := range table {
		if !strings.Contains(b.String(), x.Name) {
			t.Errorf("WriteDoc lacks %s", x.Name)
		}
	}
}
