package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestSlotRanges: the slot range helpers, parse and format round trip and
// every malformed spelling is refused with its reason.
func TestSlotRanges(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want [][2]int
		out  string // formatSlotRanges(want)
		err  string
	}{
		{in: "0-16383", want: [][2]int{{0, 16383}}, out: "0-16383"},
		{in: "5", want: [][2]int{{5, 5}}, out: "5"},
		{in: "0-5460,5462,6000-6100", want: [][2]int{{0, 5460}, {5462, 5462}, {6000, 6100}}, out: "0-5460,5462,6000-6100"},
		{in: "7,5,6", want: [][2]int{{5, 7}}, out: "5-7"},     // sorted and merged
		{in: " 1-2 , 3 ", want: [][2]int{{1, 3}}, out: "1-3"}, // spaces around parts
		{in: "16383,0", want: [][2]int{{0, 0}, {16383, 16383}}, out: "0,16383"},
		{in: "", err: "no slots given"},
		{in: "  ", err: "no slots given"},
		{in: "16384", err: `"16384": slot 16384 is out of 0..16383`},
		{in: "-1", err: `"-1": want a slot number`},
		{in: "10-5", err: `range "10-5" runs backwards`},
		{in: "1-", err: `"1-": want a slot number`},
		{in: "a", err: `"a": want a slot number`},
		{in: "+5", err: `"+5": want a slot number`},
		{in: "1-2-3", err: `"1-2-3": want a slot number`},
		{in: "1,,2", err: `"": want a slot number`},
		{in: "0-10,5", err: "slot 5 given twice"},
		{in: "0-0x10", err: "want a slot number"},
	} {
		got, err := parseSlotRanges(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseSlotRanges(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
			}
		case err != nil || !reflect.DeepEqual(got, tc.want):
			t.Errorf("parseSlotRanges(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case formatSlotRanges(got) != tc.out:
			t.Errorf("formatSlotRanges(%v) = %q, want %q", got, formatSlotRanges(got), tc.out)
		}
	}
	if s := formatSlotRanges(nil); s != "" {
		t.Errorf("formatSlotRanges(nil) = %q", s)
	}
}

// TestSplitSlots: n contiguous ranges covering 0..16383, the first
// 16384%n one slot longer.
func TestSplitSlots(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want [][2]int
	}{
		{1, [][2]int{{0, 16383}}},
		{2, [][2]int{{0, 8191}, {8192, 16383}}},
		{3, [][2]int{{0, 5461}, {5462, 10922}, {10923, 16383}}}, // 5462, 5461, 5461
		{16384, nil}, // checked below: one slot each
		{5, [][2]int{{0, 3276}, {3277, 6553}, {6554, 9830}, {9831, 13107}, {13108, 16383}}},
	} {
		got := splitSlots(tc.n)
		if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitSlots(%d) = %v, want %v", tc.n, got, tc.want)
		}
		next := 0
		for i, r := range got {
			size := r[1] - r[0] + 1
			if r[0] != next || size != 16384/tc.n+b2int(i < 16384%tc.n) {
				t.Fatalf("splitSlots(%d)[%d] = %v", tc.n, i, r)
			}
			next = r[1] + 1
		}
		if next != 16384 || countSlots(got) != 16384 {
			t.Errorf("splitSlots(%d) ends at %d, counts %d", tc.n, next, countSlots(got))
		}
	}
}

func b2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSlotSetOps: addSlots and removeSlots return normal ranges.
func TestSlotSetOps(t *testing.T) {
	a := [][2]int{{0, 10}, {20, 30}}
	if got, want := addSlots(a, [][2]int{{11, 19}, {40, 40}}), [][2]int{{0, 30}, {40, 40}}; !reflect.DeepEqual(got, want) {
		t.Errorf("addSlots = %v, want %v", got, want)
	}
	if got, want := removeSlots(a, [][2]int{{5, 25}}), [][2]int{{0, 4}, {26, 30}}; !reflect.DeepEqual(got, want) {
		t.Errorf("removeSlots = %v, want %v", got, want)
	}
	if got := removeSlots(a, a); got != nil {
		t.Errorf("removeSlots(a, a) = %v", got)
	}
}

// TestTopologyFind: a node is named by id, a unique id prefix or its
// address; anything else is an error that says why.
func TestTopologyFind(t *testing.T) {
	topo := clusterTopology{Nodes: []clusterNode{
		{ID: strings.Repeat("ab", 20), Host: "10.0.0.1", Port: 7000, Role: rolePrimary},
		{ID: "abcd" + strings.Repeat("0", 36), Host: "10.0.0.2", Port: 7000, Role: rolePrimary},
		{ID: strings.Repeat("1", 40), Host: "10.0.0.3", Port: 7001, Role: roleReplica, Primary: strings.Repeat("ab", 20)},
	}}
	for _, tc := range []struct {
		ref  string
		want int // index, or -1
		err  string
	}{
		{ref: strings.Repeat("ab", 20), want: 0},
		{ref: "abab", want: 0},
		{ref: "ABCD", want: 1},
		{ref: "1", want: 2},
		{ref: "10.0.0.3:7001", want: 2},
		{ref: "ab", want: -1, err: `"ab" is the start of more than one node id (abababab, abcd0000): give more of it`},
		{ref: "ff", want: -1, err: `no node of the cluster has id "ff"`},
		{ref: "", want: -1, err: `no node of the cluster has id ""`},
		{ref: "10.0.0.3:7000", want: -1, err: "no node of the cluster is at 10.0.0.3:7000 (the cluster's addresses: 10.0.0.1:7000 10.0.0.2:7000 10.0.0.3:7001)"},
	} {
		n, err := topo.find(tc.ref)
		switch {
		case tc.want < 0:
			if err == nil || err.Error() != tc.err {
				t.Errorf("find(%q) = %v, %v; want error %q", tc.ref, n, err, tc.err)
			}
		case err != nil || n != &topo.Nodes[tc.want]:
			t.Errorf("find(%q) = %v, %v; want node %d", tc.ref, n, err, tc.want)
		}
	}
	if u := topo.uncovered(); !reflect.DeepEqual(u, [][2]int{{0, 16383}}) {
		t.Errorf("uncovered with no slots = %v", u)
	}
	topo.Nodes[0].Slots = [][2]int{{0, 99}, {200, 16383}}
	if u := topo.uncovered(); !reflect.DeepEqual(u, [][2]int{{100, 199}}) {
		t.Errorf("uncovered = %v", u)
	}
}

// TestParseNodeAddr: host:port with a port in 1..65535.
func TestParseNodeAddr(t *testing.T) {
	for _, tc := range []struct {
		in, host string
		port     int
	}{
		{"127.0.0.1:7000", "127.0.0.1", 7000},
		{"[::1]:1", "::1", 1},
		{"node-a:65535", "node-a", 65535},
		{"127.0.0.1", "", 0},
		{"127.0.0.1:0", "", 0},
		{"127.0.0.1:65536", "", 0},
		{":7000", "", 0},
		{"h:x", "", 0},
	} {
		h, p, err := parseNodeAddr(tc.in)
		if h != tc.host || p != tc.port || (err == nil) != (tc.port != 0) {
			t.Errorf("parseNodeAddr(%q) = %q, %d, %v", tc.in, h, p, err)
		}
	}
}
