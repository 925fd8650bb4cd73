package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	code, stdout, stderr := cuckoo(t, "", "demo", "--n", "2e4", "--seed", "3")
	if code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	t.Logf("\n%s", stdout)
	for _, want := range []string{
		"20000 synthetic URLs", "https://host-", "cuckoo filter", "map[string]struct{}", "load", "memory",
		"KiB", "MiB", "bits/item", "false positives", "of 20000 fresh URLs", "expected fpr", "false negatives   0",
		"inserts/s", "lookups/s", "(Contains)", "(ContainsBatch)", "M/s",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}

func TestDemoURLs(t *testing.T) {
	seen := make(map[string]bool)
	var b []byte
	for i := range uint64(10000) {
		b = demoURL(b[:0], i)
		if seen[string(b)] {
			t.Fatalf("URL %d repeats: %s", i, b)
		}
		seen[string(b)] = true
	}
	if got, want := string(demoURL(nil, 417)), string(demoURL(nil, 417)); got != want || !strings.HasPrefix(got, "https://host-417.example.com/") {
		t.Errorf("URL 417 = %q, %q", got, want)
	}
}

// TestDemoWriteURLs: demo --urls prints the URLs, a key file that build
// takes (issue 14: the README used urls.txt without saying where it came
// from), and summaries count in the singular for one (issue 14: "1 keys").
func TestDemoWriteURLs(t *testing.T) {
	code, stdout, stderr := cuckoo(t, "", "demo", "--urls", "--n", "1e3")
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != 0 || stderr != "" || len(lines) != 1000 || lines[417] != string(demoURL(nil, 417)) {
		t.Fatalf("demo --urls --n 1e3: exit %d, %d lines, stderr %q", code, len(lines), stderr)
	}
	dir := t.TempDir()
	in := writeKeys(t, dir, "urls.txt", lines)
	out := filepath.Join(dir, "urls.cf")
	if code, _, stderr := cuckoo(t, "", "build", "-o", out, in); code != 0 || !strings.HasPrefix(stderr, out+": 1000 keys") {
		t.Errorf("build of demo's URLs: exit %d, %q", code, stderr)
	}
	one := writeKeys(t, dir, "one.txt", lines[:1])
	if code, _, stderr := cuckoo(t, "", "build", "-o", out, one); code != 0 || !strings.HasPrefix(stderr, out+": 1 key,") {
		t.Errorf("build of one key: exit %d, summary %q; want \"1 key,\"", code, stderr)
	}
	if _, stdout, _ := cuckoo(t, "", "demo", "--n", "1"); !strings.Contains(stdout, "cuckoo demo: 1 synthetic URL (") {
		t.Errorf("demo --n 1:\n%s", stdout)
	}
	if got := count(uint64(0), "key", "keys") + "," + count(1, "stage", "stages") + "," + count(2, "stage", "stages"); got != "0 keys,1 stage,2 stages" {
		t.Errorf("count: %q", got)
	}
}

// TestGitignore: what the README's commands write in the repository is
// ignored (issue 14: eval-report/, urls.cf and urls.txt showed as new).
func TestGitignore(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"eval-report/report.md", "urls.cf", "urls.txt", "cuckoo-data/appendonly.log", "hello/main.go"} {
		out, err := exec.Command("git", "-C", root, "check-ignore", "--no-index", "-v", p).CombinedOutput()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == 1:
			t.Errorf("%s is not in .gitignore", p)
		case err != nil:
			t.Skipf("git check-ignore: %v %s", err, out) // no git, or not a checkout
		}
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestDemoWriteURLsError(t *testing.T) {
	var stderr strings.Builder
	code := run([]string{"demo", "--urls", "--n", "10"}, strings.NewReader(""), errWriter{}, &stderr)
	if code != 2 || stderr.String() != "cuckoo: demo: writing the URLs: broken pipe\n" {
		t.Errorf("demo --urls to a failing stdout: exit %d, stderr %q", code, stderr.String())
	}
}
