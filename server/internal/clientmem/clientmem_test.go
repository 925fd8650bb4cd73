package clientmem_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/clientmem"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
)

// TestCheck walks one client's output through a limit of hard 100, soft 50
// for 2 s on an injected clock: below, at the soft limit (marked at its
// first check, not moved by later ones), past soft-seconds, at the hard
// limit; CheckPublished clears the mark below the soft limit, Check leaves
// it.
func TestCheck(t *testing.T) {
	lim := limits.OutputLimit{Hard: 100, Soft: 50, SoftSeconds: 2}
	t0 := time.Unix(1000, 0)
	var u clientmem.Usage
	steps := []struct {
		out  int64
		at   time.Duration
		want clientmem.Verdict
		mark time.Duration // -1: none
	}{
		{out: 10, at: 0, want: clientmem.Under, mark: -1},
		{out: 50, at: 0, want: clientmem.Soft, mark: 0},
		{out: 60, at: time.Second, want: clientmem.Soft, mark: 0},
		{out: 60, at: 2 * time.Second, want: clientmem.Soft, mark: 0},  // not more than 2 s
		{out: 10, at: 2 * time.Second, want: clientmem.Under, mark: 0}, // Check leaves the mark
		{out: 60, at: 2*time.Second + 1, want: clientmem.SoftExpired, mark: 0},
		{out: 100, at: 3 * time.Second, want: clientmem.Hard, mark: 0},
	}
	for i, st := range steps {
		got := u.Check(lim, st.out, t0.Add(st.at))
		if got != st.want {
			t.Errorf("step %d: Check(%d bytes, t0+%v) = %v, want %v", i, st.out, st.at, got, st.want)
		}
		if got.Over() != (st.want >= clientmem.SoftExpired) {
			t.Errorf("step %d: %v.Over() = %v", i, got, got.Over())
		}
		wantMark := time.Time{}
		if st.mark >= 0 {
			wantMark = t0.Add(st.mark)
		}
		if m := u.SoftSince(); !m.Equal(wantMark) {
			t.Errorf("step %d: mark %v, want %v", i, m, wantMark)
		}
	}
	// The cron's check of the published output (none: under) clears it.
	if v, out := u.CheckPublished(lim, t0.Add(4*time.Second)); v != clientmem.Under || out != 0 {
		t.Errorf("CheckPublished = %v, %d; want under, 0", v, out)
	}
	if m := u.SoftSince(); !m.IsZero() {
		t.Errorf("after CheckPublished under the limit, the mark is %v", m)
	}
	// No limit: never over, never marked.
	if v := u.Check(limits.OutputLimit{}, 1<<40, t0); v != clientmem.Under || !u.SoftSince().IsZero() {
		t.Errorf("with no limit: %v, mark %v", v, u.SoftSince())
	}
}

// TestReplyWritten: the mark goes once the replies are written, unless the
// pushes keep the client at its soft limit.
func TestReplyWritten(t *testing.T) {
	lim := limits.OutputLimit{Soft: 1 << 20, SoftSeconds: 1}
	old := time.Unix(1000, 0)
	tot := clientmem.New(nil)
	var u clientmem.Usage
	u.Check(lim, 1<<20, old)
	u.ReplyWritten(lim)
	if !u.SoftSince().IsZero() {
		t.Error("the mark stayed after the replies were written")
	}
	tot.SetPush(&u, 2<<20)
	u.Check(lim, 2<<20, old)
	u.ReplyWritten(lim)
	if !u.SoftSince().Equal(old) {
		t.Errorf("with pushes past the soft limit the mark is %v, want %v", u.SoftSince(), old)
	}
	u.ReplyWritten(limits.OutputLimit{}) // the class's soft limit removed
	if !u.SoftSince().IsZero() {
		t.Error("the mark stayed with no soft limit")
	}
}

func TestArm(t *testing.T) {
	for _, c := range []struct {
		lim                 limits.OutputLimit
		outCheck, publishAt int
	}{
		{limits.OutputLimit{}, int(^uint(0) >> 1), clientmem.TrackOutput},
		{limits.OutputLimit{Hard: 1 << 20}, 1 << 20, clientmem.TrackOutput},
		{limits.OutputLimit{Hard: 1 << 20, Soft: 1 << 19}, 1 << 19, clientmem.TrackOutput},
		{limits.OutputLimit{Soft: 1000}, 1000, 1000},
	} {
		var u clientmem.Usage
		u.Arm(c.lim)
		if u.OutCheck() != c.outCheck || u.PublishAt() != c.publishAt {
			t.Errorf("Arm(%+v): OutCheck %d, PublishAt %d; want %d, %d", c.lim, u.OutCheck(), u.PublishAt(), c.outCheck, c.publishAt)
		}
	}
}

func TestClass(t *testing.T) {
	for _, c := range []struct {
		replica, subscribed bool
		want                int
	}{
		{false, false, limits.ClassNormal},
		{false, true, limits.ClassPubSub},
		{true, false, limits.ClassReplica},
		{true, true, limits.ClassReplica},
	} {
		if got := clientmem.Class(c.replica, c.subscribed); got != c.want {
			t.Errorf("Class(%v, %v) = %d, want %d", c.replica, c.subscribed, got, c.want)
		}
	}
}

// TestTotals publishes each kind of figure and checks the totals, the key
// space's counter (less the bytes charged as dump chunks), the pushes'
// steps, a replica's move and a client's end.
func TestTotals(t *testing.T) {
	var store atomic.Int64
	tot := clientmem.New(&store)
	var a, b clientmem.Usage
	check := func(step string, normal, replicas, st int64) {
		t.Helper()
		if tot.Normal() != normal || tot.Replicas() != replicas || store.Load() != st {
			t.Errorf("%s: normal %d, replicas %d, store %d; want %d, %d, %d",
				step, tot.Normal(), tot.Replicas(), store.Load(), normal, replicas, st)
		}
	}
	tot.SetQbuf(&a, 4096)
	tot.SetQbuf(&b, 1024)
	check("request buffers", 5120, 0, 5120)
	tot.SetOutput(&a, 100_000, 30_000) // 30000 of it counted as dump chunks
	check("replies being written", 105120, 0, 75120)
	if a.Output() != 100_000 || a.Total() != 104096 {
		t.Errorf("a: Output %d, Total %d", a.Output(), a.Total())
	}
	tot.SetOutput(&a, 0, 30_000)
	check("replies written", 5120, 0, 5120)
	a.Queue(300)
	a.Queue(200)
	check("queued, not yet published", 5120, 0, 5120)
	tot.SetMulti(&a)
	if a.Multi() != 500 {
		t.Errorf("Multi = %d, want 500", a.Multi())
	}
	check("transaction published", 5620, 0, 5620)
	// Pushes count to the byte in Pushes, in steps of TrackOutput in
	// the totals.
	tot.SetPush(&b, clientmem.TrackOutput-1)
	check("pushes under a step", 5620, 0, 5620)
	tot.SetPush(&b, 2*clientmem.TrackOutput+5)
	if b.Pushes() != 2*clientmem.TrackOutput+5 {
		t.Errorf("Pushes = %d", b.Pushes())
	}
	check("pushes of two steps", 5620+2*clientmem.TrackOutput, 0, 5620+2*clientmem.TrackOutput)
	tot.SetPush(&b, 0)
	tot.BecomeReplica(&b)
	if !b.IsReplica() {
		t.Error("b is not a replica")
	}
	check("b a replica", 4596, 1024, 4596)
	tot.SetQbuf(&b, 2048)
	check("a replica's buffer grows", 4596, 2048, 4596)
	a.SetPending(10)
	if c, p := a.QueryBuffer(); c != 4096 || p != 10 {
		t.Errorf("QueryBuffer = %d, %d", c, p)
	}
	tot.Drop(&a)
	tot.Drop(&b)
	check("both ended", 0, 0, 0)
	if c, p := a.QueryBuffer(); c != 0 || p != 0 || a.Total() != 0 {
		t.Errorf("an ended client holds %d, %d, %d", c, p, a.Total())
	}
}

// TestWake: the cron is woken when an increase reaches maxmemory-clients,
// and by a new limit; never twice queued.
func TestWake(t *testing.T) {
	tot := clientmem.New(nil)
	woken := func() bool {
		select {
		case <-tot.Wake():
			return true
		default:
			return false
		}
	}
	var u clientmem.Usage
	tot.SetQbuf(&u, 1<<20)
	if woken() {
		t.Error("woken with no limit")
	}
	tot.SetEvictAt(2 << 20)
	if !woken() {
		t.Error("a new limit did not wake the cron")
	}
	tot.SetQbuf(&u, 2<<20-1)
	if woken() {
		t.Error("woken under the limit")
	}
	tot.SetQbuf(&u, 2<<20)
	tot.SetQbuf(&u, 3<<20)
	if !woken() || woken() {
		t.Error("reaching the limit (twice) did not wake the cron once")
	}
	tot.SetQbuf(&u, 0) // a decrease wakes nothing
	if woken() {
		t.Error("woken by a decrease")
	}
	t0 := time.Unix(1000, 0)
	if !tot.WarnOver(t0) || tot.WarnOver(t0.Add(time.Second/2)) || !tot.WarnOver(t0.Add(time.Second)) {
		t.Error("WarnOver is not once a second")
	}
}

// TestEvict: the largest first, the older among equals, until the total is
// under the limit; a client already closing is passed over and still
// counted.
func TestEvict(t *testing.T) {
	type C = clientmem.Candidate[string]
	cands := func() []C {
		return []C{{"a", 1, 100}, {"b", 2, 500}, {"c", 3, 300}, {"d", 4, 500}, {"e", 5, 50}}
	}
	for _, c := range []struct {
		total, limit int64
		closing      string // refuses to close: on its way out already
		want         []string
		left         int64
	}{
		{total: 1450, limit: 2000, want: nil, left: 1450},
		{total: 1450, limit: 1450, want: []string{"b"}, left: 950},
		{total: 1450, limit: 951, want: []string{"b"}, left: 950},
		{total: 1450, limit: 950, want: []string{"b", "d"}, left: 450},
		{total: 1450, limit: 100, want: []string{"b", "d", "c", "a"}, left: 50},
		{total: 1450, limit: 1, want: []string{"b", "d", "c", "a", "e"}, left: 0},
		{total: 1450, limit: 950, closing: "b", want: []string{"d", "c"}, left: 650},
		{total: 1450, limit: 0, want: nil, left: 1450}, // no limit
	} {
		var closed []string
		left := clientmem.Evict(cands(), c.total, c.limit, func(x C) bool {
			if x.Client == c.closing {
				return false
			}
			closed = append(closed, x.Client)
			return true
		})
		if !slices.Equal(closed, c.want) || left != c.left {
			t.Errorf("total %d, limit %d, %q closing: closed %v leaving %d; want %v leaving %d",
				c.total, c.limit, c.closing, closed, left, c.want, c.left)
		}
	}
}

func ExampleEvict() {
	cands := []clientmem.Candidate[string]{
		{Client: "reader", ID: 1, Mem: 20 << 10},
		{Client: "stuck", ID: 2, Mem: 8 << 20},
		{Client: "pipeliner", ID: 3, Mem: 1 << 20},
	}
	left := clientmem.Evict(cands, 9<<20+20<<10, 4<<20, func(c clientmem.Candidate[string]) bool {
		fmt.Println("evict", c.Client)
		return true
	})
	fmt.Println("left", left)
	// Output:
	// evict stuck
	// left 1069056
}
