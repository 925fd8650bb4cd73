package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tinySizes keeps every experiment to a fraction of a second.
var tinySizes = sizes{
	probeSlots: 1 << 12, probeLookups: 1000,
	rateSmall: 1 << 10, rateLarge: 1 << 12, rateLookups: 1 << 10, rateReps: 1,
	fprN: 5000, fprAbsent: 20000,
	spaceN: 5000, spaceAbsent: 20000, spaceGrid: 5,
	maxSlots: 1 << 10, maxSeeds: 1, kicks: []int{50, 500},
	insertN: 1 << 12, concN: 1 << 12, concTime: 5 * time.Millisecond,
	deleteN: 5000, deleteAbsent: 20000,
	growth: GrowthConfig{First: 100, Final: 2000, Points: 20, Timed: 3, Absent: 2000, Lookups: 500, Reps: 1},
}

func TestEveryExperimentWritesItsSectionAndPlots(t *testing.T) {
	want := map[string][]string{
		"probes":      {"## Key comparisons per lookup", "probes-hit.png", "probes-miss.png"},
		"rates":       {"## Lookup time vs load factor", "rates-cache.png", "rates-memory.png"},
		"fpr":         {"## False-positive rate vs bits per item", "### Other filters", "fpr.png"},
		"space":       {"## Bits per key vs false-positive rate", "| 1% | cuckoo, ranked buckets | b=4 R=", "space.png", "- cuckoo, ranked buckets: ", "- cuckoo, filter.New's choice: "},
		"maxload":     {"## Maximum load vs bucket size", "maxload.png", "insert-rates.png"},
		"concurrency": {"## Throughput vs goroutines", "| filter lockfree | 95% |", "| map xsync | 50% |", "concurrency-filter-95.png", "concurrency-map-50.png"},
		"deletes":     {"## Deletion", "cannot delete"},
		"growth":      {"## Growth", "| RedisBloom model", "growth-bits.png", "growth-fpr.png", "growth-lookup.png", "growth-insert.png", "ns per insert"},
	}
	for _, name := range Experiments {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var b bytes.Buffer
			img := func(files ...string) {
				for _, f := range files {
					b.WriteString("![" + f + "](" + f + ")\n")
				}
			}
			if err := runOne(&b, Config{Out: dir, Seed: 1}, tinySizes, name, img); err != nil {
				t.Fatal(err)
			}
			for _, s := range want[name] {
				if !strings.Contains(b.String(), s) {
					t.Errorf("report lacks %q", s)
				}
				if strings.HasSuffix(s, ".png") {
					for _, f := range []string{s, strings.TrimSuffix(s, ".png") + ".svg"} {
						if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
							t.Errorf("plot %s: %v", f, err)
						}
					}
				}
			}
		})
	}
}

func TestRunRejectsUnknownExperiment(t *testing.T) {
	if _, err := Run(Config{Out: t.TempDir(), Only: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), `no experiment "nope"`) {
		t.Errorf("Run: %v", err)
	}
}

func TestRunWritesReport(t *testing.T) {
	dir := t.TempDir()
	var steps []string
	path, err := Run(Config{Out: dir, Quick: true, Only: []string{"deletes"}, Seed: 2, Step: func(i int, name string) { steps = append(steps, name) }})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "# cuckoo eval\n\nMachine: ") || !strings.Contains(string(data), "## Deletion") {
		t.Errorf("report:\n%s", data)
	}
	if len(steps) != 1 || steps[0] != "deletes" {
		t.Errorf("steps %v", steps)
	}
}
