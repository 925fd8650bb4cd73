package main

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageComments: every package of the workspace (all five modules)
// that the project tracks has a package comment, and go doc shows all of it. A comment above the
// package clause that a blank line separates from it is not part of the
// package comment: go doc drops it silently (issue 24: a blank line at
// server/doc.go:285 hid its first 284 lines, the synopsis and the Layout,
// Protocols, Differences, ACL, TLS and Configuration sections that the
// README and cuckoo help serve send users to). The package's documentation
// is computed as go doc computes it, with go/doc, and must hold every
// comment written above a package clause and every "# " heading in it.
func TestPackageComments(t *testing.T) {
	pkgs := workspacePackages(t, "../..")
	if len(pkgs) < 10 {
		t.Fatalf("found %d packages in the workspace; the walk missed some", len(pkgs))
	}
	for dir, files := range pkgs {
		for _, err := range checkPackageComment(dir, files) {
			t.Error(err)
		}
	}
}

// TestPackageCommentsCatchesACut: the check above fails on a package
// comment cut by a blank line, and names the line, so that it cannot pass
// by finding nothing.
func TestPackageCommentsCatchesACut(t *testing.T) {
	dir := t.TempDir()
	src := "// Package p does things.\n//\n// # Layout\n//\n// Files.\n\n// # Later\n//\n// More.\npackage p\n"
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	errs := checkPackageComment(dir, []string{filepath.Join(dir, "doc.go")})
	if len(errs) == 0 {
		t.Fatal("a package comment cut by a blank line passed the check")
	}
	msg := errs[0].Error()
	for _, want := range []string{"doc.go:1", "blank line", "Layout"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error %q does not name %q", msg, want)
		}
	}
	whole := strings.Replace(src, "More.\n\n", "More.\n", 1)
	whole = strings.Replace(whole, "Files.\n\n", "Files.\n//\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte(whole), 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := checkPackageComment(dir, []string{filepath.Join(dir, "doc.go")}); len(errs) != 0 {
		t.Errorf("a whole package comment failed the check: %v", errs)
	}
}

// workspacePackages returns the directories under root holding the
// project's Go source (test files aside), with their files. The project's
// files are those git tracks, so that a user's own package saved in the
// clone (the README's hello/main.go) is not checked; outside a git
// checkout, every file under root, less hidden directories and testdata,
// as the go command skips them.
func workspacePackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	add := func(path string) {
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			pkgs[filepath.Dir(path)] = append(pkgs[filepath.Dir(path)], path)
		}
	}
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--", "*.go").Output(); err == nil {
		for _, name := range strings.Split(string(out), "\x00") {
			if name != "" && !strings.Contains("/"+name, "/testdata/") {
				add(filepath.Join(root, filepath.FromSlash(name)))
			}
		}
		return pkgs
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		add(path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// checkPackageComment parses one package's files and returns an error for
// each comment above a package clause that go doc does not show, and one if
// the package has no package comment at all.
func checkPackageComment(dir string, paths []string) []error {
	fset := token.NewFileSet()
	var files []*ast.File
	var errs []error
	for _, path := range paths {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return []error{err}
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "example.com/"+filepath.ToSlash(dir), doc.PreserveAST)
	if err != nil {
		return []error{err}
	}
	if strings.TrimSpace(p.Doc) == "" {
		errs = append(errs, fmt.Errorf("%s: no package comment (go doc shows no synopsis)", dir))
	}
	for _, f := range files {
		for _, g := range f.Comments {
			if g.End() >= f.Package || g == f.Doc || buildConstraint(g) {
				continue
			}
			text := g.Text()
			var headings []string
			for line := range strings.Lines(text) {
				if h, ok := strings.CutPrefix(line, "# "); ok {
					headings = append(headings, strings.TrimSpace(h))
				}
			}
			if !strings.Contains(p.Doc, strings.TrimSpace(text)) {
				errs = append(errs, fmt.Errorf("%s: a blank line ends this comment before the package clause, so go doc drops it "+
					"from the package comment (sections lost: %s); make the blank line //", fset.Position(g.Pos()), strings.Join(headings, ", ")))
			}
		}
	}
	return errs
}

// buildConstraint reports whether g is a //go:build or // +build line,
// which belongs above the package clause and apart from its comment.
func buildConstraint(g *ast.CommentGroup) bool {
	for _, c := range g.List {
		if !strings.HasPrefix(c.Text, "//go:build") && !strings.HasPrefix(c.Text, "// +build") {
			return false
		}
	}
	return true
}
