package limits_test

import (
	"errors"
	"math"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/limits"
)

// TestOutputBufferSet: each class by its names, units, the classes left
// alone, and each refusal with Redis's text and the words it could not read.
func TestOutputBufferSet(t *testing.T) {
	var l limits.OutputBuffer
	if err := l.Set("PubSub 64mb 16mb 90 slave 1gb 0 0"); err != nil {
		t.Fatal(err)
	}
	if l.Normal != nil || *l.PubSub != (limits.OutputLimit{Hard: 64 << 20, Soft: 16 << 20, SoftSeconds: 90}) || *l.Replica != (limits.OutputLimit{Hard: 1 << 30}) {
		t.Fatalf("Set: %+v %+v %+v", l.Normal, l.Replica, l.PubSub)
	}
	if err := l.Set("replica 1k 2k 3 normal 0 0 0"); err != nil {
		t.Fatal(err)
	}
	if got, want := l.String(), "normal 0 0 0 replica 1000 2000 3 pubsub 64mb 16mb 90"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	before := l.String()
	for _, tc := range []struct {
		spec string
		want string
		is   error
	}{
		{"normal 0 0", "Wrong number of arguments in buffer limit configuration.", limits.ErrOutputArgs},
		{"normal 0 0 0 pubsub", "Wrong number of arguments in buffer limit configuration.", limits.ErrOutputArgs},
		{"master 0 0 0", `Invalid client class specified in buffer limit configuration. ("master": want normal, replica or pubsub)`, limits.ErrOutputClass},
		{"normal x 0 0", `Error in hard, soft or soft_seconds setting in buffer limit configuration. ("normal x 0 0": want sizes such as 32mb and seconds, none negative)`, limits.ErrOutputValue},
		{"normal 0 -1 0", `Error in hard, soft or soft_seconds setting in buffer limit configuration. ("normal 0 -1 0": want sizes such as 32mb and seconds, none negative)`, limits.ErrOutputValue},
		{"normal 0 0 -1", `Error in hard, soft or soft_seconds setting in buffer limit configuration. ("normal 0 0 -1": want sizes such as 32mb and seconds, none negative)`, limits.ErrOutputValue},
		{"normal 0 0 1s", `Error in hard, soft or soft_seconds setting in buffer limit configuration. ("normal 0 0 1s": want sizes such as 32mb and seconds, none negative)`, limits.ErrOutputValue},
		{"normal 0 0 4294967296", `Error in hard, soft or soft_seconds setting in buffer limit configuration. ("normal 0 0 4294967296": want sizes such as 32mb and seconds, none negative)`, limits.ErrOutputValue},
		// All or none: the good first class is not applied either.
		{"pubsub 1 1 1 normal 0 0 x", `Error in hard, soft or soft_seconds setting in buffer limit configuration. ("normal 0 0 x": want sizes such as 32mb and seconds, none negative)`, limits.ErrOutputValue},
	} {
		err := l.Set(tc.spec)
		if err == nil || err.Error() != tc.want || !errors.Is(err, tc.is) {
			t.Errorf("Set(%q) = %v, want %q", tc.spec, err, tc.want)
		}
		if l.String() != before {
			t.Errorf("a failed Set(%q) changed the limits to %q", tc.spec, l.String())
		}
	}
}

// TestOutputBufferDefaults: nil classes read as Redis's defaults, and
// WithDefaults fills them with values of their own.
func TestOutputBufferDefaults(t *testing.T) {
	var zero limits.OutputBuffer
	if got := zero.String(); got != "" {
		t.Errorf("zero String = %q", got)
	}
	const get = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
	if got := zero.ConfigGet(); got != get {
		t.Errorf("ConfigGet = %q, want %q", got, get)
	}
	lines := zero.Lines()
	want := []string{"normal 0 0 0", "replica 256mb 64mb 60", "pubsub 32mb 8mb 60"}
	for c := range limits.NumClasses {
		if lines[c] != want[c] {
			t.Errorf("Lines()[%d] = %q, want %q", c, lines[c], want[c])
		}
		if zero.Get(c).Line(c) != want[c] {
			t.Errorf("Get(%d).Line = %q", c, zero.Get(c).Line(c))
		}
	}
	full := zero.WithDefaults()
	if zero.Normal != nil || full.Normal == nil || full.Replica == nil || full.PubSub == nil {
		t.Fatalf("WithDefaults: %+v from %+v", full, zero)
	}
	full.PubSub.Hard = 1
	if again := zero.WithDefaults(); again.PubSub.Hard != 32<<20 {
		t.Error("WithDefaults shares its defaults between calls")
	}
	if got := full.String(); got != "normal 0 0 0 replica 256mb 64mb 60 pubsub 1 8mb 60" {
		t.Errorf("String of a filled set = %q", got)
	}
}

// TestMemoryOrPercent: sizes, percentages, each refusal, and the bytes in
// force.
func TestMemoryOrPercent(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "1gb": "1073741824", "5%": "5%", "100%": "100%", "0%": "0"} {
		var m limits.MemoryOrPercent
		if err := m.Set(in); err != nil || m.String() != want {
			t.Errorf("Set(%q): %v, String %q; want %q", in, err, m.String(), want)
		}
	}
	for in, want := range map[string]error{
		"": limits.ErrMemoryOrPercent, "%": limits.ErrMemoryOrPercent, "-1": limits.ErrMemoryOrPercent,
		"-5%": limits.ErrMemoryOrPercent, "+5%": limits.ErrMemoryOrPercent, "5 %": limits.ErrMemoryOrPercent,
		"x%": limits.ErrMemoryOrPercent, "1tb": limits.ErrMemoryOrPercent, "101%": limits.ErrPercent,
	} {
		m := limits.MemoryOrPercent(7)
		if err := m.Set(in); err != want || m != 7 {
			t.Errorf("Set(%q) = %v (value %d), want %v and the value kept", in, err, m, want)
		}
	}
	if got := limits.ErrMemoryOrPercent.Error(); got != "argument must be a memory or percent value" {
		t.Errorf("ErrMemoryOrPercent = %q", got)
	}
	if got := limits.ErrPercent.Error(); got != "percentage argument must be less or equal to 100" {
		t.Errorf("ErrPercent = %q", got)
	}
	for _, tc := range []struct {
		m         limits.MemoryOrPercent
		maxmemory int64
		want      int64
	}{
		{0, 1 << 30, 0},
		{1, 0, limits.MinClientEviction},
		{1 << 20, 0, 1 << 20},
		{-50, 0, 0},
		{-50, 1 << 30, 1 << 29},
		{-1, 1 << 20, limits.MinClientEviction},
		{-100, 1 << 62, 1 << 62},
		{-100, math.MaxInt64, math.MaxInt64}, // a float product overflowed to 128 KiB
		{-50, math.MaxInt64, math.MaxInt64/100*50 + math.MaxInt64%100*50/100},
		{-99, 1<<63 - 1024, (1<<63-1024)/100*99 + (1<<63-1024)%100*99/100},
	} {
		if got := tc.m.Bytes(tc.maxmemory); got != tc.want {
			t.Errorf("%v.Bytes(%d) = %d, want %d", tc.m, tc.maxmemory, got, tc.want)
		}
	}
}

func TestOr(t *testing.T) {
	if limits.Or(0, 5) != 5 || limits.Or(-1, 5) != 5 || limits.Or(3, 5) != 3 {
		t.Error("Or")
	}
}

// FuzzOutputBufferSet: any spec is an error or a value whose String reads
// back to the same limits; never a panic.
func FuzzOutputBufferSet(f *testing.F) {
	for _, s := range []string{"normal 0 0 0", "replica 1gb 1mb 60 pubsub 1k 1kb 0", "slave 9223372036854775807 1 1", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		var l limits.OutputBuffer
		if l.Set(spec) != nil {
			return
		}
		var back limits.OutputBuffer
		if err := back.Set(l.String()); err != nil {
			t.Fatalf("String %q of %q does not read back: %v", l.String(), spec, err)
		}
		if back.ConfigGet() != l.ConfigGet() {
			t.Fatalf("%q read back as %q", l.ConfigGet(), back.ConfigGet())
		}
	})
}
