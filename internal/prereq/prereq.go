// Package prereq is how the project's tests find what they need beyond Go:
// programs from Debian's packages (redis-server, redis-cli, redis-sentinel,
// python3 with redis-py, ip), and conditions no script can install (root,
// a RedisBloom module built from its sources). A test that lacks one skips,
// saying what is missing and the one command that supplies it, so that the
// test command's summary (gotestsum's "=== Skipped") tells a user what did
// not run and how to run it.
//
// Installable prerequisites are those scripts/test-prereqs installs. With
// CUCKOO_REQUIRE_PREREQS set, as .ci/run sets it after running that
// script, a test that lacks one fails instead of skipping: CI never passes
// by skipping what it installed. The others (Optional) always skip.
//
// Nothing here is for use outside tests.
package prereq

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Install is the command that installs every installable prerequisite.
const Install = "scripts/test-prereqs"

// RequireEnv is the environment variable that, set to anything but "" or
// "0", turns a missing installable prerequisite into a failure.
const RequireEnv = "CUCKOO_REQUIRE_PREREQS"

// debian names the Debian package of each program the tests run; every
// one of them is in Install's list.
var debian = map[string]string{
	"redis-server":   "redis-server",
	"redis-cli":      "redis-tools",
	"redis-sentinel": "redis-sentinel",
	"python3":        "python3",
	"ip":             "iproute2",
	"openssl":        "openssl",
}

// Required reports whether missing installable prerequisites fail tests.
func Required() bool {
	v := os.Getenv(RequireEnv)
	return v != "" && v != "0"
}

// Program returns the path of the program name, one of the programs of
// Debian's packages the tests run; if it is not on the PATH, the test
// skips (or fails, see Required) naming the package and Install.
func Program(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	pkg, ok := debian[name]
	if !ok {
		t.Fatalf("prereq: %s is not a program the tests know (add it to debian and to %s)", name, Install)
		return ""
	}
	Missing(t, fmt.Sprintf("%s is not installed (Debian package %s)", name, pkg))
	return ""
}

// PythonRedis returns a python3 that imports redis-py's cluster client
// (Debian's python3-redis), or skips (fails) as Program does.
func PythonRedis(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(name); err == nil && exec.Command(p, "-c", "import redis.cluster").Run() == nil {
			return p
		}
	}
	Missing(t, "python3 with redis-py is not installed (Debian package python3-redis)")
	return ""
}

// Missing skips the test for an installable prerequisite it lacks,
// described by what, naming the command that installs it; with Required,
// it fails the test instead.
func Missing(t testing.TB, what string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s; %s is set (.ci/run installs the prerequisites with %s first), so this fails rather than skips", what, RequireEnv, Install)
		return
	}
	t.Skipf("%s: run %s, which installs what the tests need", what, Install)
}

// Optional skips the test for a prerequisite no script installs here,
// described by what, with fix, the command or step that supplies it.
func Optional(t testing.TB, what, fix string) {
	t.Helper()
	t.Skipf("%s: %s", what, fix)
}
