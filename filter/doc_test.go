package filter

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// TestDocBloomCrossover: the package doc gives the false-positive rate
// below which this filter is smaller than a Bloom filter as the formulas
// have it, not the paper's semi-sorted figure (issue 14: the doc said 3%,
// the README 0.4%).
func TestDocBloomCrossover(t *testing.T) {
	// (L + 3) / 0.95 = L / ln 2, with L = log2(1/ε).
	const load = 0.95
	l := (3 / load) / (1/math.Ln2 - 1/load)
	eps := math.Exp2(-l)
	want := fmt.Sprintf("below about %.1f%%", 100*eps)
	t.Logf("the spaces cross at ε = %.3f%% (log2(1/ε) = %.2f)", 100*eps, l)
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ReplaceAll(string(doc), "\n// ", " "), want) {
		t.Errorf("doc.go does not say %q", want)
	}
}
