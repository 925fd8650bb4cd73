package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"
)

func testConfig() config {
	return config{
		Stable:    20_000,
		Removable: 2_000,
		Added:     2_000,
		Clean:     50_000,
		Checkers:  4,
		Batch:     16,
		Seed:      1,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// poissonRange is the range a count of mean lambda falls outside of with
// probability below about 1e-6: lambda ± (5·sqrt(lambda) + 5).
func poissonRange(lambda float64) (lo, hi int) {
	d := 5*math.Sqrt(lambda) + 5
	return int(math.Max(0, lambda-d)), int(lambda + d)
}

func TestRun(t *testing.T) {
	cfg := testConfig()
	var out bytes.Buffer
	rep, err := run(context.Background(), cfg, &out)
	t.Logf("\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Checks

	// The checkers ran alongside the churn, and judged items of every kind.
	if c.calls < int64(cfg.Checkers) || c.listed == 0 || c.removed == 0 || c.unlisted == 0 {
		t.Errorf("checks: %+v; want every checker to look up, and listed, removed and unlisted items judged", c)
	}
	if rep.Churned != cfg.Added+cfg.Removable {
		t.Errorf("churned %d entries, want %d", rep.Churned, cfg.Added+cfg.Removable)
	}
	// No false negatives, ever: an entry in the list throughout a lookup is
	// reported blocked, while the list changes and afterwards.
	if c.listedMissed != 0 {
		t.Errorf("%d of %d lookups of listed entries answered absent while the list changed; first: %s", c.listedMissed, c.listed, c.firstMiss)
	}
	if rep.ListedBlocked != rep.Listed || rep.Listed != cfg.Stable+cfg.Added {
		t.Errorf("afterwards %d of %d listed entries blocked, want all %d", rep.ListedBlocked, rep.Listed, cfg.Stable+cfg.Added)
	}

	// The list is one filter of the shape assumed for the expected rate.
	in := rep.Info
	if in.NumFilters != 1 || in.BucketSize != bucketSize || in.NumItemsInserted != int64(cfg.Stable+cfg.Added) || in.NumItemsDeleted != int64(cfg.Removable) {
		t.Errorf("CF.INFO %+v: want 1 filter, bucket size %d, %d items, %d deleted", in, bucketSize, cfg.Stable+cfg.Added, cfg.Removable)
	}
	if rep.ExpectedFPR <= 0 || rep.ExpectedFPR > 2*bucketSize/float64(entryMatchOneIn) {
		t.Errorf("expected rate %g: want (0, 2b/((2^6-1)·2^5)]", rep.ExpectedFPR)
	}
	// Removed entries and names never listed are blocked only by false
	// positives, a binomial count of the filter's rate. The removed ones are
	// few, so only their upper bound means something.
	if _, hi := poissonRange(rep.ExpectedFPR * float64(rep.Removed)); rep.RemovedBlocked > hi {
		t.Errorf("%d of %d removed entries still blocked, above %d for a rate of %.4f", rep.RemovedBlocked, rep.Removed, hi, rep.ExpectedFPR)
	}
	if lo, hi := poissonRange(rep.ExpectedFPR * float64(rep.Clean)); rep.CleanBlocked < lo || rep.CleanBlocked > hi {
		t.Errorf("%d of %d names never listed blocked, outside [%d, %d] for a rate of %.4f", rep.CleanBlocked, rep.Clean, lo, hi, rep.ExpectedFPR)
	}
	// During the churn the same names are looked up again and again, the
	// first removed most often, so the counts are not independent trials: a
	// few false positives among the 2000 removed entries can weigh a lot.
	// Only a loose bound, 5%: it takes some twenty-five false positives among
	// them (λ = 3.4) to exceed it, and a CF.DEL that removed nothing
	// would make it about 100%.
	const loose = 0.05
	for _, k := range []struct {
		what       string
		blocked, n int64
	}{{"removed", c.removedBlocked, c.removed}, {"unlisted", c.unlistedBlocked, c.unlisted}} {
		if r := float64(k.blocked) / float64(k.n); r > loose {
			t.Errorf("during the churn %d of %d %s items blocked (%.3f%%), above %.0f%%", k.blocked, k.n, k.what, 100*r, 100*loose)
		}
	}
	if !strings.Contains(out.String(), "shut down cleanly") {
		t.Errorf("the report does not say the server shut down:\n%s", out.String())
	}
}

// TestDomainsDistinct checks that the groups' names are distinct, which the
// judging of every answer relies on.
func TestDomainsDistinct(t *testing.T) {
	const n = 200_000
	seen := make(map[string]int, n)
	for i := range n {
		d := domain(i)
		if j, ok := seen[d]; ok {
			t.Fatalf("domain(%d) = domain(%d) = %s", i, j, d)
		}
		seen[d] = i
	}
}
