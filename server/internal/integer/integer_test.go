package integer_test

import (
	"strconv"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/integer"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true}, {"1024", 1024, true},
		{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"", 0, false}, {"-", 0, false}, {"+1", 0, false}, {"01", 0, false}, {"-0", 0, false},
		{"-01", 0, false}, {"00", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"1a", 0, false},
		{"0x10", 0, false}, {"1e3", 0, false}, {"--1", 0, false}, {"1_000", 0, false},
	} {
		v, ok := integer.Parse([]byte(tc.in))
		if ok != tc.ok || ok && v != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", tc.in, v, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParse: Parse accepts exactly the canonical spellings: what it accepts
// prints back as itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "-1", "+1", "01", "-0", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := integer.Parse([]byte(s))
		canonical := false
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(n, 10) == s {
			canonical = true
		}
		if ok != canonical || ok && strconv.FormatInt(v, 10) != s {
			t.Errorf("Parse(%q) = %d, %v; canonical %v", s, v, ok, canonical)
		}
	})
}
