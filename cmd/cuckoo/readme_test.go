package main

import (
	"io/fs"
	"net"
	"os"
	"os/exec"
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

// readmeSession is one command of a README redis-cli sample and the reply
// lines the README shows for it.
type readmeSession struct {
	args  []string
	reply []string
	// interactive: a line of a "$ redis-cli" session, run in one redis-cli
	// process with the session's other lines, so that AUTH lasts.
	interactive bool
}

// readmeSessions returns the README's redis-cli samples: blocks opening
// with "$ redis-cli", either an interactive session ("127.0.0.1:6379> CMD")
// or one command a line ("$ redis-cli CMD").
func readmeSessions(text string) [][]readmeSession {
	var blocks [][]readmeSession
	var cur []readmeSession
	in := false
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		switch {
		case !in && strings.HasPrefix(line, "```"):
			in = true
			cur = nil
		case in && line == "```":
			in = false
			if len(cur) > 0 {
				blocks = append(blocks, cur)
			}
		case !in:
		case line == "$ redis-cli":
		case strings.HasPrefix(line, "$ redis-cli "):
			cur = append(cur, readmeSession{args: strings.Fields(strings.TrimPrefix(line, "$ redis-cli "))})
		case strings.HasPrefix(line, "127.0.0.1:6379> "):
			cur = append(cur, readmeSession{args: strings.Fields(strings.TrimPrefix(line, "127.0.0.1:6379> ")), interactive: true})
		case len(cur) > 0:
			cur[len(cur)-1].reply = append(cur[len(cur)-1].reply, line)
		}
	}
	return blocks
}

// TestReadmeRedisCLI runs the README's redis-cli sessions against a real
// cuckoo serve and compares every reply line with the README's, so that the
// samples cannot drift from what the server answers (issue 14: the CF.INFO
// sample showed a Size the server did not answer).
func TestReadmeRedisCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it; skipped with -short")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli is not installed (Debian's redis-tools)")
	}
	blocks := readmeSessions(readme(t))
	if len(blocks) < 2 {
		t.Fatalf("found %d redis-cli sessions in the README, want at least 2", len(blocks))
	}
	bin := cuckooBin(t)
	cmd, addr, log := serveProc(t, bin, "--dir", "")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ran, info := 0, false
	for _, block := range blocks {
		if block[0].interactive {
			// One process, the commands on its stdin, the replies as
			// redis-cli shows them on a terminal (--no-raw).
			var in strings.Builder
			var want []string
			for _, s := range block {
				ran++
				info = info || s.args[0] == "CF.INFO"
				in.WriteString(strings.Join(s.args, " ") + "\n")
				want = append(want, s.reply...)
			}
			c := exec.Command(cli, "-h", host, "-p", port, "--no-raw")
			c.Stdin = strings.NewReader(in.String())
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("redis-cli session %q: %v\n%s\n%s", in.String(), err, out, log)
			}
			if got := strings.TrimRight(string(out), "\n"); got != strings.Join(want, "\n") {
				t.Errorf("the redis-cli session\n%s answers\n%s\nthe README shows\n%s", in.String(), got, strings.Join(want, "\n"))
			}
			continue
		}
		for _, s := range block {
			ran++
			info = info || s.args[0] == "CF.INFO"
			// --no-raw: the replies as redis-cli shows them on a terminal.
			args := append([]string{"-h", host, "-p", port, "--no-raw"}, s.args...)
			out, err := exec.Command(cli, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("redis-cli %s: %v\n%s\n%s", strings.Join(s.args, " "), err, out, log)
			}
			got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(s.reply, "\n") {
				t.Errorf("redis-cli %s answers\n%s\nthe README shows\n%s", strings.Join(s.args, " "),
					strings.Join(got, "\n"), strings.Join(s.reply, "\n"))
			}
		}
	}
	t.Logf("%d commands of %d sessions", ran, len(blocks))
	if ran < 14 || !info {
		t.Errorf("ran %d commands of the README (CF.INFO among them: %v); the parser missed some", ran, info)
	}
}

// TestReadmeToolSection: the README's tool section installs the binary
// before it runs it, and runs the binary rather than go run, whose exit
// status is 1 for every failure (issue 14: query's 0/1/2 were lost).
func TestReadmeToolSection(t *testing.T) {
	text := readme(t)
	start := strings.Index(text, "\n## The tool\n")
	if start < 0 {
		t.Fatal("README.md has no section \"The tool\"")
	}
	section := text[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	install := strings.Index(section, "go install ./cmd/cuckoo")
	first := strings.Index(section, "\ncuckoo ")
	switch {
	case install < 0:
		t.Error("the tool section does not install the binary (go install ./cmd/cuckoo)")
	case first < 0 || first < install:
		t.Error("the tool section runs cuckoo before installing it")
	}
	if strings.Contains(section, "go run ./cmd/cuckoo query") || strings.Contains(section, "go run ./cmd/cuckoo build") {
		t.Error("the tool section runs query or build with go run, which loses their exit status")
	}
	if !strings.Contains(section, "2 on error") {
		t.Error("the tool section does not give query's exit statuses")
	}
	for _, c := range commands {
		if c.run != nil && !strings.Contains(section, "\ncuckoo "+c.name) {
			t.Errorf("the tool section does not show cuckoo %s", c.name)
		}
	}
}
