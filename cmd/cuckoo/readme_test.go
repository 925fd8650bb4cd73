package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readme returns the repository's README.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmePackageTable: the README's package table names every command
// of the tool (issue 14: it left out eval).
func TestReadmePackageTable(t *testing.T) {
	var row string
	for line := range strings.Lines(readme(t)) {
		if strings.HasPrefix(line, "| `cmd/cuckoo` |") {
			row = line
		}
	}
	if row == "" {
		t.Fatal("README.md has no package table row for cmd/cuckoo")
	}
	for _, c := range commands {
		if c.run != nil && !strings.Contains(row, "`"+c.name+"`") {
			t.Errorf("README.md's package table does not name %s: %s", c.name, row)
		}
	}
}

// TestReadmeLibraryRequirements: the README names every module the
// library's go.mod requires directly, and one it calls test-only is
// imported by tests alone (issue 14: it said the library needed only xxh3,
// while go.mod also required porcupine).
func TestReadmeLibraryRequirements(t *testing.T) {
	text := readme(t)
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var direct []string
	inRequire := false
	for line := range strings.Lines(string(mod)) {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			inRequire = true
			continue
		case line == ")":
			inRequire = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inRequire:
			continue
		}
		if fields := strings.Fields(line); len(fields) >= 2 && !strings.Contains(line, "// indirect") {
			direct = append(direct, fields[0])
		}
	}
	if len(direct) == 0 {
		t.Fatal("found no requirement in go.mod")
	}
	for _, m := range direct {
		if !strings.Contains(text, "`"+m+"`") {
			t.Errorf("go.mod requires %s; the README does not say so", m)
		}
	}
	// porcupine, which the README calls test-only: no library file but a
	// test imports it. The other modules of the workspace have their own
	// go.mod and are skipped.
	root := "../.."
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "github.com/anishathalye/porcupine") {
			t.Errorf("%s imports porcupine, which the README calls test-only", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
