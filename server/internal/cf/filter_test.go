package cf_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// TestValidate: each parameter out of RedisBloom's range is refused with
// RedisBloom's text, checked in the order capacity, bucket size, max
// iterations, expansion, layout, slots.
func TestValidate(t *testing.T) {
	ok := cf.Params{Capacity: 1000, BucketSize: 2, MaxIter: 20, Expansion: 1, Slots: 2}
	for _, tc := range []struct {
		name string
		edit func(*cf.Params)
		err  string // "" for valid
	}{
		{"valid", func(*cf.Params) {}, ""},
		{"capacity=0", func(p *cf.Params) { p.Capacity = 0 }, "ERR Bad capacity"},
		{"capacity=2^32", func(p *cf.Params) { p.Capacity = cf.MaxCapacity }, ""},
		{"capacity=2^32+1", func(p *cf.Params) { p.Capacity = cf.MaxCapacity + 1 }, "ERR Bad capacity"},
		{"capacity=2^40/redisbloom", func(p *cf.Params) { p.Capacity, p.Layout, p.Slots = 1<<40, cf.LayoutRedisBloom, 0 }, ""},
		{"bucket=0", func(p *cf.Params) { p.BucketSize = 0 }, "ERR Bad bucket size"},
		{"bucket=256", func(p *cf.Params) { p.BucketSize = 256 }, "ERR Bad bucket size"},
		{"bucket=255", func(p *cf.Params) { p.BucketSize = 255 }, ""},
		{"maxiter=0", func(p *cf.Params) { p.MaxIter = 0 }, "ERR Bad maxIterations"},
		{"maxiter=65536", func(p *cf.Params) { p.MaxIter = 65536 }, "ERR Bad maxIterations"},
		{"expansion=-1", func(p *cf.Params) { p.Expansion = -1 }, "ERR Bad expansion"},
		{"expansion=32769", func(p *cf.Params) { p.Expansion = 32769 }, "ERR Bad expansion"},
		{"expansion=0", func(p *cf.Params) { p.Expansion = 0 }, ""},
		{"layout=2", func(p *cf.Params) { p.Layout = 2 }, "ERR Bad layout"},
		{"slots=3", func(p *cf.Params) { p.Slots = 3 }, "ERR Bad bucket size"},
		{"slots=5", func(p *cf.Params) { p.Slots = 5 }, ""},
		{"slots=0", func(p *cf.Params) { p.Slots = 0 }, ""},
		{"slots=2/redisbloom", func(p *cf.Params) { p.Layout = cf.LayoutRedisBloom }, "ERR Bad bucket size"},
		// The first check that fails answers.
		{"capacity=0,bucket=0", func(p *cf.Params) { p.Capacity, p.BucketSize = 0, 0 }, "ERR Bad capacity"},
		{"maxiter=0,expansion=-1", func(p *cf.Params) { p.MaxIter, p.Expansion = 0, -1 }, "ERR Bad maxIterations"},
	} {
		p := ok
		tc.edit(&p)
		err := p.Validate()
		if got := fmt.Sprint(err); tc.err == "" && err != nil || tc.err != "" && got != tc.err {
			t.Errorf("%s: Validate() = %v, want %q", tc.name, err, tc.err)
		}
		// Init refuses what Validate refuses, before charging anything.
		if tc.err != "" {
			m := newMeter(1 << 40)
			if err := new(cf.Filter).Init(p, m.charge); fmt.Sprint(err) != tc.err || m.charges != 0 {
				t.Errorf("%s: Init = %v with %d charges, want %q and none", tc.name, err, m.charges, tc.err)
			}
		}
	}
}

// TestSlots: the bucket size built (Bucket), and what records keep of it
// (RecordedSlots) and read back (SetRecordedSlots), for new filters,
// filters of older servers, and RedisBloom's layout.
func TestSlots(t *testing.T) {
	for _, tc := range []struct {
		bucket, slots int
		layout        cf.Layout
		built         int // Bucket()
		recorded      int // RecordedSlots()
	}{
		{bucket: 1, slots: 2, built: 2, recorded: 0},
		{bucket: 2, slots: 2, built: 2, recorded: 0},
		{bucket: 4, slots: 4, built: 4, recorded: 0},
		{bucket: 8, slots: 4, built: 4, recorded: 0}, // as servers before b=5 built it
		{bucket: 8, slots: 5, built: 5, recorded: 5},
		{bucket: 5, slots: 5, built: 5, recorded: 5},
		{bucket: 4, slots: 5, built: 5, recorded: 5}, // CF.ADD's key: BUCKETSIZE 4, 5 slots never; recorded anyway
		{bucket: 8, slots: 0, built: 4, recorded: 0}, // read from a record without the field: legacy 4
		{bucket: 2, slots: 0, built: 2, recorded: 0},
		{bucket: 7, layout: cf.LayoutRedisBloom, built: 7, recorded: 0},
	} {
		p := cf.Params{BucketSize: tc.bucket, Slots: tc.slots, Layout: tc.layout}
		if got := p.Bucket(); got != tc.built {
			t.Errorf("%+v: Bucket() = %d, want %d", p, got, tc.built)
		}
		if got := p.RecordedSlots(); got != tc.recorded {
			t.Errorf("%+v: RecordedSlots() = %d, want %d", p, got, tc.recorded)
		}
		// Reading the record back gives the slots built.
		q := cf.Params{BucketSize: tc.bucket, Layout: tc.layout}
		q.SetRecordedSlots(p.RecordedSlots())
		if q.Bucket() != tc.built {
			t.Errorf("%+v: recorded as %d, read back as %d slots, want %d", p, p.RecordedSlots(), q.Bucket(), tc.built)
		}
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{cf.LayoutCuckoo.String(), "cuckoo"},
		{cf.LayoutRedisBloom.String(), "redisbloom"},
		{cf.Compat86.String(), "8.6"},
		{cf.Compat26.String(), "2.6"},
		{cf.ErrFull.Error(), "Filter is full"},
		{cf.ErrMaxExpansions.Error(), "Maximum expansions reached"},
		{cf.ErrInvalidPosition.Error(), "Invalid position"},
		{cf.ErrBadChunk.Error(), "Couldn't load chunk!"},
		{cf.ErrInvalidHeaderRB.Error(), "Invalid header"},
		{cf.ErrHeaderBucketRB.Error(), "Couldn't create filter!"},
		{cf.ErrPayloadFooter.Error(), "ERR DUMP payload version or checksum are wrong"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}

// TestShapes: each shape takes items, finds them, counts and deletes them,
// and reports the encoding, bucket size and figures it was made with.
func TestShapes(t *testing.T) {
	encodings := map[string]string{"growing/b=2": "growing", "growing/b=4": "growing", "growing/b=5": "growing",
		"fixed/b=5": "fixed", "fixed/b=2": "fixed", "fixed/b=4": "fixed", "redisbloom": "redisbloom"}
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			f := newFilter(t, s.p)
			if got := f.Encoding(); got != encodings[s.name] {
				t.Errorf("Encoding() = %q, want %q", got, encodings[s.name])
			}
			if f.Params() != s.p {
				t.Errorf("Params() = %+v, want %+v", f.Params(), s.p)
			}
			if f.Filters() != 1 || f.Inserted() != 0 || f.Deleted() != 0 || f.FirstBuckets() == 0 || f.SizeBytes() == 0 {
				t.Errorf("a new filter: %d filters, %d inserted, %d deleted, %d buckets, %d bytes",
					f.Filters(), f.Inserted(), f.Deleted(), f.FirstBuckets(), f.SizeBytes())
			}
			const n = 150
			addItems(t, f, 0, n)
			checkFound(t, f, 0, n)
			if f.Inserted() != n {
				t.Errorf("Inserted() = %d after %d adds", f.Inserted(), n)
			}
			for i := range n {
				if c := f.Count(item(i)); c < 1 {
					t.Fatalf("Count(%s) = %d after one add", item(i), c)
				}
			}
			// A second copy of one item: counted twice, deleted twice.
			addItems(t, f, 3, 4)
			if c := f.Count(item(3)); c < 2 {
				t.Errorf("Count of an item added twice = %d", c)
			}
			for range 2 {
				if !f.Del(item(3)) {
					t.Fatal("Del of an item added twice failed")
				}
			}
			for i := range n / 2 {
				if i != 3 && !f.Del(item(i)) {
					t.Fatalf("Del(%s) of an added item: false", item(i))
				}
			}
			checkFound(t, f, n/2, n)
			if want := int64(n - n/2); f.Inserted() != want || f.Deleted() != int64(n/2+1) {
				t.Errorf("after deletes: %d inserted, %d deleted; want %d, %d", f.Inserted(), f.Deleted(), want, n/2+1)
			}
		})
	}
}

// TestAddNX: CF.ADDNX adds an item only if absent, and then reports false
// and changes nothing.
func TestAddNX(t *testing.T) {
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			f := newFilter(t, s.p)
			if ok, err := f.Add([]byte("a"), true, false, free); !ok || err != nil {
				t.Fatalf("ADDNX of an absent item: %v, %v", ok, err)
			}
			if ok, err := f.Add([]byte("a"), true, false, free); ok || err != nil {
				t.Fatalf("ADDNX of a present item: %v, %v, want false, nil", ok, err)
			}
			if f.Inserted() != 1 || f.Count([]byte("a")) != 1 {
				t.Errorf("after ADDNX twice: %d inserted, count %d; want 1, 1", f.Inserted(), f.Count([]byte("a")))
			}
			// b is not a false positive of a (the seeds are fixed), so
			// deleting it finds nothing and counts nothing.
			if f.Del([]byte("b")) || f.Inserted() != 1 || f.Deleted() != 0 {
				t.Errorf("Del of an item never added: %d inserted, %d deleted after", f.Inserted(), f.Deleted())
			}
		})
	}
}

// TestSameItemFull: an item added until its two buckets hold 2b copies
// answers "Filter is full" instead of growing, and the copies stay.
func TestSameItemFull(t *testing.T) {
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			f := newFilter(t, s.p)
			x := []byte("again")
			var n int
			var err error
			for n = 0; n < 1000; n++ {
				if _, err = f.Add(x, false, false, free); err != nil {
					break
				}
			}
			if s.p.Layout == cf.LayoutRedisBloom {
				// RedisBloom grows a sub-filter for each 2b copies.
				if n < 2*s.p.BucketSize {
					t.Fatalf("%d copies before %v", n, err)
				}
				return
			}
			if !errors.Is(err, cf.ErrFull) || n != 2*s.p.Bucket() {
				t.Fatalf("%d copies, then %v; want %d, then %v", n, err, 2*s.p.Bucket(), cf.ErrFull)
			}
			if f.Count(x) != n || f.Inserted() != int64(n) || f.Filters() != 1 {
				t.Errorf("after a refused copy: count %d, %d inserted, %d filters; want %d, %d, 1", f.Count(x), f.Inserted(), f.Filters(), n, n)
			}
		})
	}
}

// TestGrowing: a growing table fed 100 times its capacity grows across
// many stages, keeps its first sub-filter's buckets, finds every item, and
// after half are deleted still finds the rest; its false-positive rate
// stays within a stated bound.
func TestGrowing(t *testing.T) {
	for _, s := range shapes[:3] {
		t.Run(s.name, func(t *testing.T) {
			n := 100 * int(s.p.Capacity)
			if testing.Short() {
				n /= 4
			}
			f := newFilter(t, s.p)
			first, size := f.FirstBuckets(), f.SizeBytes()
			addItems(t, f, 0, n)
			checkFound(t, f, 0, n)
			if f.Filters() < 5 || f.FirstBuckets() != first || f.SizeBytes() <= 4*size {
				t.Errorf("after %d items: %d filters, %d first buckets (was %d), %d bytes (was %d)",
					n, f.Filters(), f.FirstBuckets(), first, f.SizeBytes(), size)
			}
			for i := 0; i < n; i += 2 {
				if !f.Del(item(i)) {
					t.Fatalf("Del(%s): false", item(i))
				}
			}
			for i := 1; i < n; i += 2 {
				if !f.Exists(item(i)) {
					t.Fatalf("%s lost after deleting the even items", item(i))
				}
			}
			// Bounds, with the probes' noise (20,000 of them): doc.go's
			// 2b·α·15·1.5/2^w, about 10^-8 for b=2 and 0.25% for b=4, taken
			// at 0.1% and twice 0.25%; for b=5 (6 fingerprint bits and short
			// tails), doc.go's 3% grown 2000 times (here 100).
			bound := map[int]float64{2: 0.001, 4: 0.005, 5: 0.03}[s.p.Bucket()]
			fp := 0
			const probes = 20000
			for i := range probes {
				if f.Exists(fmt.Appendf(nil, "absent-%d", i)) {
					fp++
				}
			}
			rate := float64(fp) / probes
			t.Logf("%d items, %d filters, %d bytes, false-positive rate %.4f%%", n, f.Filters(), f.SizeBytes(), 100*rate)
			if rate > bound {
				t.Errorf("false-positive rate %.4f, above %.4f", rate, bound)
			}
		})
	}
}

// TestFixedFull: a fixed filter (EXPANSION 0) takes its capacity, then
// answers "Filter is full" without growing or losing an item.
func TestFixedFull(t *testing.T) {
	for _, s := range shapes[3:6] {
		t.Run(s.name, func(t *testing.T) {
			f := newFilter(t, s.p)
			size := f.SizeBytes()
			var n int
			var err error
			for n = 0; n < 10*int(s.p.Capacity); n++ {
				if _, err = f.Add(item(n), false, false, free); err != nil {
					break
				}
			}
			if !errors.Is(err, cf.ErrFull) || n < int(s.p.Capacity) {
				t.Fatalf("full after %d items of a capacity of %d: %v", n, s.p.Capacity, err)
			}
			checkFound(t, f, 0, n)
			if f.Filters() != 1 || f.SizeBytes() != size || f.Inserted() != int64(n) {
				t.Errorf("full: %d filters, %d bytes (was %d), %d inserted (want %d)", f.Filters(), f.SizeBytes(), size, f.Inserted(), n)
			}
		})
	}
}

// TestInitCharges: Init charges exactly the bytes the filter then takes,
// before allocating; a refused charge returns the refusal and leaves the
// filter zero, so that Init can be called again.
func TestInitCharges(t *testing.T) {
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			m := newMeter(1 << 40)
			f := new(cf.Filter)
			if err := f.Init(s.p, m.charge); err != nil {
				t.Fatal(err)
			}
			if m.mem != int64(f.SizeBytes()) || m.charges != 1 || m.haves[0] != 0 {
				t.Errorf("charged %d bytes in %d charges (have %v) for a filter of %d", m.mem, m.charges, m.haves, f.SizeBytes())
			}
			m = newMeter(int64(f.SizeBytes()) - 1)
			g := new(cf.Filter)
			err := g.Init(s.p, m.charge)
			if !errors.Is(err, errRefused) || m.mem != 0 {
				t.Fatalf("Init under a limit of one byte too few: %v, %d bytes charged", err, m.mem)
			}
			if (g.Params() != cf.Params{}) {
				t.Errorf("a refused Init set the parameters: %+v", g.Params())
			}
			if err := g.Init(s.p, free); err != nil {
				t.Fatalf("Init after a refused one: %v", err)
			}
			addItems(t, g, 0, 10)
		})
	}
}

// TestGrowthCharges: each step a growing table takes is charged before it
// is allocated, with what the filter holds; the charges add up to its size.
// A refused step returns the refusal, not "Filter is full", and leaves the
// filter as it was: its size, counts and items.
func TestGrowthCharges(t *testing.T) {
	for _, s := range append(shapes[:3:3], shapes[6]) {
		t.Run(s.name, func(t *testing.T) {
			m := newMeter(1 << 40)
			f := new(cf.Filter)
			if err := f.Init(s.p, m.charge); err != nil {
				t.Fatal(err)
			}
			charge := func(have, n uint64) error {
				if have != f.SizeBytes() {
					t.Errorf("a charge with have %d, the filter holds %d", have, f.SizeBytes())
				}
				return m.charge(have, n)
			}
			const n = 3000
			for i := range n {
				if _, err := f.Add(item(i), false, false, charge); err != nil {
					t.Fatalf("Add(%s): %v", item(i), err)
				}
			}
			if m.charges < 3 || m.mem != int64(f.SizeBytes()) {
				t.Fatalf("%d charges of %d bytes in all, the filter takes %d", m.charges, m.mem, f.SizeBytes())
			}
			// Now refuse every charge: adds go on until one needs to grow.
			m.limit = m.mem
			var refused error
			i := n
			for ; i < 100*n && refused == nil; i++ {
				size, ins, filters := f.SizeBytes(), f.Inserted(), f.Filters()
				before := f.Count(item(i))
				_, err := f.Add(item(i), false, false, charge)
				if err == nil {
					continue
				}
				refused = err
				if f.SizeBytes() != size || f.Inserted() != ins || f.Filters() != filters || f.Count(item(i)) != before {
					t.Errorf("a refused growth changed the filter: %d bytes (was %d), %d inserted (was %d), %d filters (was %d), count %d (was %d)",
						f.SizeBytes(), size, f.Inserted(), ins, f.Filters(), filters, f.Count(item(i)), before)
				}
			}
			if !errors.Is(refused, errRefused) {
				t.Fatalf("with no memory to grow: %v, want the refusal", refused)
			}
			if m.mem != int64(f.SizeBytes()) {
				t.Errorf("%d bytes charged, the filter takes %d", m.mem, f.SizeBytes())
			}
			checkFound(t, f, 0, i-1)
			// Memory again: the table grows again within a few adds, and
			// then takes the add that was refused. (Not at once: with its
			// stash full, package growing answers an insert that does not
			// fit with its last refusal, without asking again, until an
			// insert that fits splits a bucket; 2 to 12 adds here.)
			m.limit = 1 << 40
			charges := m.charges
			for j := i; j < i+100 && m.charges == charges; j++ {
				f.Add(item(j), false, false, charge)
			}
			if m.charges == charges {
				t.Fatal("no growth within 100 adds once memory is back")
			}
			if ok, err := f.Add(item(i-1), false, false, charge); !ok || err != nil {
				t.Errorf("the refused add, with memory: %v, %v", ok, err)
			}
		})
	}
}

// TestChain: a chain of stages, as version 1 snapshots hold them, grows a
// stage when its last is at capacity (charged first), deletes the newest
// copy first, compacts its empty stages away, and stops at MaxStages.
func TestChain(t *testing.T) {
	p := cf.Params{Capacity: 100, BucketSize: 4, MaxIter: 20, Expansion: 2, Seed: 3}
	p.SetRecordedSlots(0)
	f := newChain(t, p, 100, false)
	if f.Encoding() != "chain" || f.Filters() != 1 || f.StagePointers() != 8 {
		t.Fatalf("a chain of one stage: encoding %q, %d filters, %d bytes of pointers", f.Encoding(), f.Filters(), f.StagePointers())
	}
	checkFound(t, f, 0, 100)
	size := f.SizeBytes()
	m := newMeter(1 << 40)
	// Past capacity, the next add grows a stage of twice the capacity.
	if _, err := f.Add(item(100), false, false, m.charge); err != nil {
		t.Fatal(err)
	}
	if f.Filters() != 2 || m.charges != 1 || m.haves[0] != size || uint64(m.mem) != f.SizeBytes()-size {
		t.Fatalf("after growing: %d filters, %d charges (have %v), %d charged, %d bytes (was %d)",
			f.Filters(), m.charges, m.haves, m.mem, f.SizeBytes(), size)
	}
	if f.StagePointers() != 16 || f.FirstBuckets() >= f.SizeBytes() {
		t.Errorf("two stages: %d bytes of pointers, %d first buckets", f.StagePointers(), f.FirstBuckets())
	}
	// A refused stage is the refusal; the filter keeps its stages.
	m.limit = m.mem
	addItems(t, f, 101, 300) // the second stage holds 200
	if _, err := f.Add(item(300), false, false, m.charge); !errors.Is(err, errRefused) || f.Filters() != 2 {
		t.Fatalf("a stage refused: %v, %d filters", err, f.Filters())
	}
	checkFound(t, f, 0, 300)
	// Deleting the items of the second stage empties it; Compact drops it.
	for i := 100; i < 300; i++ {
		if !f.Del(item(i)) {
			t.Fatalf("Del(%s): false", item(i))
		}
	}
	if !f.Compact() || f.Filters() != 1 || f.Compact() {
		t.Errorf("Compact of an empty second stage: %d filters after, or it compacted twice", f.Filters())
	}
	checkFound(t, f, 0, 100)
	if f.Inserted() != 100 || f.Deleted() != 200 {
		t.Errorf("%d inserted, %d deleted; want 100, 200", f.Inserted(), f.Deleted())
	}
}

// TestChainMaxStages: a chain stops at MaxStages stages with "Maximum
// expansions reached" and "Filter is full" past it; log replay (force)
// adds stages past it, since a replayed add was acknowledged once.
func TestChainMaxStages(t *testing.T) {
	p := cf.Params{Capacity: 4, BucketSize: 2, MaxIter: 20, Expansion: 1, Seed: 3}
	p.SetRecordedSlots(0)
	f := newChain(t, p, 4, false)
	i := 4
	var err error
	for ; i < 10_000 && err == nil; i++ {
		_, err = f.Add(item(i), false, false, free)
	}
	if !errors.Is(err, cf.ErrMaxExpansions) && !errors.Is(err, cf.ErrFull) || f.Filters() != cf.MaxStages {
		t.Fatalf("after %d adds: %d filters, %v; want %d and a refusal", i, f.Filters(), err, cf.MaxStages)
	}
	checkFound(t, f, 0, i-1)
	for j := i; j < i+50; j++ {
		if ok, err := f.Add(item(j), false, true, free); !ok || err != nil {
			t.Fatalf("a replayed add past %d stages: %v, %v", cf.MaxStages, ok, err)
		}
	}
	if f.Filters() <= cf.MaxStages {
		t.Errorf("replay added no stage: %d", f.Filters())
	}
	checkFound(t, f, i, i+50)
	d := cf.Defaults{}.WithDefaults()
	if err := d.CheckGrowth(f); !errors.Is(err, cf.ErrMaxExpansions) {
		t.Errorf("CheckGrowth of %d filters under cf-max-expansions %d: %v", f.Filters(), d.MaxExpansions, err)
	}
}

// TestCompact: a growing table has no stages to drop; RedisBloom's
// layout compacts and resets its delete count, as RedisBloom does.
func TestCompact(t *testing.T) {
	g := newFilter(t, shapes[1].p)
	addItems(t, g, 0, 10)
	g.Del(item(0))
	if g.Compact() || g.Deleted() != 1 {
		t.Errorf("a growing table compacted: %d deleted", g.Deleted())
	}
	rb := newFilter(t, shapes[6].p)
	addItems(t, rb, 0, 2000)
	for i := range 1000 {
		rb.Del(item(i))
	}
	if !rb.Compact() || rb.Deleted() != 0 {
		t.Errorf("RedisBloom's Compact: %d deleted after", rb.Deleted())
	}
	checkFound(t, rb, 1000, 2000)
}

// TestTouch: touching items' buckets changes nothing that CF.INFO shows
// and finds nothing new.
func TestTouch(t *testing.T) {
	for _, s := range shapes {
		f := newFilter(t, s.p)
		addItems(t, f, 0, 50)
		before := f.Info()
		f.Touch([][]byte{item(1), item(1000), nil})
		if f.Info() != before {
			t.Errorf("%s: Touch changed CF.INFO: %v, was %v", s.name, f.Info(), before)
		}
		checkFound(t, f, 0, 50)
	}
}

// TestExistsNoAlloc: CF.EXISTS's lookup allocates nothing, in every shape.
// (A growing table's Count allocates once; not tested here.)
func TestExistsNoAlloc(t *testing.T) {
	for _, s := range shapes {
		f := newFilter(t, s.p)
		addItems(t, f, 0, 50)
		x := item(7)
		if n := testing.AllocsPerRun(100, func() { f.Exists(x) }); n != 0 {
			t.Errorf("%s: Exists allocates %.1f times", s.name, n)
		}
	}
}
