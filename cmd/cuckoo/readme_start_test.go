package main

import (
	"archive/zip"
	"bytes"
	"go/format"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeBlocks returns the README's fenced blocks of the given language
// ("sh", "go", or "" for a bare fence), each with the line it starts on.
func readmeBlocks(text, lang string) (blocks []string, lines []int) {
	var cur strings.Builder
	in, want, n, start := false, false, 0, 0
	for line := range strings.Lines(text) {
		n++
		switch {
		case !in && strings.HasPrefix(line, "```"):
			in, want, start = true, strings.TrimSpace(strings.TrimPrefix(line, "```")) == lang, n
			cur.Reset()
		case in && strings.TrimSpace(line) == "```":
			in = false
			if want {
				blocks, lines = append(blocks, cur.String()), append(lines, start)
			}
		case in:
			cur.WriteString(line)
		}
	}
	return blocks, lines
}

// TestReadmeFirstScreen: the README's first screen says what this is and
// gives a newcomer the two commands, the demo and the tests; the test
// command is the one CI runs, and what it covers is said truly (issue 24:
// a paragraph about the C++ reference came first, and "runs all the tests"
// skipped the bench module).
func TestReadmeFirstScreen(t *testing.T) {
	text := readme(t)
	blocks, lines := readmeBlocks(text, "sh")
	if len(blocks) == 0 || lines[0] > 25 {
		t.Fatalf("the README's first sh block starts on line %v; want it on the first screen (25 lines)", lines)
	}
	first := strings.Split(strings.TrimSpace(blocks[0]), "\n")
	if len(first) != 2 || !strings.HasPrefix(first[0], "go run ./cmd/cuckoo demo ") || !strings.HasPrefix(first[1], "scripts/test ") {
		t.Fatalf("the README's first commands are\n%s\nwant go run ./cmd/cuckoo demo, then the test command, scripts/test", blocks[0])
	}
	screen := strings.Join(strings.SplitN(text, "\n", 26)[:25], "\n")
	for _, want := range []string{"Redis-protocol server", "RedisBloom's `CF.*` commands", "drop-in for Redis Stack's cuckoo filters"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the README's first screen does not say %q", want)
		}
	}
	if strings.Contains(screen, "C++") {
		t.Error("the README's first screen talks about the C++ reference")
	}

	// The test command: scripts/test tests the packages the README names
	// and .ci/run vets, and CI runs it.
	testCmd, _, _ := strings.Cut(first[1], "#")
	script, err := os.ReadFile("../../scripts/test")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	pkgsOf := func(name string, b []byte) []string {
		m := regexp.MustCompile(`(?m)^PKGS=\((.*)\)$`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s has no PKGS=(...) line", name)
		}
		return strings.Fields(string(m[1]))
	}
	pkgs := pkgsOf("scripts/test", script)
	if ciPkgs := pkgsOf(".ci/run", ci); !slices.Equal(pkgs, ciPkgs) {
		t.Errorf("scripts/test tests %q, .ci/run vets %q", pkgs, ciPkgs)
	}
	if !strings.Contains(screen, "`"+strings.Join(pkgs, " ")+"`") {
		t.Errorf("the first screen does not name the packages scripts/test tests, %q", pkgs)
	}
	if !strings.Contains(string(ci), "\nscripts/test -race\n") || !strings.Contains(string(ci), "\nexport CUCKOO_REQUIRE_PREREQS=1\n") {
		t.Error(".ci/run does not run scripts/test -race with CUCKOO_REQUIRE_PREREQS=1")
	}
	// What the command covers, said truly: every module of go.work but
	// bench is in it, and the README says how bench's tests run.
	comment := first[1][len(testCmd):]
	if strings.Contains(comment, "all the tests") {
		t.Errorf("the README says its test command runs all the tests, but it leaves out bench: %s", comment)
	}
	for _, mod := range workspaceModules(t) {
		covered := slices.Contains(pkgs, "./"+strings.TrimPrefix(mod+"/...", "./"))
		if mod == "." {
			covered = slices.Contains(pkgs, "./...")
		}
		if !covered && !strings.Contains(screen, "cd "+mod+" && go test ./...") {
			t.Errorf("module %s: not in the test command, and the first screen does not say how its tests run", mod)
		}
	}
}

// workspaceModules returns the directories go.work uses, as written there.
func workspaceModules(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../go.work")
	if err != nil {
		t.Fatal(err)
	}
	_, uses, ok := strings.Cut(string(b), "use (")
	uses, _, _ = strings.Cut(uses, ")")
	if !ok {
		t.Fatal("go.work has no use ( ... ) block")
	}
	var mods []string
	for _, f := range strings.Fields(uses) {
		mods = append(mods, strings.TrimPrefix(f, "./"))
	}
	return mods
}

// TestReadmeModules: the README counts the workspace's modules as go.work
// does and names each (issue 24: it said four and left out server).
func TestReadmeModules(t *testing.T) {
	text := strings.Join(strings.Fields(readme(t)), " ")
	mods := workspaceModules(t)
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	if len(mods) >= len(words) {
		t.Fatalf("%d modules", len(mods))
	}
	if want := "workspace (`go.work`) of " + words[len(mods)] + " modules"; !strings.Contains(text, want) {
		t.Errorf("go.work has %d modules; the README does not say %q", len(mods), want)
	}
	for _, m := range mods {
		if !strings.Contains(text, "(`"+m+"`") {
			t.Errorf("the README does not name the module %s as (`%s`...)", m, m)
		}
	}
}

// TestReadmeGoExample compiles and runs the README's Go program as a user
// would, in a module of its own that requires the library (replaced by this
// checkout), and compares its output with the README's (issue 24: the
// example was a fragment that did not compile, and lockfree.New refused its
// Config).
func TestReadmeGoExample(t *testing.T) {
	text := readme(t)
	progs, _ := readmeBlocks(text, "go")
	var prog string
	for _, p := range progs {
		if strings.HasPrefix(p, "package main\n") {
			prog = p
			break
		}
	}
	if prog == "" {
		t.Fatal("the README has no Go block that is a whole program (package main)")
	}
	if formatted, err := format.Source([]byte(prog)); err != nil {
		t.Fatalf("the README's Go program does not parse: %v", err)
	} else if string(formatted) != prog {
		t.Errorf("the README's Go program is not gofmt-formatted; gofmt gives\n%s", formatted)
	}
	// Each constructor on a line of its own, with its own Config type.
	for _, want := range []string{
		"filter.New(filter.Config{", "filter.NewScalable(filter.ScalableConfig{", "lockfree.New(filter.Config{", "hashmap.New[",
	} {
		if !strings.Contains(prog, want) {
			t.Errorf("the README's Go program does not call %s", want)
		}
	}
	// The output the README shows: the bare block that follows the program
	// and opens with "$ go run".
	var want string
	after := text[strings.Index(text, prog)+len(prog):]
	_, after, _ = strings.Cut(after, "\n") // the program's closing fence
	outs, _ := readmeBlocks(after, "")
	for _, o := range outs {
		if strings.HasPrefix(o, "$ go run ") {
			_, want, _ = strings.Cut(o, "\n")
			break
		}
	}
	if want == "" {
		t.Fatal("the README shows no output ($ go run ...) after its Go program")
	}
	if testing.Short() {
		t.Skip("compiles and runs the program; skipped with -short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/readme\n\ngo 1.26\n\nrequire github.com/cuckoohash/cuckoo v0.0.0\n\nreplace github.com/cuckoohash/cuckoo => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": []byte(prog)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run of the README's program: %v\n%s", err, stderr.String())
	}
	if string(out) != want {
		t.Errorf("the README's program prints\n%s\nthe README shows\n%s", out, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "urls.cf")); err != nil {
		t.Errorf("the program did not write urls.cf: %v", err)
	}
}

// TestReadmeTidy checks what the README says of porcupine, the library's
// test-only requirement, in a module that imports the library from a module
// proxy (a local one, serving this checkout): go build adds no go.sum line
// for it, go mod tidy adds none for a module that imports filter alone and
// its lines for one that imports lockfree, whose tests use it (issue 24:
// the README said tidy added none).
func TestReadmeTidy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy against a local module proxy; skipped with -short")
	}
	text := strings.Join(strings.Fields(readme(t)), " ")
	for _, want := range []string{
		"`go build` adds no `go.sum` line for it",
		"`go mod tidy` in a module that imports `lockfree` or `hashmap` adds its two",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	writeModuleToProxy(t, root, filepath.Join(proxy, "github.com", "cuckoohash", "cuckoo", "@v"), "v0.0.1")
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GONOSUMDB=github.com/cuckoohash",
		// This checkout first, then what the module cache holds, then the
		// usual proxy for anything missing.
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(strings.TrimSpace(string(modcache)), "cache", "download"))+","+strings.TrimSpace(string(upstream)))
	for _, tc := range []struct {
		imports   string
		goCmd     []string
		porcupine bool
	}{
		{"filter", []string{"mod", "tidy"}, false},
		{"lockfree", []string{"mod", "tidy"}, true},
		{"lockfree", []string{"build", "-o", os.DevNull, "."}, false},
	} {
		dir := filepath.Join(tmp, tc.imports+"-"+tc.goCmd[0])
		prog := "package main\n\nimport \"github.com/cuckoohash/cuckoo/" + tc.imports + "\"\n\nvar _ = " + tc.imports + ".New\n\nfunc main() {}\n"
		gomod := "module example.com/tidy\n\ngo 1.26\n\nrequire github.com/cuckoohash/cuckoo v0.0.1\n"
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string]string{"go.mod": gomod, "main.go": prog} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("go", tc.goCmd...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s importing %s: %v\n%s", strings.Join(tc.goCmd, " "), tc.imports, err, out)
		}
		sum, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
		got := strings.Count(string(sum), "github.com/anishathalye/porcupine ")
		if tc.porcupine && got != 2 || !tc.porcupine && got != 0 {
			t.Errorf("go %s in a module importing %s: %d go.sum lines for porcupine, want %v\n%s",
				strings.Join(tc.goCmd, " "), tc.imports, got, map[bool]int{true: 2, false: 0}[tc.porcupine], sum)
		}
	}
}

// writeModuleToProxy writes the library module at root (its files, without
// the nested modules, hidden directories and the workspace files) as
// version of a file:// module proxy's directory dir.
func writeModuleToProxy(t *testing.T, root, dir, version string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	prefix := "github.com/cuckoohash/cuckoo@" + version + "/"
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if path == root {
				return nil
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil || strings.HasPrefix(d.Name(), ".") || d.Name() == "docs" || d.Name() == "hello" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "go.work" || rel == "go.work.sum" || !d.Type().IsRegular() {
			return nil
		}
		w, err := zw.Create(prefix + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if cerr := zf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		version + ".mod":  mod,
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`),
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
