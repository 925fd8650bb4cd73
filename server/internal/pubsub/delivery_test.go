package pubsub_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/clientmem"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// wire is a connection that records what is written to it, and can be
// made to fail.
type wire struct {
	mu     sync.Mutex
	b      bytes.Buffer
	fail   bool
	closed bool
	wrote  chan struct{} // a write happened (capacity 1)
}

func newWire() *wire { return &wire{wrote: make(chan struct{}, 1)} }

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() {
		select {
		case w.wrote <- struct{}{}:
		default:
		}
	}()
	if w.fail {
		return 0, errors.New("broken pipe")
	}
	return w.b.Write(p)
}

func (w *wire) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	return nil
}

func (w *wire) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor waits until the wire holds want, or fails the test.
func (w *wire) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for w.String() != want {
		select {
		case <-w.wrote:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the connection has %q, want %q", w.String(), want)
		}
	}
}

// subscriber is a connection with its subscriptions and delivery.
type subscriber struct {
	wire   *wire
	mem    clientmem.Usage
	sub    pubsub.Subscriptions
	wr     *resp.Writer
	proto  int
	totals *clientmem.Totals
}

func newSubscriber(proto int, totals *clientmem.Totals) *subscriber {
	s := &subscriber{wire: newWire(), proto: proto, totals: totals}
	s.wr = resp.NewWriter(s.wire)
	s.wr.SetProtocol(proto)
	s.sub.Delivery = pubsub.NewDelivery(s.wire, &s.mem, totals)
	return s
}

var noLimit limits.OutputLimit

// TestDeliveryEncoding: a message published to subscribers of both
// protocols reaches each connection as its protocol writes it, the
// subscription's confirmation first (held until the pipeline's flush).
func TestDeliveryEncoding(t *testing.T) {
	var r pubsub.Registry[*subscriber]
	totals := clientmem.New(nil)
	subs := []*subscriber{newSubscriber(2, totals), newSubscriber(3, totals)}
	for _, s := range subs {
		defer func() { r.Leave(s); s.sub.Leave() }()
		s.sub.Delivery.Hold()
		r.Subscribe(s, pubsub.Channel, [][]byte{[]byte("news")}, func(name string, n int) {
			s.sub.Confirm(s.wr, "subscribe", pubsub.Channel, name, n)
		})
	}
	deliver := func(s *subscriber, msg []byte) { s.sub.Delivery.Deliver(msg, noLimit, time.Now()) }
	resp3 := func(s *subscriber) bool { return s.proto == 3 }
	if n := r.Publish(pubsub.Channel, []byte("news"), []byte("hi"), resp3, deliver); n != 2 {
		t.Fatalf("Publish = %d, want 2", n)
	}
	// Held: nothing before the flush of the confirmation.
	time.Sleep(10 * time.Millisecond)
	for _, s := range subs {
		if got := s.wire.String(); got != "" {
			t.Errorf("RESP%d: %q written before the confirmation's flush", s.proto, got)
		}
		if err := s.sub.Delivery.Flush(s.wr.Flush); err != nil {
			t.Fatal(err)
		}
	}
	want := map[int]string{
		2: "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n" + "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
		3: ">3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n" + ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
	}
	for _, s := range subs {
		if got := s.wire.String(); got != want[s.proto] {
			t.Errorf("RESP%d: the connection has %q, want %q", s.proto, got, want[s.proto])
		}
	}
	// Not held: the push goroutine writes it.
	r.Publish(pubsub.Channel, []byte("news"), []byte("again"), resp3, deliver)
	subs[0].wire.waitFor(t, want[2]+"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nagain\r\n")
	subs[1].wire.waitFor(t, want[3]+">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nagain\r\n")
}

// TestDeliveryHardLimit: the message that would take a subscriber to the
// hard limit, with the replies being written to it, drops its pending
// pushes and reports it closed, once; the pushes leave the totals.
func TestDeliveryHardLimit(t *testing.T) {
	totals := clientmem.New(nil)
	s := newSubscriber(2, totals)
	defer s.sub.Leave()
	d := s.sub.Delivery
	d.Hold() // keep the pushes pending
	lim := limits.OutputLimit{Hard: 2 * clientmem.TrackOutput}
	totals.SetOutput(&s.mem, 100, 0) // replies being written
	msg := bytes.Repeat([]byte("x"), clientmem.TrackOutput-100)
	if out, closed := d.Deliver(msg, lim, time.Now()); closed || out != clientmem.TrackOutput {
		t.Fatalf("first message: out %d, closed %v", out, closed)
	}
	if s.mem.Pushes() != clientmem.TrackOutput-100 || totals.Normal() != 100 {
		t.Errorf("pending: Pushes %d, Normal %d", s.mem.Pushes(), totals.Normal())
	}
	d.Deliver(make([]byte, 100), lim, time.Now()) // a push step: counted
	if totals.Normal() != 100+clientmem.TrackOutput {
		t.Errorf("pending a step: Normal %d", totals.Normal())
	}
	if out, closed := d.Deliver(msg, lim, time.Now()); !closed || out != 2*clientmem.TrackOutput {
		t.Fatalf("third message: out %d, closed %v; want %d, true", out, closed, 2*clientmem.TrackOutput)
	}
	totals.SetOutput(&s.mem, 0, 0)
	if s.mem.Pushes() != 0 || totals.Normal() != 0 {
		t.Errorf("dropped: Pushes %d, Normal %d", s.mem.Pushes(), totals.Normal())
	}
	if _, closed := d.Deliver(msg, lim, time.Now()); closed {
		t.Error("a dead delivery reported closed again")
	}
	if err := d.Flush(s.wr.Flush); err != nil || s.wire.String() != "" {
		t.Errorf("a dead delivery wrote %q (%v)", s.wire.String(), err)
	}
}

// TestDeliverySoftLimit: on an injected clock, a subscriber at the soft
// limit is closed by the first message more than soft-seconds after it
// reached it.
func TestDeliverySoftLimit(t *testing.T) {
	s := newSubscriber(3, clientmem.New(nil))
	defer s.sub.Leave()
	d := s.sub.Delivery
	d.Hold()
	lim := limits.OutputLimit{Hard: 1 << 20, Soft: 100, SoftSeconds: 60}
	t0 := time.Unix(1000, 0)
	msg := make([]byte, 60)
	for i, c := range []struct {
		at     time.Duration
		closed bool
	}{
		{0, false},                                // 60 bytes: under
		{time.Second, false},                      // 120: at the soft limit, marked
		{61 * time.Second, false},                 // 180, 60 s at it: not more
		{61*time.Second + time.Millisecond, true}, // 240, more than 60 s
	} {
		if _, closed := d.Deliver(msg, lim, t0.Add(c.at)); closed != c.closed {
			t.Fatalf("message %d at t0+%v: closed %v, want %v", i, c.at, closed, c.closed)
		}
	}
	if !s.mem.SoftSince().Equal(t0.Add(time.Second)) {
		t.Errorf("marked at %v, want t0+1s", s.mem.SoftSince())
	}
}

// TestDeliveryWriteError: a failed write closes the connection and drops
// the pushes from then on.
func TestDeliveryWriteError(t *testing.T) {
	totals := clientmem.New(nil)
	s := newSubscriber(2, totals)
	defer s.sub.Leave()
	s.wire.mu.Lock()
	s.wire.fail = true
	s.wire.mu.Unlock()
	s.sub.Delivery.Deliver([]byte("+x\r\n"), noLimit, time.Now())
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.wire.mu.Lock()
		closed := s.wire.closed
		s.wire.mu.Unlock()
		if closed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the connection was not closed after a failed write")
		}
		time.Sleep(time.Millisecond)
	}
	if _, closed := s.sub.Delivery.Deliver([]byte("+y\r\n"), noLimit, time.Now()); closed || s.mem.Pushes() != 0 {
		t.Errorf("after a failed write: closed %v, Pushes %d", closed, s.mem.Pushes())
	}
}

// TestSubscriptions: the counts a confirmation carries, in both protocols,
// UNSUBSCRIBE's null confirmation, RESP2's subscribed mode and its PING.
func TestSubscriptions(t *testing.T) {
	for _, proto := range []int{2, 3} {
		var b bytes.Buffer
		w := resp.NewWriter(&b)
		w.SetProtocol(proto)
		var s pubsub.Subscriptions
		if s.Any() || s.Refusal(proto, "get") != "" || s.Pong(w, [][]byte{[]byte("ping")}) {
			t.Errorf("RESP%d: no subscription, yet subscribed mode", proto)
		}
		s.Confirm(w, "subscribe", pubsub.Channel, "a", 1)
		s.Confirm(w, "psubscribe", pubsub.Pattern, "a*", 1)
		s.Confirm(w, "ssubscribe", pubsub.ShardChannel, "s", 1)
		if !s.Any() || s.Count(pubsub.Channel) != 1 || s.Count(pubsub.Pattern) != 1 || s.Count(pubsub.ShardChannel) != 1 {
			t.Errorf("RESP%d: counts %d %d %d", proto, s.Count(pubsub.Channel), s.Count(pubsub.Pattern), s.Count(pubsub.ShardChannel))
		}
		s.Confirm(w, "unsubscribe", pubsub.Channel, "a", 0)
		s.ConfirmNone(w, "sunsubscribe", pubsub.Pattern) // any kind: the patterns' count
		w.Flush()
		h := "*"
		if proto == 3 {
			h = ">"
		}
		want := h + "3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n" +
			h + "3\r\n$10\r\npsubscribe\r\n$2\r\na*\r\n:2\r\n" +
			h + "3\r\n$10\r\nssubscribe\r\n$1\r\ns\r\n:1\r\n" +
			h + "3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n"
		null := "$-1\r\n"
		if proto == 3 {
			null = "_\r\n"
		}
		want += h + "3\r\n$12\r\nsunsubscribe\r\n" + null + ":1\r\n"
		if b.String() != want {
			t.Errorf("RESP%d: confirmations\n%q, want\n%q", proto, b.String(), want)
		}
		b.Reset()
		refusal := s.Refusal(proto, "get")
		pong := s.Pong(w, [][]byte{[]byte("ping"), []byte("hi")})
		w.Flush()
		if proto == 2 {
			if !strings.HasPrefix(refusal, "ERR Can't execute 'get': only (P|S)SUBSCRIBE") {
				t.Errorf("RESP2 refusal %q", refusal)
			}
			if !pong || b.String() != "*2\r\n$4\r\npong\r\n$2\r\nhi\r\n" {
				t.Errorf("RESP2 PING: %v %q", pong, b.String())
			}
			for _, ok := range []string{"subscribe", "punsubscribe", "ping", "quit", "reset"} {
				if r := s.Refusal(2, ok); r != "" {
					t.Errorf("RESP2 refuses %s: %q", ok, r)
				}
			}
		} else if refusal != "" || pong || b.Len() != 0 {
			t.Errorf("RESP3: refusal %q, pong %v %q", refusal, pong, b.String())
		}
		s.Leave()
		if s.Any() {
			t.Errorf("RESP%d: subscribed after Leave", proto)
		}
	}
}

// TestDeliveryConcurrent: publishers deliver while the connection flushes
// replies, under -race: every message arrives whole, each publisher's in
// its order, and no push lands inside a reply.
func TestDeliveryConcurrent(t *testing.T) {
	publishers, messages, replies := 4, 500, 200
	if testing.Short() {
		messages, replies = 100, 50
	}
	totals := clientmem.New(nil)
	s := newSubscriber(2, totals)
	d := s.sub.Delivery
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			for i := range messages {
				d.Deliver(fmt.Appendf(nil, "+p%d:%d\r\n", p, i), noLimit, time.Now())
			}
		})
	}
	wg.Go(func() {
		for i := range replies {
			s.wr.WriteString(fmt.Sprintf("r%d-begin", i)) // one reply of a pipeline
			s.wr.WriteString(fmt.Sprintf("r%d-end", i))   // and the next
			if err := d.Flush(s.wr.Flush); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	want := publishers*messages + 2*replies
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(s.wire.String(), "\r\n") < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	s.sub.Leave()
	if totals.Normal() != 0 {
		t.Errorf("after Leave the totals hold %d", totals.Normal())
	}
	next := make([]int, publishers)
	lines := strings.Split(strings.TrimSuffix(s.wire.String(), "\r\n"), "\r\n")
	if len(lines) != want {
		t.Fatalf("%d lines on the wire, want %d", len(lines), want)
	}
	for i, l := range lines {
		var p, n int
		switch {
		case strings.HasSuffix(l, "-begin"):
			if i+1 == len(lines) || lines[i+1] != strings.Replace(l, "-begin", "-end", 1) {
				t.Fatalf("line %d: %q is not followed by its pipeline's next reply", i, l)
			}
		case strings.HasSuffix(l, "-end"):
		default:
			if _, err := fmt.Sscanf(l, "+p%d:%d", &p, &n); err != nil {
				t.Fatalf("line %d: %q is not a message: %v", i, l, err)
			}
			if n != next[p] {
				t.Fatalf("line %d: publisher %d's message %d, want %d", i, p, n, next[p])
			}
			next[p]++
		}
	}
}
