package eval

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestSpace builds every structure at every target, and the cuckoo tables
// on a grid, for 20,000 keys: each holds its keys (Space checks) and meets
// its target within the binomial noise of 400,000 lookups; a cuckoo
// table's measured rate is its expected one within that noise; semi-sorted
// buckets take a bit a slot less than plain ones where their widths agree;
// the ranked table is the smallest cuckoo table and below Bloom at its
// measured rate at every target of 2% and less; New's choice is the
// smallest table of the grid.
func TestSpace(t *testing.T) {
	const n, absent = 20000, 400000
	rows, grid, err := Space(n, absent, 10, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(SpaceTargets)*len(SpaceStructures) {
		t.Fatalf("%d rows, want %d", len(rows), len(SpaceTargets)*len(SpaceStructures))
	}
	byKey := map[[2]any]SpaceRow{}
	for _, r := range rows {
		t.Logf("%g %s %s: %.2f bits, measured %.4g expected %.4g, vs Bloom %+.2f", r.Target, r.Structure, r.Layout, r.BitsPerItem, r.Measured, r.Expected, r.VsBloom())
		byKey[[2]any{r.Target, r.Structure}] = r
		if math.IsNaN(r.BitsPerItem) {
			if r.Structure != SpaceSemi || r.Target > 2e-4 {
				t.Errorf("%s at %g: no layout", r.Structure, r.Target)
			}
			continue
		}
		sigma := math.Sqrt(r.Target * (1 - r.Target) / absent)
		if r.Measured > r.Target+5*sigma+0.05*r.Target {
			t.Errorf("%s at %g (%s): measured %.4g", r.Structure, r.Target, r.Layout, r.Measured)
		}
		if r.Structure != SpaceBloom && r.Structure != SpaceFuse {
			if want := r.Expected * absent; want >= 50 && math.Abs(r.Measured*absent-want) > 5*math.Sqrt(want)+0.05*want {
				t.Errorf("%s at %g (%s): measured %.4g, expected %.4g", r.Structure, r.Target, r.Layout, r.Measured, r.Expected)
			}
		}
	}
	for _, eps := range SpaceTargets {
		plain, semi, ranked := byKey[[2]any{eps, SpacePlain}], byKey[[2]any{eps, SpaceSemi}], byKey[[2]any{eps, SpaceRanked}]
		if plain.Layout == semi.Layout { // same b, f and load: one bit a slot less
			if d := (plain.BitsPerItem - semi.BitsPerItem) * semiLoad(semi.Layout); math.Abs(d-1) > 0.01 {
				t.Errorf("at %g: plain %.3f, semi-sorted %.3f bits a key (%s): %.3f bits a slot apart",
					eps, plain.BitsPerItem, semi.BitsPerItem, semi.Layout, d)
			}
		}
		if !strings.HasPrefix(ranked.Layout, "b=4 R=") || ranked.BitsPerItem > plain.BitsPerItem || ranked.BitsPerItem > semi.BitsPerItem {
			t.Errorf("at %g: ranked %s %.3f bits a key, plain %.3f, semi-sorted %.3f", eps, ranked.Layout, ranked.BitsPerItem, plain.BitsPerItem, semi.BitsPerItem)
		}
		if d := ranked.VsBloom(); eps <= 0.02 && !(d < 0) {
			t.Errorf("at %g: ranked %s, %.3f bits a key at its measured %.4g: %+.3f against Bloom", eps, ranked.Layout, ranked.BitsPerItem, ranked.Measured, d)
		}
	}
	// The grid: Bloom's line is log2(1/ε)/ln 2 within rounding, the
	// semi-sorted line stops where plain buckets are smaller, and New
	// builds the smallest of the tables.
	at := map[[2]any]float64{}
	for _, p := range grid {
		at[[2]any{p.Rate, p.Structure}] = p.BitsPerItem
	}
	for _, p := range grid {
		switch p.Structure {
		case SpaceBloom:
			if d := p.BitsPerItem - BloomBitsPerItem(p.Rate); d < 0 || d > 0.01 {
				t.Errorf("Bloom at %g: %.3f bits, formula %.3f", p.Rate, p.BitsPerItem, BloomBitsPerItem(p.Rate))
			}
		case SpaceSemi:
			if plain := at[[2]any{p.Rate, SpacePlain}]; p.BitsPerItem > plain {
				t.Errorf("semi-sorted at %g: %.3f bits, more than plain's %.3f", p.Rate, p.BitsPerItem, plain)
			}
		case SpaceNew:
			for _, s := range []string{SpacePlain, SpaceSemi, SpaceRanked} {
				if other := at[[2]any{p.Rate, s}]; p.BitsPerItem > other {
					t.Errorf("New's choice at %g: %s, %.3f bits, more than %s's %.3f", p.Rate, p.Layout, p.BitsPerItem, s, other)
				}
			}
		}
	}
	for _, s := range []string{SpacePlain, SpaceSemi, SpaceRanked} {
		t.Logf("%s: %s", s, describeBelow(BelowBloom(grid, s)))
	}
	if semi := BelowBloom(grid, SpaceSemi); len(semi) == 0 || semi[0].High.Measured < 0.004 {
		t.Errorf("semi-sorted buckets below Bloom: %v, want a stretch from 0.4%% or more", semi)
	}
	if ranked := BelowBloom(grid, SpaceRanked); len(ranked) != 1 || !ranked[0].ToEnd || ranked[0].High.Rate < 0.015 {
		t.Errorf("ranked buckets below Bloom: %+v, want one stretch from 1.5%% or more to the end", ranked)
	}
}

// semiLoad reads the load of a layout string "b=4 f=10 load=0.946".
func semiLoad(layout string) float64 {
	var b, f int
	var load float64
	if _, err := fmt.Sscanf(layout, "b=%d f=%d load=%g", &b, &f, &load); err != nil {
		return math.NaN()
	}
	return load
}

func TestSpaceRefusesEmptySizes(t *testing.T) {
	for _, c := range [][3]int{{0, 10, 10}, {10, 0, 10}, {10, 10, 0}} {
		if _, _, err := Space(c[0], c[1], c[2], 1); err == nil {
			t.Errorf("Space(%v) succeeded", c)
		}
	}
}

// TestBelowBloom runs BelowBloom and ClosestToBloom on a made-up grid.
func TestBelowBloom(t *testing.T) {
	var grid []SpacePoint
	add := func(rate, measured, bits float64) {
		grid = append(grid, SpacePoint{Rate: rate, Structure: SpaceSemi, BitsPerItem: bits, Measured: measured},
			SpacePoint{Rate: rate, Structure: SpaceBloom, BitsPerItem: BloomBitsPerItem(rate), Measured: math.NaN()})
	}
	add(0.05, 0.04, 10)                // above (Bloom 6.7)
	add(0.02, 0.015, 8)                // below (8.7)
	add(0.01, 0.009, 9.5)              // below (9.8): the closest
	add(0.005, 0.004, 12)              // above (11.4)
	add(0.002, math.NaN(), math.NaN()) // none
	add(0.001, 0.0009, 8)              // below (14.6)
	add(0.0005, 0, 8)                  // no false positive: passed over
	add(0.0002, 0.0001, 8)             // below to the end
	got := BelowBloom(grid, SpaceSemi)
	if len(got) != 2 || got[0].High.Rate != 0.02 || got[0].Low.Rate != 0.01 || got[0].FromTop || got[0].ToEnd || got[0].Stops ||
		got[1].High.Rate != 0.001 || got[1].Low.Rate != 0.0002 || got[1].FromTop || !got[1].ToEnd {
		t.Fatalf("BelowBloom = %+v", got)
	}
	if want := "from 1.5% down to 0.9%; at every rate from 0.09% down to the grid's end (0.01%)"; describeBelow(got) != want {
		t.Errorf("describeBelow = %q, want %q", describeBelow(got), want)
	}
	for _, c := range []struct{ max, want float64 }{{0.012, 0.005}, {0.004, 0.001}, {0.03, 0.005}, {1, 0.05}} {
		if p, ok := ClosestToBloom(grid, SpaceSemi, c.max); !ok || p.Rate != c.want {
			t.Errorf("ClosestToBloom up to %g = %+v, %v, want the point at %g", c.max, p, ok, c.want)
		}
	}
	if _, ok := ClosestToBloom(grid, SpaceSemi, 0.0001); ok {
		t.Errorf("ClosestToBloom found a point below the grid's rates")
	}
	stops := BelowBloom(append(slices.Clone(grid[:4]), SpacePoint{Rate: 0.01, Structure: SpaceSemi, BitsPerItem: math.NaN()}), SpaceSemi)
	if len(stops) != 1 || stops[0].Low.Rate != 0.02 || !stops[0].Stops || stops[0].ToEnd {
		t.Errorf("a line that stops: %+v", stops)
	}
	if want := "at 1.5%, where the line stops"; describeBelow(stops) != want {
		t.Errorf("describeBelow = %q, want %q", describeBelow(stops), want)
	}
	all := BelowBloom([]SpacePoint{{Rate: 0.01, Structure: SpaceRanked, BitsPerItem: 8, Measured: 0.01}}, SpaceRanked)
	if len(all) != 1 || !all[0].FromTop || !all[0].ToEnd {
		t.Errorf("one point below: %+v", all)
	}
}
