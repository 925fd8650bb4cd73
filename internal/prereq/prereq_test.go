package prereq_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/prereq"
)

// recorder is a testing.TB that records a skip or a failure instead of
// ending the goroutine, so that both outcomes can be checked.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// TestMissingSkipsOrFails: a missing installable prerequisite skips,
// naming the package and the install command; with the environment
// variable .ci/run sets, it fails.
func TestMissingSkipsOrFails(t *testing.T) {
	t.Setenv(prereq.RequireEnv, "")
	r := &recorder{TB: t}
	prereq.Program(r, "redis-cli-that-is-not-there")
	if r.failed == "" || !strings.Contains(r.failed, "not a program the tests know") {
		t.Errorf("an unknown program: failed %q", r.failed)
	}
	t.Setenv("PATH", t.TempDir())
	r = &recorder{TB: t}
	if p := prereq.Program(r, "redis-cli"); p != "" || r.failed != "" ||
		!strings.Contains(r.skipped, "redis-cli is not installed (Debian package redis-tools)") || !strings.Contains(r.skipped, prereq.Install) {
		t.Errorf("redis-cli missing: path %q, skipped %q, failed %q", p, r.skipped, r.failed)
	}
	t.Setenv(prereq.RequireEnv, "1")
	r = &recorder{TB: t}
	prereq.Program(r, "redis-sentinel")
	if r.skipped != "" || !strings.Contains(r.failed, "redis-sentinel is not installed") || !strings.Contains(r.failed, prereq.RequireEnv) {
		t.Errorf("redis-sentinel missing in CI: skipped %q, failed %q", r.skipped, r.failed)
	}
	r = &recorder{TB: t}
	prereq.Optional(r, "needs root", "run it as root")
	if r.failed != "" || r.skipped != "needs root: run it as root" {
		t.Errorf("an optional prerequisite in CI: skipped %q, failed %q", r.skipped, r.failed)
	}
	t.Setenv(prereq.RequireEnv, "0")
	if prereq.Required() {
		t.Error("Required with the variable set to 0")
	}
}
