package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
)

// minMemoryRatio is how many times less memory a URL takes in the filter than
// in the map, at least, in TestRun's configuration. Measured: 30-35× (about
// 3.5 bytes a URL in the filter at 0.1%, 110-120 in the map); the bound
// leaves a factor of 3 for other Go versions and allocators.
const minMemoryRatio = 10

func testConfig() config {
	cfg := defaultConfig()
	cfg.Generate = 100_000
	cfg.Filter.InitialCapacity = 4096
	return cfg
}

func TestRun(t *testing.T) {
	cfg := testConfig()
	var out bytes.Buffer
	rep, err := run(context.Background(), cfg, &out)
	t.Logf("\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	g, f, m := rep.Generated, rep.Filter, rep.Map
	if g.lines != cfg.Generate || f.lines != g.lines || m.lines != g.lines {
		t.Errorf("lines: generated %d, read %d and %d; want %d", g.lines, f.lines, m.lines, cfg.Generate)
	}
	// The generator knows how many distinct URLs it wrote; the map must find
	// exactly those.
	if m.unique != g.distinct {
		t.Errorf("the map found %d distinct URLs, the generator wrote %d", m.unique, g.distinct)
	}
	if r := float64(g.lines-g.distinct) / float64(g.lines); math.Abs(r-cfg.Repeat) > 0.01 {
		t.Errorf("%.3f of the URLs are repeats, want %.2f ± 0.01", r, cfg.Repeat)
	}
	// No false negatives: every repeat is skipped. So the filter lets
	// through exactly the new URLs that it did not wrongly skip.
	if m.missedRepeats != 0 {
		t.Errorf("the filter answered new for %d repeated URLs", m.missedRepeats)
	}
	if f.unique != m.unique-m.wronglySkipped {
		t.Errorf("the filter let %d URLs through, want %d new - %d wrongly skipped", f.unique, m.unique, m.wronglySkipped)
	}
	// The wrongly skipped URLs are a sum of Bernoulli trials whose rates the
	// filter reports as it grows; their count stays within 5 standard
	// deviations (plus 5) of the sum of the rates, and that sum below the
	// configured bound.
	lambda := m.expectedSkipped
	if d := math.Abs(float64(m.wronglySkipped) - lambda); d > 5*math.Sqrt(lambda)+5 {
		t.Errorf("%d URLs wrongly skipped, %.1f expected: off by more than 5√λ+5", m.wronglySkipped, lambda)
	}
	if bound := cfg.Filter.FalsePositiveRate * float64(m.unique); lambda > bound {
		t.Errorf("expected wrong skips %.1f, above the configured rate's %.1f", lambda, bound)
	}
	if f.stages < 3 { // two doublings
		t.Errorf("the filter has %d stages; starting at %d for %d URLs it should have grown", f.stages, cfg.Filter.InitialCapacity, m.unique)
	}
	// The filter's SizeInBytes is the memory it takes: the heap grew by
	// that much while it was built, plus the allocator's rounding and a few
	// small objects (measured: +16% at this size, +3% at 10^6 URLs).
	if h := float64(f.heapBytes); h < float64(f.bytes) || h > 1.1*float64(f.bytes)+64<<10 {
		t.Errorf("the heap grew by %d bytes for a filter of %d", f.heapBytes, f.bytes)
	}
	ratio := rep.MapBytesPerURL() / rep.FilterBytesPerURL()
	t.Logf("bytes per URL: map %.1f, filter %.2f, ratio %.1f", rep.MapBytesPerURL(), rep.FilterBytesPerURL(), ratio)
	if ratio < minMemoryRatio {
		t.Errorf("the filter takes %.2f bytes a URL, the map %.1f: want the filter at least %d× smaller", rep.FilterBytesPerURL(), rep.MapBytesPerURL(), minMemoryRatio)
	}
}

// TestRunFile de-duplicates a small file with known repeats, read with -urls.
func TestRunFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "urls.txt")
	urls := "https://a.example/\nhttps://b.example/x?y=1\r\nhttps://a.example/\nhttps://c.example/\nhttps://b.example/x?y=1\nhttps://a.example/\n"
	if err := os.WriteFile(path, []byte(urls), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config{URLs: path, Filter: filter.ScalableConfig{InitialCapacity: 2, FalsePositiveRate: 0.001}}
	var out bytes.Buffer
	rep, err := run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Generated != nil || rep.Map.lines != 6 || rep.Map.unique != 3 || rep.Filter.unique != 3 || rep.Map.wronglySkipped != 0 {
		t.Errorf("lines %d, distinct %d (map) and %d (filter), %d wrongly skipped; want 6, 3, 3, 0",
			rep.Map.lines, rep.Map.unique, rep.Filter.unique, rep.Map.wronglySkipped)
	}
	// A capacity of 2 gets one bucket of 4 slots, which holds 3 URLs below
	// the load at which the table splits.
	if rep.Filter.stages != 1 || rep.Filter.buckets != 1 {
		t.Errorf("%d stages and %d buckets, want 1 and 1 for 3 URLs from a capacity of 2", rep.Filter.stages, rep.Filter.buckets)
	}
}

// TestGenerate checks that the generator is a function of its seed and writes
// what it claims.
func TestGenerate(t *testing.T) {
	sum := func(seed uint64) ([32]byte, generated) {
		var b bytes.Buffer
		g, err := generate(&b, 5000, 0.3, seed)
		if err != nil {
			t.Fatal(err)
		}
		if int64(b.Len()) != g.bytes || bytes.Count(b.Bytes(), []byte("\n")) != g.lines {
			t.Errorf("wrote %d bytes in %d lines, claims %d bytes and %d lines", b.Len(), bytes.Count(b.Bytes(), []byte("\n")), g.bytes, g.lines)
		}
		seen := map[string]bool{}
		for line := range bytes.Lines(b.Bytes()) {
			seen[string(line)] = true
		}
		if len(seen) != g.distinct {
			t.Errorf("%d distinct lines, claims %d", len(seen), g.distinct)
		}
		return sha256.Sum256(b.Bytes()), g
	}
	a, _ := sum(1)
	b, _ := sum(1)
	c, _ := sum(2)
	if a != b {
		t.Error("two files of seed 1 differ")
	}
	if a == c {
		t.Error("seeds 1 and 2 wrote the same file")
	}
}

// TestRunLongLine: a line longer than -max-url is an error that names the
// file, the line, the limit and the flag that raises it, from both passes
// and whether or not it overflows the scanner's buffer (issue 24: a long
// line printed bufio's bare "bufio.Scanner: token too long"). A line of
// exactly the limit, with or without "\r", is read.
func TestRunLongLine(t *testing.T) {
	const limit = 16
	exact := "https://a.ex/abc" // 16 bytes
	if len(exact) != limit {
		t.Fatalf("len(%q) = %d", exact, len(exact))
	}
	for _, tc := range []struct {
		name, urls string
		wantLine   int
	}{
		{"exact", exact + "\n" + exact + "\r\nhttps://b.ex/\n", 0},
		{"one over", "https://b.ex/\n" + exact + "\n" + exact + "x\n", 3},
		{"one over, CRLF", exact + "x\r\n", 1},
		{"past the buffer", "https://b.ex/\n" + strings.Repeat("x", 10*limit) + "\nhttps://c.ex/\n", 2},
		{"past the buffer, last line", "https://b.ex/\n" + strings.Repeat("x", 10*limit), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "urls.txt")
			if err := os.WriteFile(path, []byte(tc.urls), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := config{URLs: path, MaxURL: limit, Filter: filter.ScalableConfig{InitialCapacity: 2, FalsePositiveRate: 0.001}}
			_, err := run(context.Background(), cfg, io.Discard)
			if tc.wantLine == 0 {
				if err != nil {
					t.Fatalf("lines of at most %d bytes: %v", limit, err)
				}
				return
			}
			want := fmt.Sprintf("%s: line %d is longer than %d bytes, the longest URL read (-max-url raises it)", path, tc.wantLine, limit)
			if err == nil || err.Error() != want {
				t.Errorf("error %v, want %q", err, want)
			}
		})
	}
	for _, bad := range []int{-1, maxMaxURL + 1} {
		_, err := run(context.Background(), config{URLs: "unused", MaxURL: bad}, io.Discard)
		want := fmt.Sprintf("-max-url %d: want 1 to %d bytes", bad, maxMaxURL)
		if err == nil || err.Error() != want {
			t.Errorf("MaxURL %d: error %v, want %q", bad, err, want)
		}
	}
}

// TestRunOneURL: a file of one URL is reported in the singular (issue 24:
// "1 keys").
func TestRunOneURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "urls.txt")
	if err := os.WriteFile(path, []byte("https://a.example/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config{URLs: path, Filter: filter.ScalableConfig{InitialCapacity: 1, FalsePositiveRate: 0.001}}
	var out bytes.Buffer
	if _, err := run(context.Background(), cfg, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"1 URL streamed from ", "grew 0 doublings from 1 key, to 1 bucket of ", "wrongly skipped: 0 new URLs"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, " 1 URLs") || strings.Contains(text, " 1 keys") || strings.Contains(text, " 1 buckets") {
		t.Errorf("a plural after 1:\n%s", text)
	}
}
