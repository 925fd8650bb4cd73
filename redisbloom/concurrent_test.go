package redisbloom_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
)

// TestLookupsNeverMissKeptItems runs lookups of kept items against a
// writer whose adds walk (kicks and rollbacks), grow the filter, and whose
// deletes compact it: a lookup must never answer "absent" for an item
// added before it began and not deleted, nor count fewer copies than it has.
// Kept and churned items have disjoint fingerprints, so that no delete of a
// churned item can take a kept item's only copy (a cuckoo filter's hazard,
// not a race).
func TestLookupsNeverMissKeptItems(t *testing.T) {
	f, err := redisbloom.New(redisbloom.Params{Capacity: 64, BucketSize: 2, MaxIterations: 50, Expansion: 2})
	if err != nil {
		t.Fatal(err)
	}
	keptFP := func(it []byte) bool { return redisbloom.Hash(it)%255 < 100 }
	var kept [][]byte
	for i := 0; len(kept) < 100; i++ {
		if it := fmt.Appendf(nil, "kept:%d", i); keptFP(it) {
			kept = append(kept, it)
			if err := f.Add(it); err != nil {
				t.Fatal(err)
			}
		}
	}
	rounds := 600
	if testing.Short() {
		rounds = 50
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				it := kept[(i+r)%len(kept)]
				if !f.Contains(it) {
					t.Errorf("%s reported absent", it)
					return
				}
				if f.Count(it) < 1 {
					t.Errorf("%s counted 0 times", it)
					return
				}
			}
		}()
	}
	for round := range rounds {
		var churn [][]byte
		for i := 0; len(churn) < 400; i++ {
			if it := fmt.Appendf(nil, "churn:%d:%d", round, i); !keptFP(it) {
				churn = append(churn, it)
				if err := f.Add(it); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, it := range churn {
			f.Delete(it)
		}
		if round%4 == 3 {
			f.Compact()
		}
	}
	stop.Store(true)
	wg.Wait()
	for _, it := range kept {
		if !f.Contains(it) {
			t.Fatalf("%s lost", it)
		}
	}
	if info := f.Info(); info.Filters < 2 {
		t.Errorf("the filter never grew (%d sub-filters): the test did not exercise growth", info.Filters)
	}
}
