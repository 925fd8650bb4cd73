package kcas_test

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/kcas"
)

// Words in these tests hold version<<32 | balance. Every change bumps the
// version, so no value recurs, as package kcas requires.
func pack(version, balance uint64) uint64 { return version<<32 | balance }
func balance(v uint64) uint64             { return v & (1<<32 - 1) }
func version(v uint64) uint64             { return v >> 32 }

func TestCASSucceedsAndFails(t *testing.T) {
	var a, b, c atomic.Uint64
	a.Store(pack(0, 10))
	b.Store(pack(0, 20))
	c.Store(pack(0, 30))
	ok := kcas.CAS(
		kcas.Entry{Word: &a, Old: pack(0, 10), New: pack(1, 5), Restore: pack(1, 10)},
		kcas.Entry{Word: &b, Old: pack(0, 20), New: pack(1, 25), Restore: pack(1, 20)},
	)
	if !ok || a.Load() != pack(1, 5) || b.Load() != pack(1, 25) {
		t.Fatalf("CAS = %v, words %#x %#x", ok, a.Load(), b.Load())
	}
	// c does not hold its expected value: nothing changes logically; the
	// words marked before the mismatch take their restore values.
	ok = kcas.CAS(
		kcas.Entry{Word: &a, Old: pack(1, 5), New: pack(2, 0), Restore: pack(2, 5)},
		kcas.Entry{Word: &c, Old: pack(0, 31), New: pack(1, 36), Restore: pack(1, 31)},
	)
	if ok {
		t.Fatal("CAS with a stale expected value succeeded")
	}
	if balance(a.Load()) != 5 || c.Load() != pack(0, 30) {
		t.Fatalf("after a failed CAS: %#x %#x", a.Load(), c.Load())
	}
	if kcas.Load(&a) != a.Load() || kcas.Settle(&a) != a.Load() {
		t.Fatal("Load or Settle of an unmarked word is not its value")
	}
}

func TestCASRejectsBadEntries(t *testing.T) {
	var a atomic.Uint64
	cases := map[string][]kcas.Entry{
		"marked value": {{Word: &a, Old: 0, New: kcas.Marked | 1, Restore: 2}},
		"new == old":   {{Word: &a, Old: 0, New: 0, Restore: 1}},
		"restore==old": {{Word: &a, Old: 0, New: 1, Restore: 0}},
		"same word":    {{Word: &a, Old: 0, New: 1, Restore: 2}, {Word: &a, Old: 0, New: 1, Restore: 2}},
		"too many":     make([]kcas.Entry, kcas.MaxWords+1),
	}
	for name, es := range cases {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			kcas.CAS(es...)
		}()
	}
	if !kcas.CAS() {
		t.Error("an empty CAS must succeed")
	}
}

// TestConservation runs goroutines that move amounts between random sets
// of 2..MaxWords words with CAS, and others that only bump a word's
// version with a single-word CAS after Settle, while readers take
// double-collect snapshots (two passes of Load with equal versions are a
// consistent cut) and check the total. At the end the total must be
// unchanged and every word unmarked.
func TestConservation(t *testing.T) {
	const words, initial = 16, 1000
	ops := 20000
	if testing.Short() {
		ops = 4000
	}
	ws := make([]atomic.Uint64, words)
	for i := range ws {
		ws[i].Store(pack(0, initial))
	}
	total := uint64(words * initial)
	var wg sync.WaitGroup
	var moved, refused atomic.Int64
	workers := max(4, 2*runtime.GOMAXPROCS(0))
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range ops {
				k := 2 + r.IntN(kcas.MaxWords-1)
				idx := r.Perm(words)[:k]
				es := make([]kcas.Entry, k)
				for j, i := range idx {
					v := kcas.Load(&ws[i])
					es[j] = kcas.Entry{Word: &ws[i], Old: v, New: pack(version(v)+1, balance(v)), Restore: pack(version(v)+1, balance(v))}
				}
				// move up to the first word's balance to the others
				amount := uint64(r.IntN(int(balance(es[0].Old)) + 1))
				es[0].New = pack(version(es[0].Old)+1, balance(es[0].Old)-amount)
				es[1].New = pack(version(es[1].Old)+1, balance(es[1].Old)+amount)
				if kcas.CAS(es...) {
					moved.Add(1)
				} else {
					refused.Add(1)
				}
			}
		}()
	}
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 2))
			for range ops {
				w := &ws[r.IntN(words)]
				for {
					v := kcas.Settle(w)
					if w.CompareAndSwap(v, pack(version(v)+1, balance(v))) {
						break
					}
				}
			}
		}()
	}
	stop := make(chan struct{})
	var snapshots atomic.Int64
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		first := make([]uint64, words)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for i := range ws {
				first[i] = kcas.Load(&ws[i])
			}
			same, sum := true, uint64(0)
			for i := range ws {
				v := kcas.Load(&ws[i])
				same = same && v == first[i]
				sum += balance(v)
			}
			if same {
				snapshots.Add(1)
				if sum != total {
					t.Errorf("consistent snapshot sums to %d, want %d", sum, total)
					return
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	readers.Wait()
	var sum uint64
	for i := range ws {
		v := ws[i].Load()
		if kcas.IsMarked(v) {
			t.Fatalf("word %d still marked at quiescence", i)
		}
		sum += balance(v)
	}
	if sum != total {
		t.Fatalf("total %d, want %d", sum, total)
	}
	t.Logf("%d transfers, %d refused, %d consistent snapshots checked", moved.Load(), refused.Load(), snapshots.Load())
	if moved.Load() == 0 {
		t.Fatal("no transfer succeeded")
	}
}

// TestLoadSeesAtomicTransfer checks from another goroutine that a transfer
// between two words is never observed half done through Load: the pair
// always sums to the same total.
func TestLoadSeesAtomicTransfer(t *testing.T) {
	var a, b atomic.Uint64
	a.Store(pack(0, 100))
	b.Store(pack(0, 0))
	iters := 20000
	if testing.Short() {
		iters = 5000
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range iters {
			va, vb := kcas.Load(&a), kcas.Load(&b)
			amount := uint64(1)
			if i%2 == 1 {
				// move back
				kcas.CAS(
					kcas.Entry{Word: &a, Old: va, New: pack(version(va)+1, balance(va)+amount), Restore: pack(version(va)+1, balance(va))},
					kcas.Entry{Word: &b, Old: vb, New: pack(version(vb)+1, balance(vb)-amount), Restore: pack(version(vb)+1, balance(vb))},
				)
				continue
			}
			kcas.CAS(
				kcas.Entry{Word: &a, Old: va, New: pack(version(va)+1, balance(va)-amount), Restore: pack(version(va)+1, balance(va))},
				kcas.Entry{Word: &b, Old: vb, New: pack(version(vb)+1, balance(vb)+amount), Restore: pack(version(vb)+1, balance(vb))},
			)
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		// Read b then a: a transfer a->b linearizes between two marks, so
		// reading in this order would double count only if Load exposed a
		// half-done state... both orders are checked through versions.
		va1 := kcas.Load(&a)
		vb := kcas.Load(&b)
		va2 := kcas.Load(&a)
		if va1 == va2 && balance(va1)+balance(vb) != 100 {
			t.Fatalf("saw a=%d b=%d", balance(va1), balance(vb))
		}
	}
}

// TestHelpersFinishAStalledOwner stops an owner right after it has marked
// its first word: another goroutine that meets the mark must complete the
// operation without waiting for the owner.
func TestHelpersFinishAStalledOwner(t *testing.T) {
	var a, b atomic.Uint64
	a.Store(pack(0, 1))
	b.Store(pack(0, 2))
	published, resume := make(chan struct{}), make(chan struct{})
	kcas.SetHooks(func() { close(published); <-resume }, nil)
	defer kcas.SetHooks(nil, nil)
	result := make(chan bool)
	go func() {
		result <- kcas.CAS(
			kcas.Entry{Word: &a, Old: pack(0, 1), New: pack(1, 10), Restore: pack(1, 1)},
			kcas.Entry{Word: &b, Old: pack(0, 2), New: pack(1, 20), Restore: pack(1, 2)},
		)
	}()
	<-published
	kcas.SetHooks(nil, nil)
	first, second := &a, &b
	if !kcas.IsMarked(a.Load()) {
		first, second = &b, &a // the lower address is marked first
	}
	if !kcas.IsMarked(first.Load()) || kcas.IsMarked(second.Load()) {
		t.Fatalf("expected exactly the first word marked: %#x %#x", a.Load(), b.Load())
	}
	if kcas.Load(&a) != pack(0, 1) || kcas.Load(&b) != pack(0, 2) {
		t.Fatal("Load sees the operation before its last word is marked")
	}
	kcas.Settle(first) // helps: marks the second word, decides, finishes
	if a.Load() != pack(1, 10) || b.Load() != pack(1, 20) {
		t.Fatalf("helper did not finish: %#x %#x", a.Load(), b.Load())
	}
	close(resume)
	if !<-result {
		t.Fatal("owner reports failure for an operation its helper completed")
	}
}

// TestLoadAfterLastMark stops a helper between marking the last word and
// recording success: Load must already report the new values, since the
// last mark is the linearization point.
func TestLoadAfterLastMark(t *testing.T) {
	var a, b atomic.Uint64
	a.Store(pack(0, 1))
	b.Store(pack(0, 2))
	reached, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	kcas.SetHooks(nil, func() { once.Do(func() { close(reached); <-resume }) })
	defer kcas.SetHooks(nil, nil)
	result := make(chan bool)
	go func() {
		result <- kcas.CAS(
			kcas.Entry{Word: &a, Old: pack(0, 1), New: pack(1, 10), Restore: pack(1, 1)},
			kcas.Entry{Word: &b, Old: pack(0, 2), New: pack(1, 20), Restore: pack(1, 2)},
		)
	}()
	<-reached
	if !kcas.IsMarked(a.Load()) || !kcas.IsMarked(b.Load()) {
		t.Fatalf("both words should be marked: %#x %#x", a.Load(), b.Load())
	}
	if kcas.Load(&a) != pack(1, 10) || kcas.Load(&b) != pack(1, 20) {
		t.Fatalf("Load after the last mark: %#x %#x, want the new values", kcas.Load(&a), kcas.Load(&b))
	}
	close(resume)
	if !<-result || a.Load() != pack(1, 10) || b.Load() != pack(1, 20) {
		t.Fatal("operation did not complete")
	}
}

// TestLoadIsLinearizable: one goroutine bumps two words together with a
// 2-word K-CAS, so their logical values are always equal; a reader that
// loads the higher word and then the lower one must never see the lower one
// behind. (Load once returned a marked word's old value when the operation
// had succeeded and finished its last word meanwhile.)
func TestLoadIsLinearizable(t *testing.T) {
	var ws [2]atomic.Uint64 // ws[0] has the lower address: marked first
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := uint64(0); !stop.Load(); k++ {
			kcas.CAS(
				kcas.Entry{Word: &ws[0], Old: k, New: k + 1, Restore: k | 1<<62},
				kcas.Entry{Word: &ws[1], Old: k, New: k + 1, Restore: k | 1<<62},
			)
		}
	}()
	d := 2 * time.Second
	if testing.Short() {
		d = 500 * time.Millisecond
	}
	stale := 0
	for deadline := time.Now().Add(d); time.Now().Before(deadline) && stale == 0; {
		for range 10000 {
			hi := kcas.Load(&ws[1])
			lo := kcas.Load(&ws[0])
			if lo < hi {
				stale++
				t.Logf("Load(ws[1]) = %d, then Load(ws[0]) = %d", hi, lo)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if stale > 0 {
		t.Errorf("a Load returned a value older than one already observed")
	}
}
