package pubsub_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
)

// conn is a subscriber handle, as the server's connection is one.
type conn struct {
	name  string
	resp3 bool
}

func (c *conn) String() string { return c.name }

// confirmation is one call of a confirm callback.
type confirmation struct {
	name string
	n    int
}

func args(names ...string) [][]byte {
	var b [][]byte
	for _, n := range names {
		b = append(b, []byte(n))
	}
	return b
}

func subscribe(t *testing.T, r *pubsub.Registry[*conn], c *conn, k pubsub.Kind, names ...string) []confirmation {
	t.Helper()
	var got []confirmation
	r.Subscribe(c, k, args(names...), func(name string, n int) { got = append(got, confirmation{name, n}) })
	check(t, r)
	return got
}

func unsubscribe(t *testing.T, r *pubsub.Registry[*conn], c *conn, k pubsub.Kind, names ...string) []confirmation {
	t.Helper()
	var got []confirmation
	n := r.Unsubscribe(c, k, args(names...), func(name string, n int) { got = append(got, confirmation{name, n}) })
	if n != len(got) {
		t.Errorf("Unsubscribe returned %d after %d confirmations", n, len(got))
	}
	check(t, r)
	return got
}

func check(t *testing.T, r *pubsub.Registry[*conn]) {
	t.Helper()
	if err := r.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

func want(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
		t.Errorf("%s = %s, want %s", what, g, w)
	}
}

// TestSubscribeCounts: each confirmation carries the subscriber's number of
// subscriptions of the kind after it; repeats and unknown names are
// confirmed without changing it; UNSUBSCRIBE with no names takes every one
// of the kind, sorted, and with none confirms nothing.
func TestSubscribeCounts(t *testing.T) {
	var r pubsub.Registry[*conn]
	a := &conn{name: "a"}
	want(t, "subscribe b a b", subscribe(t, &r, a, pubsub.Channel, "b", "a", "b"), "[{b 1} {a 2} {b 2}]")
	want(t, "psubscribe x*", subscribe(t, &r, a, pubsub.Pattern, "x*"), "[{x* 1}]")
	want(t, "ssubscribe b", subscribe(t, &r, a, pubsub.ShardChannel, "b"), "[{b 1}]")
	want(t, "unsubscribe b zz", unsubscribe(t, &r, a, pubsub.Channel, "b", "zz"), "[{b 1} {zz 1}]")
	want(t, "subscribe c", subscribe(t, &r, a, pubsub.Channel, "c"), "[{c 2}]")
	want(t, "unsubscribe", unsubscribe(t, &r, a, pubsub.Channel), "[{a 1} {c 0}]")
	want(t, "unsubscribe again", unsubscribe(t, &r, a, pubsub.Channel), "[]")
	want(t, "punsubscribe", unsubscribe(t, &r, a, pubsub.Pattern), "[{x* 0}]")
	want(t, "sunsubscribe", unsubscribe(t, &r, a, pubsub.ShardChannel), "[{b 0}]")
	want(t, "a stranger's unsubscribe", unsubscribe(t, &r, &conn{name: "b"}, pubsub.Channel), "[]")
	want(t, "a stranger's unsubscribe x", unsubscribe(t, &r, &conn{name: "b"}, pubsub.Channel, "x"), "[{x 0}]")
	c, p, s := r.Counts()
	want(t, "Counts", []int{c, p, s}, []int{0, 0, 0})
}

// TestNeverEmpty: a channel is listed while it has a subscriber and gone
// with its last, so CHANNELS, NUMSUB and the counts agree.
func TestNeverEmpty(t *testing.T) {
	var r pubsub.Registry[*conn]
	a, b := &conn{name: "a"}, &conn{name: "b"}
	subscribe(t, &r, a, pubsub.Channel, "news", "sport")
	subscribe(t, &r, b, pubsub.Channel, "news")
	subscribe(t, &r, b, pubsub.Pattern, "n*", "s*")
	subscribe(t, &r, a, pubsub.ShardChannel, "shard")
	want(t, "Channels", r.Channels(pubsub.Channel, "*"), "[news sport]")
	want(t, "NumSub", r.NumSub(pubsub.Channel, args("news", "sport", "none", "n*")), "[2 1 0 0]")
	want(t, "NumSub of patterns", r.NumSub(pubsub.Pattern, args("n*")), "[1]")
	want(t, "NumSub of no channel", r.NumSub(pubsub.Channel, nil), "[]")
	c, p, s := r.Counts()
	want(t, "Counts", []int{c, p, s}, []int{2, 2, 1})

	unsubscribe(t, &r, a, pubsub.Channel, "news", "sport")
	want(t, "Channels after a left", r.Channels(pubsub.Channel, "*"), "[news]")
	unsubscribe(t, &r, b, pubsub.Channel, "news")
	unsubscribe(t, &r, b, pubsub.Pattern, "s*")
	want(t, "Channels after b left", r.Channels(pubsub.Channel, "*"), "[]")
	want(t, "NumSub after b left", r.NumSub(pubsub.Channel, args("news")), "[0]")
	c, p, s = r.Counts()
	want(t, "Counts after both left", []int{c, p, s}, []int{0, 1, 1})
}

// TestChannels: sorted, filtered by the glob, each namespace its own.
func TestChannels(t *testing.T) {
	var r pubsub.Registry[*conn]
	a := &conn{name: "a"}
	subscribe(t, &r, a, pubsub.Channel, "news.sport", "news.art", "weather", "new*", "")
	subscribe(t, &r, a, pubsub.ShardChannel, "news.shard")
	for _, tc := range []struct{ pattern, want string }{
		{"*", `["" "new*" "news.art" "news.sport" "weather"]`},
		{"news.*", `["news.art" "news.sport"]`},
		{`new\*`, `["new*"]`},
		{"news.???", `["news.art"]`},
		{"", `[""]`},
		{"nothing*", `[]`},
	} {
		if got := fmt.Sprintf("%q", r.Channels(pubsub.Channel, tc.pattern)); got != tc.want {
			t.Errorf("Channels(%q) = %s, want %s", tc.pattern, got, tc.want)
		}
	}
	want(t, "shard Channels", r.Channels(pubsub.ShardChannel, "news*"), "[news.shard]")
}

// TestLeave: a leaving subscriber's subscriptions of every kind go, and
// nobody else's.
func TestLeave(t *testing.T) {
	var r pubsub.Registry[*conn]
	a, b := &conn{name: "a"}, &conn{name: "b"}
	for _, c := range []*conn{a, b} {
		subscribe(t, &r, c, pubsub.Channel, "x", "y")
		subscribe(t, &r, c, pubsub.Pattern, "x*")
		subscribe(t, &r, c, pubsub.ShardChannel, "s")
	}
	subscribe(t, &r, a, pubsub.Channel, "only-a")
	r.Leave(a)
	check(t, &r)
	r.Leave(a) // twice: nothing left to do
	r.Leave(&conn{name: "never subscribed"})
	check(t, &r)
	want(t, "all", subscriptions(&r), "[b:0:x b:0:y b:1:x* b:2:s]")
	want(t, "a's unsubscribe", unsubscribe(t, &r, a, pubsub.Channel), "[]")
}

// subscriptions lists r.All() as subscriber:kind:name, sorted.
func subscriptions(r *pubsub.Registry[*conn]) []string {
	var all []string
	for c, sub := range r.All() {
		all = append(all, fmt.Sprintf("%s:%d:%s", c, sub.Kind, sub.Name))
	}
	slices.Sort(all)
	return all
}

// TestAll yields every subscription once, with its kind, and stops when
// the loop does.
func TestAll(t *testing.T) {
	var r pubsub.Registry[*conn]
	want(t, "All of nothing", subscriptions(&r), "[]")
	a, b := &conn{name: "a"}, &conn{name: "b"}
	subscribe(t, &r, a, pubsub.Channel, "x")
	subscribe(t, &r, b, pubsub.Channel, "x")
	subscribe(t, &r, a, pubsub.Pattern, "x")
	subscribe(t, &r, b, pubsub.ShardChannel, "x")
	want(t, "All", subscriptions(&r), "[a:0:x a:1:x b:0:x b:2:x]")
	n := 0
	for range r.All() {
		n++
		break
	}
	want(t, "yields after a break", n, 1)
	// The lock is released after a break: a write goes through.
	subscribe(t, &r, a, pubsub.Channel, "y")
}

func TestPrefix(t *testing.T) {
	want(t, "prefixes", []string{pubsub.Channel.Prefix(), pubsub.Pattern.Prefix(), pubsub.ShardChannel.Prefix()}, "[ p s]")
}

// FuzzRegistry decodes bytes into subscriptions, unsubscriptions and
// leavings of four subscribers over four names, and checks every
// confirmation and query against a model (a set per subscriber and kind).
func FuzzRegistry(f *testing.F) {
	f.Add([]byte{0x00, 0x11, 0x42, 0x03, 0x80, 0xc1})
	f.Add([]byte{0x05, 0x15, 0x25, 0x35, 0x45, 0x55, 0xa5, 0xb5, 0xf0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var r pubsub.Registry[*conn]
		conns := []*conn{{name: "a"}, {name: "b"}, {name: "c"}, {name: "d"}}
		names := []string{"x", "y", "x*", "*"}
		model := map[*conn]*[3]map[string]bool{}
		for _, c := range conns {
			model[c] = &[3]map[string]bool{{}, {}, {}}
		}
		for _, op := range ops {
			// op: 2 bits verb, 2 bits subscriber, 2 bits kind, 2 bits name.
			c, k, name := conns[op>>4&3], pubsub.Kind(op>>2&3), names[op&3]
			if k == 3 {
				k = pubsub.Channel
			}
			own := model[c][k]
			switch op >> 6 {
			case 0, 1:
				own[name] = true
				want(t, "subscribe", subscribe(t, &r, c, k, name), []confirmation{{name, len(own)}})
			case 2:
				if op&1 == 0 {
					delete(own, name)
					want(t, "unsubscribe", unsubscribe(t, &r, c, k, name), []confirmation{{name, len(own)}})
					break
				}
				var wantAll []confirmation
				for i, n := range slices.Sorted(maps.Keys(own)) {
					wantAll = append(wantAll, confirmation{n, len(own) - i - 1})
				}
				clear(own)
				want(t, "unsubscribe all", unsubscribe(t, &r, c, k), wantAll)
			case 3:
				r.Leave(c)
				check(t, &r)
				for _, m := range model[c] {
					clear(m)
				}
			}
		}
		var all []string
		var counts [3]map[string]int
		for k := range counts {
			counts[k] = map[string]int{}
		}
		for _, c := range conns {
			for k, m := range model[c] {
				for n := range m {
					all = append(all, fmt.Sprintf("%s:%d:%s", c, k, n))
					counts[k][n]++
				}
			}
		}
		slices.Sort(all)
		want(t, "All", subscriptions(&r), all)
		for k := range pubsub.Kind(3) {
			want(t, fmt.Sprint("Channels of kind ", k), r.Channels(k, "*"), slices.Sorted(maps.Keys(counts[k])))
			var numsub []int
			for _, n := range names {
				numsub = append(numsub, counts[k][n])
			}
			want(t, fmt.Sprint("NumSub of kind ", k), r.NumSub(k, args(names...)), numsub)
		}
		c, p, s := r.Counts()
		want(t, "Counts", []int{c, p, s}, []int{len(counts[0]), len(counts[1]), len(counts[2])})
	})
}
