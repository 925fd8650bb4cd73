// Blocklist keeps a block list of domain names in `cuckoo serve`, run in this
// process, and queries it through go-redis from several goroutines while
// another adds and removes entries: no entry in the list is ever answered
// absent, and removed ones are answered absent once their CF.DEL returned,
// except for false positives. See README.md.
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
	flag.IntVar(&cfg.Stable, "entries", cfg.Stable, "entries loaded and kept")
	flag.IntVar(&cfg.Added, "churn", cfg.Added, "entries added, and as many removed, while the list serves")
	flag.IntVar(&cfg.Checkers, "checkers", cfg.Checkers, "goroutines checking names")
	flag.Parse()
	cfg.Removable = cfg.Added
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "blocklist:", err)
		os.Exit(1)
	}
}
