package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/cuckoohash/cuckoo/filter"
)

// config is one run of the example.
type config struct {
	// URLs is the file of URLs, one a line. Empty: generate Generate URLs,
	// Repeat of them repeats, into a temporary directory.
	URLs     string
	Generate int
	Repeat   float64
	Seed     uint64 // the generated file's seed
	// Filter configures the Scalable filter. InitialCapacity is small on
	// purpose, so that the filter grows bucket by bucket as URLs come in, as a
	// crawl's frontier must when it cannot know how much it will find.
	Filter filter.ScalableConfig
	// MaxURL is the longest line read, in bytes; a longer one is an error
	// that names it. 0 means defaultMaxURL.
	MaxURL int
}

func defaultConfig() config {
	return config{
		Generate: 1_000_000,
		Repeat:   0.3,
		Seed:     1,
		Filter:   filter.ScalableConfig{InitialCapacity: 1 << 14, FalsePositiveRate: 0.001},
		MaxURL:   defaultMaxURL,
	}
}

// Report is what a run measured.
type Report struct {
	Path      string
	Generated *generated // nil if the URLs came from a file
	Filter    *filterPass
	Map       *mapPass
}

// FilterBytesPerURL is the filter's SizeInBytes per distinct URL.
func (r Report) FilterBytesPerURL() float64 {
	return float64(r.Filter.bytes) / float64(r.Map.unique)
}

// MapBytesPerURL is the map's heap growth per distinct URL.
func (r Report) MapBytesPerURL() float64 {
	return float64(r.Map.heapBytes) / float64(r.Map.unique)
}

// errFalseNegative is returned by run if the filter answered "new" for a URL
// it had been given: a cuckoo filter never does.
var errFalseNegative = errors.New("the filter forgot a URL")

// run de-duplicates the URLs of cfg.URLs, or of a generated file, twice: with
// a Scalable cuckoo filter, then with a map[string]struct{} that also checks
// the filter's every answer, and writes the report to out.
func run(ctx context.Context, cfg config, out io.Writer) (Report, error) {
	rep := Report{Path: cfg.URLs}
	maxURL := cfg.MaxURL
	if maxURL == 0 {
		maxURL = defaultMaxURL
	}
	if maxURL < 1 || maxURL > maxMaxURL {
		return rep, fmt.Errorf("-max-url %d: want 1 to %d bytes", maxURL, maxMaxURL)
	}
	if rep.Path == "" {
		if cfg.Generate < 1 || !(cfg.Repeat >= 0 && cfg.Repeat < 1) {
			return rep, fmt.Errorf("generate %d URLs, %v repeats: want at least 1 URL and a fraction in [0, 1)", cfg.Generate, cfg.Repeat)
		}
		dir, err := os.MkdirTemp("", "crawler-")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(dir)
		rep.Path = filepath.Join(dir, "urls.txt")
		f, err := os.Create(rep.Path)
		if err != nil {
			return rep, err
		}
		g, err := generate(f, cfg.Generate, cfg.Repeat, cfg.Seed)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return rep, fmt.Errorf("generate %s: %w", rep.Path, err)
		}
		rep.Generated = &g
	}
	var err error
	if rep.Filter, err = dedupeFilter(rep.Path, cfg.Filter, maxURL); err != nil {
		return rep, err
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if rep.Map, err = dedupeMap(rep.Path, rep.Filter, maxURL); err != nil {
		return rep, err
	}
	if rep.Map.unique == 0 {
		return rep, fmt.Errorf("%s: no URLs", rep.Path)
	}
	if err := rep.print(out, cfg); err != nil {
		return rep, err
	}
	if rep.Map.missedRepeats > 0 {
		return rep, fmt.Errorf("%w: %d repeated URLs answered new", errFalseNegative, rep.Map.missedRepeats)
	}
	return rep, nil
}

func (r Report) print(out io.Writer, cfg config) error {
	f, m := r.Filter, r.Map
	if g := r.Generated; g != nil {
		fmt.Fprintf(out, "%s generated (%d distinct, %.0f%% repeats, %.1f MB), streamed from %s\n\n",
			count(g.lines, "URL", "URLs"), g.distinct, 100*float64(g.lines-g.distinct)/float64(g.lines), float64(g.bytes)/1e6, r.Path)
	} else {
		fmt.Fprintf(out, "%s streamed from %s\n\n", count(m.lines, "URL", "URLs"), r.Path)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tnew URLs\tskipped as seen\twrongly skipped\tmemory\tbytes/URL\tURLs/s\t")
	fmt.Fprintf(tw, "map[string]struct{}\t%d\t%d\t–\t%s\t%.1f\t%.2fM\t\n",
		m.unique, m.lines-m.unique, mib(m.heapBytes), r.MapBytesPerURL(), float64(m.lines)/m.elapsed.Seconds()/1e6)
	fmt.Fprintf(tw, "filter.Scalable\t%d\t%d\t%d (%.3f%%)\t%s\t%.2f\t%.2fM\t\n",
		f.unique, f.lines-f.unique, m.wronglySkipped, 100*float64(m.wronglySkipped)/float64(m.unique),
		mib(int64(f.bytes)), r.FilterBytesPerURL(), float64(f.lines)/f.elapsed.Seconds()/1e6)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nthe filter grew %s from %s, to %s of %d-bit slots;\n",
		count(f.stages-1, "doubling", "doublings"), count(int(cfg.Filter.InitialCapacity), "key", "keys"),
		count(int(f.buckets), "bucket", "buckets"), f.slotBits)
	fmt.Fprintf(out, "the heap grew by %s while it was built (SizeInBytes: %s)\n", mib(f.heapBytes), mib(int64(f.bytes)))
	fmt.Fprintf(out, "wrongly skipped: %s the filter took for seen, %.1f expected from its rate as it grew (configured bound %.3f%% of new URLs)\n",
		count(m.wronglySkipped, "new URL", "new URLs"), m.expectedSkipped, 100*cfg.Filter.FalsePositiveRate)
	fmt.Fprintf(out, "repeats the filter missed: %d (a cuckoo filter has no false negatives)\n", m.missedRepeats)
	share, note := fmt.Sprintf("1/%.0f of", r.MapBytesPerURL()/r.FilterBytesPerURL()), ""
	if r.FilterBytesPerURL() > r.MapBytesPerURL() {
		share = fmt.Sprintf("%.1f×", r.FilterBytesPerURL()/r.MapBytesPerURL())
		note = fmt.Sprintf("; too few URLs for its first size, %d", cfg.Filter.InitialCapacity)
	}
	_, err := fmt.Fprintf(out, "memory per URL: the filter takes %s the map's (map: live heap growth after GC; filter: SizeInBytes%s)\n", share, note)
	return err
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

// count formats n and the noun, singular for 1: "1 URL", "2 URLs".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
