package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/cuckoohash/cuckoo/cmd/cuckoo/internal/eval"
)

const evalHelp = `
Eval runs the experiments by which hash tables and filters are chosen, on
this machine, from this project's code, and writes DIR/report.md with a
table per experiment (with the machine and the parameters) and a plot per
experiment as PNG and SVG:

  probes    key comparisons per lookup vs load factor: the cuckoo map,
            classic two-table cuckoo hashing, chaining, linear probing
  rates     lookup time vs load factor, 50% to 95%: the cuckoo map, a Go
            map and the cuckoo filter, inside the caches and beyond them
  fpr       false-positive rate vs bits per item: cuckoo filters (b=2,4,8;
            f=4..20) against theory, Bloom, counting Bloom, binary fuse
  space     bits a key vs false-positive rate: plain, semi-sorted and
            ranked cuckoo filters and filter.New's choice, built and
            measured from 3% to 0.01% and on a grid from 5% to 0.001%,
            against Bloom and binary fuse, each compared with Bloom at the
            rate it measured, with where each crosses Bloom
  maxload   load reached vs bucket size and kick bound; insert time as the
            filter fills
  concurrency
            throughput vs goroutines (1..8) on 95% and 50% lookups: the
            lock-free filter against locked ones, the map against xsync
            and sync.Map
  deletes   deleting half the keys: false negatives, false positives, and
            a Bloom filter that cannot delete
  growth    bits a key, false-positive rate and lookup time while filters
            grow 1000x from a capacity of 1000: filter.Scalable's growing
            table, the chain of stages it was before, a model of
            RedisBloom's expansion, a right-sized static filter; then
            deleting half the keys

--quick uses small sizes and takes under a minute; the full run takes about
10 minutes and 10 GB of memory on a 2-core machine.
`

func runEval(e *env, args []string) error {
	fs := e.flags(evalHelp)
	out := fs.String("out", "eval-report", "directory for report.md and the plots")
	quick := fs.Bool("quick", false, "small sizes: about a minute")
	only := fs.String("only", "", "comma-separated experiments to run (default all): "+strings.Join(eval.Experiments, ","))
	seed := fs.Uint64("seed", 1, "seed of the keys and hashes")
	if err := e.parse(fs, args, nil, 0); err != nil {
		return err
	}
	cfg := eval.Config{Out: *out, Quick: *quick, Seed: *seed}
	if *only != "" {
		for _, name := range strings.Split(*only, ",") {
			name = strings.TrimSpace(name)
			if !slices.Contains(eval.Experiments, name) {
				return e.usageErrorf("--only: no experiment %q (have %s)", name, strings.Join(eval.Experiments, ", "))
			}
			cfg.Only = append(cfg.Only, name)
		}
	}
	total := len(eval.Experiments)
	if len(cfg.Only) > 0 {
		total = len(cfg.Only)
	}
	var bar *progressbar.ProgressBar
	if isTerminal(e.stderr) {
		bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(e.stderr),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish(),
		)
	}
	start := time.Now()
	cfg.Step = func(i int, name string) {
		if bar != nil {
			bar.Describe("experiment " + name)
			bar.Set(i)
		} else {
			fmt.Fprintf(e.stderr, "cuckoo eval: %d/%d %s\n", i+1, total, name)
		}
	}
	path, err := eval.Run(cfg)
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s (and its plots) in %s\n", path, time.Since(start).Round(time.Second))
	return nil
}
