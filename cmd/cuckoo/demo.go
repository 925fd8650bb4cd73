package main

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/cuckoohash/cuckoo/filter"
)

const demoHelp = `
Demo builds a filter of N synthetic URLs in memory (no files), then a Go
map[string]struct{} of the same keys, and prints a table comparing them:
load, memory, bits per item, the false-positive rate measured on N other
URLs that were never inserted against the expected rate, and throughput
(inserts, lookups with Contains and with ContainsBatch, and the map's).
The URLs are the same on every run; --seed changes the filter's hash. It
needs about 300 bytes of memory per URL (N=1e6: 0.3 GB).

With --urls it prints the N URLs instead, one a line, and measures nothing:
a key file to try build and query on (cuckoo demo --urls --n 1e5 > urls.txt).
`

const (
	demoDefaultN = 1_000_000
	demoMaxN     = 100_000_000
	demoBatch    = 1024 // keys per ContainsBatch call
)

func runDemo(e *env, args []string) error {
	fs := e.flags(demoHelp)
	n := countVar(fs, "n", demoDefaultN, 1, demoMaxN, "number of URLs `N` to insert, 1.."+strconv.Itoa(demoMaxN)+" (1e6 and 1_000_000 accepted)")
	fpr := fs.Float64("fpr", 0.01, "target false-positive `rate`, in (0, 1)")
	seed := fs.Uint64("seed", 0, "the filter's hash seed")
	urls := fs.Bool("urls", false, "print the N URLs, one a line, and measure nothing: a key file for build")
	if err := e.parse(fs, args, nil, 0); err != nil {
		return err
	}
	if *urls {
		return writeURLs(e.stdout, int(n.n))
	}
	switch {
	case !(*fpr > 0 && *fpr < 1):
		return e.usageErrorf("--fpr %v: the rate must be in (0, 1)", *fpr)
	}
	return demo(e.stdout, int(n.n), *fpr, *seed)
}

// URL vocabulary. demoURL picks from these with a hash of the URL's index.
var (
	urlSections = []string{"docs", "blog", "shop", "news", "api/v2", "users", "static/img", "search", "wiki", "forum"}
	urlWords    = []string{"river", "falcon", "orbit", "maple", "quartz", "harbor", "ember", "tundra",
		"violet", "cobalt", "meadow", "summit", "lantern", "cipher", "juniper", "atlas"}
)

// mix is SplitMix64's finalizer: it spreads the bits of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// demoURL appends the i'th synthetic URL to b, for example
// https://host-417.example.com/blog/maple/417?q=orbit&page=12. The index
// appears in the path, so different indexes give different URLs.
func demoURL(b []byte, i uint64) []byte {
	h := mix(i)
	b = append(b, "https://host-"...)
	b = strconv.AppendUint(b, i%1000, 10)
	b = append(b, ".example.com/"...)
	b = append(b, urlSections[h%uint64(len(urlSections))]...)
	b = append(b, '/')
	b = append(b, urlWords[h>>8%uint64(len(urlWords))]...)
	b = append(b, '/')
	b = strconv.AppendUint(b, i, 10)
	b = append(b, "?q="...)
	b = append(b, urlWords[h>>16%uint64(len(urlWords))]...)
	b = append(b, "&page="...)
	return strconv.AppendUint(b, h>>24%50+1, 10)
}

// writeURLs writes the first n synthetic URLs to w, one a line.
func writeURLs(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf []byte
	for i := range n {
		buf = append(demoURL(buf[:0], uint64(i)), '\n')
		bw.Write(buf)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("demo: writing the URLs: %w", err)
	}
	return nil
}

// demoKeys returns the URLs of indexes from..from+n-1.
func demoKeys(from, n int) [][]byte {
	var a keyArena
	a.data = make([]byte, 0, n*64)
	a.ends = make([]int, 0, n)
	var buf []byte
	for i := range n {
		buf = demoURL(buf[:0], uint64(from+i))
		a.add(buf)
	}
	return a.keys(make([][]byte, 0, n))
}

// rate formats a count of operations per second.
func rate(ops int, d time.Duration) string {
	r := float64(ops) / d.Seconds()
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.1f M/s", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1f k/s", r/1e3)
	}
	return fmt.Sprintf("%.0f /s", r)
}

// mebibytes formats a size in MiB, or KiB below one MiB.
func mebibytes(n uint64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
}

func demo(w io.Writer, n int, fpr float64, seed uint64) error {
	present := demoKeys(0, n)
	absent := demoKeys(n, n) // never inserted
	all := append(present[:n:n], absent...)

	f, err := filter.New(filter.Config{Capacity: uint64(n), FalsePositiveRate: fpr, Seed: seed})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	runtime.GC()
	start := time.Now()
	for _, k := range present {
		if err := f.Insert(k); err != nil {
			return fmt.Errorf("demo: inserting %d URLs into a filter of capacity %d: %w", n, n, err)
		}
	}
	insertTime := time.Since(start)

	// Contains over the inserted URLs and then the fresh ones: the first
	// half must all be found, the second measures false positives.
	runtime.GC()
	hits := 0
	start = time.Now()
	for _, k := range all {
		if f.Contains(k) {
			hits++
		}
	}
	containsTime := time.Since(start)
	falsePositives := 0
	for _, k := range absent {
		if f.Contains(k) {
			falsePositives++
		}
	}
	falseNegatives := n - (hits - falsePositives)

	out := make([]bool, demoBatch)
	batchHits := 0
	start = time.Now()
	for i := 0; i < len(all); i += demoBatch {
		keys := all[i:min(i+demoBatch, len(all))]
		f.ContainsBatch(keys, out)
		for _, yes := range out[:len(keys)] {
			if yes {
				batchHits++
			}
		}
	}
	batchTime := time.Since(start)
	if batchHits != hits {
		return fmt.Errorf("demo: ContainsBatch found %d keys, Contains %d", batchHits, hits)
	}

	// The map, built between two measurements of the live heap.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start = time.Now()
	m := make(map[string]struct{}, n) // sized up front, as the filter is
	for _, k := range present {
		m[string(k)] = struct{}{}
	}
	mapInsertTime := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	mapBytes := uint64(0)
	if after.HeapAlloc > before.HeapAlloc {
		mapBytes = after.HeapAlloc - before.HeapAlloc
	}
	mapHits := 0
	start = time.Now()
	for _, k := range all {
		if _, ok := m[string(k)]; ok {
			mapHits++
		}
	}
	mapLookupTime := time.Since(start)
	runtime.KeepAlive(m)
	if mapHits != n {
		return fmt.Errorf("demo: the map found %d of %d keys", mapHits, n)
	}

	var urlBytes int
	for _, k := range present {
		urlBytes += len(k)
	}

	fmt.Fprintf(w, "cuckoo demo: %s (%.0f bytes on average), such as\n  %s\n\n",
		count(n, "synthetic URL", "synthetic URLs"), float64(urlBytes)/float64(n), present[n/3])
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	row := func(cells ...any) {
		for i, c := range cells {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprint(tw, "\n")
	}
	size := f.SizeInBytes()
	row("", "cuckoo filter", "map[string]struct{}")
	row("parameters", fmt.Sprintf("b=%d f=%d m=%d, %v", f.BucketSize(), f.FingerprintBits(), f.Buckets(), f.Packing()), "-")
	row("load", fmt.Sprintf("%.2f%%", 100*f.LoadFactor()), "-")
	row("memory", mebibytes(size), mebibytes(mapBytes))
	row("bits/item", fmt.Sprintf("%.2f", 8*float64(size)/float64(n)), fmt.Sprintf("%.1f", 8*float64(mapBytes)/float64(n)))
	row("false positives", fmt.Sprintf("%s (%d of %d fresh URLs)", percent(float64(falsePositives)/float64(n)), falsePositives, n), "0")
	row("expected fpr", percent(f.FalsePositiveRate()), "0")
	row("false negatives", falseNegatives, "0")
	row("inserts/s", rate(n, insertTime), rate(n, mapInsertTime))
	row("lookups/s", rate(2*n, containsTime)+" (Contains)", rate(2*n, mapLookupTime))
	row("", rate(2*n, batchTime)+" (ContainsBatch)", "")
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nLookups are half inserted, half fresh URLs. The map's memory is the live heap it added\n"+
		"(its keys included: a filter stores no keys); the filter is %.0fx smaller.\n", float64(mapBytes)/float64(size))
	if falseNegatives != 0 {
		return fmt.Errorf("demo: %d inserted URLs were not found", falseNegatives)
	}
	return nil
}
