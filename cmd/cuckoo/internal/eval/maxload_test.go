package eval

import "testing"

func TestMaxLoad(t *testing.T) {
	slots, seeds := 1<<16, 3
	if testing.Short() {
		slots, seeds = 1<<14, 2
	}
	rows, err := MaxLoad(slots, []int{50, 500}, seeds)
	if err != nil {
		t.Fatal(err)
	}
	// The paper's figures (Fan et al. 2014, at 500 kicks): b=1 about 50%,
	// b=2 84%, b=4 95%, b=8 98%. Allow a few points for small tables.
	want := map[int]float64{1: 0.45, 2: 0.80, 4: 0.92, 8: 0.96}
	for _, r := range rows {
		t.Logf("%-24s b=%d kicks=%4d load %.4f (min %.4f over %d seeds)", r.Impl, r.BucketSize, r.MaxKicks, r.Load, r.MinLoad, r.Seeds)
		if r.MaxKicks == 500 && r.Load < want[r.BucketSize] {
			t.Errorf("%s b=%d: load %.4f, want at least %.2f", r.Impl, r.BucketSize, r.Load, want[r.BucketSize])
		}
		if r.Load > 1 || r.MinLoad > r.Load {
			t.Errorf("%s b=%d: inconsistent loads %.4f, min %.4f", r.Impl, r.BucketSize, r.Load, r.MinLoad)
		}
	}
}

func TestInsertRates(t *testing.T) {
	rows, err := InsertRates(50000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 19 || rows[18].ToLoad < 0.94 {
		t.Fatalf("%d bands, last ends at %.2f", len(rows), rows[len(rows)-1].ToLoad)
	}
	for _, r := range rows {
		if r.NsPerInsert <= 0 {
			t.Errorf("band %.2f-%.2f: %.1f ns", r.FromLoad, r.ToLoad, r.NsPerInsert)
		}
	}
}
