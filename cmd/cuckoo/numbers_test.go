package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
)

func TestParseCount(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi int64
		want   int64
		err    string // a part of the error, "" for none
	}{
		{"0", 0, 10, 0, ""},
		{"1000000", 0, math.MaxInt64, 1000000, ""},
		{"1_000_000", 0, math.MaxInt64, 1000000, ""},
		{"1e9", 0, math.MaxInt64, 1e9, ""},
		{"1E9", 0, math.MaxInt64, 1e9, ""},
		{"2.5e6", 0, math.MaxInt64, 2500000, ""},
		{"1_000e3", 0, math.MaxInt64, 1000000, ""},
		{"+7", 0, 10, 7, ""},
		{"010", 0, 100, 10, ""}, // decimal, not octal
		{"9223372036854775807", 0, math.MaxInt64, math.MaxInt64, ""},
		{"-5", 0, math.MaxInt64, 0, "out of range: it must be in 0..9223372036854775807"},
		{"0", 1, 100, 0, "out of range: it must be in 1..100"},
		{"101", 1, 100, 0, "out of range: it must be in 1..100"},
		{"1e3", 1, 100, 0, "out of range: it must be in 1..100"},
		{"-1e3", 1, 100, 0, "out of range: it must be in 1..100"},
		{"9223372036854775808", 0, math.MaxInt64, 0, "out of range"},
		{"1e19", 0, math.MaxInt64, 0, "out of range"},
		{"1e999999999999", 0, math.MaxInt64, 0, "out of range"},
		{"1.5", 0, 10, 0, "not a whole number"},
		{"1e-3", 0, 10, 0, "not a whole number"},
		{"", 0, 10, 0, "not a whole number"},
		{"abc", 0, 10, 0, "not a whole number"},
		{"0x10", 0, 100, 0, "not a whole number"},
		{"Inf", 0, 100, 0, "not a whole number"},
		{"NaN", 0, 100, 0, "not a whole number"},
		{"1__000", 0, 10000, 0, "not a whole number"},
		{"_1000", 0, 10000, 0, "not a whole number"},
		{"1000_", 0, 10000, 0, "not a whole number"},
		{"1_.5e3", 0, 10000, 0, "not a whole number"},
		{"1 000", 0, 10000, 0, "not a whole number"},
	} {
		got, err := parseCount(tc.in, tc.lo, tc.hi)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("parseCount(%q, %d, %d) = %d, %v; want %d", tc.in, tc.lo, tc.hi, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseCount(%q, %d, %d) = %d, %v; want an error with %q", tc.in, tc.lo, tc.hi, got, err, tc.err)
		}
	}
}

// TestCountFlags: every count flag takes the same notations and says its
// range when out of it (issue 14: --capacity 1e9 did not parse, and
// --capacity -5 said "parse error").
func TestCountFlags(t *testing.T) {
	dir := t.TempDir()
	in := writeKeys(t, dir, "keys.txt", keys("k", 10))
	out := dir + "/f.ckoo"
	for _, capacity := range []string{"1e3", "1_000", "1000"} {
		code, _, stderr := cuckoo(t, "", "build", "-o", out, "--capacity", capacity, in)
		if code != 0 {
			t.Fatalf("build --capacity %s: exit %d: %s", capacity, code, stderr)
		}
		_, stdout, _ := cuckoo(t, "", "info", out)
		if !strings.Contains(stdout, "capacity          1000\n") {
			t.Errorf("build --capacity %s: info says\n%s", capacity, stdout)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "-o", out, "--capacity", "-5", in}, `build: --capacity -5: out of range: it must be in 0..33672360099, the most keys that 2^32 buckets of 8 slots hold`},
		{[]string{"build", "-o", out, "--capacity", "1.5e0", in}, `build: invalid value "1.5e0" for flag -capacity: not a whole number`},
		{[]string{"demo", "--n", "0"}, `demo: invalid value "0" for flag -n: out of range: it must be in 1..100000000`},
		{[]string{"demo", "--n", "1e9"}, `demo: invalid value "1e9" for flag -n: out of range: it must be in 1..100000000`},
		{[]string{"serve", "--maxclients", "0"}, `serve: invalid value "0" for flag -maxclients: argument must be between 1 and 1000000 inclusive`},
		{[]string{"serve", "--timeout", "-1"}, `serve: invalid value "-1" for flag -timeout: argument must be between 0 and 2147483647 inclusive`},
	} {
		code, stdout, stderr := cuckoo(t, "", tc.args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "cuckoo: "+tc.want) {
			t.Errorf("cuckoo %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// TestCapacityLimit: build's --capacity is held to the limit filter.New
// enforces, 2^32 buckets, for the shape the other flags give, and the error
// names that limit (issue 24: --capacity -1 named 0..9223372036854775807,
// and 2e10 passed the flag to fail later in filter.New's terms).
func TestCapacityLimit(t *testing.T) {
	for _, shape := range []filter.Config{
		{FalsePositiveRate: 0.01}, // the layout chosen: 8 slots at the largest capacities
		{BucketSize: 4, FalsePositiveRate: 0.01},
		{BucketSize: 2, FalsePositiveRate: 0.01},
		{BucketSize: 8, FalsePositiveRate: 0.01},
		{BucketSize: 4, FingerprintBits: 6},
		{BucketSize: 4, FingerprintBits: 32},
	} {
		hi := maxCapacity(shape)
		at, over := shape, shape
		at.Capacity, over.Capacity = hi, hi+1
		l, err := at.Layout()
		if err != nil || l.Buckets > 1<<32 {
			t.Errorf("%+v: maxCapacity %d: Layout %+v, %v", shape, hi, l, err)
		}
		if _, err := over.Layout(); err == nil || !strings.Contains(err.Error(), "2^32") {
			t.Errorf("%+v: maxCapacity %d, but %d is accepted too (%v)", shape, hi, hi+1, err)
		}
		t.Logf("b=%d f=%d rate=%v: at most %d keys", shape.BucketSize, shape.FingerprintBits, shape.FalsePositiveRate, hi)
	}
	if got := maxCapacity(filter.Config{BucketSize: 3}); got != 0 {
		t.Errorf("maxCapacity of 3-slot buckets = %d, want 0", got)
	}

	dir := t.TempDir()
	in := writeKeys(t, dir, "keys.txt", keys("k", 10))
	out := filepath.Join(dir, "f.ckoo")
	limit := func(b int) uint64 { return maxCapacity(filter.Config{BucketSize: b, FalsePositiveRate: 0.01}) }
	for _, tc := range []struct {
		args  []string
		value string
		hi    uint64
		slots int
	}{
		// Without --bucket-size the limit is the largest layout's: 8 slots.
		{[]string{"--capacity", "-1"}, "-1", limit(0), 8},
		{[]string{"--capacity", "4e10"}, "4e10", limit(0), 8},
		{[]string{"--capacity", fmt.Sprint(limit(0) + 1)}, fmt.Sprint(limit(0) + 1), limit(0), 8},
		{[]string{"--capacity", "1e30"}, "1e30", limit(0), 8},
		{[]string{"--capacity", "-1e30"}, "-1e30", limit(0), 8},
		{[]string{"--bucket-size", "4", "--capacity", "2e10"}, "2e10", limit(4), 4},
		{[]string{"--capacity", "4e10", "--bucket-size", "8"}, "4e10", limit(8), 8},
		{[]string{"--bucket-size", "2", "--capacity", "-1"}, "-1", limit(2), 2},
		{[]string{"--scalable", "--capacity", "-1"}, "-1", limit(4), 4},
	} {
		args := append(append([]string{"build", "-o", out}, tc.args...), in)
		code, stdout, stderr := cuckoo(t, "", args...)
		want := fmt.Sprintf("cuckoo: build: --capacity %s: out of range: it must be in 0..%d, the most keys that 2^32 buckets of %d slots hold (0 fits INPUT's distinct keys)\n",
			tc.value, tc.hi, tc.slots)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, want) {
			t.Errorf("cuckoo %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, code, stdout, stderr, want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused --capacity left %s: %v", out, err)
	}
	// Within the limit, the count is used as before.
	if code, _, stderr := cuckoo(t, "", "build", "-o", out, "--capacity", "0", in); code != 0 {
		t.Errorf("--capacity 0: exit %d: %s", code, stderr)
	}
}

// TestBuildRefusesMoreThanMemory: a filter larger than the memory available
// is refused with what it would take, before anything is allocated.
func TestBuildRefusesMoreThanMemory(t *testing.T) {
	old := availableMemory
	t.Cleanup(func() { availableMemory = old })
	dir := t.TempDir()
	in := writeKeys(t, dir, "keys.txt", keys("k", 10))
	out := filepath.Join(dir, "f.ckoo")
	availableMemory = func() (uint64, bool) { return 1 << 20, true }
	code, _, stderr := cuckoo(t, "", "build", "-o", out, "--capacity", "1e6", in)
	want := "cuckoo: build: a filter of capacity 1000000 takes 1.09 MiB, more than the 1.00 MiB of memory available: lower --capacity"
	if code == 0 || !strings.HasPrefix(stderr, want) {
		t.Errorf("build over the memory: exit %d, stderr %q; want %q", code, stderr, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused build wrote its file")
	}
	for _, known := range []bool{true, false} {
		availableMemory = func() (uint64, bool) { return 2 << 20, known }
		if !known {
			availableMemory = func() (uint64, bool) { return 0, false }
		}
		if code, _, stderr := cuckoo(t, "", "build", "-o", out, "--capacity", "1e6", in); code != 0 {
			t.Errorf("build within the memory (known %v): exit %d, %s", known, code, stderr)
		}
	}
	if avail, ok := old(); !ok || avail == 0 {
		t.Logf("this system does not say how much memory is available (%d, %v)", avail, ok)
	}
}
