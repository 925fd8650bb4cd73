package lockfree_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/cuckoohash/cuckoo/internal/lincheck"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// The linearizability test records short concurrent histories of Insert,
// Delete, Contains and Count on a few keys and checks them with porcupine
// against a multiset model. The keys are chosen so that no two of them, and
// none of them and any other key in the filter, share a bucket pair and
// fingerprint: each key's copies are then the only ones its lookups can see,
// so the model is exact (no false positive is possible) and the keys are
// independent, which lets porcupine check each key's sub-history apart
// (internal/lincheck partitions by key).
// The filter is small and kept at about 88% load (78% with 2 slots a
// bucket) by a goroutine that deletes and re-inserts other keys, so that
// inserts keep migrating fingerprints during the histories. The test runs
// once per bucket layout New builds (shapes_test.go).

type linOp uint8

const (
	linInsert linOp = iota
	linDelete
	linContains
	linCount
)

type linInput struct {
	op  linOp
	key int
}

type linOutput struct {
	ok   bool // Insert: stored; Delete, Contains: the result
	full bool // Insert: ErrFull
	n    int  // Count
}

// multisetModel is the sequential specification of one key: the state is
// its number of copies. An Insert refused with ErrFull changes nothing.
var multisetModel = lincheck.Model[int, linInput, linOutput]{
	Key: func(in linInput) int { return in.key },
	Step: func(n int, in linInput, out linOutput) (bool, int) {
		switch in.op {
		case linInsert:
			if out.full {
				return true, n
			}
			return out.ok, n + 1
		case linDelete:
			if out.ok {
				return n > 0, n - 1
			}
			return n == 0, n
		case linContains:
			return out.ok == (n > 0), n
		case linCount:
			return out.n == n, n
		}
		return false, n
	},
	Describe: func(in linInput, out linOutput) string {
		switch in.op {
		case linInsert:
			if out.full {
				return fmt.Sprintf("Insert(k%d) = ErrFull", in.key)
			}
			return fmt.Sprintf("Insert(k%d) = nil", in.key)
		case linDelete:
			return fmt.Sprintf("Delete(k%d) = %v", in.key, out.ok)
		case linContains:
			return fmt.Sprintf("Contains(k%d) = %v", in.key, out.ok)
		}
		return fmt.Sprintf("Count(k%d) = %d", in.key, out.n)
	},
	DescribeState: func(n int) string { return fmt.Sprintf("%d copies", n) },
}

// linFixture is a filter at high load with other keys, and keys for the
// histories whose pairs collide with nothing.
type linFixture struct {
	f      *lockfree.Filter
	others [][]byte // in the filter, churned by the background goroutine
	keys   [][]byte // the histories' keys, absent between histories
}

func newLinFixture(t *testing.T, s shape, nKeys int) *linFixture {
	f := mustNew(t, s.config(200, 17))
	slots := int(f.Buckets() * uint64(f.BucketSize()))
	fx := &linFixture{f: f}
	taken := map[pair]bool{}
	for _, k := range keys(int(s.load(0.88)*float64(slots)), 61) {
		if err := f.Insert(k); err != nil {
			t.Fatal(err)
		}
		fx.others = append(fx.others, k)
		taken[pairOf(f, k)] = true
	}
	for _, k := range keys(1000, 62) {
		if p := pairOf(f, k); !taken[p] && p.lo != p.hi {
			taken[p] = true
			fx.keys = append(fx.keys, k)
			if len(fx.keys) == nKeys {
				return fx
			}
		}
	}
	t.Fatal("not enough keys with distinct pairs")
	return nil
}

// recorder runs clients goroutines that record histories of random
// operations on the fixture's keys, and one that churns the other keys
// meanwhile, unrecorded (they share no pair with the histories' keys), so
// that fingerprints keep migrating. The goroutines live across histories
// and wait for the next one spinning, with runtime.Gosched: goroutines
// started afresh for each history run one after another on one P, since a
// client finishes its operations in microseconds, before an idle P wakes.
type recorder struct {
	fx      *linFixture
	clients int
	opsPer  int
	// start[g] is closed when history g starts; next is the first not
	// started.
	start   []chan struct{}
	next    int
	ready   atomic.Int64 // clients that have started, over all histories
	done    atomic.Int64 // clients done, over all histories
	hist    [][]porcupine.Operation
	clock   atomic.Int64
	stopped atomic.Bool
	spun    atomic.Int64
	pending [][][]byte // per client, other keys it could not re-insert
	// finished receives when every goroutine is done with a history.
	finished chan struct{}
	wg       sync.WaitGroup
}

func newRecorder(t *testing.T, fx *linFixture, clients, opsPer, histories int) *recorder {
	r := &recorder{fx: fx, clients: clients, opsPer: opsPer, hist: make([][]porcupine.Operation, clients), finished: make(chan struct{}), next: 1}
	r.pending = make([][][]byte, clients)
	r.start = make([]chan struct{}, histories+2)
	for g := range r.start {
		r.start[g] = make(chan struct{})
	}
	for c := range clients {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for g := int64(1); r.await(g); g++ {
				r.arrive(g)
				r.hist[c] = r.client(t, c, uint64(g))
				r.finish(g)
			}
		}()
	}
	return r
}

// await waits for history g to start and reports whether it did.
func (r *recorder) await(g int64) bool {
	<-r.start[g]
	return !r.stopped.Load()
}

// arrive waits, spinning, until as many of the history's clients have
// arrived as there are Ps (or a millisecond has passed): woken goroutines start on
// one P, and an idle P takes tens of microseconds to wake and take some,
// longer than a client needs for its operations, so without this wait the
// clients of a history would run one after another.
func (r *recorder) arrive(g int64) {
	want := (g-1)*int64(r.clients) + int64(min(runtime.GOMAXPROCS(0), r.clients))
	r.ready.Add(1)
	for deadline := time.Now().Add(time.Millisecond); r.ready.Load() < want && time.Now().Before(deadline); {
	}
}

// finish records that a goroutine is done with history g.
func (r *recorder) finish(g int64) {
	if r.done.Add(1) == g*int64(r.clients) {
		r.finished <- struct{}{}
	}
}

// record records history g (from 1) and returns it. It blocks rather than
// spins while the history runs, to leave the Ps to the recorders.
func (r *recorder) record(g int64) []porcupine.Operation {
	close(r.start[g])
	r.next = int(g) + 1
	<-r.finished
	var all []porcupine.Operation
	for _, h := range r.hist {
		all = append(all, h...)
	}
	return all
}

func (r *recorder) stop() {
	if r.stopped.Swap(true) {
		return
	}
	for _, ch := range r.start[r.next:] {
		close(ch)
	}
	r.wg.Wait()
}

func (r *recorder) client(t *testing.T, c int, seed uint64) []porcupine.Operation {
	fx := r.fx
	rng := rand.New(rand.NewPCG(seed, uint64(c)))
	hist := make([]porcupine.Operation, 0, r.opsPer)
	spun := 0
	for range r.opsPer {
		// A random pause spreads the operations, so that those of clients
		// on other Ps overlap them at varied offsets.
		for i := range rng.IntN(500) {
			spun += i
		}
		if rng.IntN(3) == 0 {
			r.churn(t, c, rng)
		}
		in := linInput{key: rng.IntN(len(fx.keys))}
		switch x := rng.IntN(20); {
		case x < 5:
			in.op = linInsert
		case x < 10:
			in.op = linDelete
		case x < 16:
			in.op = linContains
		default:
			in.op = linCount
		}
		k := fx.keys[in.key]
		var out linOutput
		call := r.clock.Add(1)
		switch in.op {
		case linInsert:
			err := fx.f.Insert(k)
			out.ok, out.full = err == nil, errors.Is(err, lockfree.ErrFull)
			if err != nil && !out.full {
				t.Error(err)
			}
		case linDelete:
			out.ok = fx.f.Delete(k)
		case linContains:
			out.ok = fx.f.Contains(k)
		case linCount:
			out.n = fx.f.Count(k)
		}
		ret := r.clock.Add(1)
		hist = append(hist, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
	}
	r.spun.Add(int64(spun)) // keeps the pauses from being optimized away
	return hist
}

// churn deletes one of client c's share of the other keys and inserts it
// again, unrecorded: they share no pair with the histories' keys, and the
// insert keeps fingerprints migrating.
func (r *recorder) churn(t *testing.T, c int, rng *rand.Rand) {
	fx := r.fx
	k := fx.others[c+r.clients*rng.IntN(len(fx.others)/r.clients)]
	if !fx.f.Delete(k) {
		if slices.ContainsFunc(r.pending[c], func(p []byte) bool { return bytes.Equal(p, k) }) {
			return // not in the filter now
		}
		t.Errorf("churn: Delete of present key %x = false", k)
		return
	}
	if fx.f.Insert(k) != nil {
		// ErrFull: the histories' keys took its room. Put it back after
		// the history, when they are cleared.
		r.pending[c] = append(r.pending[c], k)
	}
}

// clear deletes every copy of the histories' keys, so that each history
// starts from an empty model.
func (fx *linFixture) clear() {
	for _, k := range fx.keys {
		for fx.f.Delete(k) {
		}
	}
}

// TestLinearizable records many short histories (4 goroutines, 30
// operations each, on 6 keys) while another goroutine churns other keys,
// and checks each with porcupine.
func TestLinearizable(t *testing.T) { forShapes(t, linearizable) }

func linearizable(t *testing.T, s shape) {
	const clients, opsPer, nKeys = 4, 30, 6
	histories := 2000
	if testing.Short() {
		histories = 150
	}
	fx := newLinFixture(t, s, nKeys)
	rec := newRecorder(t, fx, clients, opsPer, histories)
	defer rec.stop()
	ops, fulls, overlapping := 0, 0, 0
	for h := range histories {
		hist := rec.record(int64(h + 1))
		ops += len(hist)
		overlapping += concurrent(hist)
		for _, op := range hist {
			if op.Output.(linOutput).full {
				fulls++
			}
		}
		lincheck.Check(t, multisetModel, hist, 0, fmt.Sprintf("history %d", h))
		fx.clear()
		for c, ks := range rec.pending {
			for _, k := range ks {
				if err := fx.f.Insert(k); err != nil {
					t.Fatalf("re-inserting another key into an emptier filter: %v", err)
				}
			}
			rec.pending[c] = ks[:0]
		}
		if t.Failed() {
			break
		}
	}
	rec.stop()
	if err := fx.f.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d histories, %d operations (%d concurrent with another client's), %d inserts refused, load %.3f",
		histories, ops, overlapping, fulls, fx.f.LoadFactor())
	if overlapping < ops/10 {
		// Not an error: on a loaded machine the clients may get one CPU.
		t.Logf("only %d of %d operations overlapped another client's: the histories hardly tested concurrency", overlapping, ops)
	}
}

// concurrent returns how many operations of hist overlap an operation of
// another client.
func concurrent(hist []porcupine.Operation) int {
	n := 0
	for _, a := range hist {
		for _, b := range hist {
			if a.ClientId != b.ClientId && a.Call < b.Return && b.Call < a.Return {
				n++
				break
			}
		}
	}
	return n
}

// TestLinearizabilityCheckerCatchesFlaws checks the model itself: a history
// with a false negative, an undercount, and a Delete that finds a copy that
// was never inserted must each be rejected by the model.
func TestLinearizabilityCheckerCatchesFlaws(t *testing.T) {
	op := func(c int, call, ret int64, in linInput, out linOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret}
	}
	ins := op(0, 0, 1, linInput{linInsert, 0}, linOutput{ok: true})
	for name, h := range map[string][]porcupine.Operation{
		"false negative": {ins, op(1, 2, 3, linInput{linContains, 0}, linOutput{})},
		"undercount":     {ins, op(1, 2, 3, linInput{linCount, 0}, linOutput{n: 0})},
		"phantom delete": {op(1, 0, 1, linInput{linDelete, 0}, linOutput{ok: true})},
		"double delete":  {ins, op(1, 2, 3, linInput{linDelete, 0}, linOutput{ok: true}), op(1, 4, 5, linInput{linDelete, 0}, linOutput{ok: true})},
	} {
		if porcupine.CheckOperations(multisetModel.Porcupine(), h) {
			t.Errorf("%s: accepted", name)
		}
	}
	// Concurrent with the insert, a miss is fine.
	h := []porcupine.Operation{ins, op(1, 0, 3, linInput{linContains, 0}, linOutput{})}
	if !porcupine.CheckOperations(multisetModel.Porcupine(), h) {
		t.Error("a miss concurrent with the insert was rejected")
	}
}
