// Cachepenetration is an HTTP service of users in a SQLite database behind a
// cache, with a cuckoo filter of the existing ids in front of both: a request
// for an id that does not exist is answered 404 by the filter, without a
// cache slot or a database query, however many such ids are asked for.
//
// It seeds a database in a temporary directory, drives the same load of GETs
// (mostly for ids that do not exist) at the service without and with the
// filter, deletes and creates users, and prints what reached the database.
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
	flag.IntVar(&cfg.Users, "users", cfg.Users, "users seeded into the database")
	flag.IntVar(&cfg.Requests, "requests", cfg.Requests, "GETs in each load")
	flag.Float64Var(&cfg.Absent, "absent", cfg.Absent, "fraction of the GETs for ids that do not exist")
	flag.IntVar(&cfg.Workers, "clients", cfg.Workers, "concurrent HTTP clients")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cachepenetration:", err)
		os.Exit(1)
	}
}
