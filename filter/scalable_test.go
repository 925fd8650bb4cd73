package filter_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/modeltest"
)

// TestScalableGrowth grows a filter to 100 times its initial capacity and
// checks each stage as it is added: stage k has f0+k fingerprint bits and
// Growth times the capacity of stage k-1, a stage is added only once the
// newest one holds its capacity, and no key is ever lost.
func TestScalableGrowth(t *testing.T) {
	for _, c := range []struct {
		initial uint64
		growth  int
		b       int
		rate    float64
	}{{100, 2, 4, 0.01}, {37, 3, 2, 0.05}, {10, 4, 8, 0.001}, {50, 1, 4, 0.01}} {
		t.Run(fmt.Sprintf("initial=%d/growth=%d/b=%d/rate=%g", c.initial, c.growth, c.b, c.rate), func(t *testing.T) {
			s := mustScalable(t, filter.ScalableConfig{InitialCapacity: c.initial, Growth: c.growth, BucketSize: c.b, FalsePositiveRate: c.rate, Seed: 4})
			// Stage 0 is built for half the rate: f0 = ceil(log2(2b/(rate/2))).
			f0 := int(math.Ceil(math.Log2(2 * float64(c.b) / (c.rate / 2))))
			if got := s.Stage(0).FingerprintBits(); got != f0 {
				t.Fatalf("stage 0 has %d-bit fingerprints, want %d", got, f0)
			}
			n := int(c.initial) * 100
			ks := keys(n, 21)
			stages := 1
			for i, k := range ks {
				if err := s.Insert(k); err != nil {
					t.Fatalf("insert %d: %v", i, err)
				}
				if s.Stages() == stages {
					continue
				}
				if s.Stages() != stages+1 {
					t.Fatalf("insert %d added %d stages", i, s.Stages()-stages)
				}
				stages++
				prev, last := s.Stage(stages-2), s.Stage(stages-1)
				if prev.Len() != prev.Capacity() {
					t.Fatalf("stage %d added while stage %d holds %d of %d", stages-1, stages-2, prev.Len(), prev.Capacity())
				}
				if want := prev.Capacity() * uint64(c.growth); last.Capacity() != want {
					t.Fatalf("stage %d capacity %d, want %d x %d", stages-1, last.Capacity(), prev.Capacity(), c.growth)
				}
				if want := min(f0+stages-1, 32); last.FingerprintBits() != want {
					t.Fatalf("stage %d has %d-bit fingerprints, want %d", stages-1, last.FingerprintBits(), want)
				}
				if last.Len() != 1 || last.BucketSize() != c.b || last.Seed() != 4 {
					t.Fatalf("new stage: Len %d, b %d, seed %d", last.Len(), last.BucketSize(), last.Seed())
				}
			}
			if err := scalableInvariants(s); err != nil {
				t.Fatal(err)
			}
			if s.Len() != uint64(n) {
				t.Fatalf("Len = %d, want %d", s.Len(), n)
			}
			var capacity uint64
			for i := range s.Stages() {
				capacity += s.Stage(i).Capacity()
			}
			if s.Capacity() != capacity || capacity < uint64(n) {
				t.Fatalf("Capacity = %d, stages sum to %d, %d keys held", s.Capacity(), capacity, n)
			}
			for i, k := range ks {
				if !s.Contains(k) || s.Count(k) < 1 {
					t.Fatalf("key %d lost: Contains %v, Count %d", i, s.Contains(k), s.Count(k))
				}
			}
			t.Logf("%d keys: %d stages, capacity %d, load %.3f, %.1f bits/key, expected rate %.3g",
				n, s.Stages(), s.Capacity(), s.LoadFactor(), 8*float64(s.SizeInBytes())/float64(n), s.FalsePositiveRate())
		})
	}
}

// TestScalableDeleteCount deletes keys spread over several stages, checking
// counts against a model. (Deletes of keys whose fingerprint collides with
// another's in some stage are left out while TestScalableDeleteAcrossStages
// fails.)
func TestScalableDeleteCount(t *testing.T) {
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 16, BucketSize: 4, FalsePositiveRate: 0.01, Seed: 8})
	m := newScalableModel(t, s)
	r := rand.New(rand.NewPCG(1, 1))
	for range scaled(3000, 3) {
		op := []int{modeltest.OpInsert, modeltest.OpInsert, modeltest.OpInsert, modeltest.OpInsertUnique, modeltest.OpDelete, modeltest.OpDelete, modeltest.OpCount, modeltest.OpContains}[r.IntN(8)]
		m.Apply(op, fmt.Appendf(nil, "k%d", r.IntN(300)))
	}
	if s.Stages() < 4 {
		t.Fatalf("only %d stages: the test should span several", s.Stages())
	}
	// Drain: every held key can be deleted as often as it was inserted.
	for k, n := range m.Counts {
		for range n {
			m.Apply(modeltest.OpDelete, []byte(k))
		}
	}
	t.Logf("%d stages; %d keys left after draining (deletes skipped for colliding keys)", s.Stages(), m.Total)
	// Duplicates need as many deletes as inserts: insert until the newest
	// stage holds the most copies that fit, then delete them all.
	k := []byte("dup")
	copies := 0
	for ; copies < 20; copies++ {
		if err := s.Insert(k); err != nil {
			if !errors.Is(err, filter.ErrFull) {
				t.Fatal(err)
			}
			break
		}
	}
	if copies < 8 {
		t.Fatalf("only %d copies fit, want at least 2b = 8", copies)
	}
	if c := s.Count(k); c < copies {
		t.Fatalf("Count = %d after %d inserts", c, copies)
	}
	for i := range copies {
		if !s.Delete(k) {
			t.Fatalf("delete %d of %d copies failed", i+1, copies)
		}
	}
}

// TestScalableDeleteAcrossStages measures the hazard documented on
// Scalable.Delete: deleting a present key removes a copy from the newest
// stage where its fingerprint matches, which is another key's when the match
// there is a false positive. It grows a filter over several stages, deletes
// half its keys and counts the remaining keys that are no longer found: the
// loss rate per delete must stay below the configured false-positive rate
// (the chance of a false match in a newer stage than the key's own).
func TestScalableDeleteAcrossStages(t *testing.T) {
	const rate = 0.05
	n := scaled(40000, 4)
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 256, BucketSize: 4, FalsePositiveRate: rate, Seed: 3})
	ks := keys(n, 21)
	for _, k := range ks {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	deletes, lost := n/2, 0
	for _, k := range ks[:deletes] {
		if !s.Delete(k) {
			lost++ // an earlier delete took this key's copy
		}
	}
	for _, k := range ks[deletes:] {
		if !s.Contains(k) {
			lost++
		}
	}
	perDelete := float64(lost) / float64(deletes)
	t.Logf("%d stages, %d deletes: %d other keys lost (%.4f a delete; configured rate %v)", s.Stages(), deletes, lost, perDelete, rate)
	if perDelete > rate {
		t.Fatalf("loss rate %.4f a delete exceeds the configured false-positive rate %v", perDelete, rate)
	}
}

// TestScalableDuplicateGrowth inserts one key many times. Copies of one key
// must not make the filter grow: once the newest stage holds 2b copies of
// its fingerprint (plus its victim slot), Insert returns ErrFull, and the
// capacity stays what it was.
func TestScalableDuplicateGrowth(t *testing.T) {
	cfg := filter.ScalableConfig{InitialCapacity: 1000, BucketSize: 2}
	s := mustScalable(t, cfg)
	accepted := 0
	for range 100 {
		err := s.Insert([]byte("same"))
		if err == nil {
			accepted++
			continue
		}
		if !errors.Is(err, filter.ErrFull) {
			t.Fatal(err)
		}
	}
	if accepted < 4 || accepted > 5 {
		t.Fatalf("%d copies accepted, want 2b (+1 for the victim slot) = 4 or 5", accepted)
	}
	if s.Stages() != 1 || s.Capacity() != cfg.InitialCapacity {
		t.Fatalf("after 100 inserts of one key: %d stages, capacity %d", s.Stages(), s.Capacity())
	}
	if s.Count([]byte("same")) != accepted {
		t.Fatalf("Count = %d, want %d", s.Count([]byte("same")), accepted)
	}
	// A full stage still grows for a new distinct key.
	for i := range 2000 {
		if err := s.Insert(fmt.Appendf(nil, "distinct-%d", i)); err != nil {
			t.Fatalf("distinct key %d: %v", i, err)
		}
	}
	if s.Stages() < 2 {
		t.Fatal("distinct keys past the capacity did not add a stage")
	}
}

// TestScalableTooManyStages grows a filter of Growth 1 to 300 stages: a
// filter that encodes must decode.
func TestScalableTooManyStages(t *testing.T) {
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 1, Growth: 1, Seed: 1})
	for _, k := range keys(300, 6) {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := s.MarshalBinary()
	if err != nil {
		return // refusing to encode is also consistent
	}
	var g filter.Scalable
	if err := g.UnmarshalBinary(enc); err != nil {
		t.Fatalf("a %d-stage filter encodes, but decoding it fails: %v", s.Stages(), err)
	}
}

// TestScalableFalsePositiveRate grows a filter to 64 times its initial
// capacity and measures its total rate on non-members, in 3000/rate lookups
// (750/rate when quick). The measured rate must be below the configured one;
// the expected rates of these configurations are 0.5 to 0.75 of it and the
// measurement's standard deviation is at most 3.5% of it, so the check has a
// margin of more than 7 sigma. The measured rate must also agree with
// FalsePositiveRate() within 5 sigma plus 3%, as in TestFalsePositiveRate.
// (Configurations where ceil(log2(4b/rate)) leaves no slack come close to the
// bound: b = 8 with rate 0.001 expects 0.95 of it after 64x growth.)
func TestScalableFalsePositiveRate(t *testing.T) {
	for _, c := range []struct {
		rate float64
		b    int
	}{{0.01, 4}, {0.05, 2}, {0.003, 8}} {
		t.Run(fmt.Sprintf("rate=%g/b=%d", c.rate, c.b), func(t *testing.T) {
			initial := uint64(scaled(2000, 4))
			s := mustScalable(t, filter.ScalableConfig{InitialCapacity: initial, BucketSize: c.b, FalsePositiveRate: c.rate, Seed: 12})
			var buf []byte
			for i := range 64 * initial {
				buf = tagKey(buf, tagMember, i)
				if err := s.Insert(buf); err != nil {
					t.Fatalf("insert %d: %v", i, err)
				}
			}
			lookups := scaled(int(3000/c.rate), 4)
			fp := 0
			for i := range uint64(lookups) {
				buf = tagKey(buf, tagNonMember, i)
				if s.Contains(buf) {
					fp++
				}
			}
			measured := float64(fp) / float64(lookups)
			expected := s.FalsePositiveRate()
			sigma := math.Sqrt(expected * (1 - expected) / float64(lookups))
			t.Logf("%d keys in %d stages (capacity %d): %d false positives in %d lookups, rate %.4g, expected %.4g, configured %g",
				s.Len(), s.Stages(), s.Capacity(), fp, lookups, measured, expected, c.rate)
			if measured >= c.rate {
				t.Errorf("measured rate %.4g is not below the configured %g", measured, c.rate)
			}
			if expected >= c.rate {
				t.Errorf("FalsePositiveRate() = %.4g, not below the configured %g", expected, c.rate)
			}
			if tol := 5*sigma + 0.03*expected; math.Abs(measured-expected) > tol {
				t.Errorf("measured rate %.4g differs from FalsePositiveRate() %.4g by more than %.2g", measured, expected, tol)
			}
		})
	}
}

func TestScalableConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  filter.ScalableConfig
		want string
	}{
		{filter.ScalableConfig{}, "ScalableConfig.InitialCapacity is 0"},
		{filter.ScalableConfig{InitialCapacity: 1, FalsePositiveRate: 1}, "ScalableConfig.FalsePositiveRate is 1"},
		{filter.ScalableConfig{InitialCapacity: 1, FalsePositiveRate: -0.1}, "ScalableConfig.FalsePositiveRate is -0.1"},
		{filter.ScalableConfig{InitialCapacity: 1, FalsePositiveRate: math.NaN()}, "ScalableConfig.FalsePositiveRate is NaN"},
		{filter.ScalableConfig{InitialCapacity: 1, FalsePositiveRate: 1e-12}, "ScalableConfig.FalsePositiveRate 1e-12: too small"},
		{filter.ScalableConfig{InitialCapacity: 1, Growth: -1}, "ScalableConfig.Growth is -1"},
		{filter.ScalableConfig{InitialCapacity: 1, Growth: 1025}, "ScalableConfig.Growth is 1025"},
		{filter.ScalableConfig{InitialCapacity: 1, BucketSize: 3}, "ScalableConfig.BucketSize is 3"},
		{filter.ScalableConfig{InitialCapacity: 1, BucketSize: -4}, "ScalableConfig.BucketSize is -4"},
		{filter.ScalableConfig{InitialCapacity: 1, MaxKicks: -1}, "ScalableConfig.MaxKicks is -1"},
		{filter.ScalableConfig{InitialCapacity: 1, MaxKicks: 1<<16 + 1}, "ScalableConfig.MaxKicks is 65537"},
		{filter.ScalableConfig{InitialCapacity: 1 << 40}, "ScalableConfig.InitialCapacity 1099511627776"},
	}
	for _, c := range cases {
		s, err := filter.NewScalable(c.cfg)
		if err == nil || s != nil {
			t.Errorf("NewScalable(%+v) = %v, %v; want an error", c.cfg, s, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewScalable(%+v): %q does not say %q", c.cfg, err, c.want)
		}
	}
	// Boundaries that are valid.
	for _, cfg := range []filter.ScalableConfig{
		{InitialCapacity: 1, Growth: 1}, {InitialCapacity: 1, Growth: 1024}, {InitialCapacity: 1, MaxKicks: 1 << 16},
		{InitialCapacity: 1, FalsePositiveRate: 0.999}, {InitialCapacity: 1, BucketSize: 8},
	} {
		if _, err := filter.NewScalable(cfg); err != nil {
			t.Errorf("NewScalable(%+v): %v", cfg, err)
		}
	}
}

func TestScalableDefaults(t *testing.T) {
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 10})
	want := filter.ScalableConfig{InitialCapacity: 10, FalsePositiveRate: 0.01, Growth: 2, BucketSize: 4, MaxKicks: 500}
	if got := s.Config(); got != want {
		t.Fatalf("Config() = %+v, want %+v", got, want)
	}
	if s.Stages() != 1 || s.Len() != 0 || s.LoadFactor() != 0 || s.Stage(0).FingerprintBits() != 11 {
		t.Fatalf("new filter: %d stages, Len %d, load %v, f0 %d", s.Stages(), s.Len(), s.LoadFactor(), s.Stage(0).FingerprintBits())
	}
}

func TestScalableReset(t *testing.T) {
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 20, Seed: 3})
	ks := keys(500, 4)
	for _, k := range ks {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	first := s.Stage(0)
	if s.Stages() < 3 {
		t.Fatalf("%d stages", s.Stages())
	}
	s.Reset()
	if s.Stages() != 1 || s.Len() != 0 || s.Capacity() != 20 || s.Stage(0) != first {
		t.Fatalf("after Reset: %d stages, Len %d, capacity %d", s.Stages(), s.Len(), s.Capacity())
	}
	if err := scalableInvariants(s); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, k := range ks {
		if s.Contains(k) {
			found++
		}
	}
	if found != 0 {
		t.Fatalf("%d of %d keys found in an empty filter", found, len(ks))
	}
	// It grows again as a new filter does.
	for _, k := range ks {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range ks {
		if !s.Contains(k) {
			t.Fatalf("%q lost after Reset and reinsert", k)
		}
	}
	if err := scalableInvariants(s); err != nil {
		t.Fatal(err)
	}
}

func TestScalableRoundTrip(t *testing.T) {
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 30, Growth: 3, BucketSize: 2, FalsePositiveRate: 0.02, MaxKicks: 100, Seed: 99})
	ks := keys(1000, 7)
	for _, k := range ks[:700] {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	enc := mustMarshal(t, s)
	var buf bytes.Buffer
	n, err := s.WriteTo(&buf)
	if err != nil || n != int64(len(enc)) || !bytes.Equal(buf.Bytes(), enc) {
		t.Fatalf("WriteTo = %d, %v; differs from MarshalBinary's %d bytes", n, err, len(enc))
	}
	g, err := filter.ReadScalable(bytes.NewReader(enc))
	if err != nil {
		t.Fatal(err)
	}
	var u filter.Scalable
	if err := u.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	var rf filter.Scalable
	if n, err := rf.ReadFrom(bytes.NewReader(enc)); err != nil || n != int64(len(enc)) {
		t.Fatalf("ReadFrom = %d, %v; want %d", n, err, len(enc))
	}
	for _, d := range []*filter.Scalable{g, &u, &rf} {
		if !bytes.Equal(mustMarshal(t, d), enc) {
			t.Fatal("decoded filter re-encodes differently")
		}
		if d.Config() != s.Config() || d.Stages() != s.Stages() || d.Len() != s.Len() || d.Capacity() != s.Capacity() {
			t.Fatalf("decoded: %+v %d stages Len %d", d.Config(), d.Stages(), d.Len())
		}
		if err := scalableInvariants(d); err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			if d.Contains(k) != s.Contains(k) || d.Count(k) != s.Count(k) {
				t.Fatalf("decoded filter answers %q differently", k)
			}
		}
	}
	// Both keep growing the same way.
	for _, k := range ks[700:] {
		if s.Insert(k) != nil || g.Insert(k) != nil {
			t.Fatal("insert after the round trip failed")
		}
	}
	if !bytes.Equal(mustMarshal(t, g), mustMarshal(t, s)) {
		t.Fatal("original and decoded filter diverged after the same inserts")
	}
}

func TestScalableContainsBatch(t *testing.T) {
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 50, Seed: 1})
	ks := keys(1000, 3)
	for _, k := range ks[:500] {
		if err := s.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{0, 1, 31, 32, 33, 1000} {
		out := make([]bool, n+3)
		for i := range out {
			out[i] = true // stale values must be overwritten
		}
		out[n] = true
		s.ContainsBatch(ks[:n], out)
		for i, k := range ks[:n] {
			if out[i] != s.Contains(k) {
				t.Fatalf("n=%d: key %d: batch %v, Contains %v", n, i, out[i], s.Contains(k))
			}
			if i < 500 && !out[i] {
				t.Fatalf("n=%d: member %d not found by the batch", n, i)
			}
		}
		if !out[n] {
			t.Fatalf("n=%d: ContainsBatch wrote past the keys", n)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "filter: ContainsBatch") {
			t.Fatalf("short out: recovered %v, want a filter: ContainsBatch panic", r)
		}
	}()
	s.ContainsBatch(ks[:10], make([]bool, 9))
}

func TestScalableStringVariants(t *testing.T) {
	s := mustScalable(t, filter.ScalableConfig{InitialCapacity: 2, Seed: 5})
	for i := range 10 {
		if err := s.InsertString(fmt.Sprint("s", i)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Stages() < 2 {
		t.Fatal("no growth")
	}
	for i := range 10 {
		k := fmt.Sprint("s", i)
		if !s.ContainsString(k) || !s.Contains([]byte(k)) || s.CountString(k) != s.Count([]byte(k)) {
			t.Fatalf("%q: string and byte variants disagree", k)
		}
		if ok, err := s.InsertUniqueString(k); ok || err != nil {
			t.Fatalf("InsertUniqueString(%q) of a present key = %v, %v", k, ok, err)
		}
	}
	if ok, err := s.InsertUnique([]byte("new")); !ok || err != nil {
		t.Fatalf("InsertUnique of a new key = %v, %v", ok, err)
	}
	if !s.DeleteString("new") || s.Len() != 10 {
		t.Fatalf("DeleteString: Len %d", s.Len())
	}
	if s.SizeInBytes() == 0 {
		t.Fatal("SizeInBytes = 0")
	}
}
