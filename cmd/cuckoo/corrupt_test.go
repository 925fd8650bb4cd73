package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorruptFile damages filter files every way a disk or a truncated copy
// might: every truncation point of the header and a sample of the rest,
// every single flipped byte, and appended bytes. Each must give one clear
// error line and exit status 2.
func TestCorruptFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"filter", nil},
		{"scalable", []string{"--scalable", "--capacity", "20"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := build(t, keys("k", 50), tc.flags...)
			good, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			check := func(what string, data []byte, want ...string) {
				t.Helper()
				path := filepath.Join(dir, "bad.ckoo")
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				for _, args := range [][]string{{"query", path, "k-1"}, {"info", path}} {
					code, stdout, stderr := cuckoo(t, "", args...)
					ok := code == 2 && stdout == "" && strings.HasPrefix(stderr, "cuckoo: "+args[0]+": "+path) &&
						strings.Count(stderr, "\n") == 1
					for _, w := range want {
						ok = ok && strings.Contains(stderr, w)
					}
					if !ok {
						t.Fatalf("%s: cuckoo %s: exit %d, stdout %q, stderr %q; want exit 2, one line with %q",
							what, args[0], code, stdout, stderr, want)
					}
				}
			}
			var cuts []int
			for n := range min(len(good), 100) {
				cuts = append(cuts, n)
			}
			for n := 100; n < len(good); n += 7 {
				cuts = append(cuts, n)
			}
			for _, n := range cuts {
				want := "corrupt data"
				if n < 4 {
					want = "is not a cuckoo filter file"
				}
				check(fmt.Sprintf("truncated to %d of %d bytes", n, len(good)), good[:n], want)
			}
			for i := range good {
				bad := append([]byte(nil), good...)
				bad[i] ^= 0x40
				want := "corrupt data"
				if i < 4 {
					want = "is not a cuckoo filter file"
				}
				check(fmt.Sprintf("byte %d flipped", i), bad, want)
			}
			check("a byte appended", append(good[:len(good):len(good)], 0), "corrupt data", "bytes follow the end")
		})
	}
}

// TestUnknownKind checks the kind byte is read before anything is decoded.
func TestUnknownKind(t *testing.T) {
	src := build(t, keys("k", 10))
	data, _ := os.ReadFile(src)
	data[offKind] = 9
	os.WriteFile(src, data, 0o644)
	code, _, stderr := cuckoo(t, "", "info", src)
	if code != 2 || !strings.Contains(stderr, "unknown kind 9") {
		t.Errorf("info of kind 9: exit %d, %q", code, stderr)
	}
}
