package eval

import "testing"

// TestLookupRates checks that the experiment runs and its figures are sane;
// the times themselves are measurements, not assertions.
func TestLookupRates(t *testing.T) {
	rows, err := LookupRates(1<<14, 2000, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3*len(RateLoads) {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		t.Logf("%-34s load %.3f keys %6d hit %.1f ns miss %.1f ns", r.Structure, r.Load, r.Keys, r.HitNs, r.MissNs)
		if r.HitNs <= 0 || r.MissNs <= 0 || r.Keys <= 0 {
			t.Errorf("%+v", r)
		}
	}
}
