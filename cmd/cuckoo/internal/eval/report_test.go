package eval

import (
	"math"
	"strings"
	"testing"
)

func TestWriteSections(t *testing.T) {
	var b strings.Builder
	WriteProbes(&b, []ProbeRow{{Structure: StructChaining, Load: 0.5, HitCompares: 1.25, HitTheory: 1.25, MissCompares: 0.5, MissTheory: 0.5, HitSlots: 1.25, MissSlots: 1.5, Max: true},
		{Structure: StructCuckooMap, Load: 0.5, HitTheory: math.NaN(), MissTheory: math.NaN()}}, 100, 10)
	WriteFPR(&b, []FPRRow{{BucketSize: 4, FingerprintBits: 12, Load: 0.95, BitsPerItem: 12.6, Measured: 0.0018, Expected: 0.0018, Bound: 0.00195}}, 100)
	WriteMaxLoad(&b, []MaxLoadRow{{Impl: ImplRandomWalk, BucketSize: 4, MaxKicks: 500, Load: 0.95, MinLoad: 0.94, Seeds: 3}}, 100)
	WriteInsertRates(&b, []InsertRateRow{{FromLoad: 0, ToLoad: 0.05, NsPerInsert: 20}}, 100)
	WriteLookupRates(&b, "in cache", []RateRow{{Structure: RateGoMap, Load: 0.5, Keys: 10, HitNs: 5, MissNs: 6}})
	WriteDeletes(&b, DeleteResult{N: 10, Deleted: 5})
	WriteGrowth(&b, GrowthResult{
		Config: GrowthConfig{First: 1000, Final: 1000000, Points: 200, Timed: 10, Absent: 100000, Lookups: 100000, Reps: 5},
		Rows:   []GrowthRow{{Structure: GrowthStatic, Keys: 1000000, BitsPerKey: 10.54, FPR: 0.00726, LookupNs: 17, InsertNs: 40, Stages: 1}},
		Summary: []GrowthSummary{{Structure: GrowthStatic, BitsAvg: 10.54, BitsAvgLinear: 10.54, BitsMax: 10.54, FPRMax: 0.00726,
			Stages: 1, LookupNs: 17, VsStatic: 1, InsertNs: 40, InsertVsStatic: 1, Kept: 500000}},
	})
	out := b.String()
	for _, want := range []string{
		"| separate chaining | 0.500 (max) | 1.250 | 1.250 | 0.500 | 0.500 | 1.25 | 1.50 |",
		"| cuckoo map (hashmap, 2 buckets x 6 slots) | 0.500 | 0.000 | – |",
		"| 4 | 12 | 0.950 | 12.60 | 0.18% | 0.18% | 0.195% | 0.92 |",
		"| random walk (reference) | 4 | 500 | 0.9500 | 0.9400 | 3 |",
		"| 0.00–0.05 | 20.0 |",
		"| Go map | 0.500 | 10 | 5.0 | 6.0 |",
		"| kept keys not found (false negatives) | 0 |",
		"| static, right-sized for n | 10.54 | 10.54 | 10.54 | 0.726% | 1 | 17.0 | 1.00× | 40.0 | 1.00× | 0 of 500000 | 0 |",
		"| static, right-sized for n | 17.0 |",
		"| static, right-sized for n | 40.0 |",
		"(each 3.5% more keys than the last)",
		"±20% at 6.3 standard deviations",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestThisMachine(t *testing.T) {
	m := ThisMachine()
	if m.CPUs < 1 || m.GOMAXPROCS < 1 || !strings.HasPrefix(m.Go, "go") || m.CPU == "" {
		t.Errorf("%+v", m)
	}
	if s := m.String(); !strings.Contains(s, "GOMAXPROCS=") {
		t.Errorf("%q", s)
	}
}
