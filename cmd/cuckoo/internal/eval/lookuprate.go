package eval

import (
	"fmt"
	"time"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/hashmap"
)

// RateLoads are the load factors of the lookup-rate experiment.
var RateLoads = []float64{0.50, 0.60, 0.70, 0.80, 0.85, 0.90, 0.95}

// RateRow is the time of a lookup in one structure at one load factor.
type RateRow struct {
	Structure string
	Load      float64 // keys / slots (for the builtin map: of the cuckoo map at this row, for comparison)
	Keys      int
	Bytes     uint64  // the structure's size where it is known, 0 otherwise
	HitNs     float64 // per successful lookup
	MissNs    float64 // per unsuccessful lookup
}

// Structure names in RateRow.
const (
	RateCuckooMap = "cuckoo map (hashmap)"
	RateGoMap     = "Go map"
	RateFilter    = "cuckoo filter (filter, b=4 f=12)"
)

// LookupRates times lookups at each load factor in a cuckoo map of `slots`
// slots, a builtin map holding the same keys, and a cuckoo filter of about
// the same number of slots. Each timing is the best of reps passes over
// `lookups` keys in random order: the best, because other processes only
// ever add time.
func LookupRates(slots, lookups, reps int, seed uint64) ([]RateRow, error) {
	var rows []RateRow
	miss := keys(lookups, seed+700)
	// timed returns the best time per lookup over reps passes, and how
	// many keys the last pass found.
	timed := func(look func(k uint64) bool, ks []uint64) (float64, int) {
		best, found := time.Duration(1<<62), 0
		for range reps {
			found = 0
			start := time.Now()
			for _, k := range ks {
				if look(k) {
					found++
				}
			}
			best = min(best, time.Since(start))
		}
		return float64(best.Nanoseconds()) / float64(len(ks)), found
	}
	sample := func(present []uint64) []uint64 {
		out := make([]uint64, lookups)
		for i := range out {
			out[i] = present[mix(seed^uint64(i))%uint64(len(present))]
		}
		return out
	}
	// measure times hits and misses; hits must all be found, and misses
	// none unless the structure may answer falsely (a filter).
	measure := func(r RateRow, look func(k uint64) bool, present []uint64, exact bool) (RateRow, error) {
		var found int
		r.HitNs, found = timed(look, sample(present))
		if found != lookups {
			return r, fmt.Errorf("%s at load %.2f: %d of %d present keys found", r.Structure, r.Load, found, lookups)
		}
		r.MissNs, found = timed(look, miss)
		if exact && found != 0 {
			return r, fmt.Errorf("%s at load %.2f: %d absent keys found", r.Structure, r.Load, found)
		}
		return r, nil
	}
	for _, load := range RateLoads {
		hm := hashmap.New[uint64, uint64](hashmap.WithCapacity(slots), hashmap.WithMaxLoad(1))
		n := int(load * float64(hm.Stats().Slots))
		ks := keys(n, seed)
		for _, k := range ks {
			hm.Store(k, k)
		}
		r, err := measure(RateRow{Structure: RateCuckooMap, Load: hm.Stats().Load, Keys: n},
			func(k uint64) bool { _, ok := hm.Load(k); return ok }, ks, true)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
		hm = nil

		gm := make(map[uint64]uint64)
		for _, k := range ks {
			gm[k] = k
		}
		r, err = measure(RateRow{Structure: RateGoMap, Load: load, Keys: n},
			func(k uint64) bool { _, ok := gm[k]; return ok }, ks, true)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
		gm = nil

		f, err := filter.New(filter.Config{Capacity: uint64(slots) * 95 / 100, BucketSize: 4, FingerprintBits: 12, Seed: seed})
		if err != nil {
			return nil, err
		}
		fks := keys(int(load*float64(f.Buckets()*4)), seed)
		for _, k := range fks {
			if err := f.InsertHash(k); err != nil {
				return nil, err
			}
		}
		r, err = measure(RateRow{Structure: RateFilter, Load: f.LoadFactor(), Keys: len(fks), Bytes: f.SizeInBytes()},
			f.ContainsHash, fks, false)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}
