package eval

import (
	"math"
	"testing"
)

func TestDeletes(t *testing.T) {
	r, err := Deletes(100000, 500000, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.DeleteFailures != 0 || r.FalseNegatives != 0 {
		t.Errorf("%d failed deletes, %d false negatives", r.DeleteFailures, r.FalseNegatives)
	}
	if math.Abs(r.LoadAfter-r.LoadBefore/2) > 0.001 {
		t.Errorf("load %.4f after deleting half of %.4f", r.LoadAfter, r.LoadBefore)
	}
	// Deleted keys are as absent as keys never inserted: both rates are
	// the expected rate at the lower load, within 5 standard deviations.
	for name, got := range map[string]float64{"absent": r.FPRAbsent, "deleted": r.FPRDeleted} {
		m := float64(r.N / 2)
		if name == "absent" {
			m = 500000
		}
		sd := math.Sqrt(r.ExpectedFPR / m)
		if math.Abs(got-r.ExpectedFPR) > 5*sd {
			t.Errorf("%s keys: rate %.6f, expected %.6f (sd %.6f)", name, got, r.ExpectedFPR, sd)
		}
	}
}
