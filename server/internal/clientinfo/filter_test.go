package clientinfo_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/clientinfo"
)

// clients are four connections of different types, users, addresses and
// ages (as of t0+100s).
var clients = []clientinfo.Client{
	{ID: 1, Addr: "10.0.0.1:1000", LAddr: "10.0.0.9:6379", User: "default", Created: t0},
	{ID: 2, Addr: "10.0.0.2:2000", LAddr: "10.0.0.9:6379", User: "alice", Created: t0.Add(50 * time.Second), Sub: 1},
	{ID: 3, Addr: "10.0.0.3:3000", LAddr: "10.0.0.9:6380", User: "default", Created: t0.Add(90 * time.Second), Replica: true},
	{ID: 4, Addr: "/tmp/cuckoo.sock:0", LAddr: "/tmp/cuckoo.sock:0", User: "alice", Created: t0.Add(100 * time.Second)},
}

func words(s string) [][]byte {
	var a [][]byte
	for _, w := range strings.Fields(s) {
		a = append(a, []byte(w))
	}
	return a
}

// matching are the ids of clients f matches.
func matching(f *clientinfo.Filter) []int64 {
	now := t0.Add(100 * time.Second)
	var ids []int64
	for i := range clients {
		if f.Match(&clients[i], now) {
			ids = append(ids, clients[i].ID)
		}
	}
	return ids
}

// TestParseKill: CLIENT KILL's filters, each alone and together, and the
// refusals in Redis's words.
func TestParseKill(t *testing.T) {
	for _, tc := range []struct {
		args   string
		ids    []int64
		skipMe bool
		err    string
	}{
		{"", []int64{1, 2, 3, 4}, true, ""},
		{"ID 2", []int64{2}, true, ""},
		{"id 9", nil, true, ""},
		{"TYPE normal", []int64{1, 4}, true, ""},
		{"TYPE PubSub", []int64{2}, true, ""},
		{"TYPE replica", []int64{3}, true, ""},
		{"TYPE slave", []int64{3}, true, ""},
		{"TYPE master", nil, true, ""},
		{"USER alice", []int64{2, 4}, true, ""},
		{"USER Alice", nil, true, ""},
		{"ADDR 10.0.0.3:3000", []int64{3}, true, ""},
		{"LADDR 10.0.0.9:6379", []int64{1, 2}, true, ""},
		{"LADDR /tmp/cuckoo.sock:0", []int64{4}, true, ""},
		{"MAXAGE 10", []int64{1, 2, 3}, true, ""},
		{"MAXAGE 0", []int64{1, 2, 3, 4}, true, ""},
		{"MAXAGE 100", []int64{1}, true, ""},
		{"SKIPME no", []int64{1, 2, 3, 4}, false, ""},
		{"skipme YES", []int64{1, 2, 3, 4}, true, ""},
		{"USER alice TYPE normal SKIPME no", []int64{4}, false, ""},
		{"USER default MAXAGE 5 LADDR 10.0.0.9:6380", []int64{3}, true, ""},

		{"ID", nil, false, "ERR syntax error"},
		{"ID 1 TYPE", nil, false, "ERR syntax error"},
		{"ID 0", nil, false, "ERR client-id should be greater than 0"},
		{"ID -3", nil, false, "ERR client-id should be greater than 0"},
		{"ID x", nil, false, "ERR client-id should be greater than 0"},
		{"TYPE bogus", nil, false, "ERR Unknown client type 'bogus'"},
		{"TYPE " + strings.Repeat("z", 40), nil, false, "ERR Unknown client type '" + strings.Repeat("z", 32) + "'"},
		{"SKIPME maybe", nil, false, "ERR syntax error"},
		{"MAXAGE -1", nil, false, "ERR syntax error"},
		{"MAXAGE soon", nil, false, "ERR syntax error"},
		{"COLOR red", nil, false, "ERR syntax error"},
	} {
		t.Run(strings.ReplaceAll(tc.args, " ", "_"), func(t *testing.T) {
			f, err := clientinfo.ParseKill(words(tc.args))
			if tc.err != "" {
				if errText(err) != tc.err || f != nil {
					t.Fatalf("ParseKill = %v, %v; want %q", f, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := matching(f); !slices.Equal(got, tc.ids) || f.SkipMe != tc.skipMe {
				t.Errorf("matches %v, SkipMe %v; want %v, %v", got, f.SkipMe, tc.ids, tc.skipMe)
			}
		})
	}
	// A type is quoted with its control characters as '?'.
	if _, err := clientinfo.ParseKill([][]byte{[]byte("TYPE"), []byte("a\r\nb")}); errText(err) != "ERR Unknown client type 'a??b'" {
		t.Errorf("TYPE with control characters: %v", err)
	}
}

// TestParseList: CLIENT LIST's TYPE and ID options; ID takes the rest.
func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		args string
		ids  []int64
		err  string
	}{
		{"", []int64{1, 2, 3, 4}, ""},
		{"TYPE normal", []int64{1, 4}, ""},
		{"type replica", []int64{3}, ""},
		{"ID 4 2 9", []int64{2, 4}, ""},
		{"TYPE normal ID 2 4", []int64{4}, ""},
		{"TYPE", nil, "ERR syntax error"},
		{"ID", nil, "ERR syntax error"},
		{"ID 1 TYPE normal", nil, "ERR Invalid client ID"},
		{"ID 0", nil, "ERR Invalid client ID"},
		{"TYPE other", nil, "ERR Unknown client type 'other'"},
		{"USER alice", nil, "ERR syntax error"},
	} {
		t.Run(strings.ReplaceAll(tc.args, " ", "_"), func(t *testing.T) {
			f, err := clientinfo.ParseList(words(tc.args))
			if errText(err) != tc.err {
				t.Fatalf("ParseList = %v, want %q", err, tc.err)
			}
			if err != nil {
				return
			}
			if got := matching(f); !slices.Equal(got, tc.ids) || f.SkipMe {
				t.Errorf("matches %v, SkipMe %v; want %v, false", got, f.SkipMe, tc.ids)
			}
		})
	}
}
