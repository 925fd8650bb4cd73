package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/cmd/cuckoo/internal/eval"
)

func TestEvalCommand(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := cuckoo(t, "", "eval", "--quick", "--only", "deletes", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "report.md") || !strings.Contains(stderr, "1/1 deletes") {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Error(err)
	}
}

func TestEvalRejectsUnknownExperiment(t *testing.T) {
	code, _, stderr := cuckoo(t, "", "eval", "--only", "probes,bogus")
	if code != exitError || !strings.Contains(stderr, `eval: --only: no experiment "bogus"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestEvalHelpNamesEveryExperiment: cuckoo help eval describes each
// experiment --only takes (it once left out space).
func TestEvalHelpNamesEveryExperiment(t *testing.T) {
	for _, name := range eval.Experiments {
		if !regexp.MustCompile(`(?m)^  ` + name + `(\s|$)`).MatchString(evalHelp) {
			t.Errorf("cuckoo help eval does not describe the experiment %q", name)
		}
	}
}
