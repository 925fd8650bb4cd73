package eval

import (
	"fmt"
	"math"

	"github.com/cuckoohash/cuckoo/hashmap"
)

// ProbeLoads are the load factors of the probe experiment; each structure
// also gets a row as close to 1 as it goes (ProbeRow.Max).
var ProbeLoads = []float64{0.10, 0.25, 0.50, 0.75, 0.90, 0.95}

// ProbeRow is the average work of a successful (Hit) and an unsuccessful
// (Miss) lookup in one structure at one load factor.
type ProbeRow struct {
	Structure string
	Load      float64 // measured: keys / slots (keys / heads for chaining)
	Max       bool    // the highest load this structure reached
	// Key comparisons per lookup, the classic measure.
	HitCompares, MissCompares float64
	// Slots (or list nodes) inspected per lookup: for the cuckoo map, the
	// tags compared, which is what it reads before any key.
	HitSlots, MissSlots float64
	// Theory for HitCompares and MissCompares where a closed form exists
	// (NaN where not): Knuth's formulas for chaining and linear probing.
	HitTheory, MissTheory float64
}

// Structure names in ProbeRow.
const (
	StructCuckooMap     = "cuckoo map (hashmap, 2 buckets x 6 slots)"
	StructClassicCuckoo = "classic cuckoo (2 tables x 1 slot)"
	StructChaining      = "separate chaining"
	StructLinear        = "linear probing"
)

// lookuper is what the probe experiment needs of a structure.
type lookuper func(k uint64) (found bool, compares, slots int)

// measureProbes looks up every key of present (all must be found) and of
// absent (none may be) and returns the averages.
func measureProbes(look lookuper, present, absent []uint64) (row ProbeRow, err error) {
	var hc, hs, mc, ms int
	for _, k := range present {
		found, c, s := look(k)
		if !found {
			return row, fmt.Errorf("a present key was not found")
		}
		hc, hs = hc+c, hs+s
	}
	for _, k := range absent {
		found, c, s := look(k)
		if found {
			return row, fmt.Errorf("an absent key was found")
		}
		mc, ms = mc+c, ms+s
	}
	row.HitCompares, row.HitSlots = float64(hc)/float64(len(present)), float64(hs)/float64(len(present))
	row.MissCompares, row.MissSlots = float64(mc)/float64(len(absent)), float64(ms)/float64(len(absent))
	return row, nil
}

// Probes runs the probe experiment on tables of about `slots` slots,
// looking up `lookups` present and `lookups` absent keys at each load.
func Probes(slots, lookups int, seed uint64) ([]ProbeRow, error) {
	var rows []ProbeRow
	add := func(name string, load float64, max bool, look lookuper, present []uint64, hitT, missT float64) error {
		// Present keys in insertion order: early keys sit in shorter
		// chains and probe sequences than late ones, so sample evenly.
		sample := present
		if step := len(present) / lookups; step > 1 {
			sample = make([]uint64, 0, lookups)
			for i := 0; i < len(present); i += step {
				sample = append(sample, present[i])
			}
		}
		r, err := measureProbes(look, sample, keys(lookups, seed+1000))
		if err != nil {
			return fmt.Errorf("%s at load %.2f: %w", name, load, err)
		}
		r.Structure, r.Load, r.Max, r.HitTheory, r.MissTheory = name, load, max, hitT, missT
		rows = append(rows, r)
		return nil
	}
	nan := math.NaN()

	// Chaining: loads up to 1 (and beyond, but the classic table stops there).
	for _, load := range append(ProbeLoads, 1.0) {
		c := newChaining(slots, seed)
		n := int(load * float64(slots))
		ks := keys(n, seed)
		for _, k := range ks {
			c.insert(k)
		}
		a := float64(n) / float64(slots)
		// Knuth: a hit compares 1 + (n-1)/(2m) keys; a miss, a whole list.
		if err := add(StructChaining, a, load == 1, c.lookup, ks, 1+float64(n-1)/(2*float64(slots)), a); err != nil {
			return nil, err
		}
	}

	// Linear probing: a miss needs an empty slot, so the last row is 0.99.
	for _, load := range append(ProbeLoads, 0.99) {
		t := newLinearProbing(slots, seed)
		n := int(load * float64(slots))
		ks := keys(n, seed)
		for _, k := range ks {
			t.insert(k)
		}
		a := float64(n) / float64(slots)
		// Knuth's probes: ½(1 + 1/(1-a)) for a hit, ½(1 + 1/(1-a)²) for a
		// miss, the empty slot that ends a miss included (so compare them
		// with MissSlots, and with MissCompares + 1).
		hitT, missT := (1+1/(1-a))/2, (1+1/((1-a)*(1-a)))/2-1
		if err := add(StructLinear, a, load == 0.99, t.lookup, ks, hitT, missT); err != nil {
			return nil, err
		}
	}

	// Classic cuckoo: its loads above 50% are unreachable; find the highest
	// load it reaches by inserting until the first failure.
	m := slots / 2
	for _, load := range ProbeLoads {
		n := int(load * float64(2*m))
		c := newClassicCuckoo(m, seed)
		ks := keys(n, seed)
		ok := true
		for _, k := range ks {
			if !c.insert(k) {
				ok = false
				break
			}
		}
		if !ok {
			break
		}
		if err := add(StructClassicCuckoo, float64(n)/float64(2*m), false, c.lookup, ks, nan, nan); err != nil {
			return nil, err
		}
	}
	{
		c := newClassicCuckoo(m, seed)
		ks := keys(2*m, seed)
		n := 0
		for _, k := range ks {
			if !c.insert(k) {
				break
			}
			n++
		}
		// The failed insert left one key homeless (not necessarily ks[n]),
		// so rebuild with the n keys that fitted.
		c = newClassicCuckoo(m, seed)
		for _, k := range ks[:n] {
			if !c.insert(k) {
				return nil, fmt.Errorf("classic cuckoo: %d keys fitted once but not again", n)
			}
		}
		if err := add(StructClassicCuckoo, float64(n)/float64(2*m), true, c.lookup, ks[:n], nan, nan); err != nil {
			return nil, err
		}
	}

	// The cuckoo map: a table of an exact size, kept from growing.
	for _, load := range append(ProbeLoads, 0.96, 0.97, 0.98, 0.99, 1.0) {
		hm := hashmap.New[uint64, struct{}](hashmap.WithCapacity(slots), hashmap.WithMaxLoad(1))
		st := hm.Stats()
		n := int(load * float64(st.Slots))
		ks := keys(n, seed)
		for _, k := range ks {
			hm.Store(k, struct{}{})
		}
		after := hm.Stats()
		if after.Buckets != st.Buckets || after.Stashed > 0 {
			break // a displacement search failed: this load is out of reach
		}
		look := func(k uint64) (bool, int, int) {
			_, ok, p := hm.LoadProbe(k)
			return ok, p.Keys, p.Slots
		}
		if err := add(StructCuckooMap, after.Load, false, look, ks, nan, nan); err != nil {
			return nil, err
		}
	}
	markMax(rows, StructCuckooMap)
	return rows, nil
}

// markMax marks the last row of structure name as its highest load.
func markMax(rows []ProbeRow, name string) {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Structure == name {
			rows[i].Max = true
			return
		}
	}
}
