package resp

import (
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/resptest"
)

// TestAheadRuns: the requests worth reading ahead are parsed as a run and
// touched together, up to AheadMax; the request that ends a run comes back
// after it, untouched; requests return in order whatever the runs; a
// protocol error comes after the requests before it; with authed false
// nothing is read ahead.
func TestAheadRuns(t *testing.T) {
	var in strings.Builder
	want := []string{}
	add := func(args ...string) {
		in.Write(resptest.Request(resptest.Args(args...)...))
		want = append(want, strings.Join(args, " "))
	}
	for i := range AheadMax + 3 {
		add("CF.ADD", "k", strings.Repeat("x", i+1))
	}
	add("PING")
	add("CF.EXISTS", "k", "a")
	add("CF.EXISTS", "k", "b")
	in.WriteString("*1\r\n$x\r\n") // a protocol error last
	rd := NewReader(strings.NewReader(in.String()))
	if err := rd.Fill(defaultLimits); err != nil {
		t.Fatal(err)
	}
	worth := func(args [][]byte) bool { return len(args) == 3 }
	var runs []int
	touch := func(reqs [][][]byte) { runs = append(runs, len(reqs)) }
	var a Ahead
	var got []string
	var err error
	for {
		var args [][]byte
		args, err = a.Next(rd, defaultLimits, func() bool { return true }, worth, touch)
		if err != nil || args == nil {
			break
		}
		parts := make([]string, len(args))
		for i, x := range args {
			parts[i] = string(x)
		}
		got = append(got, strings.Join(parts, " "))
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("requests out of order or lost:\n got %q\nwant %q", got, want)
	}
	if err == nil {
		t.Error("the protocol error after the last request was not returned")
	}
	if len(runs) != 3 || runs[0] != AheadMax || runs[1] != 3 || runs[2] != 2 {
		t.Errorf("runs touched %v, want [%d 3 2]", runs, AheadMax)
	}

	rd = NewReader(strings.NewReader(string(resptest.Request("CF.ADD", "k", "a")) + string(resptest.Request("CF.ADD", "k", "b"))))
	rd.Fill(defaultLimits)
	runs = nil
	a = Ahead{}
	for range 2 {
		if args, err := a.Next(rd, defaultLimits, func() bool { return false }, worth, touch); err != nil || len(args) != 3 {
			t.Fatalf("unauthenticated: %q %v", args, err)
		}
	}
	if len(runs) != 0 {
		t.Errorf("read ahead for a client that must authenticate: %v", runs)
	}
}
