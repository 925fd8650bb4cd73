// Command compare runs the bench package's workloads on every compared
// filter, outside the testing package, and prints a markdown table of
// memory, load, false-positive rate and times, with speed ratios against
// github.com/seiflotfy/cuckoofilter, then seiflotfy beside our filter
// asked for seiflotfy's measured rate. docs/performance.md quotes it (the
// README sums it up). Each time is the median of -reps repetitions measured
// with time.Now over many operations.
//
//	go run ./cmd/compare -sizes=1e6,1e7
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/bench"
	"github.com/cuckoohash/cuckoo/filter"
)

// batchLen is the number of keys handed to one ContainsBatch call.
const batchLen = 1024

// baseline is the implementation the ratio columns compare with.
const baseline = "seiflotfy"

func main() {
	sizesFlag := flag.String("sizes", "1e6,1e7", "comma-separated numbers of keys")
	reps := flag.Int("reps", 3, "repetitions of each measurement; the median is reported")
	lookups := flag.Int("lookups", 4<<20, "lookups per timed repetition")
	flag.Parse()
	sizes, err := bench.ParseSizes(*sizesFlag)
	if err == nil && (*reps < 1 || *lookups < 1) {
		err = fmt.Errorf("-reps and -lookups must be at least 1")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	passes := (*lookups + bench.LookupSetSize - 1) / bench.LookupSetSize

	rate := bench.RateKeys()
	var rows []row
	for _, n := range sizes {
		keys := bench.PresentKeys(n)
		lookupSet := bench.LookupSet(keys, 50, bench.LookupSetSize)
		r, err := measureSize(keys, rate, lookupSet, *reps, passes)
		if err != nil {
			fmt.Fprintf(os.Stderr, "compare: n=%d: %v\n", n, err)
			os.Exit(1)
		}
		rows = append(rows, r...)
	}
	w := bufio.NewWriter(os.Stdout)
	report(w, rows, sizes, *reps, passes)
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// row is the measurements of one filter at one n.
type row struct {
	impl   bench.Impl
	stats  bench.Stats
	insert float64 // ns per key
	lookup float64 // ns per key, hit=50%
	batch  float64 // ns per key with ContainsBatch; 0 if the filter has none
}

// measureSize fills reps filters of every impl with keys, timing each
// fill, and then times reps rounds of passes over lookupSet on the last
// filter of each. Every repetition measures all the filters in turn, so that
// load from other processes, which comes and goes, falls on all of them
// rather than on whichever was being measured at the time.
func measureSize(keys, rate bench.Keys, lookupSet [][]byte, reps, passes int) ([]row, error) {
	impls := bench.Impls
	n := keys.Len()
	filters := make([]bench.Filter, len(impls))
	failed := make([]int, len(impls))
	fills := make([][]time.Duration, len(impls))
	for rep := range reps {
		fmt.Fprintf(os.Stderr, "compare: n=%s: fill %d of %d\n", bench.SizeName(n), rep+1, reps)
		for i, impl := range impls {
			filters[i] = nil
			runtime.GC() // free the previous filter before the next is built
			f, fl, d, err := bench.TimedFill(impl, keys)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", impl.Name, err)
			}
			filters[i], failed[i] = f, fl
			fills[i] = append(fills[i], d)
		}
	}

	lookups := make([][]time.Duration, len(impls))
	batches := make([][]time.Duration, len(impls))
	hits := make([]int, len(impls))
	out := make([]bool, batchLen)
	for rep := range reps {
		fmt.Fprintf(os.Stderr, "compare: n=%s: lookups %d of %d\n", bench.SizeName(n), rep+1, reps)
		for i, f := range filters {
			d, h, err := timePasses(passes, lookupSet, f.CountHits)
			if err == nil && rep > 0 && h != hits[i] {
				err = fmt.Errorf("a pass over the lookup set found %d keys, an earlier one %d", h, hits[i])
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %v", impls[i].Name, err)
			}
			hits[i] = h
			lookups[i] = append(lookups[i], d)
			if b, ok := f.(bench.Batcher); ok {
				d, h, err := timePasses(passes, lookupSet, func(k [][]byte) int { return b.BatchHits(k, out) })
				if err == nil && h != hits[i] {
					err = fmt.Errorf("ContainsBatch found %d keys, Contains %d", h, hits[i])
				}
				if err != nil {
					return nil, fmt.Errorf("%s: %v", impls[i].Name, err)
				}
				batches[i] = append(batches[i], d)
			}
		}
	}

	ops := passes * len(lookupSet)
	rows := make([]row, len(impls))
	for i, impl := range impls {
		rows[i] = row{
			impl:   impl,
			stats:  bench.Measure(filters[i], keys, rate, failed[i]),
			insert: perOp(median(fills[i]), n),
			lookup: perOp(median(lookups[i]), ops),
		}
		if batches[i] != nil {
			rows[i].batch = perOp(median(batches[i]), ops)
		}
	}
	return rows, nil
}

// timePasses returns the time count takes for passes passes over keys,
// after one pass to warm the caches, and the number of keys found in a pass.
// It fails if the passes disagree on that number.
func timePasses(passes int, keys [][]byte, count func([][]byte) int) (time.Duration, int, error) {
	hits := count(keys)
	total := 0
	start := time.Now()
	for range passes {
		total += count(keys)
	}
	d := time.Since(start)
	if total != passes*hits {
		return 0, 0, fmt.Errorf("lookups found %d keys in %d passes, not %d", total, passes, passes*hits)
	}
	return d, hits, nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func perOp(d time.Duration, ops int) float64 { return float64(d.Nanoseconds()) / float64(ops) }

func report(w io.Writer, rows []row, sizes []int, reps, passes int) {
	fmt.Fprintf(w, "Go %s %s/%s, GOMAXPROCS=%d, %d logical CPUs, CPU: %s\n\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU(), cpuModel())
	fmt.Fprintf(w, "n 16-byte random keys inserted into each filter sized for n keys; times are the median of %d runs,\n"+
		"each run measuring every filter in turn.\n\n", reps)

	fmt.Fprintln(w, "| impl | n | bits/item | load | fpr | keys lost | insert ns/op | lookup ns/op (hit=50%) | batch lookup ns/op | insert vs "+baseline+" | lookup vs "+baseline+" |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	base := map[int]row{}
	for _, r := range rows {
		if r.impl.Name == baseline {
			base[r.stats.N] = r
		}
	}
	for _, r := range rows {
		b, hasBase := base[r.stats.N]
		insert, insertRatio := fmt.Sprintf("%.1f", r.insert), "–"
		if r.impl.Static() {
			insert += " (build)"
		} else if hasBase {
			insertRatio = ratio(b.insert, r.insert)
		}
		lookupRatio, batch := "–", "–"
		if hasBase {
			lookupRatio = ratio(b.lookup, r.lookup)
		}
		if r.batch > 0 {
			batch = fmt.Sprintf("%.1f", r.batch)
			if hasBase {
				lookupRatio += " (batch " + ratio(b.lookup, r.batch) + ")"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %.2f | %.3f | %.3g%% | %d | %s | %.1f | %s | %s | %s |\n",
			r.impl.Name, bench.SizeName(r.stats.N), r.stats.BitsPerItem, r.stats.Load, 100*r.stats.FPR,
			int(r.stats.FNR*float64(r.stats.N)+0.5), insert, r.lookup, batch, insertRatio, lookupRatio)
	}

	writeEqualRates(w, rows, base)

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Filters:")
	for _, impl := range bench.Impls {
		fmt.Fprintf(w, "- %s: %s\n", impl.Name, impl.About)
	}
	var ps []string
	for _, n := range sizes {
		ps = append(ps, fmt.Sprintf("%.3g%% at n=%s", 100*bench.TargetRate(n), bench.SizeName(n)))
	}
	fmt.Fprintf(w, "- bloom's target rate p: %s\n", strings.Join(ps, ", "))
	ps = ps[:0]
	for _, n := range sizes {
		ps = append(ps, fmt.Sprintf("%.3g%% at n=%s", 100*bench.SeiflotfyRate(n), bench.SizeName(n)))
	}
	fmt.Fprintf(w, "- %s's rate asked, %s's measured: %s\n", equalRate, baseline, strings.Join(ps, ", "))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Columns:")
	fmt.Fprintln(w, "- bits/item: the filter's memory in bits ÷ n (cuckoo: SizeInBytes; seiflotfy: its bucket array; bloom: Cap(); fuse: the fingerprint array).")
	fmt.Fprintln(w, "- load: slots in use (cuckoo filters), n ÷ fingerprints (fuse), bits set (bloom).")
	fmt.Fprintf(w, "- fpr: share of %d never-inserted keys reported present. keys lost: inserted keys not found.\n", bench.AbsentKeysForRate)
	fmt.Fprintln(w, "- insert: time to fill an empty filter (Reset first, so its memory is mapped) with the n keys ÷ n;")
	fmt.Fprintln(w, "  for the static fuse filters, time to build one from the n keys ÷ n, hashing them with xxh3 included.")
	fmt.Fprintf(w, "- lookup: one Contains call a key, %d passes over %d keys (50%% present, random order) after a warm-up pass.\n",
		passes, bench.LookupSetSize)
	fmt.Fprintf(w, "- batch lookup: the same keys through ContainsBatch, %d keys a call.\n", batchLen)
	fmt.Fprintf(w, "- vs %s: its time ÷ this row's time at the same n; above 1× is faster than %s.\n", baseline, baseline)
}

// equalRate is the filter that is asked for the baseline's measured rate.
const equalRate = "cuckoo-eqrate"

// writeEqualRates sets the filter asked for seiflotfy's measured rate
// beside seiflotfy at each n: the comparison at equal rates, where the
// main table's cuckoo row has a rate some 16 times lower.
func writeEqualRates(w io.Writer, rows []row, base map[int]row) {
	var lines []string
	for _, r := range rows {
		b, ok := base[r.stats.N]
		if r.impl.Name != equalRate || !ok {
			continue
		}
		l, err := bench.EqualRateConfig(r.stats.N).Layout()
		if err != nil {
			continue
		}
		shape := fmt.Sprintf("b=%d f=%d", l.BucketSize, l.FingerprintBits)
		if l.Packing == filter.PackingRanked {
			shape = fmt.Sprintf("b=%d R=%d", l.BucketSize, l.FingerprintRange)
		}
		lines = append(lines, fmt.Sprintf("| %s | %.2f | %.3g%% | %.3g%% | %s, %s | %.2f | %.3g%% | %.2f× | %.2f× | %.2f× |",
			bench.SizeName(r.stats.N), b.stats.BitsPerItem, 100*b.stats.FPR, 100*bench.SeiflotfyRate(r.stats.N),
			l.Packing, shape, r.stats.BitsPerItem, 100*r.stats.FPR, r.stats.BitsPerItem/b.stats.BitsPerItem,
			b.insert/r.insert, b.lookup/r.lookup))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "At equal rates: %s is filter.New asked for %s's false-positive rate as measured at n (on the same keys as the fpr column), "+
		"with the layout New chooses for it; the times are the main table's.\n\n", equalRate, baseline)
	fmt.Fprintf(w, "| n | %s bits/item | %s fpr | rate asked | layout | %s bits/item | %s fpr | bits ÷ %s's | insert vs %s | lookup vs %s |\n",
		baseline, baseline, equalRate, equalRate, baseline, baseline, baseline)
	fmt.Fprintln(w, "|---|--:|--:|--:|---|--:|--:|--:|--:|--:|")
	for _, line := range lines {
		fmt.Fprintln(w, line)
	}
}

func ratio(base, x float64) string { return fmt.Sprintf("%.2f×", base/x) }

// cpuModel returns the first "model name" of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for line := range strings.Lines(string(data)) {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}
