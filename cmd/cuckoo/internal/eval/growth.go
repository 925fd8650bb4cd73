package eval

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/cuckoohash/cuckoo/filter"
)

// Structure names in GrowthRow and GrowthSummary.
const (
	GrowthScalable   = "Scalable (growing table)"
	GrowthChain2     = "chain (Scalable before), Growth 2"
	GrowthChain4     = "chain (Scalable before), Growth 4"
	GrowthRedisBloom = "RedisBloom model, EXPANSION 2"
	GrowthStatic     = "static, right-sized for n"
)

// growthRate is the target false-positive rate of the filters that take one.
const growthRate = 0.01

// GrowthConfig sizes the growth experiment.
type GrowthConfig struct {
	First, Final int // the growing filters' first capacity; the keys inserted in the end
	Points       int // growth points after the first, evenly spaced on a log scale of keys
	Timed        int // of them, the points where lookups are timed (the first and last among them)
	Absent       int // never-inserted keys looked up at each point for the false-positive rate
	Lookups      int // absent keys a timing pass looks up
	Reps         int // timing passes; the median is reported
	// InsertReps is how many times each structure is built anew and grown
	// from none to Final keys for the insert times, the structures in turn;
	// the median is reported. 0 means 3.
	InsertReps int
	Seed       uint64
}

// GrowthRow is one structure at one number of keys.
type GrowthRow struct {
	Structure   string
	Keys        int
	BitsPerKey  float64 // SizeInBytes·8 / keys
	FPR         float64 // measured on the absent keys
	ExpectedFPR float64 // the structure's own estimate at its current loads
	LookupNs    float64 // median ns per lookup of an absent key; NaN where not timed
	// InsertNs is the median ns per insert of the keys since the previous
	// timed point (from none at the first), in a structure built anew and
	// grown from none; NaN where not timed.
	InsertNs float64
	Stages   int // stages or sub-filters
}

// GrowthSummary is one structure over the whole growth, and the delete
// check after it.
type GrowthSummary struct {
	Structure          string
	BitsAvg            float64 // over the growth points; for the static filter, its value at the final n
	BitsAvgLinear      float64 // over every 1% of the final n instead, as issue 13 measured
	BitsMax            float64 // over the points and right after every growth, from First keys on
	FirstGrowth        int     // keys held when the structure first grew; 0 if it never did
	FPRMax             float64 // over the points measured
	Stages             int     // at the final n
	LookupNs           float64 // at the final n
	VsStatic           float64 // LookupNs / the static filter's
	InsertNs           float64 // median ns per insert from none to the final n, growth included
	InsertVsStatic     float64 // InsertNs / the static filter's
	Kept               int     // keys not deleted
	FalseNegatives     int     // kept keys reported absent after the deletes
	DeleteFailures     int     // deletes of inserted keys that returned false
	StagesAfterDeletes int
}

// GrowthResult is the growth experiment.
type GrowthResult struct {
	Config  GrowthConfig
	Rows    []GrowthRow
	Summary []GrowthSummary
}

// growable is what the experiment asks of a structure.
type growable interface {
	InsertHash(h uint64) error
	ContainsHash(h uint64) bool
	DeleteHash(h uint64) bool
	SizeInBytes() uint64
	FalsePositiveRate() float64
}

// stages returns g's stages, 1 for a structure without any.
func stages(g growable) int {
	if s, ok := g.(interface{ Stages() int }); ok {
		return s.Stages()
	}
	return 1
}

// logPoints returns key counts from first to last evenly spaced on a log
// scale, n steps, distinct and ascending (fewer where rounding merges them).
func logPoints(first, last, n int) []int {
	var out []int
	for i := range n + 1 {
		p := int(math.Round(float64(first) * math.Pow(float64(last)/float64(first), float64(i)/float64(n))))
		if len(out) == 0 || p > out[len(out)-1] {
			out = append(out, p)
		}
	}
	out[len(out)-1] = last
	return out
}

// growthSubject is one structure under test and its running peak.
type growthSubject struct {
	name   string
	g      growable
	static bool      // sized for the final n: measured at the timed points only
	size   uint64    // SizeInBytes after the last insert
	peak   float64   // the highest bits a key right after a growth, from cfg.First keys on
	grew   int       // keys held when it first grew; 0 if it never did
	linear []float64 // bits a key at every 1% of cfg.Final keys, from cfg.First on
}

// Growth inserts the same distinct keys into each structure, from none to
// cfg.Final, and measures it at every growth point (the static filter, whose
// space is fixed, at the timed points only); then deletes every other key
// and looks up the rest.
func Growth(cfg GrowthConfig) (GrowthResult, error) {
	res := GrowthResult{Config: cfg}
	if cfg.First < 1 || cfg.Final <= cfg.First || cfg.Points < 1 || cfg.Timed < 2 || cfg.Absent < 1 || cfg.Lookups < 1 || cfg.Reps < 1 {
		return res, fmt.Errorf("growth: bad sizes %+v", cfg)
	}
	subjects, err := newGrowthSubjects(cfg)
	if err != nil {
		return res, err
	}

	ks := keys(cfg.Final, cfg.Seed)
	absent := keys(cfg.Absent, cfg.Seed+1000)
	lookups := keys(cfg.Lookups, cfg.Seed+1100)
	points := logPoints(cfg.First, cfg.Final, cfg.Points)
	timed := map[int]bool{}
	var marks []int // the keys at the timed points, ascending
	for j := range cfg.Timed {
		pi := int(math.Round(float64(j*(len(points)-1)) / float64(max(cfg.Timed-1, 1))))
		if !timed[pi] {
			marks = append(marks, points[pi])
		}
		timed[pi] = true
	}
	insertNs, insertTotal, err := timeInserts(cfg, ks, marks)
	if err != nil {
		return res, err
	}
	bitsPerKey := func(size uint64, n int) float64 { return float64(size*8) / float64(n) }
	percent := max(cfg.Final/100, 1)

	inserted := 0
	for pi, p := range points {
		for _, s := range subjects {
			for i := inserted; i < p; i++ {
				if err := s.g.InsertHash(ks[i]); err != nil {
					return res, err
				}
				// Space only grows while keys are inserted, so its peak
				// a key is right after a growth: check each one.
				if size := s.g.SizeInBytes(); size != s.size {
					if s.size != 0 && s.grew == 0 {
						s.grew = i
					}
					s.size = size
					if i+1 >= cfg.First {
						s.peak = max(s.peak, bitsPerKey(size, i+1))
					}
				}
				if (i+1)%percent == 0 && i+1 >= cfg.First {
					s.linear = append(s.linear, bitsPerKey(s.size, i+1))
				}
			}
		}
		inserted = p
		var ns map[*growthSubject]float64
		if timed[pi] {
			ns = timeLookups(subjects, lookups, cfg.Reps)
		}
		for si, s := range subjects {
			if s.static && !timed[pi] {
				continue
			}
			hits := 0
			for _, k := range absent {
				if s.g.ContainsHash(k) {
					hits++
				}
			}
			r := GrowthRow{
				Structure:   s.name,
				Keys:        p,
				BitsPerKey:  bitsPerKey(s.size, p),
				FPR:         float64(hits) / float64(len(absent)),
				ExpectedFPR: s.g.FalsePositiveRate(),
				LookupNs:    math.NaN(),
				Stages:      stages(s.g),
			}
			if ns != nil {
				r.LookupNs = ns[s]
			}
			r.InsertNs = math.NaN()
			if i := slices.Index(marks, p); timed[pi] && i >= 0 {
				r.InsertNs = insertNs[si][i]
			}
			res.Rows = append(res.Rows, r)
		}
	}

	for si, s := range subjects {
		sum := s.summarize(res.Rows, ks)
		sum.InsertNs = insertTotal[si]
		res.Summary = append(res.Summary, sum)
	}
	static0 := res.Summary[len(res.Summary)-1]
	for i := range res.Summary {
		res.Summary[i].VsStatic = res.Summary[i].LookupNs / static0.LookupNs
		res.Summary[i].InsertVsStatic = res.Summary[i].InsertNs / static0.InsertNs
	}
	return res, nil
}

// newGrowthSubjects returns the structures of the experiment, empty, the
// static filter last.
func newGrowthSubjects(cfg GrowthConfig) ([]*growthSubject, error) {
	c2, err := newChain(uint64(cfg.First), growthRate, 2, cfg.Seed)
	if err != nil {
		return nil, err
	}
	c4, err := newChain(uint64(cfg.First), growthRate, 4, cfg.Seed)
	if err != nil {
		return nil, err
	}
	static, err := filter.New(filter.Config{Capacity: uint64(cfg.Final), FalsePositiveRate: growthRate, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	grown, err := filter.NewScalable(filter.ScalableConfig{InitialCapacity: uint64(cfg.First), FalsePositiveRate: growthRate, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	return []*growthSubject{
		{name: GrowthScalable, g: grown},
		{name: GrowthChain2, g: c2},
		{name: GrowthChain4, g: c4},
		{name: GrowthRedisBloom, g: newRedisBloom(uint64(cfg.First))},
		{name: GrowthStatic, g: static, static: true},
	}, nil
}

// timeInserts builds the structures anew cfg.InsertReps times, taking them
// in turn so that other work on the machine slows them alike, and inserts
// ks into each with nothing else timed: no size or rate is read between
// inserts. It returns, for each structure (in newGrowthSubjects' order), the
// median ns per insert between consecutive marks (from none to the first
// mark, then from each mark to the next), and the median over all of ks.
func timeInserts(cfg GrowthConfig, ks []uint64, marks []int) (perMark [][]float64, total []float64, err error) {
	reps := cfg.InsertReps
	if reps == 0 {
		reps = 3
	}
	var ns [][][]float64 // [structure][mark][rep]
	var all [][]float64  // [structure][rep]
	for range reps {
		subjects, err := newGrowthSubjects(cfg)
		if err != nil {
			return nil, nil, err
		}
		if ns == nil {
			ns, all = make([][][]float64, len(subjects)), make([][]float64, len(subjects))
			for i := range ns {
				ns[i] = make([][]float64, len(marks))
			}
		}
		for si, s := range subjects {
			runtime.GC() // the last structure's garbage is not this one's cost
			from := 0
			var sum time.Duration
			for mi, m := range marks {
				start := time.Now()
				for _, k := range ks[from:m] {
					if err := s.g.InsertHash(k); err != nil {
						return nil, nil, fmt.Errorf("%s: insert %d: %w", s.name, from, err)
					}
				}
				d := time.Since(start)
				sum += d
				ns[si][mi] = append(ns[si][mi], float64(d.Nanoseconds())/float64(max(m-from, 1)))
				from = m
			}
			all[si] = append(all[si], float64(sum.Nanoseconds())/float64(max(from, 1)))
		}
	}
	median := func(x []float64) float64 {
		x = slices.Clone(x)
		slices.Sort(x)
		return x[len(x)/2]
	}
	perMark, total = make([][]float64, len(ns)), make([]float64, len(ns))
	for si := range ns {
		perMark[si] = make([]float64, len(marks))
		for mi := range marks {
			perMark[si][mi] = median(ns[si][mi])
		}
		total[si] = median(all[si])
	}
	return perMark, total, nil
}

// summarize sums up s's rows, then deletes every other key of ks (all
// inserted) and looks up the rest.
func (s *growthSubject) summarize(rows []GrowthRow, ks []uint64) GrowthSummary {
	sum := GrowthSummary{Structure: s.name, BitsMax: s.peak, FirstGrowth: s.grew}
	var mine []GrowthRow
	for _, r := range rows {
		if r.Structure == s.name {
			mine = append(mine, r)
			sum.FPRMax = max(sum.FPRMax, r.FPR)
		}
	}
	last := mine[len(mine)-1]
	sum.Stages, sum.LookupNs = last.Stages, last.LookupNs
	if s.static {
		// Its space is fixed; a key count is only its load.
		sum.BitsAvg, sum.BitsAvgLinear, sum.BitsMax = last.BitsPerKey, last.BitsPerKey, last.BitsPerKey
	} else {
		for _, r := range mine {
			sum.BitsAvg += r.BitsPerKey / float64(len(mine))
			sum.BitsMax = max(sum.BitsMax, r.BitsPerKey)
		}
		for _, b := range s.linear {
			sum.BitsAvgLinear += b / float64(len(s.linear))
		}
	}
	for i, k := range ks {
		if i%2 == 0 && !s.g.DeleteHash(k) {
			sum.DeleteFailures++
		}
	}
	for i, k := range ks {
		if i%2 == 1 {
			sum.Kept++
			if !s.g.ContainsHash(k) {
				sum.FalseNegatives++
			}
		}
	}
	sum.StagesAfterDeletes = stages(s.g)
	return sum
}

// timeLookups returns each subject's median time per lookup of ks over
// reps passes. The passes take the subjects in turn, so that other work on
// the machine slows them alike; every call goes through the same interface.
func timeLookups(subjects []*growthSubject, ks []uint64, reps int) map[*growthSubject]float64 {
	ns := map[*growthSubject][]float64{}
	for range reps {
		for _, s := range subjects {
			start := time.Now()
			for _, k := range ks {
				s.g.ContainsHash(k)
			}
			ns[s] = append(ns[s], float64(time.Since(start).Nanoseconds())/float64(len(ks)))
		}
	}
	med := map[*growthSubject]float64{}
	for s, t := range ns {
		slices.Sort(t)
		med[s] = t[len(t)/2]
	}
	return med
}
