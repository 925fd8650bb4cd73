package cf_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

func fields(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

func TestParseReserve(t *testing.T) {
	d := cf.Defaults{}.WithDefaults()
	for _, tc := range []struct {
		args string
		want cf.Params // when err is ""
		err  string
	}{
		// Sized by the client: 5 slots of 12 bits, the smallest shape,
		// fixed (EXPANSION 0) or not; 4 when BUCKETSIZE asks for 3 or 4;
		// 2 for 1 or 2.
		{args: "1000", want: cf.Params{Capacity: 1000, BucketSize: 5, MaxIter: 20, Expansion: 1, Slots: 5}},
		{args: "1000 bucketsize 2 MAXITERATIONS 50 Expansion 0", want: cf.Params{Capacity: 1000, BucketSize: 2, MaxIter: 50, Expansion: 0, Slots: 2}},
		{args: "4", want: cf.Params{Capacity: 4, BucketSize: 5, MaxIter: 20, Expansion: 1, Slots: 5}},
		{args: "1000 EXPANSION 0", want: cf.Params{Capacity: 1000, BucketSize: 5, MaxIter: 20, Expansion: 0, Slots: 5}},
		{args: "1000 BUCKETSIZE 1", want: cf.Params{Capacity: 1000, BucketSize: 1, MaxIter: 20, Expansion: 1, Slots: 2}},
		{args: "1000 BUCKETSIZE 3", want: cf.Params{Capacity: 1000, BucketSize: 3, MaxIter: 20, Expansion: 1, Slots: 4}},
		{args: "1000 BUCKETSIZE 4", want: cf.Params{Capacity: 1000, BucketSize: 4, MaxIter: 20, Expansion: 1, Slots: 4}},
		{args: "1000 BUCKETSIZE 8", want: cf.Params{Capacity: 1000, BucketSize: 8, MaxIter: 20, Expansion: 1, Slots: 5}},
		{args: "1000 BUCKETSIZE 255 EXPANSION 0", want: cf.Params{Capacity: 1000, BucketSize: 255, MaxIter: 20, Expansion: 0, Slots: 5}},
		{args: "1000 BUCKETSIZE 4 EXPANSION 0", want: cf.Params{Capacity: 1000, BucketSize: 4, MaxIter: 20, Expansion: 0, Slots: 4}},
		{args: "x", err: "Bad capacity"},
		{args: "3", err: "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"},
		{args: "7 BUCKETSIZE 4", err: "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"},
		{args: "1073741825", err: "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"},
		{args: "1073741824", want: cf.Params{Capacity: 1 << 30, BucketSize: 5, MaxIter: 20, Expansion: 1, Slots: 5}},
		{args: "1000 BUCKETSIZE x", err: "Couldn't parse BUCKETSIZE"},
		{args: "1000 BUCKETSIZE 0", err: "BUCKETSIZE: value must be in the range [1, 255]"},
		{args: "1000 BUCKETSIZE 256", err: "BUCKETSIZE: value must be in the range [1, 255]"},
		{args: "1000 MAXITERATIONS 0", err: "MAXITERATIONS: value must be in the range [1, 65535]"},
		{args: "1000 EXPANSION -1", err: "EXPANSION: value must be in the range [0, 32768]"},
		{args: "1000 EXPANSION 32769", err: "EXPANSION: value must be in the range [0, 32768]"},
		// RedisBloom looks each option up by name: a word that is no option
		// is ignored, the first of a repeated option counts, and the checks
		// go MAXITERATIONS, BUCKETSIZE, EXPANSION, then the capacity.
		{args: "1000 SIZE 4", want: cf.Params{Capacity: 1000, BucketSize: 5, MaxIter: 20, Expansion: 1, Slots: 5}},
		{args: "1000 BUCKETSIZE 2 BUCKETSIZE 8", want: cf.Params{Capacity: 1000, BucketSize: 2, MaxIter: 20, Expansion: 1, Slots: 2}},
		{args: "1000 EXPANSION x BUCKETSIZE 0 MAXITERATIONS 0", err: "MAXITERATIONS: value must be in the range [1, 65535]"},
		{args: "1000 EXPANSION x BUCKETSIZE 0", err: "BUCKETSIZE: value must be in the range [1, 255]"},
		{args: "3 EXPANSION x", err: "Couldn't parse EXPANSION"},
		{args: "1000 x EXPANSION", err: "Couldn't parse EXPANSION"},
	} {
		p, err := cf.ParseReserve(fields("CF.RESERVE k "+tc.args), &d)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("CF.RESERVE k %s: error %v, want %q", tc.args, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("CF.RESERVE k %s: %v", tc.args, err)
		case tc.err == "" && *p != tc.want:
			t.Errorf("CF.RESERVE k %s: %+v, want %+v", tc.args, *p, tc.want)
		}
	}
	// cf-bucket-size set: the capacity's range and the default size follow it.
	d8 := cf.Defaults{BucketSize: 8}.WithDefaults()
	if _, err := cf.ParseReserve(fields("CF.RESERVE k 15"), &d8); err == nil {
		t.Error("CF.RESERVE k 15 with cf-bucket-size 8: accepted")
	}
	if p, err := cf.ParseReserve(fields("CF.RESERVE k 16"), &d8); err != nil || p.BucketSize != 8 {
		t.Errorf("CF.RESERVE k 16 with cf-bucket-size 8: %+v, %v", p, err)
	}
	// A key named as an option is found first, as by RedisBloom: its value
	// is the capacity, so a bucket of 10 for a capacity of 10.
	if p, err := cf.ParseReserve(fields("CF.RESERVE bucketsize 10"), &d); err == nil || !strings.HasPrefix(err.Error(), "Capacity must be") {
		t.Errorf("CF.RESERVE bucketsize 10: %+v, %v", p, err)
	}
}

// TestParseReserveCompat: RedisBloom 8.6.2's bound on BUCKETSIZE follows
// cf-initial-size; under Compat26 it does not, and this server's layout
// keeps its own bound on the capacity with 2.6's texts below it.
func TestParseReserveCompat(t *testing.T) {
	for _, tc := range []struct {
		d         cf.Defaults
		args, err string
	}{
		{cf.Defaults{Layout: cf.LayoutRedisBloom, InitialSize: 10}, "100 BUCKETSIZE 6", "BUCKETSIZE: value must be in the range [1, 5]"},
		{cf.Defaults{Layout: cf.LayoutRedisBloom, InitialSize: 10}, "100 BUCKETSIZE 5", ""},
		{cf.Defaults{Layout: cf.LayoutRedisBloom, InitialSize: 10, Compat: cf.Compat26}, "100 BUCKETSIZE 6", ""},
		{cf.Defaults{Layout: cf.LayoutRedisBloom, InitialSize: 600}, "600 BUCKETSIZE 255", ""},
		{cf.Defaults{Compat: cf.Compat26}, "3", "Capacity must be at least (BucketSize * 2)"},
		{cf.Defaults{Compat: cf.Compat26}, "4294967296", ""},
		{cf.Defaults{Compat: cf.Compat26}, "4294967297", "Capacity must be in the range [2 * BUCKETSIZE, 4294967296]"},
	} {
		d := tc.d.WithDefaults()
		_, err := cf.ParseReserve(fields("CF.RESERVE k "+tc.args), &d)
		if got := fmt.Sprint(err); tc.err == "" && err != nil || tc.err != "" && got != tc.err {
			t.Errorf("%+v: CF.RESERVE k %s: %v, want %q", tc.d, tc.args, err, tc.err)
		}
	}
}

// TestParseReserveRedisBloom26: under Compat26 the RedisBloom layout
// answers with RedisBloom 2.6.28's texts, and leaves a large capacity to
// the allocation.
func TestParseReserveRedisBloom26(t *testing.T) {
	d := cf.Defaults{Layout: cf.LayoutRedisBloom, Compat: cf.Compat26}.WithDefaults()
	for _, tc := range []struct{ args, err string }{
		{"1000 BUCKETSIZE 0", "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."},
		{"1000 MAXITERATIONS 65536", "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."},
		{"1000 EXPANSION 32769", "EXPANSION: value must be an integer between 0 and 32768, inclusive."},
		{"3", "Capacity must be at least (BucketSize * 2)"},
		{"-5", "Capacity must be at least (BucketSize * 2)"},
		{"9 BUCKETSIZE 5", "Capacity must be at least (BucketSize * 2)"},
		{"9223372036854775807", ""},
		{"4", ""},
	} {
		p, err := cf.ParseReserve(fields("CF.RESERVE k "+tc.args), &d)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("CF.RESERVE k %s: error %v, want %q", tc.args, err, tc.err)
		case tc.err == "" && (err != nil || p.Layout != cf.LayoutRedisBloom || p.BucketSize != 2):
			t.Errorf("CF.RESERVE k %s: %+v, %v", tc.args, p, err)
		}
	}
	var f cf.Filter
	p, _ := cf.ParseReserve(fields("CF.RESERVE k 9223372036854775807"), &d)
	if err := f.Init(*p, func(have, n uint64) error { return nil }); err == nil || err.Error() != "ERR Insufficient memory to create filter" {
		t.Errorf("a filter of 2^62 buckets: %v, want RedisBloom's ERR Insufficient memory to create filter", err)
	}
	refusal := errors.New("over --maxmemory")
	p, _ = cf.ParseReserve(fields("CF.RESERVE k 1000"), &d)
	if err := f.Init(*p, func(have, n uint64) error { return refusal }); err == nil ||
		err.Error() != "ERR Insufficient memory to create filter" || !errors.Is(err, refusal) {
		t.Errorf("a filter the memory limit refuses: %v, want RedisBloom's text and the reason kept", err)
	}
}

func TestParseInsert(t *testing.T) {
	d := cf.Defaults{}.WithDefaults()
	arity := errors.New("arity")
	for _, tc := range []struct {
		args     string
		capacity uint64 // 0: NOCREATE
		items    int
		err      string
	}{
		{args: "ITEMS a b", capacity: 1024, items: 2},
		{args: "capacity 100 items a", capacity: 100, items: 1},
		{args: "NOCREATE ITEMS a", items: 1},
		{args: "CAPACITY 100 NOCREATE ITEMS a b c", items: 3},
		{args: "ITEMS", err: "arity"},
		{args: "CAPACITY", err: "arity"},
		{args: "CAPACITY 100", err: "arity"},
		{args: "", err: "arity"},
		{args: "CAPACITY x ITEMS a", err: "Bad capacity"},
		{args: "CAPACITY 3 ITEMS a", err: "Capacity must be in the range [cf-bucket-size * 2, 1073741824]"},
		{args: "CAPACITY 1073741825 ITEMS a", err: "Capacity must be in the range [cf-bucket-size * 2, 1073741824]"},
		{args: "XSUCH ITEMS a", err: "Unknown argument received"},
		// RedisBloom reads only an option's first letter.
		{args: "cap 100 i a b", capacity: 100, items: 2},
		{args: "NOSUCH ITEMS a", items: 1},
		{args: "Capacity 100 Items a Items", capacity: 100, items: 2},
	} {
		create, items, err := cf.ParseInsert(fields(tc.args), &d, arity)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("CF.INSERT k %s: error %v, want %q", tc.args, err, tc.err)
		case tc.err != "":
		case err != nil:
			t.Errorf("CF.INSERT k %s: %v", tc.args, err)
		case len(items) != tc.items:
			t.Errorf("CF.INSERT k %s: %d items, want %d", tc.args, len(items), tc.items)
		case tc.capacity == 0 && create != nil, tc.capacity != 0 && (create == nil || create.Capacity != tc.capacity):
			t.Errorf("CF.INSERT k %s: creates %+v, want capacity %d", tc.args, create, tc.capacity)
		}
	}
	// A key created at cf-initial-size grows: 4 slots, whose rate holds as
	// it does; one whose client gave its capacity takes 5.
	for args, slots := range map[string]int{"ITEMS a": 4, "CAPACITY 100 ITEMS a": 5} {
		if c, _, err := cf.ParseInsert(fields(args), &d, arity); err != nil || c.Slots != slots || c.Bucket() != slots {
			t.Errorf("CF.INSERT k %s: creates %+v, %v; want %d slots", args, c, err, slots)
		}
	}
	if _, _, err := cf.ParseInsert([][]byte{{}, []byte("a")}, &d, arity); err == nil || err.Error() != "Unknown argument received" {
		t.Errorf("CF.INSERT k \"\" a: %v", err)
	}
	rb8 := cf.Defaults{Layout: cf.LayoutRedisBloom, BucketSize: 8}.WithDefaults()
	if _, _, err := cf.ParseInsert(fields("CAPACITY 15 ITEMS a"), &rb8, arity); err == nil || err.Error() != "Capacity must be in the range [cf-bucket-size * 2, 1073741824]" {
		t.Errorf("RedisBloom layout, cf-bucket-size 8, CF.INSERT k CAPACITY 15: %v", err)
	}
	rb := cf.Defaults{Layout: cf.LayoutRedisBloom, Compat: cf.Compat26}.WithDefaults()
	if _, _, err := cf.ParseInsert(fields("CAPACITY 3 ITEMS a"), &rb, arity); err == nil || err.Error() != "Capacity must be at least (BucketSize * 2)" {
		t.Errorf("RedisBloom layout, CF.INSERT k CAPACITY 3: %v", err)
	}
	if c, _, err := cf.ParseInsert(fields("CAPACITY 9223372036854775807 ITEMS a"), &rb, arity); err != nil || c.Capacity != 1<<63-1 {
		t.Errorf("RedisBloom layout, CF.INSERT k CAPACITY 2^63-1: %+v, %v (the allocation refuses it)", c, err)
	}
}

func TestInfoAndDebug(t *testing.T) {
	var f cf.Filter
	free := func(have, n uint64) error { return nil }
	if err := f.Init(cf.Params{Capacity: 1000, BucketSize: 2, MaxIter: 20, Expansion: 0, Seed: 1}, free); err != nil {
		t.Fatal(err)
	}
	for _, it := range []string{"a", "b", "c"} {
		if _, err := f.Add([]byte(it), false, false, free); err != nil {
			t.Fatal(err)
		}
	}
	f.Del([]byte("a"))
	info := f.Info()
	want := []string{"Size", "Number of buckets", "Number of filters", "Number of items inserted",
		"Number of items deleted", "Bucket size", "Expansion rate", "Max iterations"}
	got := map[string]int64{}
	for i, x := range info {
		if x.Name != want[i] {
			t.Errorf("CF.INFO field %d is %q, want %q", i, x.Name, want[i])
		}
		got[x.Name] = x.Value
	}
	if got["Number of items inserted"] != 2 || got["Number of items deleted"] != 1 || got["Bucket size"] != 2 ||
		got["Number of filters"] != 1 || got["Max iterations"] != 20 || got["Expansion rate"] != 0 ||
		got["Size"] != int64(f.SizeBytes()) || got["Number of buckets"] != int64(f.FirstBuckets()) {
		t.Errorf("CF.INFO: %v", got)
	}
	line := f.Debug()
	wantLine := "bktsize:2 buckets:" + strconv.FormatInt(got["Number of buckets"], 10) + " items:2 deletes:1 filters:1 max_iterations:20 expansion:0"
	if line != wantLine {
		t.Errorf("CF.DEBUG: %q, want %q", line, wantLine)
	}
	d := cf.Defaults{MaxExpansions: 1}.WithDefaults()
	if err := d.CheckGrowth(&f); !errors.Is(err, cf.ErrMaxExpansions) {
		t.Errorf("CheckGrowth at cf-max-expansions: %v", err)
	}
	d.MaxExpansions = 2
	if err := d.CheckGrowth(&f); err != nil {
		t.Errorf("CheckGrowth under cf-max-expansions: %v", err)
	}
}
