package limits

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMachineMemory: MemTotal read from a meminfo file, 0 for a file
// without it or none, and MaxFilterMemory's choices.
func TestMachineMemory(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "meminfo")
	os.WriteFile(good, []byte("MemFree: 1 kB\nMemTotal:       24573440 kB\n"), 0o644)
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("MemTotal: lots\n"), 0o644)
	if got := physicalMemory(good); got != 24573440<<10 {
		t.Errorf("physicalMemory = %d", got)
	}
	if got := physicalMemory(bad); got != 0 {
		t.Errorf("physicalMemory of an unreadable MemTotal = %d", got)
	}
	if got := physicalMemory(filepath.Join(dir, "none")); got != 0 {
		t.Errorf("physicalMemory of no file = %d", got)
	}
	if got := MaxFilterMemory(5); got != 5 {
		t.Errorf("MaxFilterMemory(5) = %d", got)
	}
	old := meminfo
	defer func() { meminfo = old }()
	meminfo = good
	if got := MaxFilterMemory(0); got != 24573440<<10 {
		t.Errorf("MaxFilterMemory(0) = %d, want MemTotal", got)
	}
	meminfo = bad
	if got := MaxFilterMemory(0); got != 64<<30 {
		t.Errorf("MaxFilterMemory(0) without MemTotal = %d, want 64 GiB", got)
	}
}

// TestResidentBytes: statm's second field in pages, the fallback otherwise.
func TestResidentBytes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		text string
		want uint64
	}{
		{"100 7 3 1 0 5 0\n", 7 * uint64(os.Getpagesize())},
		{"100\n", 42},
		{"100 x\n", 42},
	} {
		p := filepath.Join(dir, "statm")
		os.WriteFile(p, []byte(tc.text), 0o644)
		if got := residentBytes(p, 42); got != tc.want {
			t.Errorf("residentBytes(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	if got := residentBytes(filepath.Join(dir, "none"), 42); got != 42 {
		t.Errorf("residentBytes of no file = %d", got)
	}
	if ResidentBytes(1) == 0 {
		t.Error("ResidentBytes = 0")
	}
}
