package pubsub_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
)

func isRESP3(c *conn) bool { return c.resp3 }

// inbox records deliveries as subscriber name: encoded message.
type inbox struct {
	mu  sync.Mutex
	got []string
	raw [][]byte
}

func (in *inbox) deliver(c *conn, msg []byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.got = append(in.got, fmt.Sprintf("%s:%q", c, msg))
	in.raw = append(in.raw, msg)
}

func publish(r *pubsub.Registry[*conn], k pubsub.Kind, channel, msg string) (int, []string) {
	var in inbox
	n := r.Publish(k, []byte(channel), []byte(msg), isRESP3, in.deliver)
	return n, in.got
}

// TestPublishEncoding: the bytes of each kind of message, in RESP2 (an
// array) and RESP3 (a push), as Redis 7.2 sends them.
func TestPublishEncoding(t *testing.T) {
	var r pubsub.Registry[*conn]
	two, three := &conn{name: "two"}, &conn{name: "three", resp3: true}
	for _, c := range []*conn{two, three} {
		subscribe(t, &r, c, pubsub.Channel, "ch")
		subscribe(t, &r, c, pubsub.ShardChannel, "ch")
	}
	subscribe(t, &r, two, pubsub.Pattern, "c*")
	for _, tc := range []struct {
		kind      pubsub.Kind
		c         *conn
		want      string
		wantCount int
	}{
		{pubsub.Channel, two, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", 3},
		{pubsub.Channel, three, ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", 3},
		{pubsub.ShardChannel, two, "*3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", 2},
		{pubsub.ShardChannel, three, ">3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", 2},
	} {
		n, got := publish(&r, tc.kind, "ch", "hi")
		if n != tc.wantCount || !strings.Contains(fmt.Sprint(got), fmt.Sprintf("%s:%q", tc.c, tc.want)) {
			t.Errorf("Publish(%d) = %d, %q; want %d with %s:%q", tc.kind, n, got, tc.wantCount, tc.c, tc.want)
		}
	}
	unsubscribe(t, &r, two, pubsub.Channel)
	subscribe(t, &r, three, pubsub.Pattern, "c*")
	n, got := publish(&r, pubsub.Channel, "ch", "")
	want(t, "pmessages", n, 3)
	for _, w := range []string{
		`two:"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$0\r\n\r\n"`,
		`three:">4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$0\r\n\r\n"`,
	} {
		if !strings.Contains(fmt.Sprint(got), w) {
			t.Errorf("no %s in %s", w, got)
		}
	}
}

// TestPublishCounts: a subscriber of a channel and of two patterns
// matching it receives the message three times, and each counts; shard
// channels are a namespace of their own, without patterns.
func TestPublishCounts(t *testing.T) {
	var r pubsub.Registry[*conn]
	a, b := &conn{name: "a"}, &conn{name: "b"}
	subscribe(t, &r, a, pubsub.Channel, "news")
	subscribe(t, &r, a, pubsub.Pattern, "n*", "*s", "x*")
	subscribe(t, &r, b, pubsub.Pattern, "news")
	subscribe(t, &r, b, pubsub.ShardChannel, "news")
	for _, tc := range []struct {
		kind    pubsub.Kind
		channel string
		want    int
	}{
		{pubsub.Channel, "news", 4},
		{pubsub.Channel, "nope", 1},
		{pubsub.Channel, "xs", 2},
		{pubsub.Channel, "other", 0},
		{pubsub.ShardChannel, "news", 1},
		{pubsub.ShardChannel, "nope", 0},
	} {
		n, got := publish(&r, tc.kind, tc.channel, "m")
		if n != tc.want || len(got) != n {
			t.Errorf("Publish(%d, %q) = %d with %d deliveries, want %d", tc.kind, tc.channel, n, len(got), tc.want)
		}
	}
	var empty pubsub.Registry[*conn]
	if n, got := publish(&empty, pubsub.Channel, "news", "m"); n != 0 || len(got) != 0 {
		t.Errorf("Publish to an empty registry = %d, %q", n, got)
	}
}

// TestPublishEncodesOncePerProtocol: subscribers of one protocol share one
// encoding of the message.
func TestPublishEncodesOncePerProtocol(t *testing.T) {
	var r pubsub.Registry[*conn]
	for i := range 10 {
		subscribe(t, &r, &conn{name: fmt.Sprint(i), resp3: i%2 == 1}, pubsub.Channel, "ch")
	}
	var in inbox
	r.Publish(pubsub.Channel, []byte("ch"), []byte("m"), isRESP3, in.deliver)
	distinct := map[*byte]bool{}
	for _, b := range in.raw {
		distinct[&b[0]] = true
	}
	want(t, "encodings of 10 deliveries", len(distinct), 2)
}

// TestPublishAllocations: fanning out allocates nothing per subscriber.
func TestPublishAllocations(t *testing.T) {
	allocs := func(n int) float64 {
		var r pubsub.Registry[*conn]
		for i := range n {
			c := &conn{name: fmt.Sprint(i), resp3: i%2 == 1}
			subscribe(t, &r, c, pubsub.Channel, "ch")
			subscribe(t, &r, c, pubsub.Pattern, "c*")
		}
		channel, msg := []byte("ch"), []byte("m")
		deliver := func(*conn, []byte) {}
		return testing.AllocsPerRun(100, func() { r.Publish(pubsub.Channel, channel, msg, isRESP3, deliver) })
	}
	if two, many := allocs(2), allocs(100); two != many {
		t.Errorf("a Publish to 2 subscribers, one of each protocol, allocates %v times, to 100 %v", two, many)
	}
}

func TestPublishToPatternPanics(t *testing.T) {
	defer func() {
		if got := fmt.Sprint(recover()); got != "pubsub: Publish to a pattern" {
			t.Errorf("panic %q", got)
		}
	}()
	var r pubsub.Registry[*conn]
	r.Publish(pubsub.Pattern, []byte("x"), nil, isRESP3, func(*conn, []byte) {})
}

// TestPatternMatching: Redis's glob, * ? and \ escapes.
func TestPatternMatching(t *testing.T) {
	for _, tc := range []struct {
		pattern, channel string
		match            bool
	}{
		{"*", "anything", true},
		{"*", "", true},
		{"news.*", "news.sport", true},
		{"news.*", "news", false},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{`news\*`, "news*", true},
		{`news\*`, "news.sport", false},
		{`what\?`, "what?", true},
		{`what\?`, "whats", false},
		{`back\\slash`, `back\slash`, true},
		{"[ab]", "a", false}, // no character classes: the brackets are literal
		{"[ab]", "[ab]", true},
		{"", "", true},
		{"", "x", false},
	} {
		var r pubsub.Registry[*conn]
		subscribe(t, &r, &conn{name: "a"}, pubsub.Pattern, tc.pattern)
		if n, _ := publish(&r, pubsub.Channel, tc.channel, "m"); (n == 1) != tc.match {
			t.Errorf("pattern %q and channel %q: %d deliveries", tc.pattern, tc.channel, n)
		}
		subscribe(t, &r, &conn{name: "a"}, pubsub.Channel, tc.channel)
		if got := len(r.Channels(pubsub.Channel, tc.pattern)) == 1; got != tc.match {
			t.Errorf("Channels(%q) of channel %q: %v", tc.pattern, tc.channel, got)
		}
	}
}

// TestPatternWorkBound: a pattern whose matching would take a publisher
// about C(64,12), 3e12, steps gives up after the bound (1000 steps a byte
// of the channel) and matches nothing, while the same pattern matches a
// channel it needs few steps for.
func TestPatternWorkBound(t *testing.T) {
	var r pubsub.Registry[*conn]
	subscribe(t, &r, &conn{name: "a"}, pubsub.Pattern, strings.Repeat("*a", 12)+"*b*")
	start := time.Now()
	if n, _ := publish(&r, pubsub.Channel, strings.Repeat("a", 64), "m"); n != 0 {
		t.Errorf("the costly channel matched: %d deliveries", n)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the costly match took %v", d)
	}
	if n, _ := publish(&r, pubsub.Channel, strings.Repeat("a", 12)+"b", "m"); n != 1 {
		t.Errorf("the cheap channel has %d deliveries, want 1", n)
	}
}

// TestConcurrent runs publishers against subscribers that come and go
// (under -race in CI): the steady subscribers receive every message of each
// publisher exactly once and in its order; each count lies between the
// steady subscribers and all of them; queries run meanwhile.
func TestConcurrent(t *testing.T) {
	const publishers, steady, churners = 4, 3, 4
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	var r pubsub.Registry[*conn]
	inboxes := map[*conn]*inbox{}
	var all []*conn
	for i := range steady + churners {
		c := &conn{name: fmt.Sprint("c", i), resp3: i%2 == 0}
		inboxes[c] = &inbox{}
		all = append(all, c)
	}
	for _, c := range all[:steady] {
		subscribe(t, &r, c, pubsub.Channel, "ch")
	}
	deliver := func(c *conn, msg []byte) { inboxes[c].deliver(c, msg) }

	stop := make(chan struct{})
	var churn sync.WaitGroup
	for _, c := range all[steady:] {
		churn.Go(func() {
			names := args("ch", "other")
			for {
				select {
				case <-stop:
					return
				default:
				}
				r.Subscribe(c, pubsub.Channel, names, func(string, int) {})
				r.Subscribe(c, pubsub.Pattern, args("c*"), func(string, int) {})
				r.Unsubscribe(c, pubsub.Channel, nil, func(string, int) {})
				r.Leave(c)
			}
		})
	}
	churn.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			r.Channels(pubsub.Channel, "c*")
			r.NumSub(pubsub.Channel, args("ch"))
			r.Counts()
			for range r.All() {
			}
		}
	})
	var pub sync.WaitGroup
	for p := range publishers {
		pub.Go(func() {
			for i := range rounds {
				n := r.Publish(pubsub.Channel, []byte("ch"), fmt.Appendf(nil, "%d:%d", p, i), isRESP3, deliver)
				if n < steady || n > steady+2*churners {
					t.Errorf("a Publish counted %d deliveries", n)
				}
			}
		})
	}
	pub.Wait()
	close(stop)
	churn.Wait()
	if err := r.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	for _, c := range all[:steady] {
		next := make([]int, publishers)
		for _, msg := range inboxes[c].raw {
			fields := bytes.Split(msg, []byte("\r\n"))
			var p, i int
			if _, err := fmt.Sscanf(string(fields[len(fields)-2]), "%d:%d", &p, &i); err != nil || i != next[p] {
				t.Fatalf("%s received %q, want message %d of publisher %d", c, msg, next[p], p)
			}
			next[p]++
		}
		for p, n := range next {
			if n != rounds {
				t.Errorf("%s received %d messages of publisher %d, want %d", c, n, p, rounds)
			}
		}
	}
}

// BenchmarkPublish fans one message out to subscribers of the channel, half
// of them RESP3, and to as many of a pattern matching it.
func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			var r pubsub.Registry[*conn]
			for i := range n {
				c := &conn{name: fmt.Sprint(i), resp3: i%2 == 1}
				r.Subscribe(c, pubsub.Channel, args("ch"), func(string, int) {})
				r.Subscribe(c, pubsub.Pattern, args("c*"), func(string, int) {})
			}
			channel, msg := []byte("ch"), []byte("message")
			deliveries := 0
			deliver := func(*conn, []byte) { deliveries++ }
			b.ReportAllocs()
			for b.Loop() {
				r.Publish(pubsub.Channel, channel, msg, isRESP3, deliver)
			}
			b.ReportMetric(float64(deliveries)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}
