package eval

import (
	"fmt"
	"math"
	"testing"
)

// TestSpace builds every structure at every target for 20,000 keys: each
// holds its keys (Space checks), meets its target within the binomial
// noise of 400,000 lookups, and the cuckoo filters take the bits their
// layouts say; semi-sorted buckets take a bit a key less than plain ones
// where both exist and their widths agree.
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
	}
	for _, eps := range SpaceTargets[:5] {
		plain, semi := byKey[[2]any{eps, SpacePlain}], byKey[[2]any{eps, SpaceSemi}]
		if plain.Layout == semi.Layout { // same b, f and load: one bit a slot less
			if d := (plain.BitsPerItem - semi.BitsPerItem) * semiLoad(semi.Layout); math.Abs(d-1) > 0.01 {
				t.Errorf("at %g: plain %.3f, semi-sorted %.3f bits a key (%s): %.3f bits a slot apart",
					eps, plain.BitsPerItem, semi.BitsPerItem, semi.Layout, d)
			}
		}
	}
	// The grid: Bloom's line is log2(1/ε)/ln 2 within rounding, and the
	// semi-sorted line stops where plain buckets are smaller.
	for i, p := range grid {
		switch p.Structure {
		case SpaceBloom:
			if d := p.BitsPerItem - BloomBitsPerItem(p.Rate); d < 0 || d > 0.01 {
				t.Errorf("Bloom at %g: %.3f bits, formula %.3f", p.Rate, p.BitsPerItem, BloomBitsPerItem(p.Rate))
			}
		case SpaceSemi:
			if p.BitsPerItem > grid[i-1].BitsPerItem {
				t.Errorf("semi-sorted at %g: %.3f bits, more than plain's %.3f", p.Rate, p.BitsPerItem, grid[i-1].BitsPerItem)
			}
		}
	}
	at := map[[2]any]float64{}
	for _, p := range grid {
		at[[2]any{p.Rate, p.Structure}] = p.BitsPerItem
	}
	for _, p := range grid {
		if p.Structure != SpaceNew {
			continue
		}
		plain, semi := at[[2]any{p.Rate, SpacePlain}], at[[2]any{p.Rate, SpaceSemi}]
		if want := min(plain, semi); math.IsNaN(semi) && p.BitsPerItem != plain || !math.IsNaN(semi) && p.BitsPerItem != want {
			t.Errorf("New's choice at %g: %.3f bits, plain %.3f, semi-sorted %.3f", p.Rate, p.BitsPerItem, plain, semi)
		}
	}
	semi := BelowBloom(grid, SpaceSemi)
	if len(semi) == 0 || semi[0].High < 0.005 {
		t.Errorf("semi-sorted buckets below Bloom: %v, want a range from 0.5%% or more", semi)
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

func TestBelowBloom(t *testing.T) {
	grid := []SpacePoint{}
	add := func(rate, s, bloom float64) {
		grid = append(grid, SpacePoint{rate, SpaceSemi, s}, SpacePoint{rate, SpaceBloom, bloom})
	}
	add(0.05, 10, 9)          // above
	add(0.02, 8, 9)           // below
	add(0.01, 8.5, 9)         // below
	add(0.005, 10, 9)         // above
	add(0.002, math.NaN(), 9) // none
	add(0.001, 8, 9)          // below to the end
	got := BelowBloom(grid, SpaceSemi)
	want := []SpaceRange{{Low: 0.01, High: 0.02}, {Low: 0, High: 0.001}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("BelowBloom = %v, want %v", got, want)
	}
}
