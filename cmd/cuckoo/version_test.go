package main

import (
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
		{nil, "cuckoo (unknown) " + runtime.Version() + osArch},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}, "cuckoo (devel) go1.26.0" + osArch},
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
