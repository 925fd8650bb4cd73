package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/prereq"
	"github.com/redis/go-redis/v9"
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
	// porcupine, which the README calls test-only: no package of the
	// library a program can import builds it (internal/lincheck, the
	// tests' helper, imports it, and only tests import that). The other
	// modules of the workspace have their own go.mod and are not listed.
	pkgs, err := exec.Command("go", "list", "-C", "../..", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var public []string
	for p := range strings.Lines(string(pkgs)) {
		if p = strings.TrimSpace(p); p != "" && !strings.Contains(p, "/internal/") {
			public = append(public, p)
		}
	}
	deps, err := exec.Command("go", append([]string{"list", "-C", "../..", "-deps"}, public...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for d := range strings.Lines(string(deps)) {
		if strings.HasPrefix(d, "github.com/anishathalye/porcupine") {
			t.Errorf("the library's packages %v build porcupine, which the README calls test-only", public)
			break
		}
	}
	if len(public) < 5 {
		t.Errorf("go list found only %v as the library's packages", public)
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
	cli := prereq.Program(t, "redis-cli")
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

// TestReadmeCluster runs the README's cluster sample on eight real nodes
// on 127.0.0.1, its addresses 10.0.0.N:6379 mapped to theirs: every
// cuckoo cluster line must succeed and redis-cli -c must follow the
// redirect. With 1,000 filters of 100 items loaded after create, it logs
// cluster info after create and after the rebalance (the README's spread).
func TestReadmeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs eight server processes; skipped with -short")
	}
	var block string
	for _, b := range strings.Split(readme(t), "```sh\n")[1:] {
		if b, _, _ = strings.Cut(b, "```"); strings.Contains(b, "cuckoo cluster create") {
			block = b
		}
	}
	if block == "" {
		t.Fatal("README.md has no sh block with cuckoo cluster create")
	}
	addrs := startNodes(t, 8)
	addrOf := func(n string) string { // "10.0.0.N" -> a node's 127.0.0.1:port
		i, err := strconv.Atoi(strings.TrimPrefix(n, "10.0.0."))
		if err != nil || i < 1 || i > len(addrs) {
			t.Fatalf("README cluster sample: address %q", n)
		}
		return addrs[i-1]
	}
	addrRE := regexp.MustCompile(`10\.0\.0\.\d+:6379`)
	ctx := context.Background()
	for line := range strings.Lines(block) {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "cuckoo" && f[1] == "serve":
			if !slices.Contains(f, "--cluster-enabled") {
				t.Errorf("README cluster sample: serve without --cluster-enabled: %s", line)
			}
		case f[0] == "cuckoo" && f[1] == "cluster":
			args := strings.Fields(addrRE.ReplaceAllStringFunc(line, func(a string) string { return addrOf(strings.TrimSuffix(a, ":6379")) }))
			code, out, errOut := cuckoo(t, "", args[1:]...)
			if code != 0 {
				t.Fatalf("README: %s: exit %d\n%s%s", line, code, out, errOut)
			}
			switch f[2] {
			case "create":
				loadFilters(t, addrs[0], 1000, 100)
				t.Logf("after create and 10^5 items in 1,000 filters:\n%s", clusterInfo(t, addrs[0]))
			case "rebalance":
				t.Logf("after add-node and rebalance:\n%s\n%s", out, clusterInfo(t, addrs[0]))
			case "move-slots":
				// The sample moves slots the source owns: a move that finds
				// them on the target already shows nothing (it once did).
				if strings.Contains(out+errOut, "already") {
					t.Errorf("README: %s moved nothing:\n%s%s", line, out, errOut)
				}
			}
		case f[0] == "redis-cli":
			cli := prereq.Program(t, "redis-cli")
			host, port, _ := net.SplitHostPort(addrOf(f[slices.Index(f, "-h")+1]))
			f[slices.Index(f, "-h")+1], f[slices.Index(f, "-p")+1] = host, port
			out, err := exec.CommandContext(ctx, cli, f[1:]...).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "1" {
				t.Errorf("README: %s: %q, %v", line, out, err)
			}
		default:
			t.Errorf("README cluster sample: a line the test does not know: %s", line)
		}
	}
	if code, out := infoExit(t, addrs[0]); code != 0 {
		t.Errorf("cluster info after the README's sample: exit %d\n%s", code, out)
	}
}

// loadFilters adds items items to each of n filters through a
// ClusterClient.
func loadFilters(t *testing.T, seed string, n, items int) {
	t.Helper()
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{seed}})
	defer cc.Close()
	for i := 0; i < n; i += 50 {
		_, err := cc.Pipelined(ctx, func(p redis.Pipeliner) error {
			for k := i; k < min(i+50, n); k++ {
				args := make([]any, items)
				for j := range args {
					args[j] = fmt.Sprintf("https://example.com/%d/%d", k, j)
				}
				p.CFInsert(ctx, "urls:"+strconv.Itoa(k), nil, args...)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// clusterInfo is cuckoo cluster info's report.
func clusterInfo(t *testing.T, addr string) string {
	_, out := infoExit(t, addr)
	return out
}
