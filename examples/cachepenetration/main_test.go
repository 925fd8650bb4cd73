package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/lockfree"
)

// testConfig is a run small enough for the race detector: 20k users, 10k
// GETs of which 90% for absent ids.
func testConfig() config {
	cfg := defaultConfig()
	cfg.Users = 20_000
	cfg.Requests = 10_000
	cfg.Hot = 500
	cfg.CacheSize = 1_000
	cfg.Workers = 4
	cfg.Deletes = 500
	cfg.Creates = 50
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg
}

// poissonBound is a bound that a Poisson count of mean lambda exceeds with
// probability below 1e-6: lambda + 5·sqrt(lambda) + 5.
func poissonBound(lambda float64) int {
	return int(lambda + 5*math.Sqrt(lambda) + 5)
}

func TestRun(t *testing.T) {
	cfg := testConfig()
	var out bytes.Buffer
	rep, err := run(context.Background(), cfg, &out)
	t.Logf("\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}

	for _, p := range []phase{rep.Without, rep.With} {
		if p.Unexpected != 0 || p.OK != p.Existing || p.NotFound != p.Absent || p.Existing+p.Absent != cfg.Requests {
			t.Errorf("answers: %+v; want every existing user found and every absent id 404", p)
		}
	}
	if a := float64(rep.With.Absent) / float64(cfg.Requests); math.Abs(a-cfg.Absent) > 0.02 {
		t.Errorf("%.3f of the GETs were for absent ids, want %.2f ± 0.02", a, cfg.Absent)
	}

	// Without the filter every GET that misses the cache queries the
	// database: all the absent ids, and the existing users not cached.
	w := rep.Without
	if want := int64(w.Absent) + int64(w.Existing) - w.CacheHits; w.DBLookups != want || w.FilterRejected != 0 {
		t.Errorf("without the filter: %d database lookups, %d filter rejections; want %d (every cache miss) and 0", w.DBLookups, w.FilterRejected, want)
	}

	// With it, the existing users not cached and exactly the absent ids the
	// filter may contain, its false positives.
	p := rep.With
	if want := int64(p.Existing) - p.CacheHits + int64(rep.AbsentContained); p.DBLookups != want {
		t.Errorf("with the filter: %d database lookups, want %d = %d existing - %d cache hits + %d false positives",
			p.DBLookups, want, p.Existing, p.CacheHits, rep.AbsentContained)
	}
	if want := int64(p.Absent - rep.AbsentContained); p.FilterRejected != want {
		t.Errorf("the filter answered %d GETs alone, want %d (the absent ids it does not contain)", p.FilterRejected, want)
	}
	// The false positives are a binomial count of rate FilterFPR.
	if bound := poissonBound(rep.FilterFPR * float64(p.Absent)); rep.AbsentContained > bound {
		t.Errorf("%d false positives in %d absent ids, expected rate %.4f: above the bound %d", rep.AbsentContained, p.Absent, rep.FilterFPR, bound)
	}
	if rep.FilterFPR > filterFPR {
		t.Errorf("expected false-positive rate %.4f, configured %.4f", rep.FilterFPR, filterFPR)
	}
	// With 90% absent ids, the filter removes at least 80% of the queries.
	if 5*p.DBLookups > w.DBLookups {
		t.Errorf("database lookups: %d with the filter, %d without; want at least 5× fewer", p.DBLookups, w.DBLookups)
	}

	// Deleted users: every GET answers 404, and reaches the database only
	// for the deleted ids whose fingerprint another id still holds in one of
	// their buckets.
	if rep.Deleted != cfg.Deletes || rep.DeletedNotFound != cfg.Deletes {
		t.Errorf("deleted %d users, %d answered 404 afterwards; want %d and %d", rep.Deleted, rep.DeletedNotFound, cfg.Deletes, cfg.Deletes)
	}
	if rep.DeletedLookups != int64(rep.DeletedContained) {
		t.Errorf("GETs of deleted users made %d database lookups, want %d (the deleted ids the filter still may contain)", rep.DeletedLookups, rep.DeletedContained)
	}
	if bound := poissonBound(rep.FilterFPR * float64(rep.Deleted)); rep.DeletedContained > bound {
		t.Errorf("the filter still may contain %d of %d deleted ids, above the bound %d for a rate of %.4f", rep.DeletedContained, rep.Deleted, bound, rep.FilterFPR)
	}
	if rep.Created != cfg.Creates || rep.CreatedFound != cfg.Creates {
		t.Errorf("created %d users, found %d; want %d", rep.Created, rep.CreatedFound, cfg.Creates)
	}
	if !strings.Contains(out.String(), "database queries:") {
		t.Errorf("the report lacks its summary:\n%s", out.String())
	}
}

// TestDeleteRemovesFromFilter follows one user through the filtered service:
// the filter contains it, DELETE removes it from the table and the filter, and
// the next GET is answered by the filter alone. The seeded ids are fixed, and
// the test checks that the chosen one's fingerprint is not shared with another
// id in its buckets (the filter's seed is fixed, so the check is
// deterministic), picking the first such id.
func TestDeleteRemovesFromFilter(t *testing.T) {
	ctx := context.Background()
	db, err := openDB(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const users = 1000
	if err := db.seed(ctx, users); err != nil {
		t.Fatal(err)
	}
	f := mustFilter(t, ctx, db, users)
	svc := &service{db: db, cache: newLRU(10), filter: f, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ts := httptest.NewServer(svc.handler())
	defer ts.Close()

	// A probe id is deleted from a copy of the filter first, to learn
	// whether its fingerprint is shared, without touching the real one.
	probe := mustFilter(t, ctx, db, users)
	var id int64
	for c := int64(1); c <= users; c++ {
		k := idKey(c)
		probe.Delete(k[:])
		if !probe.Contains(k[:]) {
			id = c
			break
		}
		probe.Insert(k[:])
	}
	if id == 0 {
		t.Fatal("every id shares its fingerprint: the filter is broken")
	}

	get := func() int {
		t.Helper()
		status, _, err := send(ctx, ts.Client(), ts.URL, request{http.MethodGet, id, 0})
		if err != nil {
			t.Fatal(err)
		}
		return status
	}
	if s := get(); s != http.StatusOK {
		t.Fatalf("GET %d before the delete: %d", id, s)
	}
	status, _, err := send(ctx, ts.Client(), ts.URL, request{http.MethodDelete, id, http.StatusNoContent})
	if err != nil || status != http.StatusNoContent {
		t.Fatalf("DELETE %d: %d, %v", id, status, err)
	}
	k := idKey(id)
	if f.Contains(k[:]) {
		t.Errorf("the filter contains %d after its delete", id)
	}
	lookups, rejected := db.lookups.Load(), svc.filterRejected.Load()
	if s := get(); s != http.StatusNotFound {
		t.Errorf("GET %d after the delete: %d, want 404", id, s)
	}
	if db.lookups.Load() != lookups || svc.filterRejected.Load() != rejected+1 {
		t.Errorf("GET of the deleted id: %d database lookups and %d filter rejections, want 0 and 1",
			db.lookups.Load()-lookups, svc.filterRejected.Load()-rejected)
	}
	// A second DELETE is answered by the filter: it must not delete the id's
	// fingerprint again, which could belong to another id.
	status, _, err = send(ctx, ts.Client(), ts.URL, request{http.MethodDelete, id, http.StatusNotFound})
	if err != nil || status != http.StatusNotFound {
		t.Errorf("second DELETE %d: %d, %v; want 404", id, status, err)
	}
	if n := f.Len(); n != users-1 {
		t.Errorf("the filter holds %d ids, want %d", n, users-1)
	}
}

func mustFilter(t *testing.T, ctx context.Context, db *userDB, users int) *lockfree.Filter {
	t.Helper()
	f, err := buildFilter(ctx, db, uint64(users))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
