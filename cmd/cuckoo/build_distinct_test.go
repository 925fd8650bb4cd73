package main

import (
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/hashing"
)

// builtFilter is what these tests use of a built Filter or Scalable.
type builtFilter interface {
	Contains(key []byte) bool
	Count(key []byte) int
	Delete(key []byte) bool
	Len() uint64
}

// readBuilt loads a filter that build wrote, as a library user would.
func readBuilt(t *testing.T, path string, scalable bool) builtFilter {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if scalable {
		s, err := filter.ReadScalable(fh)
		if err != nil {
			t.Fatalf("filter.ReadScalable(%s): %v", path, err)
		}
		return s
	}
	f, err := filter.Read(fh)
	if err != nil {
		t.Fatalf("filter.Read(%s): %v", path, err)
	}
	return f
}

// urlKeys returns n distinct URL-like keys.
func urlKeys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("https://host-%d.example.com/p/%d?q=%d", i%977, i, i*7919%100003)
	}
	return ks
}

// TestBuildStoresEveryDistinctKey is issue 24's scenario: distinct keys built
// at a false-positive rate high enough that many keys are false positives of
// keys before them, the file loaded with filter.Read and the first half of
// the keys deleted. Every delete must find its key and every kept key must
// answer present. Build used to skip a key the filter already reported
// present, so a false positive was never stored and deleting it removed
// another key's fingerprint (29 failed deletes and 41 lost keys in 200,000 at
// --fpr 0.001; hundreds here).
func TestBuildStoresEveryDistinctKey(t *testing.T) {
	ks := urlKeys(200_000)
	text := strings.Join(ks, "\n") + "\n"
	for _, tc := range []struct {
		name     string
		stdin    bool
		scalable bool
		flags    []string
	}{
		{"file", false, false, []string{"--fpr", "0.05"}},
		{"file/fpr=0.001", false, false, []string{"--fpr", "0.001"}},
		{"stdin", true, false, []string{"--fpr", "0.05"}},
		{"stdin/capacity", true, false, []string{"--fpr", "0.05", "--capacity", "200000"}},
		{"file/bucket-size=2/bits=6", false, false, []string{"--bucket-size", "2", "--fingerprint-bits", "6"}},
		{"file/scalable", false, true, []string{"--fpr", "0.05", "--scalable", "--capacity", "20000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "f.cf")
			input, stdin := "-", text
			if !tc.stdin {
				input, stdin = writeKeys(t, dir, "keys.txt", ks), ""
			}
			args := append(append([]string{"build", "-o", out}, tc.flags...), input)
			code, _, stderr := cuckoo(t, stdin, args...)
			if code != 0 {
				t.Fatalf("cuckoo %q: exit %d: %s", args, code, stderr)
			}
			if want := fmt.Sprintf("%s: %d keys, load", out, len(ks)); !strings.HasPrefix(stderr, want) {
				t.Errorf("summary %q, want it to start %q", stderr, want)
			}
			f := readBuilt(t, out, tc.scalable)
			if f.Len() != uint64(len(ks)) {
				t.Errorf("the filter holds %d keys, want %d", f.Len(), len(ks))
			}
			failed, lost := 0, 0
			for _, k := range ks[:len(ks)/2] {
				if !f.Delete([]byte(k)) {
					failed++
				}
			}
			for _, k := range ks[len(ks)/2:] {
				if !f.Contains([]byte(k)) {
					lost++
				}
			}
			if failed > 0 || lost > 0 {
				t.Errorf("after deleting the first %d keys: %d deletes failed, %d kept keys answer absent; want none",
					len(ks)/2, failed, lost)
			}
			if f.Len() != uint64(len(ks)-len(ks)/2) {
				t.Errorf("after the deletes the filter holds %d keys, want %d", f.Len(), len(ks)-len(ks)/2)
			}
		})
	}
}

// TestBuildStoresRepeatsOnce: a key listed more than once, adjacent or not,
// is stored once, so that one delete of it leaves it absent, the summary
// counts the keys stored and the repeats skipped, and build -h says so.
func TestBuildStoresRepeatsOnce(t *testing.T) {
	ks := keys("k", 1000)
	// Every key, then the first half again, then the first 100 a third time
	// and each of those twice in a row.
	lines := slices.Clone(ks)
	lines = append(lines, ks[:500]...)
	for _, k := range ks[:100] {
		lines = append(lines, k, k)
	}
	slices.Reverse(lines[1000:]) // repeats in another order than the first listing
	text := strings.Join(lines, "\n") + "\n"
	for _, input := range []string{"file", "-"} {
		t.Run("input="+input, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "f.cf")
			stdin := text
			if input == "file" {
				input, stdin = writeKeys(t, dir, "keys.txt", lines), ""
			}
			// 32-bit fingerprints: no key of these is a false positive of
			// another, so a deleted key must answer absent.
			code, _, stderr := cuckoo(t, stdin, "build", "-o", out, "--fingerprint-bits", "32", input)
			want := out + ": 1000 keys (1700 read, 700 repeats skipped), load"
			if code != 0 || !strings.HasPrefix(stderr, want) {
				t.Fatalf("build: exit %d, stderr %q; want 0 and %q...", code, stderr, want)
			}
			f := readBuilt(t, out, false)
			if f.Len() != 1000 {
				t.Errorf("the filter holds %d keys, want 1000", f.Len())
			}
			for _, k := range ks {
				if c := f.Count([]byte(k)); c != 1 {
					t.Fatalf("key %q is stored %d times, want once", k, c)
				}
			}
			for _, k := range ks[:500] {
				if !f.Delete([]byte(k)) || f.Contains([]byte(k)) {
					t.Fatalf("key %q, listed twice or more: after one delete Contains is still true (or the delete failed)", k)
				}
			}
			for _, k := range ks[500:] {
				if !f.Contains([]byte(k)) {
					t.Fatalf("kept key %q answers absent", k)
				}
			}
		})
	}
	code, stdout, _ := cuckoo(t, "", "help", "build")
	help := strings.Join(strings.Fields(stdout), " ")
	for _, want := range []string{
		"Every distinct key of INPUT is stored once. A key listed again, anywhere, is skipped: one delete of it",
		"(a false positive of another key) is stored all the same",
		"The capacity defaults to the number of distinct keys",
	} {
		if code != 0 || !strings.Contains(help, want) {
			t.Errorf("cuckoo help build does not say %q:\n%s", want, stdout)
		}
	}
}

// TestBuildOneRepeat: the summary's singular.
func TestBuildOneRepeat(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.cf")
	code, _, stderr := cuckoo(t, "a\nb\na\n", "build", "-o", out, "-")
	if want := out + ": 2 keys (3 read, 1 repeat skipped), load"; code != 0 || !strings.HasPrefix(stderr, want) {
		t.Errorf("build of a, b, a: exit %d, stderr %q; want 0 and %q...", code, stderr, want)
	}
}

// TestDistinctKeys checks the identities directly: equal ones are dropped
// wherever they were added, and keys that share the filter's hash but not
// the other one are both kept (two copies of one fingerprint, as two
// distinct keys need).
func TestDistinctKeys(t *testing.T) {
	for _, reserve := range []uint64{0, 10, 1 << 20} {
		d := newDistinctKeys(0)
		d.reserve(reserve)
		top := func(b uint64) uint64 { return b << (64 - binBits) } // the bin
		ids := []keyID{
			{m: top(3) | 1, h: 5},
			{m: top(3) | 2, h: 5}, // same filter hash, another key
			{m: top(0) | 9, h: 7},
			{m: top(3) | 1, h: 5}, // a repeat
			{m: top(3) | 1, h: 6}, // same m, another key
			{m: top(1<<binBits - 1), h: 8},
			{m: top(0) | 9, h: 7}, // a repeat
		}
		for _, id := range ids {
			d.addID(id)
		}
		if reserve == 0 {
			// each stops at the first error, and returns it.
			e := newDistinctKeys(0)
			for _, id := range ids {
				e.addID(id)
			}
			e.sort()
			calls := 0
			if err := e.each(func(uint64) error { calls++; return filter.ErrFull }); err != filter.ErrFull || calls != 1 {
				t.Errorf("each with a failing insert: %v after %d calls, want the insert's error after 1", err, calls)
			}
		}
		if d.read != uint64(len(ids)) {
			t.Errorf("read %d, want %d", d.read, len(ids))
		}
		if n := d.sort(); n != 5 {
			t.Errorf("reserve %d: %d distinct, want 5", reserve, n)
		}
		var hs []uint64
		d.each(func(h uint64) error { hs = append(hs, h); return nil })
		if want := []uint64{7, 5, 6, 5, 8}; !slices.Equal(hs, want) {
			t.Errorf("reserve %d: each gave %v, want %v (bins in order, each sorted by m)", reserve, hs, want)
		}
	}
}

// BenchmarkDistinct compares build's way of dropping repeats, bins of
// 128-bit identities sorted in place, with a Go map of the same identities,
// on n distinct URL-like keys read from a stream (no reserve) or a file of
// known size (reserve). It reports the time per key and, per key, the bytes
// allocated in all and the bytes still live once the repeats are dropped.
func BenchmarkDistinct(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		var ks [][]byte
		for _, k := range urlKeys(n) {
			ks = append(ks, []byte(k))
		}
		bins := func(reserve bool) any {
			d := newDistinctKeys(0)
			if reserve {
				d.reserve(uint64(n) * 11 / 10)
			}
			for _, k := range ks {
				d.add(k)
			}
			if d.sort() != uint64(n) {
				b.Fatal("keys lost")
			}
			return d
		}
		for _, tc := range []struct {
			name string
			run  func() any
		}{
			{"bins", func() any { return bins(false) }},
			{"bins/reserve", func() any { return bins(true) }},
			{"map", func() any {
				seed := maphash.MakeSeed()
				m := make(map[keyID]struct{})
				for _, k := range ks {
					m[keyID{m: maphash.Bytes(seed, k), h: hashing.Key(k, 0)}] = struct{}{}
				}
				if len(m) != n {
					b.Fatal("keys lost")
				}
				return m
			}},
		} {
			b.Run(fmt.Sprintf("n=%d/impl=%s", n, tc.name), func(b *testing.B) {
				var before, after runtime.MemStats
				var live uint64
				runtime.GC()
				runtime.ReadMemStats(&before)
				for b.Loop() {
					v := tc.run()
					runtime.GC()
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					live = m.HeapAlloc - before.HeapAlloc
					runtime.KeepAlive(v)
				}
				runtime.ReadMemStats(&after)
				keys := float64(b.N) * float64(n)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/keys, "ns/key")
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/keys, "alloc-B/key")
				b.ReportMetric(float64(live)/float64(n), "live-B/key")
			})
		}
	}
}
