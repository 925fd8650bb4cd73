package main

import (
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	code, stdout, stderr := cuckoo(t, "", "demo", "--n", "2e4", "--seed", "3")
	if code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	t.Logf("\n%s", stdout)
	for _, want := range []string{
		"20000 synthetic URLs", "https://host-", "cuckoo filter", "map[string]struct{}", "load", "memory",
		"KiB", "MiB", "bits/item", "false positives", "of 20000 fresh URLs", "expected fpr", "false negatives   0",
		"inserts/s", "lookups/s", "(Contains)", "(ContainsBatch)", "M/s",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}

func TestDemoURLs(t *testing.T) {
	seen := make(map[string]bool)
	var b []byte
	for i := range uint64(10000) {
		b = demoURL(b[:0], i)
		if seen[string(b)] {
			t.Fatalf("URL %d repeats: %s", i, b)
		}
		seen[string(b)] = true
	}
	if got, want := string(demoURL(nil, 417)), string(demoURL(nil, 417)); got != want || !strings.HasPrefix(got, "https://host-417.example.com/") {
		t.Errorf("URL 417 = %q, %q", got, want)
	}
}
