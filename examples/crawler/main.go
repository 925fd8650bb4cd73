// Crawler de-duplicates the URLs of a crawl frontier with a Scalable cuckoo
// filter, which grows as URLs come in, and compares it with a
// map[string]struct{}: the URLs each lets through, the new URLs the filter
// wrongly skips, and the memory each takes per URL.
//
// By default it generates a file of 1,000,000 URLs, 30% of them repeats, in
// a temporary directory; -urls reads one URL a line from a file instead.
// See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	cfg := defaultConfig()
	flag.StringVar(&cfg.URLs, "urls", "", "a `file` of URLs, one a line (default: generate them)")
	flag.IntVar(&cfg.Generate, "n", cfg.Generate, "URLs to generate")
	flag.Float64Var(&cfg.Repeat, "repeat", cfg.Repeat, "fraction of the generated URLs that repeat an earlier one")
	flag.Float64Var(&cfg.Filter.FalsePositiveRate, "fpr", cfg.Filter.FalsePositiveRate, "the filter's false-positive bound")
	flag.IntVar(&cfg.MaxURL, "max-url", cfg.MaxURL, "the longest line of -urls, in `bytes`; a longer line is an error")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crawler:", err)
		os.Exit(1)
	}
}
