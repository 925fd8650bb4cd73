package main

import (
	"io"
	"strings"
	"testing"
)

func TestLineReader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n\n\r\n", nil},
		{"a", []string{"a"}},
		{"a\nb\n", []string{"a", "b"}},
		{"a\r\n\r\nb\r\nc", []string{"a", "b", "c"}},
		{" a \tb\r\r\n", []string{" a \tb\r"}}, // only one "\r" ends a line
		// A byte order mark opens the input only: elsewhere it is key bytes.
		{"\xef\xbb\xbfa\r\nb\n", []string{"a", "b"}},
		{"\xef\xbb\xbf\r\nb\n\xef\xbb\xbfc", []string{"b", "\xef\xbb\xbfc"}},
		{"\xef\xbb\xbf", nil},
	} {
		l := newLineReader(strings.NewReader(tc.in))
		var got []string
		for {
			k, err := l.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%q: %v", tc.in, err)
			}
			got = append(got, string(k))
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("keys of %q = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPercent(t *testing.T) {
	for r, want := range map[float64]string{0: "0%", 0.01: "1.00%", 0.00741: "0.741%", 0.5: "50.0%", 0.0000123: "0.00123%", 1: "100%"} {
		if got := percent(r); got != want {
			t.Errorf("percent(%v) = %q, want %q", r, got, want)
		}
	}
}
