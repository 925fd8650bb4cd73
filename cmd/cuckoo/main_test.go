package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cuckoo runs the tool with stdin and returns its exit status and output.
func cuckoo(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	if s := errOut.String(); strings.Contains(s, "panic") || strings.Contains(s, "goroutine ") {
		t.Fatalf("cuckoo %q: stderr shows a panic:\n%s", args, s)
	}
	return code, out.String(), errOut.String()
}

// keys returns n distinct keys with the given prefix.
func keys(prefix string, n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return ks
}

// writeKeys writes keys to a file in dir, one a line, and returns its path.
func writeKeys(t *testing.T, dir, name string, ks []string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.Join(ks, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// build builds a filter of ks in a new directory and returns its path.
func build(t *testing.T, ks []string, flags ...string) string {
	t.Helper()
	dir := t.TempDir()
	in := writeKeys(t, dir, "keys.txt", ks)
	out := filepath.Join(dir, "f.ckoo")
	args := append(append([]string{"build", "-o", out}, flags...), in)
	if code, _, stderr := cuckoo(t, "", args...); code != 0 {
		t.Fatalf("cuckoo %q: exit %d: %s", args, code, stderr)
	}
	return out
}

// answers parses query output into key -> yes.
func answers(t *testing.T, out string) map[string]bool {
	t.Helper()
	m := make(map[string]bool)
	for line := range strings.Lines(out) {
		key, ans, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		if !ok || (ans != "yes" && ans != "no") {
			t.Fatalf("query output line %q is not KEY<tab>yes|no", line)
		}
		m[key] = ans == "yes"
	}
	return m
}

func TestBuildAndQuery(t *testing.T) {
	dir := t.TempDir()
	present := keys("present", 2000)
	// Windows line endings, blank lines and no final newline.
	text := strings.Join(present[:1000], "\r\n") + "\r\n\r\n\n" + strings.Join(present[1000:], "\n")
	in := filepath.Join(dir, "keys.txt")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "f.ckoo")
	code, stdout, stderr := cuckoo(t, "", "build", "-o", out, "--fpr", "0.01", in)
	if code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("build wrote to stdout: %q", stdout)
	}
	if !strings.HasPrefix(stderr, out+": 2000 keys") || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "bits/item") || !strings.Contains(stderr, "load") {
		t.Errorf("build summary = %q, want one line: %s: 2000 keys ... load ... bits/item", stderr, out)
	}

	code, stdout, _ = cuckoo(t, "", append([]string{"query", out}, present...)...)
	if code != 0 {
		t.Errorf("query of present keys: exit %d, want 0", code)
	}
	got := answers(t, stdout)
	for _, k := range present {
		if !got[k] {
			t.Fatalf("present key %q: no", k)
		}
	}

	absent := keys("absent", 2000)
	code, stdout, _ = cuckoo(t, "", append([]string{"query", out}, absent...)...)
	got = answers(t, stdout)
	yes, no := 0, ""
	for _, k := range absent {
		if got[k] {
			yes++
		} else if no == "" {
			no = k
		}
	}
	t.Logf("absent keys reported present: %d of %d", yes, len(absent))
	if yes > len(absent)*3/100 {
		t.Errorf("%d of %d absent keys reported present, want at most 3%%", yes, len(absent))
	}
	if want := map[bool]int{true: 0, false: 1}[yes > 0]; code != want {
		t.Errorf("query of absent keys (%d yes): exit %d, want %d", yes, code, want)
	}
	if code, stdout, _ = cuckoo(t, "", "query", out, no); code != 1 || stdout != no+"\tno\n" {
		t.Errorf("query of one absent key: exit %d, output %q; want 1, %q", code, stdout, no+"\tno\n")
	}
	// A key that looks like a flag, after FILE, is a key.
	if code, stdout, _ = cuckoo(t, "", "query", out, "-h", present[0]); code != 0 || !strings.HasSuffix(stdout, present[0]+"\tyes\n") {
		t.Errorf("query FILE -h KEY: exit %d, output %q", code, stdout)
	}
	if code, _, stderr = cuckoo(t, "", "query", filepath.Join(dir, "missing.ckoo"), "k"); code != 2 ||
		!strings.Contains(stderr, "no such file") {
		t.Errorf("query of a missing file: exit %d, stderr %q; want 2 and the reason", code, stderr)
	}
}

func TestQueryStdin(t *testing.T) {
	present := keys("k", 3000) // more than one batch
	out := build(t, present)
	var in strings.Builder
	var order []string
	for i := range 3000 {
		// Alternate present and absent keys; blank lines and "\r" are ignored.
		k := present[i]
		if i%2 == 1 {
			k = fmt.Sprintf("missing-%d", i)
		}
		order = append(order, k)
		in.WriteString(k)
		if i%100 == 0 {
			in.WriteString("\r\n\n")
		} else {
			in.WriteString("\n")
		}
	}
	code, stdout, stderr := cuckoo(t, in.String(), "query", out)
	if code != 0 {
		t.Fatalf("query: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != len(order) {
		t.Fatalf("query printed %d lines for %d keys", len(lines), len(order))
	}
	fp := 0
	for i, line := range lines {
		key, ans, _ := strings.Cut(line, "\t")
		if key != order[i] {
			t.Fatalf("line %d is for key %q, want %q", i+1, key, order[i])
		}
		switch {
		case i%2 == 0 && ans != "yes":
			t.Fatalf("present key %q: %q", key, ans)
		case i%2 == 1 && ans == "yes":
			fp++
		}
	}
	if fp > 45 {
		t.Errorf("%d of 1500 absent keys reported present", fp)
	}

	code, stdout, _ = cuckoo(t, "nothing-1\nnothing-2\n", "query", out)
	if got := answers(t, stdout); code == 0 && !got["nothing-1"] && !got["nothing-2"] {
		t.Errorf("query of absent keys on stdin: exit 0 with no yes")
	}
	if code, stdout, _ = cuckoo(t, "", "query", out); code != 1 || stdout != "" {
		t.Errorf("query with empty stdin: exit %d, output %q; want 1 and nothing", code, stdout)
	}
}

func TestBuildStdin(t *testing.T) {
	ks := keys("stdin", 5000)
	in := strings.Join(ks, "\n") + "\n"
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"counted", nil},
		{"capacity", []string{"--capacity", "6000"}},
		{"scalable", []string{"--scalable", "--capacity", "500"}},
		{"scalable-stream", []string{"--scalable"}},
		{"bucket2-bits16", []string{"--bucket-size", "2", "--fingerprint-bits", "16", "--seed", "7"}},
		{"semi-sorted-bits12", []string{"--packing", "semi-sorted", "--fingerprint-bits", "12"}},
		{"plain-fpr", []string{"--packing", "plain", "--fpr", "0.001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "f.ckoo")
			args := append(append([]string{"build", "-o", out}, tc.flags...), "-")
			code, _, stderr := cuckoo(t, in, args...)
			if code != 0 {
				t.Fatalf("cuckoo %q: exit %d: %s", args, code, stderr)
			}
			if !strings.HasPrefix(stderr, out+": 5000 keys") {
				t.Errorf("summary %q does not count 5000 keys", stderr)
			}
			code, stdout, _ := cuckoo(t, in, "query", out)
			if code != 0 || strings.Contains(stdout, "\tno\n") {
				t.Errorf("query of the built keys: exit %d, some answered no", code)
			}
		})
	}
}

func TestBuildOverCapacity(t *testing.T) {
	dir := t.TempDir()
	in := writeKeys(t, dir, "keys.txt", keys("k", 5000))
	out := filepath.Join(dir, "f.ckoo")
	for _, input := range []string{in, "-"} {
		stdin := ""
		if input == "-" {
			stdin = strings.Join(keys("k", 5000), "\n")
		}
		code, _, stderr := cuckoo(t, stdin, "build", "-o", out, "--capacity", "100", input)
		if code != 2 || !strings.HasPrefix(stderr, "cuckoo: build: the filter is full") ||
			!strings.Contains(stderr, "--capacity") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("over-capacity build from %s: exit %d, stderr %q; want 2 and one line suggesting --capacity", input, code, stderr)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("a failed build left files behind: %v", entries)
	}
}

func TestBuildReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "f.ckoo")
	for _, ks := range [][]string{keys("first", 100), keys("second", 300)} {
		in := writeKeys(t, dir, "keys.txt", ks)
		if code, _, stderr := cuckoo(t, "", "build", "-o", out, in); code != 0 {
			t.Fatalf("build: exit %d: %s", code, stderr)
		}
	}
	code, stdout, _ := cuckoo(t, "", "query", out, "second-299")
	if code != 0 || stdout != "second-299\tyes\n" {
		t.Errorf("query after a rebuild: exit %d, %q", code, stdout)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files left after two builds: %v, want keys.txt and f.ckoo", entries)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("output mode %v, %v; want 0644", st.Mode(), err)
	}
}

func TestBuildLongLine(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "keys.txt")
	text := "a\nb\n" + strings.Repeat("x", maxLine) + "\n" + strings.Repeat("y", maxLine+1) + "\n"
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, input := range []string{in, "-"} {
		code, _, stderr := cuckoo(t, text, "build", "-o", filepath.Join(dir, "f.ckoo"), input)
		if code != 2 || !strings.Contains(stderr, "line 4 is longer than 1048576 bytes") {
			t.Errorf("build from %s with a long line 4: exit %d, stderr %q", input, code, stderr)
		}
	}
}

func TestBuildEmptyInput(t *testing.T) {
	out := build(t, nil)
	code, stdout, _ := cuckoo(t, "", "info", "--json", out)
	var r infoReport
	if err := json.Unmarshal([]byte(stdout), &r); code != 0 || err != nil || r.Items != 0 || r.BitsPerItem != nil {
		t.Errorf("info of an empty filter: exit %d, %v, %+v", code, err, r)
	}
}

func TestInfo(t *testing.T) {
	out := build(t, keys("k", 1000), "--seed", "42", "--fpr", "0.001", "--packing", "semi-sorted") // 13-bit fingerprints
	code, stdout, stderr := cuckoo(t, "", "info", out)
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"format            Filter", "buckets", "bucket size       4", "fingerprint bits  13", "seed              42",
		"max kicks         500", "capacity          1000", "items", "load", "size", "bits/item", "fpr now",
		"fpr at capacity", "victim            unused",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("info output lacks %q:\n%s", want, stdout)
		}
	}

	code, stdout, _ = cuckoo(t, "", "info", "--json", out)
	var r infoReport
	if err := json.Unmarshal([]byte(stdout), &r); code != 0 || err != nil {
		t.Fatalf("info --json: exit %d, %v:\n%s", code, err, stdout)
	}
	f := r.Filter
	if r.Format != "filter" || f == nil || r.Scalable != nil {
		t.Fatalf("info --json: format %q, filter %v, scalable %v", r.Format, f, r.Scalable)
	}
	st, _ := os.Stat(out)
	if f.BucketSize != 4 || f.FingerprintBits != 13 || f.Seed != 42 || f.MaxKicks != 500 || f.Capacity != 1000 ||
		r.Capacity != 1000 || r.Items == 0 || r.Items > 1000 || r.Items != f.Items || r.FileBytes != st.Size() ||
		f.Buckets*4 < 1000 || r.BitsPerItem == nil || *r.BitsPerItem < 13 || f.VictimUsed ||
		r.Load <= 0 || r.Load > 1 || r.FPR <= 0 || r.FPR > r.FPRAtCapacity || r.FPRAtCapacity > 0.001 {
		t.Errorf("info --json: implausible report %+v, filter %+v", r, f)
	}
}

func TestInfoScalable(t *testing.T) {
	out := build(t, keys("k", 4000), "--scalable", "--capacity", "500") // grows three doublings
	code, stdout, stderr := cuckoo(t, "", "info", out)
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Scalable, grown 3 doublings", "slot bits", "fpr bound", "tail bits  entries"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("info of a grown Scalable lacks %q:\n%s", want, stdout)
		}
	}
	var r infoReport
	_, stdout, _ = cuckoo(t, "", "info", "--json", out)
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	s := r.Scalable
	// build skips keys the filter already reports present: about 1% of
	// 4000 at most.
	if r.Format != "scalable" || s == nil || s.Doublings != 3 || s.InitialCapacity != 500 || r.Items > 4000 || r.Items < 3960 {
		t.Fatalf("info --json of a Scalable: %+v, %+v", r, s)
	}
	var entries uint64
	for _, n := range s.Tails {
		entries += n
	}
	if entries+uint64(s.Stashed) != s.Entries || s.Entries < r.Items || r.Capacity < r.Items ||
		r.FPRAtCapacity != s.TargetFPR || r.FPR <= 0 || r.FPR > s.TargetFPR || s.Buckets*uint64(s.BucketSize) < r.Items {
		t.Errorf("implausible report %+v, %+v", r, s)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, stdout, _ := cuckoo(t, "", args...)
		if code != 0 {
			t.Errorf("cuckoo %q: exit %d", args, code)
		}
		for _, c := range commands {
			if !regexp.MustCompile(`(?m)^  cuckoo ` + c.name + `( |$)`).MatchString(stdout) {
				t.Errorf("cuckoo %q does not list %s:\n%s", args, c.name, stdout)
			}
		}
		if strings.Contains(stdout, " \n") {
			t.Errorf("cuckoo %q: a line ends with a space:\n%s", args, stdout)
		}
	}
	if code, _, stderr := cuckoo(t, ""); code != 2 || !strings.Contains(stderr, "cuckoo build") {
		t.Errorf("cuckoo with no arguments: exit %d, stderr %q; want 2 and the usage", code, stderr)
	}
	for _, c := range commands {
		if c.run == nil {
			continue
		}
		code, stdout, _ := cuckoo(t, "", "help", c.name)
		if code != 0 || !strings.HasPrefix(stdout, "usage: cuckoo "+c.name) {
			t.Errorf("cuckoo help %s: exit %d, %q", c.name, code, stdout)
		}
	}
	code, stdout, _ := cuckoo(t, "", "build", "-h")
	if code != 0 || !strings.Contains(stdout, "-capacity N") || !strings.Contains(stdout, "-fpr rate") {
		t.Errorf("cuckoo build -h: exit %d:\n%s", code, stdout)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeKeys(t, dir, "keys.txt", keys("k", 10))
	out := filepath.Join(dir, "f.ckoo")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, `help: unknown command "frobnicate"`},
		{[]string{"build", in}, "build: -o FILE is required"},
		{[]string{"build", "-o", out}, "build: missing INPUT"},
		{[]string{"build", "-o", out, "--fpr", "1.5", in}, "build: --fpr 1.5: the rate must be in (0, 1)"},
		{[]string{"build", "-o", out, "--fpr", "0", in}, "build: --fpr 0: the rate must be in (0, 1)"},
		{[]string{"build", "-o", out, "--fpr", "abc", in}, `build: invalid value "abc" for flag -fpr`},
		{[]string{"build", "-o", out, "--bucket-size", "3", in}, "build: --bucket-size 3: it must be 2, 4 or 8"},
		{[]string{"build", "-o", out, "--packing", "sorted", in}, `build: --packing "sorted": it must be auto, plain, semi-sorted or ranked`},
		{[]string{"build", "-o", out, "--packing", "plain", "--scalable", in}, "build: --packing does not apply to --scalable"},
		{[]string{"build", "-o", out, "--packing", "semi-sorted", "--bucket-size", "2", in}, "semi-sorted buckets have 4 slots"},
		{[]string{"build", "-o", out, "--packing", "semi-sorted", "--fpr", "1e-5", in}, "semi-sorted buckets hold fingerprints of 5..16 bits"},
		{[]string{"build", "-o", out, "--fingerprint-bits", "33", in}, "build: --fingerprint-bits 33: it must be in 4..32"},
		{[]string{"build", "-o", out, "--fingerprint-bits", "8", "--fpr", "0.1", in}, "not both"},
		{[]string{"build", "-o", out, "--scalable", "--fingerprint-bits", "8", in}, "does not apply to --scalable"},
		{[]string{"build", "--frob", "-o", out, in}, "build: flag provided but not defined: -frob"},
		{[]string{"build", "-o", out, in, "--fpr", "0.1"}, "build: flag --fpr after the positional arguments"},
		{[]string{"build", "-o", out, in, "extra"}, `build: unexpected argument "extra"`},
		{[]string{"query"}, "query: missing FILE"},
		{[]string{"info"}, "info: missing FILE"},
		{[]string{"info", out, out}, "info: unexpected argument"},
		{[]string{"demo", "--n", "0"}, `demo: invalid value "0" for flag -n: out of range: it must be in 1..100000000`},
		{[]string{"demo", "--n", "1.5"}, `demo: invalid value "1.5" for flag -n`},
		{[]string{"demo", "--fpr", "-1"}, "demo: --fpr -1"},
		{[]string{"demo", "extra"}, `demo: unexpected argument "extra"`},
	} {
		code, stdout, stderr := cuckoo(t, "", tc.args...)
		if code != 2 || !strings.HasPrefix(stderr, "cuckoo: ") || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("cuckoo %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a usage error wrote %s", out)
	}
}

func TestNotAFilter(t *testing.T) {
	dir := t.TempDir()
	text := writeKeys(t, dir, "keys.txt", keys("k", 10))
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	for _, tc := range []struct{ path, want string }{
		{text, "is not a cuckoo filter file"},
		{empty, "is not a cuckoo filter file"},
		{dir, "is a directory"},
		{filepath.Join(dir, "missing"), "no such file or directory"},
	} {
		for _, args := range [][]string{{"query", tc.path, "k-1"}, {"info", tc.path}} {
			code, stdout, stderr := cuckoo(t, "", args...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, tc.path) {
				t.Errorf("cuckoo %q: exit %d, stderr %q; want 2 and %q", args, code, stderr, tc.want)
			}
		}
	}
}

func TestBuildProgress(t *testing.T) {
	// The bar waits firstFrame before it draws; this build takes less.
	defer func(d time.Duration) { firstFrame = d }(firstFrame)
	firstFrame = 0
	dir := t.TempDir()
	in := writeKeys(t, dir, "keys.txt", keys("k", 2*progressStep))
	code, _, stderr := cuckoo(t, "", "build", "--progress", "-o", filepath.Join(dir, "f.ckoo"), in)
	if code != 0 || !strings.Contains(stderr, "inserting") || !strings.Contains(stderr, "f.ckoo: 32768 keys") {
		t.Errorf("build --progress: exit %d, stderr %q; want a bar and the summary", code, stderr)
	}
}

// TestQueryInteractive checks that query answers a key as soon as its line
// arrives, without waiting for a batch to fill or stdin to end.
func TestQueryInteractive(t *testing.T) {
	out := build(t, keys("k", 100))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		code := run([]string{"query", out}, inR, outW, io.Discard)
		outW.Close()
		done <- code
	}()
	answers := bufio.NewReader(outR)
	for _, k := range []string{"k-1", "k-99"} {
		if _, err := io.WriteString(inW, k+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := answers.ReadString('\n')
		if err != nil || line != k+"\tyes\n" {
			t.Fatalf("answer to %q: %q, %v", k, line, err)
		}
	}
	inW.Close()
	if rest, _ := io.ReadAll(answers); len(rest) != 0 {
		t.Errorf("output after the last key: %q", rest)
	}
	if code := <-done; code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// TestBuildRefusesToOverwriteInput: -o naming the input, by its name, a
// symlink, a hard link or as stdin, is refused and the keys are untouched
// (issue 14: build -o small.txt small.txt replaced the keys with a filter).
func TestBuildRefusesToOverwriteInput(t *testing.T) {
	dir := t.TempDir()
	in := writeKeys(t, dir, "keys.txt", keys("k", 100))
	want, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.txt")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	check := func(name string, code int, stderr string) {
		t.Helper()
		if code == 0 || !strings.Contains(stderr, "refusing to replace the keys") {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
		}
		if got, err := os.ReadFile(in); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: the keys file changed (%v)", name, err)
		}
	}
	for name, args := range map[string][]string{
		"same name":   {"build", "-o", in, in},
		"symlink out": {"build", "-o", link, in},
		"symlink in":  {"build", "-o", in, link},
		"hard link":   {"build", "-o", hard, in},
	} {
		code, _, stderr := cuckoo(t, "", args...)
		check(name, code, stderr)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errOut bytes.Buffer
	code := run([]string{"build", "-o", in, "-"}, f, &out, &errOut)
	check("stdin", code, errOut.String())
	// A different file is fine.
	if code, _, stderr := cuckoo(t, "", "build", "-o", filepath.Join(dir, "f.ckoo"), in); code != 0 {
		t.Errorf("build to another file: exit %d: %s", code, stderr)
	}
}

// TestBuildBOM: a UTF-8 byte order mark opening the input is no part of the
// first key, from a file or stdin, in build and in query's stdin (issue 14:
// query bom.cf firstkey answered no).
func TestBuildBOM(t *testing.T) {
	dir := t.TempDir()
	text := "\xef\xbb\xbffirstkey\r\nsecond\r\n"
	in := filepath.Join(dir, "bom.txt")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, input := range []string{in, "-"} {
		out := filepath.Join(dir, "bom.cf")
		if code, _, stderr := cuckoo(t, text, "build", "-o", out, "--fpr", "0.0001", input); code != 0 {
			t.Fatalf("build from %s: exit %d: %s", input, code, stderr)
		}
		if code, stdout, _ := cuckoo(t, "", "query", out, "firstkey", "second"); code != 0 || stdout != "firstkey\tyes\nsecond\tyes\n" {
			t.Errorf("build from %s, query firstkey second: exit %d, %q", input, code, stdout)
		}
		if code, stdout, _ := cuckoo(t, "", "query", out, "\xef\xbb\xbffirstkey"); code != 1 {
			t.Errorf("build from %s: the key with its BOM is present: exit %d, %q", input, code, stdout)
		}
		if code, stdout, _ := cuckoo(t, text, "query", out); code != 0 || stdout != "firstkey\tyes\nsecond\tyes\n" {
			t.Errorf("build from %s, query of the same lines on stdin: exit %d, %q", input, code, stdout)
		}
	}
}

// TestQueryDashIsStdin: "query FILE -" reads the keys from stdin, as
// "build -" does (issue 14: query took "-" as a key); "-" among other keys
// is refused, and the key "-" is looked up from stdin.
func TestQueryDashIsStdin(t *testing.T) {
	out := build(t, []string{"a", "b", "-"}, "--fpr", "0.0001")
	if code, stdout, stderr := cuckoo(t, "a\nb\nzz\n", "query", out, "-"); code != 0 || stdout != "a\tyes\nb\tyes\nzz\tno\n" {
		t.Errorf("query FILE - with keys on stdin: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, stdout, _ := cuckoo(t, "-\n", "query", out); code != 0 || stdout != "-\tyes\n" {
		t.Errorf("the key \"-\" on stdin: exit %d, %q", code, stdout)
	}
	code, stdout, stderr := cuckoo(t, "a\n", "query", out, "a", "-")
	if code != 2 || stdout != "" || !strings.Contains(stderr, `query: "-" (stdin) among keys`) {
		t.Errorf("query FILE a -: exit %d, stdout %q, stderr %q; want 2 and a usage error", code, stdout, stderr)
	}
}

// TestBuildCapacityIsAFloor: --capacity is what the filter is sure to hold,
// so a build past it succeeds while the table has room, and fails only when
// the filter is full, as build -h says (issue 14: the help said a build past
// --capacity fails, and --capacity 1 with 3 keys succeeded).
func TestBuildCapacityIsAFloor(t *testing.T) {
	out := build(t, []string{"a", "b", "c"}, "--capacity", "1")
	if code, stdout, _ := cuckoo(t, "", "query", out, "a", "b", "c"); code != 0 || strings.Count(stdout, "\tyes\n") != 3 {
		t.Errorf("query of the 3 keys built with --capacity 1: exit %d, %q", code, stdout)
	}
	_, help, _ := cuckoo(t, "", "build", "-h")
	if strings.Contains(help, "exceeds --capacity fails") ||
		!strings.Contains(help, "--capacity is what the filter is sure to hold, not a limit") ||
		!strings.Contains(help, "only\nwhen the filter is full") {
		t.Errorf("build -h does not say what happens past --capacity:\n%s", help)
	}
}

// TestBuildOutputErrors: an -o that cannot be written is refused before any
// key is read, by the name the user gave, never a temporary file's (issue
// 14: "rename ./.adir.tmp270778473 adir: file exists").
func TestBuildOutputErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeKeys(t, dir, "keys.txt", keys("k", 10))
	adir := filepath.Join(dir, "adir")
	if err := os.Mkdir(adir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ out, want string }{
		{adir, "build: -o " + adir + " is a directory: name a file to write the filter to"},
		{filepath.Join(dir, "missing", "x.cf"), "build: -o " + filepath.Join(dir, "missing", "x.cf") + ": its directory " +
			filepath.Join(dir, "missing") + ": no such file or directory"},
		{filepath.Join(in, "x.cf"), "build: -o " + filepath.Join(in, "x.cf") + ": " + in + " is not a directory"},
	} {
		// Stdin that never ends: the check must come before reading keys.
		r, w := io.Pipe()
		var stdout, stderr bytes.Buffer
		code := run([]string{"build", "-o", tc.out, "-"}, r, &stdout, &stderr)
		w.Close()
		if code != 2 || !strings.HasPrefix(stderr.String(), "cuckoo: "+tc.want+"\n") || strings.Contains(stderr.String(), ".tmp") {
			t.Errorf("build -o %s: exit %d, stderr %q; want 2 and %q", tc.out, code, stderr.String(), tc.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	sub, _ := os.ReadDir(adir)
	if len(entries) != 2 || len(sub) != 0 {
		t.Errorf("failed builds left files: %v, in adir %v", entries, sub)
	}
}

// failingWriter fails after writing some bytes, as a full disk does.
type failingWriter struct{}

func (failingWriter) WriteTo(w io.Writer) (int64, error) {
	n, _ := w.Write(make([]byte, 2<<20)) // past the buffer, into the file
	return int64(n), errors.New("no space left on device")
}

// TestWriteAtomicNamesPath: a failed write names the path given, not the
// temporary file, and leaves nothing behind.
func TestWriteAtomicNamesPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.cf")
	_, err := writeAtomic(path, failingWriter{})
	if err == nil || err.Error() != "writing "+path+": no space left on device" {
		t.Errorf("writeAtomic with a failing write: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed write left %v", entries)
	}
	// The temporary file cannot be created, or cannot be renamed over path
	// (a directory that build's own check did not see).
	missing := filepath.Join(dir, "missing", "f.cf")
	if _, err := writeAtomic(missing, failingWriter{}); err == nil || err.Error() != "writing "+missing+": no such file or directory" {
		t.Errorf("writeAtomic into a missing directory: %v", err)
	}
	adir := filepath.Join(dir, "adir")
	if err := os.MkdirAll(filepath.Join(adir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = writeAtomic(adir, fixedWriter("CKOO"))
	if err == nil || !strings.HasPrefix(err.Error(), "writing "+adir+": ") || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("writeAtomic over a directory: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("failed writes left %v", entries)
	}
}

// fixedWriter writes itself.
type fixedWriter string

func (f fixedWriter) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, string(f))
	return int64(n), err
}

// TestQueryQuotesKeys: keys that are not printable text are printed quoted,
// so that every line is one key, a tab and the answer, and strconv.Unquote
// gives the key back (issue 14: a key holding a tab was ambiguous).
func TestQueryQuotesKeys(t *testing.T) {
	ks := []string{"a\tb", "\xff\x00z", "\x1b[31mred", `"q"`, "line\rfeed", "nbsp\u00a0x", "plain é ü", "with space"}
	out := build(t, ks, "--fpr", "0.0001")
	want := []string{`"a\tb"`, `"\xff\x00z"`, `"\x1b[31mred"`, `"\"q\""`, `"line\rfeed"`, `"nbsp\u00a0x"`, "plain é ü", "with space"}
	code, stdout, _ := cuckoo(t, "", append([]string{"query", out}, ks...)...)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || len(lines) != len(ks) {
		t.Fatalf("query: exit %d, %q", code, stdout)
	}
	for i, line := range lines {
		key, ans, ok := strings.Cut(line, "\t")
		if !ok || key != want[i] || ans != "yes" {
			t.Errorf("key %q printed as %q, want %q and yes", ks[i], line, want[i])
			continue
		}
		if strings.HasPrefix(key, `"`) {
			if k, err := strconv.Unquote(key); err != nil || k != ks[i] {
				t.Errorf("Unquote(%s) = %q, %v; want %q", key, k, err, ks[i])
			}
		}
	}
	if _, stdout, _ := cuckoo(t, "", "query", out, ""); stdout != "\"\"\tno\n" {
		t.Errorf("query of the empty key: %q", stdout)
	}
	if _, help, _ := cuckoo(t, "", "query", "-h"); !strings.Contains(help, "printed quoted, as Go writes a string") {
		t.Errorf("query -h does not say how keys are quoted:\n%s", help)
	}
}

// TestBuildEmptyInputWarns: an input with no keys builds an empty filter
// (exit 0: it is a filter) and says so, since it is rarely what was meant.
func TestBuildEmptyInputWarns(t *testing.T) {
	dir := t.TempDir()
	in := writeKeys(t, dir, "none.txt", nil)
	out := filepath.Join(dir, "f.ckoo")
	code, _, stderr := cuckoo(t, "", "build", "-o", out, in)
	want := "cuckoo: build: warning: " + in + " holds no keys: " + out + " is an empty filter"
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("build of an empty input: exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	if code, _, _ := cuckoo(t, "", "query", out, "anything"); code != 1 {
		t.Errorf("query of the empty filter: exit %d, want 1 (absent)", code)
	}
}

// TestErrorsNameTheCommand: every command's errors read "cuckoo: NAME:
// ...", whether the command wrote its name or not.
func TestErrorsNameTheCommand(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, args := range [][]string{
		{"build", "-o", missing + ".ckoo", missing},
		{"query", missing, "k"},
		{"info", missing},
	} {
		code, _, stderr := cuckoo(t, "", args...)
		if want := "cuckoo: " + args[0] + ": "; code != 2 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, args[0]+": ") != 1 {
			t.Errorf("cuckoo %q: exit %d, stderr %q; want 2 and one %q first", args, code, stderr, want)
		}
	}
}
