package cf_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// TestWithDefaults: zero fields take RedisBloom's defaults, except
// BucketSize, whose 0 means "not set"; set fields stay.
func TestWithDefaults(t *testing.T) {
	d := cf.Defaults{}.WithDefaults()
	want := cf.Defaults{InitialSize: 1024, MaxIterations: 20, Expansion: 1, MaxExpansions: 32}
	if d != want {
		t.Errorf("Defaults{}.WithDefaults() = %+v, want %+v", d, want)
	}
	set := cf.Defaults{BucketSize: 3, InitialSize: 10, MaxIterations: 7, Expansion: 4, MaxExpansions: 2,
		Layout: cf.LayoutRedisBloom, Compat: cf.Compat26}
	if got := set.WithDefaults(); got != set {
		t.Errorf("WithDefaults changed set fields: %+v, want %+v", got, set)
	}
}

// TestRanges: the ranges of BUCKETSIZE, cf-bucket-size, cf-initial-size
// and CAPACITY follow RedisBloom 8 (bounded by each other) or 2.6 (not).
func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		name             string
		d                cf.Defaults
		rangeBucket      int64
		bucketLo, bucket int64 // BucketRange
		initLo, init     int64 // InitialRange
	}{
		{"defaults", cf.Defaults{}, 2, 1, 255, 4, 1 << 30},
		{"initial 1024", cf.Defaults{InitialSize: 1024}, 2, 1, 255, 4, 1 << 30},
		{"initial 100", cf.Defaults{InitialSize: 100}, 2, 1, 50, 4, 1 << 30},
		{"initial 3", cf.Defaults{InitialSize: 3}, 2, 1, 1, 4, 1 << 30},
		{"bucket 8", cf.Defaults{BucketSize: 8, InitialSize: 1024}, 8, 1, 255, 16, 1 << 30},
		{"2.6", cf.Defaults{InitialSize: 100, Compat: cf.Compat26}, 2, 1, 255, 4, 1 << 32},
		{"2.6 bucket 8", cf.Defaults{BucketSize: 8, InitialSize: 100, Compat: cf.Compat26}, 8, 1, 255, 16, 1 << 32},
	} {
		d := tc.d
		if got := d.RangeBucket(); got != tc.rangeBucket {
			t.Errorf("%s: RangeBucket() = %d, want %d", tc.name, got, tc.rangeBucket)
		}
		if lo, hi := d.BucketRange(); lo != tc.bucketLo || hi != tc.bucket {
			t.Errorf("%s: BucketRange() = [%d, %d], want [%d, %d]", tc.name, lo, hi, tc.bucketLo, tc.bucket)
		}
		if lo, hi := d.InitialRange(); lo != tc.initLo || hi != tc.init {
			t.Errorf("%s: InitialRange() = [%d, %d], want [%d, %d]", tc.name, lo, hi, tc.initLo, tc.init)
		}
	}
}

func TestSettingText(t *testing.T) {
	if got, want := cf.SettingText("cf-bucket-size", 1, 255, false), "Invalid value for `cf-bucket-size`"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got, want := cf.SettingText("cf-expansion-factor", 0, 32768, true), "Value for `cf-expansion-factor` must be in the range [0, 32768]"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestCreate: the parameters of a key CF.ADD or CF.INSERT creates, in
// both layouts, sized by the client or by cf-initial-size.
func TestCreate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		d     cf.Defaults
		sized bool
		want  cf.Params
	}{
		{"cf-initial-size", cf.Defaults{}, false, cf.Params{Capacity: 500, BucketSize: 4, MaxIter: 20, Expansion: 1, Slots: 4}},
		{"CAPACITY", cf.Defaults{}, true, cf.Params{Capacity: 500, BucketSize: 5, MaxIter: 20, Expansion: 1, Slots: 5}},
		{"cf-bucket-size 2", cf.Defaults{BucketSize: 2}, true, cf.Params{Capacity: 500, BucketSize: 2, MaxIter: 20, Expansion: 1, Slots: 2}},
		{"cf-bucket-size 9", cf.Defaults{BucketSize: 9}, false, cf.Params{Capacity: 500, BucketSize: 9, MaxIter: 20, Expansion: 1, Slots: 5}},
		{"zero fields default, set ones stay", cf.Defaults{Expansion: 0, MaxIterations: 9}, false, cf.Params{Capacity: 500, BucketSize: 4, MaxIter: 9, Expansion: 1, Slots: 4}},
		{"redisbloom", cf.Defaults{Layout: cf.LayoutRedisBloom}, true, cf.Params{Capacity: 500, BucketSize: 2, MaxIter: 20, Expansion: 1, Layout: cf.LayoutRedisBloom}},
		{"redisbloom cf-bucket-size 6", cf.Defaults{Layout: cf.LayoutRedisBloom, BucketSize: 6, Expansion: 3}, false,
			cf.Params{Capacity: 500, BucketSize: 6, MaxIter: 20, Expansion: 3, Layout: cf.LayoutRedisBloom}},
	} {
		d := tc.d.WithDefaults()
		p := d.Create(500, tc.sized)
		if *p != tc.want {
			t.Errorf("%s: Create = %+v, want %+v", tc.name, *p, tc.want)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: Create made parameters Validate refuses: %v", tc.name, err)
		}
	}
}

// TestParseReserveMore: CF.RESERVE's paths the other tables leave out:
// options with no value, negative and huge numbers, RedisBloom's layout.
func TestParseReserveMore(t *testing.T) {
	d := cf.Defaults{}.WithDefaults()
	rb := cf.Defaults{Layout: cf.LayoutRedisBloom}.WithDefaults()
	for _, tc := range []struct {
		d    *cf.Defaults
		args string
		err  string
		want cf.Params
	}{
		{d: &d, args: "1000 MAXITERATIONS", err: "Couldn't parse MAXITERATIONS"},
		{d: &d, args: "1000 BUCKETSIZE", err: "Couldn't parse BUCKETSIZE"},
		{d: &d, args: "1000 MAXITERATIONS 1e3", err: "Couldn't parse MAXITERATIONS"},
		{d: &d, args: "1000 MAXITERATIONS 99999999999999999999", err: "Couldn't parse MAXITERATIONS"},
		{d: &d, args: "-1", err: "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"},
		{d: &d, args: "99999999999999999999", err: "Bad capacity"},
		{d: &d, args: "1000 MAXITERATIONS 65535 EXPANSION 32768", want: cf.Params{Capacity: 1000, BucketSize: 5, MaxIter: 65535, Expansion: 32768, Slots: 5}},
		{d: &d, args: "1000 maxiterations 1", want: cf.Params{Capacity: 1000, BucketSize: 5, MaxIter: 1, Expansion: 1, Slots: 5}},
		{d: &rb, args: "1000", want: cf.Params{Capacity: 1000, BucketSize: 2, MaxIter: 20, Expansion: 1, Layout: cf.LayoutRedisBloom}},
		{d: &rb, args: "1000 BUCKETSIZE 7 EXPANSION 0", want: cf.Params{Capacity: 1000, BucketSize: 7, MaxIter: 20, Layout: cf.LayoutRedisBloom}},
		{d: &rb, args: "13 BUCKETSIZE 7", err: "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"},
	} {
		p, err := cf.ParseReserve(fields("CF.RESERVE k "+tc.args), tc.d)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("CF.RESERVE k %s: %v, want %q", tc.args, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("CF.RESERVE k %s: %v", tc.args, err)
		case tc.err == "" && *p != tc.want:
			t.Errorf("CF.RESERVE k %s: %+v, want %+v", tc.args, *p, tc.want)
		}
	}
}

// TestParseInsertCompat26: CF.INSERT's CAPACITY under Compat26 in this
// server's layout: RedisBloom 2.6's text below 2·bucket, this server's
// bound of 2^32 above.
func TestParseInsertCompat26(t *testing.T) {
	d := cf.Defaults{Compat: cf.Compat26}.WithDefaults()
	arity := errors.New("arity")
	for _, tc := range []struct{ args, err string }{
		{"CAPACITY 3 ITEMS a", "Capacity must be at least (BucketSize * 2)"},
		{"CAPACITY 4294967296 ITEMS a", ""},
		{"CAPACITY 4294967297 ITEMS a", "Capacity must be in the range [cf-bucket-size * 2, 4294967296]"},
		{"CAPACITY -4 ITEMS a", "Capacity must be at least (BucketSize * 2)"},
	} {
		_, _, err := cf.ParseInsert(fields(tc.args), &d, arity)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err) {
			t.Errorf("CF.INSERT k %s: %v, want %q", tc.args, err, tc.err)
		}
	}
}

// TestFigures: CF.INFO's figures and CF.DEBUG's line of a growing table
// grown past its first size, and of RedisBloom's layout, whose figures
// are RedisBloom's own.
func TestFigures(t *testing.T) {
	g := newFilter(t, shapes[1].p)
	first := g.FirstBuckets()
	addItems(t, g, 0, 5000)
	for i := range 100 {
		g.Del(item(i))
	}
	in := g.Info()
	want := [8]cf.Figure{
		{"Size", int64(g.SizeBytes())},
		{"Number of buckets", int64(first)},
		{"Number of filters", int64(g.Filters())},
		{"Number of items inserted", 4900},
		{"Number of items deleted", 100},
		{"Bucket size", 4},
		{"Expansion rate", 1},
		{"Max iterations", 20},
	}
	if in != want || g.Filters() < 2 {
		t.Errorf("a grown table's CF.INFO: %v, want %v with 2 filters at least", in, want)
	}
	if g.StagePointers() != 0 {
		t.Errorf("a growing table's StagePointers: %d", g.StagePointers())
	}

	p := shapes[6].p
	p.BucketSize, p.MaxIter, p.Expansion = 3, 50, 2
	rb := newFilter(t, p)
	addItems(t, rb, 0, 2000)
	rb.Del(item(0))
	in = rb.Info()
	// RedisBloom rounds the buckets of capacity/bucket up to a power of 2,
	// and grows sub-filters of expansion times the last's buckets.
	if in[1] != (cf.Figure{Name: "Number of buckets", Value: 128}) || in[3].Value != 1999 || in[4].Value != 1 ||
		in[5].Value != 3 || in[6].Value != 2 || in[7].Value != 50 || in[2].Value < 3 {
		t.Errorf("RedisBloom's CF.INFO: %v", in)
	}
	// Its Size counts its structures beside the slots: more than the
	// slots, and StagePointers is the difference.
	if uint64(in[0].Value) != rb.SizeBytes()+rb.StagePointers() || rb.StagePointers() == 0 {
		t.Errorf("Size %d, slots %d, overhead %d", in[0].Value, rb.SizeBytes(), rb.StagePointers())
	}
	wantDebug := "bktsize:3 buckets:128 items:1999 deletes:1 filters:" + strconv.FormatInt(in[2].Value, 10) + " max_iterations:50 expansion:2"
	if got := rb.Debug(); got != wantDebug {
		t.Errorf("RedisBloom's CF.DEBUG: %q, want %q", got, wantDebug)
	}
}
