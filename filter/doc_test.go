package filter

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// bloomGrid returns the rates of the space claims: 40 a decade from 3% down
// to 10^-5.
func bloomGrid() []float64 {
	var out []float64
	for k := 0; ; k++ {
		eps := 0.03 * math.Pow(10, -float64(k)/40)
		if eps < 1e-5*(1-1e-9) {
			return out
		}
		out = append(out, eps)
	}
}

// TestDocBloomSpace checks what the package doc says about the space
// against an optimal Bloom filter: on the grid of bloomGrid, New's table
// for 10^6 keys takes fewer bits a key than a Bloom filter of the rate the
// table has when it holds them, 1.44·log2(1/rate); that rate is at most the
// one asked for and within 1.5x of it; and doc.go quotes the closest
// margin, where it is, and the largest asked/expected ratio as measured
// here.
func TestDocBloomSpace(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(doc), "\n// ", " ")
	const n = 1_000_000
	worst, worstAt, worstRatio, atTenth := math.Inf(1), 0.0, 0.0, 0.0
	grid := append(bloomGrid(), 0.001)
	for k, eps := range grid {
		p, err := Config{Capacity: n, FalsePositiveRate: eps}.params()
		if err != nil {
			t.Fatal(err)
		}
		rate := expectedRate(float64(n)/float64(p.buckets*uint64(p.slots)), p.shape)
		perKey := float64(p.buckets*uint64(p.bucketBits())) / n
		bloom := math.Log2(1/rate) / math.Ln2
		if perKey >= bloom {
			t.Errorf("at ε = %.4g (%v, R = %d): %.3f bits a key, not below Bloom's %.3f at the rate %.4g",
				eps, p.packing(), p.fpMax()+1, perKey, bloom, rate)
		}
		if rate > eps || eps/rate > 1.5 {
			t.Errorf("at ε = %.4g: expected rate %.4g, %.3f times below", eps, rate, eps/rate)
		}
		if k == len(grid)-1 {
			atTenth = 1 - perKey/bloom
			continue
		}
		if m := 1 - perKey/bloom; m < worst {
			worst, worstAt = m, eps
		}
		worstRatio = max(worstRatio, eps/rate)
	}
	grid = grid[:len(grid)-1]
	t.Logf("%d rates: closest margin %.2f%% at ε = %.3g; asked/expected at most %.3f; %.1f%% smaller at 0.1%%",
		len(grid), 100*worst, worstAt, worstRatio, 100*atTenth)
	if len(grid) != 140 {
		t.Errorf("%d rates in the grid, want 140", len(grid))
	}
	// The README quotes the default rate's figures and the closest margin.
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	figures := func(eps float64) (perKey, bloom, rate float64) {
		p, err := Config{Capacity: n, FalsePositiveRate: eps}.params()
		if err != nil {
			t.Fatal(err)
		}
		rate = expectedRate(float64(n)/float64(p.buckets*uint64(p.slots)), p.shape)
		return float64(p.buckets*uint64(p.bucketBits())) / n, math.Log2(1/rate) / math.Ln2, rate
	}
	k1, b1, r1 := figures(0.01)
	k3, b3, _ := figures(0.03)
	readmeText := strings.Join(strings.Fields(string(readme)), " ")
	for _, want := range []string{
		fmt.Sprintf("%.2f bits a key at 1%% against Bloom's %.2f at the %.2f%% it reaches", k1, b1, 100*r1),
		fmt.Sprintf("at least %.1f%% smaller (closest at 3%%: %.2f against %.2f)", 100*worst, k3, b3),
		fmt.Sprintf("%.0f%% smaller at 0.1%%", 100*atTenth),
	} {
		if !strings.Contains(readmeText, want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
	for _, want := range []string{
		fmt.Sprintf("at least %.1f%% smaller", 100*worst),
		fmt.Sprintf("closest at ε = %.0f%%", 100*worstAt),
		fmt.Sprintf("up to %.2f times below", worstRatio),
		fmt.Sprintf("%.0f%% smaller at 0.1%%", 100*atTenth),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("doc.go does not say %q", want)
		}
	}
}
