package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/config"
)

func TestConfigParse(t *testing.T) {
	src := "# a comment\n" +
		"\n" +
		"  MaxMemory 100mb  \r\n" +
		"requirepass \"a b\\\"c\\x41\\n\"\n" +
		"save ''\n" +
		"save 3600 1 300 100\n" +
		"\t# indented comment\n" +
		"bind 'it\\'s'\n"
	got, err := config.Parse("c.conf", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []config.Directive{
		{Name: "maxmemory", Args: []string{"100mb"}, Line: 3},
		{Name: "requirepass", Args: []string{"a b\"cA\n"}, Line: 4},
		{Name: "save", Args: []string{""}, Line: 5},
		{Name: "save", Args: []string{"3600", "1", "300", "100"}, Line: 6},
		{Name: "bind", Args: []string{"it's"}, Line: 8},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse = %+v\nwant %+v", got, want)
	}
}

func TestConfigParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"port 1\nrequirepass \"open\n", "c.conf:2: unbalanced quotes"},
		{"requirepass 'open", "c.conf:1: unbalanced quotes"},
		{"\n\nrequirepass \"a\"b", "c.conf:3: a closing quote must be followed by a blank"},
		{"requirepass 'a'b", "c.conf:1: a closing quote must be followed by a blank"},
		{"port 1\ninclude other.conf\n", "c.conf:2: include is not supported: write every setting in this one file"},
	} {
		_, err := config.Parse("c.conf", []byte(tc.src))
		var ce *config.Error
		if err == nil || err.Error() != tc.want || !errors.As(err, &ce) {
			t.Errorf("Parse(%q) = %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestConfigMemory(t *testing.T) {
	for _, tc := range []struct {
		s  string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"100", 100, true}, {"1k", 1000, true}, {"1kb", 1024, true},
		{"100MB", 100 << 20, true}, {"2gb", 2 << 30, true}, {"3G", 3e9, true}, {"5b", 5, true},
		{"", 0, false}, {"mb", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {"1tb", 0, false},
		{"1.5mb", 0, false}, {" 1", 0, false}, {"9223372036854775807", 1<<63 - 1, true},
		{"9223372036854775807kb", 0, false}, {"8589934592gb", 0, false},
	} {
		n, ok := config.ParseMemory(tc.s)
		if n != tc.n || ok != tc.ok {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d, %v", tc.s, n, ok, tc.n, tc.ok)
		}
	}
	for n, want := range map[int64]string{0: "0", 1: "1", 1024: "1kb", 100 << 20: "100mb", 2 << 30: "2gb", 1000: "1000", 1536: "1536"} {
		if got := config.FormatMemory(n); got != want {
			t.Errorf("FormatMemory(%d) = %q, want %q", n, got, want)
		}
		if back, ok := config.ParseMemory(config.FormatMemory(n)); !ok || back != n {
			t.Errorf("ParseMemory(FormatMemory(%d)) = %d, %v", n, back, ok)
		}
	}
}

func TestConfigRewrite(t *testing.T) {
	src := "# settings\n" +
		"maxmemory 1mb # not a comment in redis.conf either\n" +
		"\n" +
		"save 900 1\n" +
		"# between\n" +
		"save 300 10\n" +
		"unknown-to-this-rewrite 5\n" +
		config.Marker + "\n" +
		"timeout 5\n"
	got := string(config.Rewrite([]byte(src), []config.Setting{
		{Name: "maxmemory", Line: "maxmemory 2mb"},
		{Name: "save", Line: `save ""`},
		{Name: "timeout", Line: "timeout 7", Append: true},
		{Name: "port", Line: "port 7000", Append: true},
		{Name: "dir", Line: `dir "x"`}, // not in the file, not appended
	}))
	want := "# settings\n" +
		"maxmemory 2mb\n" +
		"\n" +
		"save \"\"\n" +
		"# between\n" +
		"unknown-to-this-rewrite 5\n" +
		config.Marker + "\n" +
		"timeout 7\n" +
		"port 7000\n"
	if got != want {
		t.Errorf("Rewrite:\n%s\nwant:\n%s", got, want)
	}
	if again := string(config.Rewrite([]byte(got), []config.Setting{{Name: "port", Line: "port 7000", Append: true}})); again != got {
		t.Errorf("a second rewrite with the same values changed the file:\n%s", again)
	}
	if got := string(config.Rewrite(nil, []config.Setting{{Name: "port", Line: "port 1", Append: true}})); got != config.Marker+"\nport 1\n" {
		t.Errorf("Rewrite of an empty file = %q", got)
	}
}

func TestConfigWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.conf")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.conf")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := config.WriteFile(link, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new\n" {
		t.Errorf("the file the link names holds %q", b)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("a temporary file was left: %v", entries)
	}
	if err := config.WriteFile(filepath.Join(dir, "no", "such.conf"), nil); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}

// FuzzConfigParse: no input panics Parse; an error names the file and a line
// of the input; every directive read is on a line of the input; a rewrite
// with no settings keeps every line that is not the marker.
func FuzzConfigParse(f *testing.F) {
	for _, s := range []string{"", "port 6379\n", "save \"\"\nsave 1 2\n", "a \"\\x41\" 'b\\'c'\n#x\n", "requirepass \"x", "include x", "x \"a\"b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Count(string(data), "\n") + 1
		ds, err := config.Parse("f.conf", data)
		if err != nil {
			var ce *config.Error
			if !errors.As(err, &ce) || ce.File != "f.conf" || ce.Line < 1 || ce.Line > lines || !strings.HasPrefix(err.Error(), "f.conf:") {
				t.Fatalf("error %v does not name the file and a line of %d", err, lines)
			}
			return
		}
		for _, d := range ds {
			if d.Line < 1 || d.Line > lines || d.Name != strings.ToLower(d.Name) {
				t.Fatalf("directive %+v outside the input's %d lines", d, lines)
			}
		}
		config.Rewrite(data, []config.Setting{{Name: "port", Line: "port 1", Append: true}})
	})
}
