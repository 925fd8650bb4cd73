package eval

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/FastFilter/xorfilter"
	"github.com/bits-and-blooms/bloom/v3"
	"github.com/cuckoohash/cuckoo/filter"
)

// The space experiment reproduces the paper's figure of bits a key against
// the false-positive rate: for each target rate ε, each structure is built
// for n keys and ε as its own package sizes it, filled, and measured (bits
// a key from its actual size, the rate over keys never inserted). Beside
// the measured targets, a fine grid of rates gives the sizes alone (no
// filling), from which the crossings with Bloom are found.

// Structures of the space experiment.
const (
	SpacePlain = "cuckoo, plain buckets"
	SpaceSemi  = "cuckoo, semi-sorted buckets"
	SpaceBloom = "Bloom (bits-and-blooms/bloom/v3)"
	SpaceFuse  = "binary fuse (FastFilter/xorfilter, static)"
	// SpaceNew is the smaller of the two cuckoo tables, what filter.New
	// builds when the packing is left to it: in the grid only.
	SpaceNew = "cuckoo, filter.New's choice"
)

// SpaceStructures are the structures, in the order of the report's columns.
var SpaceStructures = []string{SpacePlain, SpaceSemi, SpaceBloom, SpaceFuse}

// SpaceTargets are the rates the experiment builds and measures.
var SpaceTargets = []float64{0.03, 0.02, 0.01, 0.005, 0.001, 0.0001}

// SpaceRow is one structure built for one target rate.
type SpaceRow struct {
	Target      float64
	Structure   string
	Layout      string  // "b=4 f=10 load=0.95", "k=7", "8-bit"; "" if none meets the rate
	BitsPerItem float64 // its size in bits over n; NaN if none
	Measured    float64 // share of absent keys found
	Absent      int
}

// SpacePoint is a structure's size for one rate of the grid, computed from
// the layout its package would build.
type SpacePoint struct {
	Rate        float64
	Structure   string
	BitsPerItem float64 // NaN if it has no layout for the rate
}

// Space builds and measures every structure at every target, then sizes
// them on a grid of gridPerDecade rates a decade from 5% to 10^-5.
func Space(n, absent, gridPerDecade int, seed uint64) ([]SpaceRow, []SpacePoint, error) {
	if n <= 0 || absent <= 0 || gridPerDecade <= 0 {
		return nil, nil, fmt.Errorf("space: %d keys, %d absent, %d rates a decade: each must be positive", n, absent, gridPerDecade)
	}
	present := keys(n, seed)
	probe := keys(absent, seed+500)
	fuse := map[int]float64{} // bits a key of the fuse filter of each width, measured
	var rows []SpaceRow
	for _, eps := range SpaceTargets {
		for _, s := range SpaceStructures {
			row := SpaceRow{Target: eps, Structure: s, BitsPerItem: math.NaN(), Absent: absent}
			var contains func(uint64) bool
			switch s {
			case SpacePlain, SpaceSemi:
				f, err := filter.New(cuckooConfig(s, uint64(n), eps, seed))
				if err != nil {
					rows = append(rows, row) // no semi-sorted layout meets the rate
					continue
				}
				for _, k := range present {
					if err := f.InsertHash(k); err != nil {
						return nil, nil, fmt.Errorf("%s at %g: %w", s, eps, err)
					}
				}
				row.Layout = fmt.Sprintf("b=%d f=%d load=%.3f", f.BucketSize(), f.FingerprintBits(), f.LoadFactor())
				row.BitsPerItem = float64(8*f.SizeInBytes()) / float64(n)
				contains = f.ContainsHash
			case SpaceBloom:
				bf := bloom.NewWithEstimates(uint(n), eps)
				var buf [8]byte
				for _, k := range present {
					bf.Add(bloomKey(&buf, k))
				}
				row.Layout = fmt.Sprintf("k=%d", bf.K())
				row.BitsPerItem = float64(bf.Cap()) / float64(n)
				contains = func(k uint64) bool { return bf.Test(bloomKey(&buf, k)) }
			case SpaceFuse:
				bits := fuseBits(eps)
				var err error
				contains, row.BitsPerItem, err = buildFuse(bits, present)
				if err != nil {
					return nil, nil, err
				}
				row.Layout = fmt.Sprintf("%d-bit", bits)
				fuse[bits] = row.BitsPerItem
			}
			for _, k := range present {
				if !contains(k) {
					return nil, nil, fmt.Errorf("%s at %g: a present key was not found", s, eps)
				}
			}
			hits := 0
			for _, k := range probe {
				if contains(k) {
					hits++
				}
			}
			row.Measured = float64(hits) / float64(absent)
			rows = append(rows, row)
		}
	}
	var grid []SpacePoint
	for i := 0; ; i++ {
		eps := 0.05 * math.Pow(10, -float64(i)/float64(gridPerDecade))
		if eps < 1e-5 {
			break
		}
		for _, s := range SpaceStructures {
			p := SpacePoint{Rate: eps, Structure: s, BitsPerItem: math.NaN()}
			switch s {
			case SpacePlain, SpaceSemi:
				if l, err := cuckooConfig(s, uint64(n), eps, seed).Layout(); err == nil {
					p.BitsPerItem = float64(8*l.TableBytes()) / float64(n)
				}
			case SpaceBloom:
				m, _ := bloom.EstimateParameters(uint(n), eps)
				p.BitsPerItem = float64(m) / float64(n)
			case SpaceFuse:
				bits := fuseBits(eps)
				if _, ok := fuse[bits]; !ok {
					_, b, err := buildFuse(bits, present)
					if err != nil {
						return nil, nil, err
					}
					fuse[bits] = b
				}
				p.BitsPerItem = fuse[bits]
			}
			grid = append(grid, p)
		}
	}
	// Where the semi-sorted table takes more than plain buckets (its
	// fingerprints end at 16 bits, and below that rate only an ever emptier
	// table meets it), New takes the plain one: the line stops there.
	for i, n := 0, len(grid); i < n; i++ {
		if grid[i].Structure != SpaceSemi {
			continue
		}
		plain, semi := grid[i-1], &grid[i] // SpaceStructures puts plain first
		choice := SpacePoint{Rate: semi.Rate, Structure: SpaceNew, BitsPerItem: plain.BitsPerItem}
		if semi.BitsPerItem > plain.BitsPerItem {
			semi.BitsPerItem = math.NaN()
		} else if !math.IsNaN(semi.BitsPerItem) {
			choice.BitsPerItem = semi.BitsPerItem
		}
		grid = append(grid, choice)
	}
	return rows, grid, nil
}

// cuckooConfig is the Config of a cuckoo filter of the given packing for n
// keys at rate eps: New chooses the rest.
func cuckooConfig(s string, n uint64, eps float64, seed uint64) filter.Config {
	packing := filter.PackingPlain
	if s == SpaceSemi {
		packing = filter.PackingSemiSorted
	}
	return filter.Config{Capacity: n, FalsePositiveRate: eps, Packing: packing, Seed: seed}
}

// fuseBits is the narrowest fingerprint of a binary fuse filter, 8, 16 or
// 32 bits, whose rate 2^-bits meets eps.
func fuseBits(eps float64) int {
	for _, bits := range []int{8, 16} {
		if math.Exp2(-float64(bits)) <= eps {
			return bits
		}
	}
	return 32
}

// buildFuse builds a binary fuse filter of the keys with fingerprints of
// the given width, returning its lookup and its bits a key.
func buildFuse(bits int, present []uint64) (func(uint64) bool, float64, error) {
	n := float64(len(present))
	switch bits {
	case 8:
		f, err := xorfilter.NewBinaryFuse[uint8](present)
		if err != nil {
			return nil, 0, fmt.Errorf("BinaryFuse8: %w", err)
		}
		return f.Contains, float64(8*len(f.Fingerprints)) / n, nil
	case 16:
		f, err := xorfilter.NewBinaryFuse[uint16](present)
		if err != nil {
			return nil, 0, fmt.Errorf("BinaryFuse16: %w", err)
		}
		return f.Contains, float64(16*len(f.Fingerprints)) / n, nil
	}
	f, err := xorfilter.NewBinaryFuse[uint32](present)
	if err != nil {
		return nil, 0, fmt.Errorf("BinaryFuse32: %w", err)
	}
	return f.Contains, float64(32*len(f.Fingerprints)) / n, nil
}

// SpaceRange is a range of rates, Low < ε <= High, of the grid.
type SpaceRange struct{ Low, High float64 }

// BelowBloom returns the ranges of the grid's rates at which structure s
// takes fewer bits a key than the Bloom filter, from the highest rate down;
// a range reaching the grid's lowest rate has Low 0.
func BelowBloom(grid []SpacePoint, s string) []SpaceRange {
	bloomAt := map[float64]float64{}
	for _, p := range grid {
		if p.Structure == SpaceBloom {
			bloomAt[p.Rate] = p.BitsPerItem
		}
	}
	var out []SpaceRange
	open := false
	prev := math.NaN()
	for _, p := range grid {
		if p.Structure != s {
			continue
		}
		below := p.BitsPerItem < bloomAt[p.Rate] // false for NaN
		switch {
		case below && !open:
			out = append(out, SpaceRange{High: p.Rate})
			open = true
		case !below && open:
			out[len(out)-1].Low = prev
			open = false
		}
		prev = p.Rate
	}
	return out
}

// WriteSpace renders the space experiment.
func WriteSpace(w io.Writer, rows []SpaceRow, grid []SpacePoint, n int) {
	fmt.Fprintf(w, "## Bits per key vs false-positive rate\n\n")
	fmt.Fprintf(w, "The paper's space figure, measured: each structure built for %d keys and the target rate as its own package sizes it "+
		"(the cuckoo filters by `filter.New` with the packing fixed, the Bloom filter by `bloom.NewWithEstimates`, "+
		"the binary fuse filter of the narrowest fingerprint that meets the rate), filled, "+
		"and its rate measured on %d keys never inserted. Bits a key count the whole structure.\n\n", n, rows[0].Absent)
	fmt.Fprint(w, "| target ε |")
	for _, s := range SpaceStructures {
		fmt.Fprintf(w, " %s: bits/key | measured | layout |", s)
	}
	fmt.Fprint(w, "\n|--:|")
	fmt.Fprint(w, strings.Repeat("--:|--:|---|", len(SpaceStructures)))
	fmt.Fprintln(w)
	for i := 0; i < len(rows); i += len(SpaceStructures) {
		fmt.Fprintf(w, "| %g%% |", 100*rows[i].Target)
		for _, r := range rows[i : i+len(SpaceStructures)] {
			if math.IsNaN(r.BitsPerItem) {
				fmt.Fprint(w, " - | - | none |")
				continue
			}
			fmt.Fprintf(w, " %.2f | %.3g%% | %s |", r.BitsPerItem, 100*r.Measured, r.Layout)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Where each is smaller than the Bloom filter, over a grid of rates from 5% to 10^-5 (sizes computed from the layouts):")
	fmt.Fprintln(w)
	for _, s := range []string{SpacePlain, SpaceSemi, SpaceNew, SpaceFuse} {
		var parts []string
		for _, r := range BelowBloom(grid, s) {
			switch r.Low {
			case 0:
				parts = append(parts, fmt.Sprintf("at every rate up to %.3g%%", 100*r.High))
			case r.High:
				parts = append(parts, fmt.Sprintf("at %.3g%%", 100*r.High))
			default:
				parts = append(parts, fmt.Sprintf("from %.3g%% to %.3g%%", 100*r.Low, 100*r.High))
			}
		}
		if len(parts) == 0 {
			parts = []string{"nowhere"}
		}
		fmt.Fprintf(w, "- %s: %s.\n", s, strings.Join(parts, "; "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "`filter.New` with the packing left to it builds the smaller of the two cuckoo tables: semi-sorted down to about 10^-4, "+
		"where its fingerprints reach 16 bits (four decoded fingerprints must fit one 64-bit word), plain below.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Why the crossings are where they are: a cuckoo filter's fingerprint has a whole number of bits, "+
		"f = log2(2b·load/ε) rounded up, so its space rises in steps of a bit a key (1/0.95 of a bit) where a Bloom filter's, "+
		"1.44·log2(1/ε), rises smoothly. Semi-sorting saves one bit a key (12-bit codes for the four 4-bit top parts of a bucket). "+
		"With a real-valued width the semi-sorted filter would cross Bloom near 3%, the paper's figure; rounding up costs up to a bit, "+
		"so it crosses at about 1%, and just below each step, where it takes the wider fingerprint or a less full table, "+
		"it can fall behind Bloom again for a short stretch. Plain buckets, a bit a key more, cross near 0.4%. "+
		"The binary fuse filter takes about 1.13 bits a fingerprint bit, but its widths are 8, 16 or 32 bits, "+
		"so between them it pays for the wider one; it is static: built once, no inserts or deletes.")
	fmt.Fprintln(w)
}

// PlotSpace draws bits a key against the rate: the grid's sizes as lines,
// the measured targets as markers.
func PlotSpace(dir string, rows []SpaceRow, grid []SpacePoint) (string, error) {
	f := &figure{title: "Space vs false-positive rate", x: "false-positive rate (log)", y: "bits per key", logX: true, headroom: 0.25}
	for _, p := range grid {
		if !math.IsNaN(p.BitsPerItem) && p.Structure != SpaceNew { // New's choice is the lower of the two lines
			f.add(p.Structure, p.Rate, p.BitsPerItem)
		}
	}
	for _, r := range rows {
		if !math.IsNaN(r.BitsPerItem) && r.Measured > 0 {
			f.point("measured (at its measured rate)", r.Measured, r.BitsPerItem)
		}
	}
	for _, r := range BelowBloom(grid, SpaceNew) {
		for _, eps := range []float64{r.High, r.Low} {
			if eps != 0 {
				f.point("filter.New's choice crosses Bloom", eps, BloomBitsPerItem(eps))
			}
		}
	}
	return f.save(dir, "space")
}
