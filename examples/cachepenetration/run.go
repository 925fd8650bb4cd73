package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// config is one run of the example.
type config struct {
	Users     int     // rows seeded into the table, ids 1..Users
	Requests  int     // GETs in each of the two loads
	Absent    float64 // fraction of the GETs for ids that do not exist
	Hot       int     // the popular users, ids 1..Hot
	HotShare  float64 // fraction of the GETs for existing users that go to the popular ones
	CacheSize int     // users the LRU cache holds
	Workers   int     // concurrent HTTP clients
	Deletes   int     // users deleted after the loads
	Creates   int     // users created after the deletes
	Seed      uint64  // the workload's random seed
	Logger    *slog.Logger
}

func defaultConfig() config {
	return config{
		Users:     100_000,
		Requests:  50_000,
		Absent:    0.9,
		Hot:       1_000,
		HotShare:  0.8,
		CacheSize: 2_000,
		Workers:   8,
		Deletes:   1_000,
		Creates:   100,
		Seed:      1,
	}
}

// phase is one load of GETs against the service and what each side counted.
type phase struct {
	Requests, Existing, Absent int
	OK, NotFound, Unexpected   int   // as the clients saw them
	DBLookups                  int64 // SELECTs that reached SQLite
	CacheHits                  int64
	FilterRejected             int64 // GETs the filter answered 404 alone
	Elapsed                    time.Duration
}

// Report is what a run measured.
type Report struct {
	Users       int
	Without     phase // no filter: cache, then database
	With        phase // the filter, then cache, then database
	FilterBytes uint64
	FilterBits  int     // fingerprint bits
	FilterLoad  float64 // fraction of the filter's slots in use
	FilterFPR   float64 // the rate expected at that load
	FilterBuild time.Duration
	// AbsentContained is how many of the load's absent ids the filter may
	// contain, asked directly after the load: its false positives, each of
	// which the service had to look up in the database.
	AbsentContained int

	Deleted          int   // users removed by DELETE
	DeletedContained int   // of those, ids the filter still may contain (shared fingerprints)
	DeletedLookups   int64 // database lookups made by the GETs of the deleted ids
	DeletedNotFound  int   // GETs of deleted ids answered 404
	Created          int   // users created by POST
	CreatedFound     int   // of those, found by GET afterwards
}

// errWrongAnswers is returned by run when a client saw an answer other than
// the one the request must get: the service is broken.
var errWrongAnswers = errors.New("wrong answers")

// run seeds a SQLite database of cfg.Users users in a temporary directory,
// then serves it over HTTP twice, without and with a cuckoo filter of the
// existing ids in front of the cache, and drives the same load of GETs at
// each; then deletes and creates users through the filtered service and
// checks that the filter followed. It writes the report to out.
func run(ctx context.Context, cfg config, out io.Writer) (Report, error) {
	if err := cfg.validate(); err != nil {
		return Report{}, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	dir, err := os.MkdirTemp("", "cachepenetration-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(dir)
	db, err := openDB(ctx, dir)
	if err != nil {
		return Report{}, err
	}
	defer db.Close()
	t0 := time.Now()
	if err := db.seed(ctx, cfg.Users); err != nil {
		return Report{}, err
	}
	seeded := time.Since(t0)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Workers}}
	defer client.CloseIdleConnections()
	w := makeWorkload(cfg.Seed, cfg.Users, cfg.Requests, cfg.Hot, cfg.Absent, cfg.HotShare)
	rep := Report{Users: cfg.Users}

	// The load with no filter.
	plain := &service{db: db, cache: newLRU(cfg.CacheSize), log: log}
	if rep.Without, err = load(ctx, client, plain, w, cfg.Workers); err != nil {
		return rep, err
	}

	// The filter, built from the table, as a service builds it at startup.
	// Its capacity leaves room for the table to grow by a tenth.
	t0 = time.Now()
	f, err := buildFilter(ctx, db, uint64(cfg.Users+cfg.Users/10+cfg.Creates))
	if err != nil {
		return rep, err
	}
	rep.FilterBuild = time.Since(t0)
	rep.FilterBytes, rep.FilterBits = f.SizeInBytes(), f.FingerprintBits()
	rep.FilterLoad, rep.FilterFPR = f.LoadFactor(), f.FalsePositiveRate()

	// The same load through the filter.
	svc := &service{db: db, cache: newLRU(cfg.CacheSize), filter: f, log: log}
	ts := httptest.NewServer(svc.handler())
	defer ts.Close()
	if rep.With, err = loadAt(ctx, client, ts.URL, svc, w, cfg.Workers); err != nil {
		return rep, err
	}
	for _, id := range w.absent {
		k := idKey(id)
		if f.Contains(k[:]) {
			rep.AbsentContained++
		}
	}

	if err := deleteAndCreate(ctx, client, ts.URL, svc, cfg, &rep); err != nil {
		return rep, err
	}
	if err := rep.print(out, cfg, seeded); err != nil {
		return rep, err
	}
	if n := rep.Without.Unexpected + rep.With.Unexpected; n > 0 {
		return rep, fmt.Errorf("%w: %d", errWrongAnswers, n)
	}
	return rep, nil
}

func (c config) validate() error {
	switch {
	case c.Users < 1 || c.Users >= absentBase:
		return fmt.Errorf("users %d: want 1..%d", c.Users, absentBase-1)
	case c.Requests < 1, c.Workers < 1, c.CacheSize < 1:
		return errors.New("requests, workers and cache size must be positive")
	case c.Hot < 1 || c.Hot > c.Users:
		return fmt.Errorf("hot users %d: want 1..%d", c.Hot, c.Users)
	case c.Deletes < 0 || c.Deletes > c.Users, c.Creates < 0:
		return fmt.Errorf("deletes %d, creates %d: want 0..users and >= 0", c.Deletes, c.Creates)
	case !(c.Absent >= 0 && c.Absent <= 1), !(c.HotShare >= 0 && c.HotShare <= 1):
		return errors.New("absent and hot share must be fractions in [0, 1]")
	}
	return nil
}

// load serves svc on a fresh test server and drives w's GETs at it.
func load(ctx context.Context, client *http.Client, svc *service, w workload, workers int) (phase, error) {
	ts := httptest.NewServer(svc.handler())
	defer ts.Close()
	return loadAt(ctx, client, ts.URL, svc, w, workers)
}

// loadAt drives w's GETs at the service svc serving at base, and counts.
func loadAt(ctx context.Context, client *http.Client, base string, svc *service, w workload, workers int) (phase, error) {
	lookups := svc.db.lookups.Load()
	res, err := drive(ctx, client, base, w.gets, workers)
	if err != nil {
		return phase{}, err
	}
	if res.unexpected > 0 {
		svc.log.Error("wrong answers", "count", res.unexpected, "first", res.example)
	}
	return phase{
		Requests:       len(w.gets),
		Existing:       w.existing,
		Absent:         len(w.absent),
		OK:             res.ok,
		NotFound:       res.notFound,
		Unexpected:     res.unexpected,
		DBLookups:      svc.db.lookups.Load() - lookups,
		CacheHits:      svc.cacheHits.Load(),
		FilterRejected: svc.filterRejected.Load(),
		Elapsed:        res.elapsed,
	}, nil
}

// deleteAndCreate deletes cfg.Deletes random users through the service, then
// asks for each of them again, counting the database lookups that makes; then
// creates cfg.Creates users and asks for each of them.
func deleteAndCreate(ctx context.Context, client *http.Client, base string, svc *service, cfg config, rep *Report) error {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xde1e7e))
	deletes := make([]request, cfg.Deletes)
	gets := make([]request, cfg.Deletes)
	for i, j := range rng.Perm(cfg.Users)[:cfg.Deletes] {
		id := int64(j + 1)
		deletes[i] = request{http.MethodDelete, id, http.StatusNoContent}
		gets[i] = request{http.MethodGet, id, http.StatusNotFound}
	}
	res, err := drive(ctx, client, base, deletes, cfg.Workers)
	if err != nil {
		return err
	}
	if res.unexpected > 0 {
		return fmt.Errorf("%w: %d DELETEs, first: %s", errWrongAnswers, res.unexpected, res.example)
	}
	rep.Deleted = res.ok
	for _, rq := range gets {
		k := idKey(rq.id)
		if svc.filter.Contains(k[:]) {
			rep.DeletedContained++
		}
	}
	lookups := svc.db.lookups.Load()
	res, err = drive(ctx, client, base, gets, cfg.Workers)
	if err != nil {
		return err
	}
	rep.DeletedLookups = svc.db.lookups.Load() - lookups
	rep.DeletedNotFound = res.notFound
	if res.unexpected > 0 {
		return fmt.Errorf("%w: %d GETs of deleted users, first: %s", errWrongAnswers, res.unexpected, res.example)
	}

	gets = gets[:0]
	for i := range cfg.Creates {
		u, err := post(ctx, client, base, fmt.Sprintf("new user %d", i), fmt.Sprintf("new%d@example.com", i))
		if err != nil {
			return err
		}
		rep.Created++
		gets = append(gets, request{http.MethodGet, u.ID, http.StatusOK})
	}
	res, err = drive(ctx, client, base, gets, cfg.Workers)
	if err != nil {
		return err
	}
	rep.CreatedFound = res.ok
	if res.unexpected > 0 {
		return fmt.Errorf("%w: %d GETs of created users, first: %s", errWrongAnswers, res.unexpected, res.example)
	}
	return nil
}

// post creates a user through the API.
func post(ctx context.Context, client *http.Client, base, name, email string) (user, error) {
	body, err := json.Marshal(map[string]string{"name": name, "email": email})
	if err != nil {
		return user{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/users", bytes.NewReader(body))
	if err != nil {
		return user{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return user{}, err
	}
	defer resp.Body.Close()
	var u user
	if resp.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(resp.Body)
		return user{}, fmt.Errorf("%w: POST /users: %s: %s", errWrongAnswers, resp.Status, strings.TrimSpace(string(msg)))
	}
	if err := json.NewDecoder(resp.Body).Decode(&u); err != nil {
		return user{}, fmt.Errorf("POST /users: %w", err)
	}
	return u, nil
}

func (r Report) print(out io.Writer, cfg config, seeded time.Duration) error {
	fmt.Fprintf(out, "%d users in SQLite (seeded in %v); %d GETs per load, %.0f%% for ids that do not exist; an LRU cache of %d users; %d clients\n\n",
		r.Users, seeded.Round(time.Millisecond), cfg.Requests, 100*cfg.Absent, cfg.CacheSize, cfg.Workers)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tGETs\t404s\t404s by the filter\tcache hits\tdatabase queries\tGETs/s\t")
	for _, row := range []struct {
		name string
		p    phase
	}{{"no filter", r.Without}, {"cuckoo filter", r.With}} {
		p := row.p
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.0f\t\n", row.name, p.Requests, p.NotFound, p.FilterRejected, p.CacheHits, p.DBLookups,
			float64(p.Requests)/p.Elapsed.Seconds())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	n := r.Users
	fmt.Fprintf(out, "\nfilter: %d ids, %d-bit fingerprints, %.1f KiB (%.1f bits an id), %.0f%% full, built from the table in %v\n",
		n, r.FilterBits, float64(r.FilterBytes)/1024, 8*float64(r.FilterBytes)/float64(n), 100*r.FilterLoad, r.FilterBuild.Round(time.Millisecond))
	fmt.Fprintf(out, "false positives: %d of %d absent ids went on to the database (%.3f%%; expected %.3f%%)\n",
		r.AbsentContained, r.With.Absent, 100*float64(r.AbsentContained)/float64(max(r.With.Absent, 1)), 100*r.FilterFPR)
	fmt.Fprintf(out, "database queries: %d without the filter, %d with it (%.1f× fewer)\n",
		r.Without.DBLookups, r.With.DBLookups, float64(r.Without.DBLookups)/float64(max(r.With.DBLookups, 1)))
	fmt.Fprintf(out, "\ndeleted %d users: %d GETs of them answered 404, %d reached the database (deleted ids whose\n",
		r.Deleted, r.DeletedNotFound, r.DeletedLookups)
	fmt.Fprintf(out, "  fingerprint another id holds in one of their buckets: %d); a Bloom filter cannot delete and would send all %d\n",
		r.DeletedContained, r.Deleted)
	_, err := fmt.Fprintf(out, "created %d users: GETs found %d of them\n", r.Created, r.CreatedFound)
	return err
}
