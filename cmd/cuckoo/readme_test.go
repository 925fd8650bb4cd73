package main

import (
	"os"
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
