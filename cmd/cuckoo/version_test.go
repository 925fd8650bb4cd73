package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: "cuckoo version" and "cuckoo --version" print one line from
// the build info (issue 14: there was no way to ask).
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, stdout, stderr := cuckoo(t, "", args...)
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "cuckoo ") ||
			!strings.HasSuffix(stdout, " "+runtime.GOOS+"/"+runtime.GOARCH+"\n") || strings.Count(stdout, "\n") != 1 {
			t.Errorf("cuckoo %q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if code, _, stderr := cuckoo(t, "", "version", "extra"); code != 2 || !strings.Contains(stderr, `version: unexpected argument "extra"`) {
		t.Errorf("cuckoo version extra: exit %d, stderr %q", code, stderr)
	}
	// The help's first line names what the tool does beyond files.
	_, stdout, _ := cuckoo(t, "", "help")
	if !strings.Contains(stdout, "serves them over the\nRedis protocol, and measures them (demo, eval)") {
		t.Errorf("cuckoo help's first lines:\n%s", stdout)
	}
}

func TestVersionLine(t *testing.T) {
	osArch := " " + runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{nil, "cuckoo (unknown) (" + noRevision + ") " + runtime.Version() + osArch},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}, "cuckoo (devel) (" + noRevision + ") go1.26.0" + osArch},
		// A released module's build names its version and needs no revision.
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"}}, "cuckoo v1.2.0 go1.26.0" + osArch},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "8466b02c1f3e0123456789abcdef012345678901"},
			{Key: "vcs.time", Value: "2026-12-03T18:12:18Z"},
			{Key: "vcs.modified", Value: "true"},
		}}, "cuckoo v1.2.0 (revision 8466b02c1f3e, 2026-12-03T18:12:18Z, modified) go1.26.0" + osArch},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"},
		}}, "cuckoo v1.2.0 (revision abc) go1.26.0" + osArch},
	} {
		if got := versionLine(tc.info); got != tc.want {
			t.Errorf("versionLine = %q, want %q", got, tc.want)
		}
	}
}

// TestVersionRevision: a binary built in the repository's git checkout, as
// the README's go install builds it, prints the checkout's revision, and
// one built with -buildvcs=false says it has none and why (issue 24: the
// help promised a revision that a build with GOFLAGS=-buildvcs=false, as
// this machine's go env sets, does not record, and said nothing).
func TestVersionRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice; skipped with -short")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout (git rev-parse HEAD: %v): no revision to record", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		// go build stamps a revision only where .git is a directory: a
		// worktree's or a submodule's .git is a file.
		t.Skip("this checkout's .git is not a directory (a git worktree?): go build records no revision here")
	}
	dir := t.TempDir()
	for _, vcs := range []string{"true", "false"} {
		bin := filepath.Join(dir, "cuckoo-buildvcs-"+vcs)
		// -buildvcs on the command line overrides GOFLAGS, as the help says.
		if out, err := exec.Command("go", "build", "-buildvcs="+vcs, "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build -buildvcs=%s: %v\n%s", vcs, err, out)
		}
		out, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatalf("cuckoo version (-buildvcs=%s): %v", vcs, err)
		}
		line := string(out)
		want := "(revision " + strings.TrimSpace(string(head))[:12]
		if vcs == "false" {
			want = "cuckoo (devel) (" + noRevision + ") "
		}
		if !strings.Contains(line, want) {
			t.Errorf("built with -buildvcs=%s, cuckoo version prints %q; want it to contain %q", vcs, line, want)
		}
	}
	// The help says when the revision is recorded.
	_, stdout, _ := cuckoo(t, "", "version", "-h")
	for _, want := range []string{"go build or go install in a git checkout record it", "-buildvcs=false", "go run never does"} {
		if !strings.Contains(strings.Join(strings.Fields(stdout), " "), want) {
			t.Errorf("cuckoo version -h does not say %q:\n%s", want, stdout)
		}
	}
}
