package quoted_test

import (
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`a b  c`, `["a" "b" "c"]`},
		{"\ta\t", `["a"]`},
		{"a\r\nb", `["a" "b"]`},
		{`"a b" 'c d'`, `["a b" "c d"]`},
		{`"\x41\n\t\"" '\''`, `["A\n\t\"" "'"]`},
		{`"\x4a\x4B\xZZ"`, `["JKxZZ"]`},
		{`"\q\\"`, `["q\\"]`},
		{`'a\\b'`, `["a\\\\b"]`},
		{`"" ''`, `["" ""]`},
		{`foo"bar baz"`, `["foobar baz"]`}, // a quote opens mid-word, as in sdssplitargs
		{`x'y z'`, `["xy z"]`},
		{``, `[]`},
		{`   `, `[]`},
	} {
		args, err := quoted.Split([]byte(tc.in))
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := fmt.Sprintf("%q", args); got != tc.want {
			t.Errorf("Split(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want error
	}{
		{`"a`, quoted.ErrUnbalanced}, {`'a`, quoted.ErrUnbalanced}, {`"a\"`, quoted.ErrUnbalanced},
		{`"a"b`, quoted.ErrClosingQuote}, {`'a'b`, quoted.ErrClosingQuote},
	} {
		if _, err := quoted.Split([]byte(tc.in)); err != tc.want {
			t.Errorf("Split(%q): %v, want %v", tc.in, err, tc.want)
		}
	}
	if args, _ := quoted.Split([]byte(`""`)); args[0] == nil {
		t.Error("an empty quoted argument is nil")
	}
}

func TestQuote(t *testing.T) {
	for _, s := range []string{"", "plain", "a b", `"q"`, `back\slash`, "\x00\x01\xff\n\r\t\a\b", "'"} {
		got, err := quoted.Split([]byte("x " + quoted.Quote(s)))
		if err != nil || len(got) != 2 || string(got[1]) != s {
			t.Errorf("Split(Quote(%q)) = %q, %v", s, got, err)
		}
	}
}

// FuzzSplitQuote: Split never panics, and whatever it reads, Quote writes
// back to the same arguments.
func FuzzSplitQuote(f *testing.F) {
	for _, s := range []string{`a "b c" 'd'`, `"\x41\n"`, `foo"bar baz"`, `'a'b`, "\xff\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		args, err := quoted.Split(line)
		if err != nil {
			return
		}
		var again []byte
		for _, a := range args {
			again = append(append(again, quoted.Quote(string(a))...), ' ')
		}
		back, err := quoted.Split(again)
		if err != nil || fmt.Sprintf("%q", back) != fmt.Sprintf("%q", args) {
			t.Fatalf("Split(%q) = %q; quoted and split again: %q, %v", line, args, back, err)
		}
	})
}

func TestPrintable(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{{"abc", 8, "abc"}, {"a\r\nb\x7fc", 8, "a??b?c"}, {"abcdef", 3, "abc"}, {"\x00\x01", 1, "?"}, {"", 4, ""}, {"héllo", 8, "héllo"}} {
		if got := quoted.Printable([]byte(tc.in), tc.n); got != tc.want {
			t.Errorf("Printable(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
