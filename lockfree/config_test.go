package lockfree_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// filterConfigs are Configs filter.New takes, in each shape a user writes
// them: capacity only, a rate from the README's 0.03 down to 0.0001, and
// explicit fields. want is the bucket size and fingerprint width New must
// pick: the filter's own for rates down to 2^-9, 2 slots below.
var filterConfigs = []struct {
	name string
	cfg  filter.Config
	b, f int
}{
	{"capacity-only", filter.Config{Capacity: 5000}, 4, 10},
	{"rate=0.03", filter.Config{Capacity: 5000, FalsePositiveRate: 0.03}, 4, 9},
	{"rate=0.01", filter.Config{Capacity: 5000, FalsePositiveRate: 0.01}, 4, 10},
	{"rate=0.002", filter.Config{Capacity: 5000, FalsePositiveRate: 0.002}, 4, 12},
	{"rate=0.001", filter.Config{Capacity: 5000, FalsePositiveRate: 0.001}, 2, 12},
	{"rate=0.0001", filter.Config{Capacity: 5000, FalsePositiveRate: 0.0001}, 2, 16},
	{"rate=1e-6", filter.Config{Capacity: 5000, FalsePositiveRate: 1e-6}, 2, 22},
	{"rate=2^-22", filter.Config{Capacity: 5000, FalsePositiveRate: math.Ldexp(1, -22)}, 2, 24},
	{"rate=0.001/seed/kicks", filter.Config{Capacity: 5000, FalsePositiveRate: 0.001, MaxKicks: 200, Seed: 99}, 2, 12},
	{"fingerprint=16", filter.Config{Capacity: 5000, FingerprintBits: 16}, 2, 16},
	{"fingerprint=12", filter.Config{Capacity: 5000, FingerprintBits: 12}, 4, 12},
	{"bucket=2/rate=0.0001", filter.Config{Capacity: 5000, BucketSize: 2, FalsePositiveRate: 0.0001}, 2, 16},
	{"bucket=2/fingerprint=20", filter.Config{Capacity: 5000, BucketSize: 2, FingerprintBits: 20}, 2, 20},
	{"bucket=8/rate=0.3", filter.Config{Capacity: 5000, BucketSize: 8, FalsePositiveRate: 0.3}, 8, 6},
}

// TestNewTakesFilterConfigs builds each Config with filter.New and New:
// New picks the expected shape, and a single goroutine inserts Capacity
// distinct keys, all found, the table's invariants intact, and the
// snapshot a filter.Filter of the same shape holding them.
func TestNewTakesFilterConfigs(t *testing.T) {
	for _, c := range filterConfigs {
		t.Run(c.name, func(t *testing.T) {
			if _, err := filter.New(c.cfg); err != nil {
				t.Fatalf("filter.New: %v", err)
			}
			f, err := lockfree.New(c.cfg)
			if err != nil {
				t.Fatalf("lockfree.New(%+v): %v", c.cfg, err)
			}
			if f.BucketSize() != c.b || f.FingerprintBits() != c.f {
				t.Errorf("%d slots of %d bits, want %d of %d", f.BucketSize(), f.FingerprintBits(), c.b, c.f)
			}
			if f.Capacity() != c.cfg.Capacity {
				t.Errorf("Capacity %d, want %d", f.Capacity(), c.cfg.Capacity)
			}
			if n, err := lockfree.Size(c.cfg); err != nil || n != f.SizeInBytes() {
				t.Errorf("Size = %d, %v; SizeInBytes %d", n, err, f.SizeInBytes())
			}
			ks := keys(int(c.cfg.Capacity), 100)
			for i, k := range ks {
				if err := f.Insert(k); err != nil {
					t.Fatalf("insert %d of %d (load %.4f): %v", i, len(ks), f.LoadFactor(), err)
				}
			}
			if err := f.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
			g := f.Snapshot()
			if g.BucketSize() != c.b || g.FingerprintBits() != c.f || g.Buckets() != f.Buckets() || g.Len() != f.Len() {
				t.Errorf("snapshot: %d buckets of %d slots of %d bits holding %d, want %d of %d of %d holding %d",
					g.Buckets(), g.BucketSize(), g.FingerprintBits(), g.Len(), f.Buckets(), c.b, c.f, f.Len())
			}
			back, err := lockfree.FromFilter(g)
			if err != nil {
				t.Fatalf("FromFilter(Snapshot): %v", err)
			}
			for i, k := range ks {
				if !f.Contains(k) || !g.Contains(k) || !back.Contains(k) {
					t.Fatalf("key %d missing (filter %v, snapshot %v, reloaded %v)", i, f.Contains(k), g.Contains(k), back.Contains(k))
				}
			}
			t.Logf("%d buckets of %d×%d bits, load %.3f, %.1f bits an item", f.Buckets(), c.b, c.f,
				f.LoadFactor(), float64(8*f.SizeInBytes())/float64(c.cfg.Capacity))
		})
	}
}

// TestCapacityAtNarrowBuckets checks the capacity promise of the 2-slot
// layout New picks for low rates: Capacity distinct keys fit, over table
// sizes and seeds, small tables included (filter's sizing adds room there).
// Both rates get filter's design load for 2 slots of 10 bits or more.
func TestCapacityAtNarrowBuckets(t *testing.T) {
	type run struct {
		capacity uint64
		seeds    int
	}
	runs := []run{{1, 6}, {2, 6}, {3, 6}, {10, 6}, {100, 6}, {1000, 6}, {10000, 2}, {100000, 1}}
	if testing.Short() || raceEnabled {
		runs = runs[:7]
	}
	for _, rate := range []float64{0.001, 0.0001} {
		for _, r := range runs {
			for seed := range uint64(r.seeds) {
				f := mustNew(t, filter.Config{Capacity: r.capacity, FalsePositiveRate: rate, Seed: seed})
				for i, k := range keys(int(r.capacity), 200+seed) {
					if err := f.Insert(k); err != nil {
						t.Fatalf("rate %v capacity %d seed %d: insert %d (load %.4f of %d buckets): %v",
							rate, r.capacity, seed, i, f.LoadFactor(), f.Buckets(), err)
					}
				}
			}
		}
	}
}

// TestFalsePositiveRateMeetsRequest fills a filter of each rate to its
// Capacity and looks up keys never inserted. The measured rate must not
// exceed the requested one by more than 4 standard deviations of the
// count (a binomial of q lookups at the requested rate), and must lie
// within 4 standard deviations plus 15% of the rate FalsePositiveRate
// predicts at the filter's load.
func TestFalsePositiveRateMeetsRequest(t *testing.T) {
	const n = 20000
	for _, rate := range []float64{0.03, 0.01, 0.001, 0.0001} {
		t.Run(fmt.Sprintf("rate=%v", rate), func(t *testing.T) {
			// Enough lookups for about 100 false positives at the
			// requested rate (20 under -short or -race).
			q := int(100 / rate)
			if testing.Short() || raceEnabled {
				q /= 5
			}
			f := mustNew(t, filter.Config{Capacity: n, FalsePositiveRate: rate, Seed: 3})
			for _, k := range keys(n, 300) {
				if err := f.Insert(k); err != nil {
					t.Fatal(err)
				}
			}
			// Absent keys: keys() ends each key with its index, below n;
			// these end with bit 63 set, so none was inserted.
			fp := 0
			var k [16]byte
			for i := range q {
				binary.LittleEndian.PutUint64(k[:8], uint64(i))
				binary.LittleEndian.PutUint64(k[8:], 1<<63|uint64(i))
				if f.Contains(k[:]) {
					fp++
				}
			}
			measured, theory := float64(fp)/float64(q), f.FalsePositiveRate()
			limit := rate + 4*math.Sqrt(rate*(1-rate)/float64(q))
			sd := math.Sqrt(theory * (1 - theory) / float64(q))
			t.Logf("requested %v: %d of %d absent keys found, measured %.3g (limit %.3g), expected %.3g at load %.3f, %d slots of %d bits, %.1f bits an item",
				rate, fp, q, measured, limit, theory, f.LoadFactor(), f.BucketSize(), f.FingerprintBits(), float64(8*f.SizeInBytes())/n)
			if measured > limit {
				t.Errorf("measured rate %.3g exceeds the requested %v (limit %.3g)", measured, rate, limit)
			}
			if math.Abs(measured-theory) > 4*sd+0.15*theory {
				t.Errorf("measured rate %.3g, expected %.3g ± %.3g", measured, theory, 4*sd+0.15*theory)
			}
		})
	}
}

// TestNewRefusals checks each refusal's message: it names the fields the
// caller set and, for a rate, the lowest one supported; a Config that did
// not set FingerprintBits hears nothing of fingerprints. Size refuses with
// the same message.
func TestNewRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  filter.Config
		want []string
		not  []string
	}{
		{"rate=1e-8", filter.Config{Capacity: 1000, FalsePositiveRate: 1e-8},
			[]string{"lockfree: a false-positive rate below 2.384185791015625e-07 is not supported", "Config.FalsePositiveRate is 1e-08"},
			[]string{"ingerprint", "slots", "BucketSize"}},
		{"rate=2.38e-7", filter.Config{Capacity: 1000, FalsePositiveRate: 2.38e-7},
			[]string{"below 2.384185791015625e-07 is not supported"}, []string{"ingerprint"}},
		{"fingerprint=28", filter.Config{Capacity: 1000, FingerprintBits: 28},
			[]string{"Config.FingerprintBits 28 is not supported", "at most 24 bits"}, []string{"BucketSize"}},
		{"bucket=4/rate=0.001", filter.Config{Capacity: 1000, BucketSize: 4, FalsePositiveRate: 0.001},
			[]string{"with Config.BucketSize 4, a false-positive rate below 0.001953125 is not supported", "Config.FalsePositiveRate is 0.001", "leave BucketSize 0"},
			[]string{"ingerprint"}},
		{"bucket=8/default-rate", filter.Config{Capacity: 1000, BucketSize: 8},
			[]string{"with Config.BucketSize 8, a false-positive rate below 0.25 is not supported", "Config.FalsePositiveRate is 0, which means 0.01", "leave BucketSize 0"},
			[]string{"ingerprint"}},
		{"bucket=2/rate=1e-8", filter.Config{Capacity: 1000, BucketSize: 2, FalsePositiveRate: 1e-8},
			[]string{"with Config.BucketSize 2, a false-positive rate below 2.384185791015625e-07 is not supported"},
			[]string{"ingerprint", "leave BucketSize 0"}},
		{"bucket=4/fingerprint=13", filter.Config{Capacity: 1000, BucketSize: 4, FingerprintBits: 13},
			[]string{"Config.BucketSize 4 with Config.FingerprintBits 13", "migration counter", "FingerprintBits may be at most 12"}, nil},
		{"capacity-past-2^32-narrow-buckets", filter.Config{Capacity: 10_000_000_000, FalsePositiveRate: 0.001},
			[]string{"lockfree: a false-positive rate below 0.001953125 takes buckets of 2 slots", "more than the 2^32 supported"}, nil},
		{"packing=semi-sorted", filter.Config{Capacity: 1000, Packing: filter.PackingSemiSorted},
			[]string{"lockfree: Config.Packing semi-sorted", "plain fingerprints"}, []string{"ingerprintBits", "BucketSize"}},
		{"filter-refusal", filter.Config{Capacity: 1000, FalsePositiveRate: 1.5},
			[]string{"lockfree: filter: Config.FalsePositiveRate is 1.5"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := lockfree.New(c.cfg)
			if err == nil {
				t.Fatalf("New(%+v) succeeded", c.cfg)
			}
			msg := err.Error()
			t.Log(msg)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the error lacks %q", w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(msg, w) {
					t.Errorf("the error mentions %q, which the caller did not set", w)
				}
			}
			if _, serr := lockfree.Size(c.cfg); serr == nil || serr.Error() != msg {
				t.Errorf("Size error %v, New error %v", serr, err)
			}
		})
	}
}

// TestFromFilterRefusesWideBuckets checks that a filter whose buckets do
// not fit a word (semi-sorted, 4 slots of 13 bits at rate 0.001) is refused
// with what to build instead, and that the advice works.
func TestFromFilterRefusesWideBuckets(t *testing.T) {
	g, err := filter.New(filter.Config{Capacity: 1000, FalsePositiveRate: 0.001, Packing: filter.PackingSemiSorted})
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockfree.FromFilter(g)
	for _, w := range []string{"lockfree: FromFilter: the filter's buckets of 4 slots of 13 bits", "at least 0.001953125", "BucketSize 2"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("FromFilter error %v, want it to say %q", err, w)
		}
	}
	g, err = filter.New(filter.Config{Capacity: 1000, FalsePositiveRate: 0.001, BucketSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockfree.FromFilter(g); err != nil {
		t.Errorf("FromFilter of a 2-slot filter: %v", err)
	}
}

// TestConfigRebuilds: Config, of a filter New built from each of
// filterConfigs and of one FromFilter loaded from its snapshot, builds an
// empty filter of the same layout, which hashes keys alike: the same keys
// inserted in the same order give the same snapshot, byte for byte.
func TestConfigRebuilds(t *testing.T) {
	for _, c := range filterConfigs {
		t.Run(c.name, func(t *testing.T) {
			f, err := lockfree.New(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				if err := f.InsertString(fmt.Sprint("k", i)); err != nil {
					t.Fatal(err)
				}
			}
			loaded, err := lockfree.FromFilter(f.Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			want, err := f.Snapshot().MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			for _, src := range []*lockfree.Filter{f, loaded} {
				dst, err := lockfree.New(src.Config())
				if err != nil {
					t.Fatalf("New(Config()): %v", err)
				}
				if dst.Buckets() != src.Buckets() || dst.BucketSize() != src.BucketSize() ||
					dst.FingerprintBits() != src.FingerprintBits() || dst.Capacity() != src.Capacity() || dst.Len() != 0 {
					t.Fatalf("New(Config()): %d buckets of %d×%d bits for %d keys, holding %d; the filter's %d of %d×%d for %d",
						dst.Buckets(), dst.BucketSize(), dst.FingerprintBits(), dst.Capacity(), dst.Len(),
						src.Buckets(), src.BucketSize(), src.FingerprintBits(), src.Capacity())
				}
				for i := range 100 {
					if err := dst.InsertString(fmt.Sprint("k", i)); err != nil {
						t.Fatal(err)
					}
				}
				if got, _ := dst.Snapshot().MarshalBinary(); !bytes.Equal(got, want) {
					t.Fatal("the filter New(Config()) built holds the same keys otherwise")
				}
			}
		})
	}
}

// TestSlotsAgree: Slots counts m·b slots, as filter.Filter's Slots does for
// the filter of the same Config, and LoadFactor divides Len by it.
func TestSlotsAgree(t *testing.T) {
	for _, c := range filterConfigs {
		f, err := lockfree.New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		g, err := filter.New(f.Config())
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			if err := f.InsertString(fmt.Sprint("k", i)); err != nil {
				t.Fatal(err)
			}
		}
		if f.Slots() != f.Buckets()*uint64(f.BucketSize()) || f.Slots() != g.Slots() ||
			f.LoadFactor() != float64(f.Len())/float64(f.Slots()) {
			t.Errorf("%s: Slots %d of %d buckets of %d, filter's %d; LoadFactor %v with %d keys",
				c.name, f.Slots(), f.Buckets(), f.BucketSize(), g.Slots(), f.LoadFactor(), f.Len())
		}
	}
}

// TestFromFilterRefusesRanked checks that a ranked filter, filter.New's
// default, is refused: its fingerprints range over Q·2^L values and its
// alternate bucket is another function, so a plain table cannot hold them.
func TestFromFilterRefusesRanked(t *testing.T) {
	g, err := filter.New(filter.Config{Capacity: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if g.Packing() != filter.PackingRanked {
		t.Fatalf("the default filter is %v, not ranked", g.Packing())
	}
	_, err = lockfree.FromFilter(g)
	if want := "lockfree: FromFilter: the filter's buckets are ranked"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("FromFilter error %v, want it to say %q", err, want)
	}
}
