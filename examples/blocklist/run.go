package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// config is one run of the example.
type config struct {
	Stable    int // entries loaded and kept
	Removable int // entries loaded, then removed while the list serves
	Added     int // entries added while it serves
	Clean     int // names never listed, that the checkers and the final check look up
	Checkers  int // goroutines looking names up; even ones use CF.EXISTS, odd ones CF.MEXISTS
	Batch     int // names per CF.MEXISTS
	Seed      uint64
	Logger    *slog.Logger // the server's; nil: warnings and errors to stderr
}

func defaultConfig() config {
	return config{
		Stable:    100_000,
		Removable: 10_000,
		Added:     10_000,
		Clean:     100_000,
		Checkers:  4,
		Batch:     16,
		Seed:      1,
	}
}

// key is the block list's key in the server.
const key = "blocklist"

// insertChunk is how many entries one CF.INSERT loads.
const insertChunk = 1000

// Report is what a run measured.
type Report struct {
	Addr     string
	Loaded   int
	LoadTime time.Duration
	Checks   tally // all checkers' lookups while the list changed
	Elapsed  time.Duration
	Churned  int // CF.ADD and CF.DEL commands

	// After the churn, one CF.MEXISTS of everything:
	Listed, ListedBlocked   int // every entry in the list
	Removed, RemovedBlocked int // every entry removed
	Clean, CleanBlocked     int // every clean name
	Info                    redis.CFInfo
	Load                    float64 // entries / slots
	ExpectedFPR             float64 // a lookup's false-positive rate at that load
	Shutdown                time.Duration
}

// errFalseNegative is returned when an entry in the list was answered
// absent: a cuckoo filter never does that.
var errFalseNegative = errors.New("false negative")

// The server's filter shape for a CF.RESERVE without BUCKETSIZE (see go doc
// ./server/internal/cf): a growing table of 5-slot buckets whose 12-bit
// entries hold a 6-bit fingerprint and, until the table grows, a 5-bit tail
// of the key's address. The list is reserved for every entry it will hold,
// so it never grows and every entry keeps its whole tail: one matches an
// absent name with probability 1/((2^6-1)·2^5).
const (
	bucketSize      = 5
	entryMatchOneIn = (1<<6 - 1) << 5
)

// expectedRate returns the false-positive rate of a lookup at the given
// load: it compares 2b slots, each in use with probability load.
func expectedRate(load float64) float64 {
	return 1 - math.Pow(1-1/float64(entryMatchOneIn), 2*bucketSize*load)
}

// run starts a server, loads the block list into it, runs the checkers
// against it while the churner adds and removes entries, checks everything
// once more, shuts the server down and writes the report to out.
func run(ctx context.Context, cfg config, out io.Writer) (rep Report, err error) {
	if cfg.Stable < 1 || cfg.Removable < 1 || cfg.Added < 1 || cfg.Clean < 1 || cfg.Checkers < 1 || cfg.Batch < 2 {
		return rep, fmt.Errorf("config %+v: every group and the checkers need at least 1, the batch 2", cfg)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	dir, err := os.MkdirTemp("", "blocklist-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	srv, err := startServer(dir, log)
	if err != nil {
		return rep, err
	}
	rep.Addr = srv.addr
	running := true
	defer func() {
		if running { // an error path: stop at once
			if serr := srv.stop(context.Background()); serr != nil {
				err = errors.Join(err, fmt.Errorf("shutdown: %w", serr))
			}
		}
	}()
	// MaxRetries -1: a failed command is reported, never silently resent.
	c := redis.NewClient(&redis.Options{Addr: srv.addr, MaxRetries: -1, PoolSize: cfg.Checkers + 2})
	defer c.Close()

	g := groups{stable: cfg.Stable, removable: cfg.Removable, added: cfg.Added, clean: cfg.Clean}
	if err := load(ctx, c, g, &rep); err != nil {
		return rep, err
	}
	if err := serveAndChurn(ctx, c, g, cfg, &rep); err != nil {
		return rep, err
	}
	if err := checkAll(ctx, c, g, &rep); err != nil {
		return rep, err
	}

	// A graceful shutdown: the server writes its log and a snapshot of the
	// list to dir before Shutdown returns.
	c.Close()
	running = false
	t0 := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := srv.stop(sctx); err != nil {
		return rep, fmt.Errorf("shutdown: %w", err)
	}
	rep.Shutdown = time.Since(t0)
	if err := rep.print(out, cfg); err != nil {
		return rep, err
	}
	if rep.Checks.listedMissed > 0 || rep.ListedBlocked != rep.Listed {
		return rep, fmt.Errorf("%w: %d entries answered absent while changing, %d after; the first: %s",
			errFalseNegative, rep.Checks.listedMissed, rep.Listed-rep.ListedBlocked, rep.Checks.firstMiss)
	}
	return rep, nil
}

// load reserves the list for every entry it will hold, so that it stays one
// filter (one stage), and loads the stable and removable entries.
func load(ctx context.Context, c *redis.Client, g groups, rep *Report) error {
	start := time.Now()
	if err := c.CFReserve(ctx, key, int64(g.stable+g.removable+g.added)).Err(); err != nil {
		return fmt.Errorf("CF.RESERVE: %w", err)
	}
	n := g.stable + g.removable
	args := make([]any, 0, insertChunk)
	for i := 0; i < n; i += insertChunk {
		args = args[:0]
		for j := i; j < min(i+insertChunk, n); j++ {
			args = append(args, domain(j)) // the stable entries, then the removable ones
		}
		res, err := c.CFInsert(ctx, key, &redis.CFInsertOptions{NoCreate: true}, args...).Result()
		if err != nil {
			return fmt.Errorf("CF.INSERT: %w", err)
		}
		for k, ok := range res {
			if !ok {
				return fmt.Errorf("CF.INSERT %s: not added", args[k])
			}
		}
	}
	rep.Loaded, rep.LoadTime = n, time.Since(start)
	return nil
}

// serveAndChurn runs the checkers, and once each has made its first lookup,
// the churner; when the churner is done the checkers stop.
func serveAndChurn(ctx context.Context, c *redis.Client, g groups, cfg config, rep *Report) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		p       progress
		ready   sync.WaitGroup
		wg      sync.WaitGroup
		mu      sync.Mutex
		stop    = make(chan struct{})
		stopped sync.Once
	)
	fail := func(err error) {
		cancel(err)
		stopped.Do(func() { close(stop) })
	}
	start := time.Now()
	ready.Add(cfg.Checkers)
	for i := range cfg.Checkers {
		batch := cfg.Batch
		if i%2 == 0 {
			batch = 1
		}
		wg.Go(func() {
			var once sync.Once
			t, err := checker(ctx, c, key, g, &p, cfg.Seed+uint64(i), batch, func() { once.Do(ready.Done) }, stop)
			once.Do(ready.Done) // a checker that failed before its first lookup
			if err != nil {
				fail(err)
			}
			mu.Lock()
			rep.Checks.add(t)
			mu.Unlock()
		})
	}
	ready.Wait()
	if err := churn(ctx, c, key, g, &p); err != nil {
		fail(err)
	}
	rep.Churned = g.added + g.removable
	stopped.Do(func() { close(stop) })
	wg.Wait()
	rep.Elapsed = time.Since(start)
	return context.Cause(ctx)
}

// checkAll looks every entry and clean name up once more, now that nothing
// changes, and reads the filter's parameters.
func checkAll(ctx context.Context, c *redis.Client, g groups, rep *Report) error {
	count := func(n int, name func(int) string) (int, error) {
		blocked := 0
		args := make([]any, 0, insertChunk)
		for i := 0; i < n; i += insertChunk {
			args = args[:0]
			for j := i; j < min(i+insertChunk, n); j++ {
				args = append(args, name(j))
			}
			res, err := c.CFMExists(ctx, key, args...).Result()
			if err != nil {
				return 0, fmt.Errorf("CF.MEXISTS: %w", err)
			}
			for _, ok := range res {
				if ok {
					blocked++
				}
			}
		}
		return blocked, nil
	}
	var err error
	var stable, added int
	if stable, err = count(g.stable, g.stableName); err != nil {
		return err
	}
	if added, err = count(g.added, g.addedName); err != nil {
		return err
	}
	rep.Listed, rep.ListedBlocked = g.stable+g.added, stable+added
	rep.Removed = g.removable
	if rep.RemovedBlocked, err = count(g.removable, g.removableName); err != nil {
		return err
	}
	rep.Clean = g.clean
	if rep.CleanBlocked, err = count(g.clean, g.cleanName); err != nil {
		return err
	}
	if rep.Info, err = c.CFInfo(ctx, key).Result(); err != nil {
		return fmt.Errorf("CF.INFO: %w", err)
	}
	// "Number of items inserted" is the items the filter holds now: a
	// CF.DEL decrements it (and counts in "Number of items deleted").
	rep.Load = float64(rep.Info.NumItemsInserted) / float64(rep.Info.NumBuckets*rep.Info.BucketSize)
	rep.ExpectedFPR = expectedRate(rep.Load)
	return nil
}

func (r Report) print(out io.Writer, cfg config) error {
	pct := func(a, b int64) float64 { return 100 * float64(a) / float64(max(b, 1)) }
	t := r.Checks
	fmt.Fprintf(out, "cuckoo serve on %s: CF.RESERVE and CF.INSERT loaded %d domains in %v\n",
		r.Addr, r.Loaded, r.LoadTime.Round(time.Millisecond))
	fmt.Fprintf(out, "%d goroutines checked names (%d with CF.EXISTS, %d with CF.MEXISTS of %d) while another made %d CF.ADD and %d CF.DEL\n\n",
		cfg.Checkers, (cfg.Checkers+1)/2, cfg.Checkers/2, cfg.Batch, cfg.Added, cfg.Removable)
	fmt.Fprintf(out, "checks: %d names in %d lookups in %v: %.0f checks/s, %.0f lookups/s\n",
		t.items, t.calls, r.Elapsed.Round(time.Millisecond), float64(t.items)/r.Elapsed.Seconds(), float64(t.calls)/r.Elapsed.Seconds())
	fmt.Fprintf(out, "  blocked: %d\n", t.blocked)
	fmt.Fprintf(out, "  entries in the list throughout a lookup: %d blocked of %d (false negatives: %d)\n", t.listed-t.listedMissed, t.listed, t.listedMissed)
	fmt.Fprintf(out, "  entries removed before a lookup: %d blocked of %d (%.3f%%)\n", t.removedBlocked, t.removed, pct(t.removedBlocked, t.removed))
	fmt.Fprintf(out, "  names not in the list: %d blocked of %d (%.3f%%)\n", t.unlistedBlocked, t.unlisted, pct(t.unlistedBlocked, t.unlisted))
	fmt.Fprintf(out, "  changing during their lookup, not judged: %d\n\n", t.changing)
	fmt.Fprintf(out, "afterwards, every name once:\n")
	fmt.Fprintf(out, "  in the list: %d blocked of %d\n", r.ListedBlocked, r.Listed)
	fmt.Fprintf(out, "  removed:     %d blocked of %d (%.3f%%)\n", r.RemovedBlocked, r.Removed, pct(int64(r.RemovedBlocked), int64(r.Removed)))
	fmt.Fprintf(out, "  never listed: %d blocked of %d (%.3f%%); expected false-positive rate at the filter's load: %.3f%%\n",
		r.CleanBlocked, r.Clean, pct(int64(r.CleanBlocked), int64(r.Clean)), 100*r.ExpectedFPR)
	fmt.Fprintf(out, "filter (CF.INFO): %d entries, %d removed; %d filter of %d buckets of %d, %.0f%% full; %d bytes, %.2f bytes an entry\n",
		r.Info.NumItemsInserted, r.Info.NumItemsDeleted, r.Info.NumFilters, r.Info.NumBuckets, r.Info.BucketSize, 100*r.Load,
		r.Info.Size, float64(r.Info.Size)/float64(r.Info.NumItemsInserted))
	_, err := fmt.Fprintf(out, "the server shut down cleanly in %v, its log and a snapshot written\n", r.Shutdown.Round(time.Millisecond))
	return err
}
