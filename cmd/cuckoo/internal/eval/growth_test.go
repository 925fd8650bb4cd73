package eval

import (
	"math"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
)

// smallGrowth is a 200x growth that runs in a fraction of a second, and
// in about two under the race detector with fewer absent keys.
func smallGrowth() GrowthConfig {
	cfg := GrowthConfig{First: 100, Final: 20000, Points: 100, Timed: 5, Absent: 20000, Lookups: 2000, Reps: 3, Seed: 7}
	if testing.Short() || raceEnabled {
		cfg.Absent = 5000
	}
	return cfg
}

func TestGrowth(t *testing.T) {
	cfg := smallGrowth()
	res, err := Growth(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]GrowthSummary{}
	for _, s := range res.Summary {
		t.Logf("%+v", s)
		sums[s.Structure] = s
	}

	t.Run("rows=cover-the-growth", func(t *testing.T) {
		// Every growing structure is measured at each point, no step more
		// than the log spacing (plus rounding) from the last.
		step := math.Pow(float64(cfg.Final)/float64(cfg.First), 1/float64(cfg.Points))
		points := logPoints(cfg.First, cfg.Final, cfg.Points)
		for _, name := range []string{GrowthScalable, GrowthChain2, GrowthChain4, GrowthRedisBloom} {
			var keys []int
			for _, r := range res.Rows {
				if r.Structure == name {
					keys = append(keys, r.Keys)
				}
			}
			if len(keys) != len(points) || keys[0] != cfg.First || keys[len(keys)-1] != cfg.Final {
				t.Fatalf("%s: %d rows from %d to %d, want %d from %d to %d", name, len(keys), keys[0], keys[len(keys)-1], len(points), cfg.First, cfg.Final)
			}
			for i := 1; i < len(keys); i++ {
				if float64(keys[i]) > float64(keys[i-1])*step+1 {
					t.Errorf("%s: %d keys after %d", name, keys[i], keys[i-1])
				}
			}
		}
		timed := 0
		for _, r := range res.Rows {
			if !math.IsNaN(r.LookupNs) {
				timed++
				if !(r.LookupNs > 0) {
					t.Errorf("%s at %d keys: %v ns", r.Structure, r.Keys, r.LookupNs)
				}
			}
		}
		if timed != 5*cfg.Timed {
			t.Errorf("%d timed rows, want %d", timed, 5*cfg.Timed)
		}
	})

	t.Run("inserts=timed-for-every-structure", func(t *testing.T) {
		// Every structure has an insert time over the whole growth, a
		// ratio to the static filter's, and one at every timed point.
		for _, s := range res.Summary {
			if !(s.InsertNs > 0) || !(s.InsertVsStatic > 0) {
				t.Errorf("%s: %v ns an insert, %v× the static filter", s.Structure, s.InsertNs, s.InsertVsStatic)
			}
		}
		if r := sums[GrowthStatic].InsertVsStatic; r != 1 {
			t.Errorf("the static filter's inserts are %v× its own", r)
		}
		timed := map[string]int{}
		for _, r := range res.Rows {
			if !math.IsNaN(r.InsertNs) {
				timed[r.Structure]++
				if !(r.InsertNs > 0) || math.IsNaN(r.LookupNs) {
					t.Errorf("%s at %d keys: %v ns an insert, %v a lookup", r.Structure, r.Keys, r.InsertNs, r.LookupNs)
				}
			}
		}
		for _, s := range res.Summary {
			if timed[s.Structure] != cfg.Timed {
				t.Errorf("%s: insert times at %d points, want %d", s.Structure, timed[s.Structure], cfg.Timed)
			}
		}
	})

	t.Run("structure=static/bits", func(t *testing.T) {
		// ε = 1% gives ranked buckets of 4 fingerprints of 896 values (Q =
		// 28, L = 5) in 35 bits, at the design load 0.96 less a small-table
		// margin: 35/3.84 = 9.11 bits a key for 10^6 keys, a little more for
		// 2·10^4. The measured space adds only the Filter's header to the
		// table's bits.
		l, err := filter.Config{Capacity: uint64(cfg.Final), FalsePositiveRate: growthRate}.Layout()
		if err != nil {
			t.Fatal(err)
		}
		table := float64(8*l.TableBytes()) / float64(cfg.Final)
		got := sums[GrowthStatic].BitsAvg
		t.Logf("f=%d, %d buckets: table %.3f bits a key, measured %.3f", l.FingerprintBits, l.Buckets, table, got)
		if l.FingerprintRange != 28<<5 || l.Packing != filter.PackingRanked || got < table || got > table*1.02 || got > 13 {
			t.Errorf("static filter: %.3f bits a key, its table %.3f (f=%d)", got, table, l.FingerprintBits)
		}
	})

	t.Run("structure=chain/bits", func(t *testing.T) {
		// Issue 13 measured 26.6 bits a key averaged over a 1000x growth
		// (Growth 4: 32.8): each new stage is allocated empty and one bit
		// wider. 20 leaves room for the shorter growth here.
		for _, name := range []string{GrowthChain2, GrowthChain4} {
			if s := sums[name]; s.BitsAvg <= 20 || s.BitsMax <= s.BitsAvg {
				t.Errorf("%s: %.2f bits a key on average, %.2f at most", name, s.BitsAvg, s.BitsMax)
			}
		}
	})

	t.Run("structure=redisbloom/fpr", func(t *testing.T) {
		// Each sub-filter adds at most 2b/255 (1.57%), its rate when full.
		// At the loads measured, the expected rate is 1 - Π (1 - load_k/255)^(2b)
		// over sub-filters k: the measurement is within 4 standard
		// deviations or 10% of it wherever 50 false positives are expected.
		for _, r := range res.Rows {
			if r.Structure != GrowthRedisBloom {
				continue
			}
			bound := float64(r.Stages) * 2 * rbBucketSize / 255
			want := r.ExpectedFPR * float64(cfg.Absent)
			got := r.FPR * float64(cfg.Absent)
			if r.FPR > bound || (want >= 50 && math.Abs(got-want) > max(4*math.Sqrt(want), 0.1*want)) {
				t.Errorf("%d keys, %d sub-filters: rate %.5f, expected %.5f, bound %.5f", r.Keys, r.Stages, r.FPR, r.ExpectedFPR, bound)
			}
		}
	})

	t.Run("structure=scalable/bits", func(t *testing.T) {
		// Issue 13's target, for 1000x growth from 1000 keys: at most 16
		// bits a key averaged over every 1% of the growth. This growth is
		// shorter and from 100 keys, where the fixed costs weigh more:
		// allow 17.5. The eval's full run reports the real figure.
		s := sums[GrowthScalable]
		if s.BitsAvgLinear > 17.5 || s.BitsMax <= s.BitsAvgLinear {
			t.Errorf("%s: %.2f bits a key on average, %.2f at most", s.Structure, s.BitsAvgLinear, s.BitsMax)
		}
	})

	t.Run("structure=chain/fpr", func(t *testing.T) {
		// The chain and the growing table keep their rate below ε: allow
		// 4 standard deviations above it.
		for _, name := range []string{GrowthScalable, GrowthChain2, GrowthChain4} {
			if s := sums[name]; s.FPRMax > growthRate+4*math.Sqrt(growthRate/float64(cfg.Absent)) {
				t.Errorf("%s: rate up to %.5f", name, s.FPRMax)
			}
		}
	})

	t.Run("deletes=half", func(t *testing.T) {
		// The growing table, the RedisBloom model and the static filter
		// lose no kept key; the chain may (issue 13), which the report
		// shows and this test logs.
		for _, name := range []string{GrowthScalable, GrowthRedisBloom, GrowthStatic} {
			if s := sums[name]; s.FalseNegatives != 0 || s.DeleteFailures != 0 || s.Kept != cfg.Final/2 {
				t.Errorf("%s: %d of %d kept keys lost, %d deletes failed", name, s.FalseNegatives, s.Kept, s.DeleteFailures)
			}
		}
		for _, name := range []string{GrowthChain2, GrowthChain4} {
			s := sums[name]
			t.Logf("%s: %d of %d kept keys lost, %d deletes failed", name, s.FalseNegatives, s.Kept, s.DeleteFailures)
		}
	})
}

func TestLogPoints(t *testing.T) {
	for _, c := range []struct{ first, last, n, want int }{
		{1000, 1000000, 200, 201},
		{100, 20000, 100, 101},
		{1, 10, 100, 10}, // rounding merges points
	} {
		p := logPoints(c.first, c.last, c.n)
		if len(p) != c.want || p[0] != c.first || p[len(p)-1] != c.last {
			t.Errorf("logPoints(%d, %d, %d): %d points from %d to %d", c.first, c.last, c.n, len(p), p[0], p[len(p)-1])
		}
		for i := 1; i < len(p); i++ {
			if p[i] <= p[i-1] {
				t.Errorf("logPoints(%d, %d, %d): %d after %d", c.first, c.last, c.n, p[i], p[i-1])
			}
		}
	}
}
