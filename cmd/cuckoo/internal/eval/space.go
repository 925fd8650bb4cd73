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
// the false-positive rate. Each structure is built for n keys and a rate ε
// as its own package sizes it, filled, and measured: bits a key from its
// actual size, the rate over keys never inserted. It is then set against an
// optimal Bloom filter of the rate it measured, not of the rate it was
// asked for: a table asked for 1% that gives 0.85% is worth a Bloom filter
// of 0.85%, and comparing at ε would flatter Bloom. Every structure is
// measured at the targets; the cuckoo tables also on a fine grid of rates
// (a layout is built once, however many rates choose it), from which the
// crossings with Bloom are found.

// Structures of the space experiment.
const (
	SpacePlain  = "cuckoo, plain buckets"
	SpaceSemi   = "cuckoo, semi-sorted buckets"
	SpaceRanked = "cuckoo, ranked buckets"
	SpaceBloom  = "Bloom (bits-and-blooms/bloom/v3)"
	SpaceFuse   = "binary fuse (FastFilter/xorfilter, static)"
	// SpaceNew is what filter.New builds when the packing is left to it:
	// in the grid only, where it is the ranked table at most rates.
	SpaceNew = "cuckoo, filter.New's choice"
)

// SpaceStructures are the structures measured at the targets, in the
// order of the report's rows.
var SpaceStructures = []string{SpacePlain, SpaceSemi, SpaceRanked, SpaceBloom, SpaceFuse}

// spaceGridCuckoos are the cuckoo tables built on the grid, in the order of
// its points.
var spaceGridCuckoos = []string{SpacePlain, SpaceSemi, SpaceRanked, SpaceNew}

// SpaceTargets are the rates the experiment builds and measures every
// structure at.
var SpaceTargets = []float64{0.03, 0.02, 0.01, 0.005, 0.001, 0.0001}

// SpaceGridTop is the highest rate of the grid; it runs down to 10^-5.
const SpaceGridTop = 0.05

// SpaceRow is one structure built for one target rate.
type SpaceRow struct {
	Target      float64
	Structure   string
	Layout      string  // "b=4 f=10 load=0.950", "b=4 R=896 load=0.958", "k=7", "8-bit"; "" if none meets the rate
	BitsPerItem float64 // its size in bits over n; NaN if none
	Measured    float64 // share of absent keys found
	Expected    float64 // the rate its parameters predict when it holds n keys
	Absent      int
}

// VsBloom returns the bits a key r takes beyond an optimal Bloom filter of
// r's measured rate, BloomBitsPerItem(Measured): negative where r is
// smaller. NaN if r was not built or found no absent key.
func (r SpaceRow) VsBloom() float64 { return vsBloom(r.BitsPerItem, r.Measured) }

// SpacePoint is one structure built for one rate of the grid. The Bloom
// filter's points are sized by bloom.EstimateParameters, not built: they
// draw its line, and their Measured is NaN.
type SpacePoint struct {
	Rate        float64 // the rate asked for
	Structure   string
	Layout      string  // as in SpaceRow
	BitsPerItem float64 // NaN if it has no layout for the rate
	Measured    float64
	Expected    float64
}

// VsBloom is SpaceRow.VsBloom for a point of the grid.
func (p SpacePoint) VsBloom() float64 { return vsBloom(p.BitsPerItem, p.Measured) }

func vsBloom(bits, measured float64) float64 {
	if !(measured > 0) {
		return math.NaN()
	}
	return bits - BloomBitsPerItem(measured)
}

// spaceBuild is a structure built, filled and measured.
type spaceBuild struct {
	layout             string
	bits               float64
	measured, expected float64
}

// Space builds and measures every structure at every target, then the
// cuckoo tables on a grid of gridPerDecade rates a decade from
// SpaceGridTop to 10^-5, beside the Bloom filter's size at each.
func Space(n, absent, gridPerDecade int, seed uint64) ([]SpaceRow, []SpacePoint, error) {
	if n <= 0 || absent <= 0 || gridPerDecade <= 0 {
		return nil, nil, fmt.Errorf("space: %d keys, %d absent, %d rates a decade: each must be positive", n, absent, gridPerDecade)
	}
	present := keys(n, seed)
	probe := keys(absent, seed+500)
	measure := func(what string, contains func(uint64) bool) (float64, error) {
		for _, k := range present {
			if !contains(k) {
				return 0, fmt.Errorf("%s: a present key was not found", what)
			}
		}
		hits := 0
		for _, k := range probe {
			if contains(k) {
				hits++
			}
		}
		return float64(hits) / float64(absent), nil
	}
	// A layout chosen for several rates is built once: with the same keys
	// and seed it would measure the same.
	cuckoos := map[filter.Layout]spaceBuild{}
	cuckoo := func(cfg filter.Config) (spaceBuild, bool, error) {
		l, err := cfg.Layout()
		if err != nil {
			return spaceBuild{}, false, nil // no table of this packing meets the rate
		}
		if b, ok := cuckoos[l]; ok {
			return b, true, nil
		}
		what := fmt.Sprintf("%v at %g", cfg.Packing, cfg.FalsePositiveRate)
		f, err := filter.New(cfg)
		if err != nil {
			return spaceBuild{}, false, fmt.Errorf("%s: %w", what, err)
		}
		for _, k := range present {
			if err := f.InsertHash(k); err != nil {
				return spaceBuild{}, false, fmt.Errorf("%s: %w", what, err)
			}
		}
		b := spaceBuild{
			layout:   cuckooLayout(f),
			bits:     float64(8*f.SizeInBytes()) / float64(n),
			expected: l.ExpectedFalsePositiveRate(f.LoadFactor()),
		}
		if b.measured, err = measure(what, f.ContainsHash); err != nil {
			return spaceBuild{}, false, err
		}
		cuckoos[l] = b
		return b, true, nil
	}
	fuses := map[int]spaceBuild{}
	var rows []SpaceRow
	for _, eps := range SpaceTargets {
		for _, s := range SpaceStructures {
			row := SpaceRow{Target: eps, Structure: s, BitsPerItem: math.NaN(), Measured: math.NaN(), Expected: math.NaN(), Absent: absent}
			var b spaceBuild
			switch s {
			case SpacePlain, SpaceSemi, SpaceRanked:
				var ok bool
				var err error
				if b, ok, err = cuckoo(cuckooConfig(s, uint64(n), eps, seed)); err != nil {
					return nil, nil, err
				} else if !ok {
					rows = append(rows, row)
					continue
				}
			case SpaceBloom:
				bf := bloom.NewWithEstimates(uint(n), eps)
				var buf [8]byte
				for _, k := range present {
					bf.Add(bloomKey(&buf, k))
				}
				k, m := float64(bf.K()), float64(bf.Cap())
				b = spaceBuild{
					layout:   fmt.Sprintf("k=%d", bf.K()),
					bits:     m / float64(n),
					expected: math.Pow(-math.Expm1(-k*float64(n)/m), k),
				}
				var err error
				if b.measured, err = measure(s, func(k uint64) bool { return bf.Test(bloomKey(&buf, k)) }); err != nil {
					return nil, nil, err
				}
			case SpaceFuse:
				width := fuseBits(eps)
				if _, ok := fuses[width]; !ok {
					contains, bits, err := buildFuse(width, present)
					if err != nil {
						return nil, nil, err
					}
					fb := spaceBuild{layout: fmt.Sprintf("%d-bit", width), bits: bits, expected: math.Exp2(-float64(width))}
					if fb.measured, err = measure(s, contains); err != nil {
						return nil, nil, err
					}
					fuses[width] = fb
				}
				b = fuses[width]
			}
			row.Layout, row.BitsPerItem, row.Measured, row.Expected = b.layout, b.bits, b.measured, b.expected
			rows = append(rows, row)
		}
	}
	var grid []SpacePoint
	for _, eps := range spaceGrid(gridPerDecade) {
		for _, s := range spaceGridCuckoos {
			p := SpacePoint{Rate: eps, Structure: s, BitsPerItem: math.NaN(), Measured: math.NaN(), Expected: math.NaN()}
			b, ok, err := cuckoo(cuckooConfig(s, uint64(n), eps, seed))
			if err != nil {
				return nil, nil, err
			}
			if ok {
				p.Layout, p.BitsPerItem, p.Measured, p.Expected = b.layout, b.bits, b.measured, b.expected
			}
			grid = append(grid, p)
		}
		m, _ := bloom.EstimateParameters(uint(n), eps)
		grid = append(grid, SpacePoint{Rate: eps, Structure: SpaceBloom, BitsPerItem: float64(m) / float64(n), Measured: math.NaN(), Expected: eps})
	}
	// Semi-sorted fingerprints end at 16 bits: below about 10^-4 only an
	// ever emptier table meets the rate, larger than plain buckets. The
	// line stops where it takes more than plain's.
	for i := range grid {
		if grid[i].Structure == SpaceSemi && grid[i].BitsPerItem > grid[i-1].BitsPerItem { // spaceGridCuckoos puts plain first
			grid[i] = SpacePoint{Rate: grid[i].Rate, Structure: SpaceSemi, BitsPerItem: math.NaN(), Measured: math.NaN(), Expected: math.NaN()}
		}
	}
	return rows, grid, nil
}

// spaceGrid returns perDecade rates a decade from SpaceGridTop down to
// 10^-5.
func spaceGrid(perDecade int) []float64 {
	var out []float64
	for i := 0; ; i++ {
		eps := SpaceGridTop * math.Pow(10, -float64(i)/float64(perDecade))
		if eps < 1e-5 {
			return out
		}
		out = append(out, eps)
	}
}

// cuckooConfig is the Config of a cuckoo filter of the given structure for
// n keys at rate eps: New chooses the rest, and for SpaceNew the packing
// too.
func cuckooConfig(s string, n uint64, eps float64, seed uint64) filter.Config {
	packing := map[string]filter.Packing{
		SpacePlain: filter.PackingPlain, SpaceSemi: filter.PackingSemiSorted, SpaceRanked: filter.PackingRanked,
	}[s]
	return filter.Config{Capacity: n, FalsePositiveRate: eps, Packing: packing, Seed: seed}
}

// cuckooLayout describes a filter's table: "b=4 f=10 load=0.950", or for
// ranked buckets "b=4 R=896 load=0.958".
func cuckooLayout(f *filter.Filter) string {
	if f.Packing() == filter.PackingRanked {
		return fmt.Sprintf("b=%d R=%d load=%.3f", f.BucketSize(), f.FingerprintRange(), f.LoadFactor())
	}
	return fmt.Sprintf("b=%d f=%d load=%.3f", f.BucketSize(), f.FingerprintBits(), f.LoadFactor())
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

// SpaceRange is a stretch of the grid, its points taken in the order of
// the rates asked for, from the highest down, where a structure takes fewer
// bits a key than an optimal Bloom filter of the rate it measured.
type SpaceRange struct {
	High, Low SpacePoint // the first and the last point of the stretch
	// FromTop and ToEnd say that the stretch begins at the grid's first
	// point or reaches its last, and Stops that s has no table at the
	// next rate: there the line does not cross Bloom.
	FromTop, ToEnd, Stops bool
}

// BelowBloom returns the stretches of the grid where structure s is
// smaller than Bloom at its measured rate, from the highest rate down. A
// point without a table ends a stretch; a point that found no absent key,
// so that its rate is unknown, is passed over.
func BelowBloom(grid []SpacePoint, s string) []SpaceRange {
	var out []SpaceRange
	var last SpacePoint
	open, first := false, true
	for _, p := range grid {
		if p.Structure != s {
			continue
		}
		margin := p.VsBloom()
		if math.IsNaN(margin) && !math.IsNaN(p.BitsPerItem) {
			first = false
			continue
		}
		below := margin < 0 // false for NaN
		switch {
		case below && !open:
			out = append(out, SpaceRange{High: p, FromTop: first})
			open = true
		case !below && open:
			out[len(out)-1].Low, out[len(out)-1].Stops = last, math.IsNaN(p.BitsPerItem)
			open = false
		}
		if below {
			last = p
		}
		first = false
	}
	if open {
		out[len(out)-1].Low, out[len(out)-1].ToEnd = last, true
	}
	return out
}

// ClosestToBloom returns the point of structure s, among those asked for
// rates of at most maxRate, whose bits a key are least below Bloom's at its
// measured rate (or most above it); false if s has no measured point there.
func ClosestToBloom(grid []SpacePoint, s string, maxRate float64) (SpacePoint, bool) {
	var worst SpacePoint
	found := false
	for _, p := range grid {
		if p.Structure != s || p.Rate > maxRate || math.IsNaN(p.VsBloom()) {
			continue
		}
		if !found || p.VsBloom()/BloomBitsPerItem(p.Measured) > worst.VsBloom()/BloomBitsPerItem(worst.Measured) {
			worst, found = p, true
		}
	}
	return worst, found
}

// spaceShort is a structure's name in the report's prose.
var spaceShort = map[string]string{
	SpacePlain: "plain buckets", SpaceSemi: "semi-sorted buckets", SpaceRanked: "ranked buckets", SpaceNew: "filter.New's choice",
}

// vsBloomText is "9.12 bits a key against Bloom's 9.87 (7.6% smaller)".
func vsBloomText(bits, measured float64) string {
	bloomBits := BloomBitsPerItem(measured)
	word := "smaller"
	if bits > bloomBits {
		word = "larger"
	}
	return fmt.Sprintf("%.2f bits a key against Bloom's %.2f (%.1f%% %s)", bits, bloomBits, 100*math.Abs(bits/bloomBits-1), word)
}

// WriteSpace renders the space experiment, whose grid had perDecade rates
// a decade.
func WriteSpace(w io.Writer, rows []SpaceRow, grid []SpacePoint, n, perDecade int) {
	absent := rows[0].Absent
	fmt.Fprintf(w, "## Bits per key vs false-positive rate\n\n")
	fmt.Fprintf(w, "The paper's space figure, measured: each structure is built for %d keys and a target rate ε as its own package sizes it "+
		"(the cuckoo filters by `filter.New` with the packing fixed, the Bloom filter by `bloom.NewWithEstimates`, "+
		"the binary fuse filter of the narrowest fingerprint that meets the rate), filled, "+
		"and its rate measured on %d keys never inserted. Bits a key count the whole structure. "+
		"Each is set against an optimal Bloom filter of the rate it measured, 1.44·log2(1/rate) bits a key "+
		"(bits-and-blooms' `EstimateParameters` sizes within 0.01 bit a key of it): "+
		"a table asked for 1%% that gives 0.85%% is compared with a Bloom filter of 0.85%%. "+
		"Expected: the rate the structure's parameters predict when it holds its keys "+
		"(cuckoo: 1-(1-load/(R-1))^(2b), `Layout.ExpectedFalsePositiveRate`; Bloom: (1-e^(-kn/m))^k; binary fuse: 2^-bits).\n\n", n, absent)
	fmt.Fprintln(w, "| target ε | structure | layout | bits/key | measured | expected | Bloom at the measured rate | difference |")
	fmt.Fprintln(w, "|--:|---|---|--:|--:|--:|--:|--:|")
	for _, r := range rows {
		if math.IsNaN(r.BitsPerItem) {
			fmt.Fprintf(w, "| %g%% | %s | none | - | - | - | - | - |\n", 100*r.Target, r.Structure)
			continue
		}
		bloomBits, diff := "-", "-"
		if d := r.VsBloom(); !math.IsNaN(d) {
			bloomBits = fmt.Sprintf("%.2f", BloomBitsPerItem(r.Measured))
			diff = fmt.Sprintf("%+.2f (%+.1f%%)", d, 100*d/BloomBitsPerItem(r.Measured))
		}
		fmt.Fprintf(w, "| %g%% | %s | %s | %.2f | %.3g%% | %.3g%% | %s | %s |\n",
			100*r.Target, r.Structure, r.Layout, r.BitsPerItem, 100*r.Measured, 100*r.Expected, bloomBits, diff)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "On a grid of %d rates a decade from %g%% down to 10^-5, each cuckoo table that `filter.New` builds for the rate "+
		"(the packing fixed, or left to New) is built, filled and measured the same way (a layout chosen for several rates once). "+
		"Where each is smaller than Bloom at its measured rate (rates are measured ones; the figure marks where a line crosses Bloom's):\n\n",
		perDecade, 100*SpaceGridTop)
	for _, s := range []string{SpacePlain, SpaceSemi, SpaceRanked} {
		fmt.Fprintf(w, "- %s: %s.\n", s, describeBelow(BelowBloom(grid, s)))
	}
	fmt.Fprintf(w, "- %s: %s.\n", SpaceNew, describeNew(grid))
	var fuseParts []string
	seen := map[string]bool{}
	for _, r := range rows {
		if r.Structure == SpaceFuse && !seen[r.Layout] && r.Measured > 0 {
			seen[r.Layout] = true
			fuseParts = append(fuseParts, fmt.Sprintf("%s, %s at its measured %.3g%%", r.Layout, vsBloomText(r.BitsPerItem, r.Measured), 100*r.Measured))
		}
	}
	fmt.Fprintf(w, "- %s, measured at the targets only (two widths reach them): %s.\n\n", SpaceFuse, strings.Join(fuseParts, "; "))
	if p, ok := ClosestToBloom(grid, SpaceRanked, 0.03); ok {
		fmt.Fprintf(w, "Ranked buckets, asked for 3%% or less, come closest to Bloom at ε = %.3g%% (measured %.3g%%, %s): %s.",
			100*p.Rate, 100*p.Measured, p.Layout, vsBloomText(p.BitsPerItem, p.Measured))
		var at []string
		for _, eps := range []float64{0.01, 0.001, 0.0001} {
			if q, ok := gridPointNear(grid, SpaceRanked, eps); ok && q.Measured > 0 {
				at = append(at, fmt.Sprintf("asked for %.3g%%, %s", 100*q.Rate, vsBloomText(q.BitsPerItem, q.Measured)))
			}
		}
		if len(at) > 0 {
			fmt.Fprintf(w, " Elsewhere: %s.", strings.Join(at, "; "))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w)
	}
	if p, ok := lowestMeasured(grid); ok {
		hits := p.Measured * float64(absent)
		sigma := 1 / math.Sqrt(hits)
		fmt.Fprintf(w, "The grid's lowest measured rate, %.3g%% (%s asked for %.3g%%), is %.0f false positives in %d lookups: "+
			"good to about ±%.0f%% (one standard deviation), ±%.2f bits a key of Bloom's line there; higher rates are measured more closely.\n\n",
			100*p.Measured, spaceShort[p.Structure], 100*p.Rate, hits, absent, 100*sigma, sigma/math.Ln2/math.Ln2)
	}
	fmt.Fprintln(w, "Why the lines cross where they do: a cuckoo filter compares a key's fingerprint with 2b slots, so its rate is about 2b·load/R "+
		"for fingerprints in [1, R). A fingerprint of a whole number of bits, plain or semi-sorted, has R = 2^f: the rate steps by 2x "+
		"and the space by a bit a key (1/0.95 of a bit), where a Bloom filter's, 1.44·log2(1/ε), rises smoothly, so just below each step, "+
		"where New takes the wider fingerprint or a less full table, such a table can fall behind Bloom again for a stretch. "+
		"Semi-sorting codes the top 4 bits of a bucket's four fingerprints in 12 bits, a bit a slot less than plain buckets. "+
		"Ranked buckets (filter/doc.go, \"Ranked buckets\") let R = Q·2^L with Q one of 19, 23, 28 and 33, steps of at most 1.2x, "+
		"and code the four high parts as a multiset, which saves 1.0 to 1.06 bits a fingerprint (log2(4!)/4 = 1.15 less the rounding of the code): "+
		"in a table 96% full that is about (log2(1/ε) + 1.9)/0.96 bits a key at the rate ε it gives, against Bloom's 1.44·log2(1/ε), "+
		"and the two meet where 0.40·log2(1/ε) = 2.0, at ε of about 3.3%; below it the gap widens by 0.4 bits a key for every halving of the rate. "+
		"The binary fuse filter takes about 1.13 bits a fingerprint bit, but its widths are 8, 16 or 32 bits, "+
		"so a rate between 2^-8 and 2^-16 gets the 16-bit one; it is static: built once, no inserts or deletes.")
	fmt.Fprintln(w)
}

// describeBelow says where a structure is smaller than Bloom.
func describeBelow(ranges []SpaceRange) string {
	var parts []string
	for _, r := range ranges {
		high := fmt.Sprintf("%.3g%%", 100*r.High.Measured)
		if r.FromTop {
			high += " (the grid's first rate)"
		}
		var part string
		switch {
		case r.ToEnd && r.FromTop:
			part = fmt.Sprintf("at every rate of the grid, from %.3g%% down to %.3g%%", 100*r.High.Measured, 100*r.Low.Measured)
		case r.ToEnd:
			part = fmt.Sprintf("at every rate from %s down to the grid's end (%.3g%%)", high, 100*r.Low.Measured)
		case r.High.Measured == r.Low.Measured: // one layout
			part = "at " + high
		default:
			part = fmt.Sprintf("from %s down to %.3g%%", high, 100*r.Low.Measured)
		}
		if r.Stops {
			part += ", where the line stops"
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "nowhere"
	}
	return strings.Join(parts, "; ")
}

// describeNew says which table filter.New builds over the grid.
func describeNew(grid []SpacePoint) string {
	ranked := map[float64]string{}
	for _, p := range grid {
		if p.Structure == SpaceRanked {
			ranked[p.Rate] = p.Layout
		}
	}
	var other []string
	for _, p := range grid {
		if p.Structure == SpaceNew && p.Layout != ranked[p.Rate] {
			other = append(other, fmt.Sprintf("%.3g%% (%s)", 100*p.Rate, p.Layout))
		}
	}
	if len(other) == 0 {
		return "the ranked table at every rate of the grid, so the same line"
	}
	return fmt.Sprintf("the ranked table but at %s; smaller than Bloom %s", strings.Join(other, ", "), describeBelow(BelowBloom(grid, SpaceNew)))
}

// gridPointNear returns the point of s whose rate asked for is nearest eps.
func gridPointNear(grid []SpacePoint, s string, eps float64) (SpacePoint, bool) {
	var best SpacePoint
	found := false
	for _, p := range grid {
		if p.Structure == s && (!found || math.Abs(math.Log(p.Rate/eps)) < math.Abs(math.Log(best.Rate/eps))) {
			best, found = p, true
		}
	}
	return best, found
}

// lowestMeasured returns the cuckoo point of the lowest measured rate
// above 0.
func lowestMeasured(grid []SpacePoint) (SpacePoint, bool) {
	var low SpacePoint
	found := false
	for _, p := range grid {
		if p.Structure != SpaceBloom && p.Measured > 0 && (!found || p.Measured < low.Measured) {
			low, found = p, true
		}
	}
	return low, found
}

// PlotSpace draws bits a key against the rate: each cuckoo table of the
// grid at its measured rate, the Bloom filter's line, the binary fuse
// filters measured at the targets, and the points where a cuckoo line
// crosses Bloom's.
func PlotSpace(dir string, rows []SpaceRow, grid []SpacePoint) (string, error) {
	f := &figure{title: "Space vs false-positive rate, each at its measured rate", x: "false-positive rate (log)", y: "bits per key", logX: true, headroom: 0.4}
	ranked := map[float64]string{}
	for _, p := range grid {
		if p.Structure == SpaceRanked {
			ranked[p.Rate] = p.Layout
		}
	}
	drawn := map[SpacePoint]bool{}
	for _, p := range grid {
		switch {
		case p.Structure == SpaceBloom:
			f.add(p.Structure+", sized by EstimateParameters", p.Rate, p.BitsPerItem)
		case math.IsNaN(p.BitsPerItem) || !(p.Measured > 0):
		case p.Structure == SpaceNew:
			if p.Layout != ranked[p.Rate] {
				f.point("filter.New's choice, where not ranked", p.Measured, p.BitsPerItem)
			}
		default:
			key := SpacePoint{Structure: p.Structure, Layout: p.Layout, BitsPerItem: p.BitsPerItem, Measured: p.Measured}
			if !drawn[key] { // one point a layout, however many rates chose it
				drawn[key] = true
				f.add(p.Structure, p.Measured, p.BitsPerItem)
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if r.Structure == SpaceFuse && r.Measured > 0 && !seen[r.Layout] {
			seen[r.Layout] = true
			f.point("binary fuse, 8 and 16 bits (static)", r.Measured, r.BitsPerItem)
		}
	}
	for _, s := range []string{SpacePlain, SpaceSemi, SpaceRanked} {
		for _, r := range BelowBloom(grid, s) {
			if !r.FromTop {
				f.point("a cuckoo line crosses Bloom (its first or last point below)", r.High.Measured, r.High.BitsPerItem)
			}
			if !r.ToEnd && !r.Stops {
				f.point("a cuckoo line crosses Bloom (its first or last point below)", r.Low.Measured, r.Low.BitsPerItem)
			}
		}
	}
	return f.save(dir, "space")
}
