package hashmap_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/hashmap"
)

// stressTime is how long each timed stress test runs.
func stressTime() time.Duration {
	if testing.Short() {
		return 200 * time.Millisecond
	}
	return 1500 * time.Millisecond
}

// value encodes its key, so that a torn or misplaced read shows up.
func value(k int) int { return k*7 + 1 }

// TestStressReadersNeverMiss: keys 0..stable-1 are stored before the test
// and never touched again; readers assert that every one of them is always
// found with its value, while writers insert and delete other keys by the
// ten thousand, which forces long displacement paths, and every round
// writer 0 replaces the map by a fresh one holding only the stable keys,
// so the churn grows each map from its smallest table again (many
// growths under the readers). A Range runs now and then and must visit
// each stable key exactly once.
func TestStressReadersNeverMiss(t *testing.T) {
	for _, hs := range hashers {
		if hs.name == "hash=const" {
			continue // everything in the stash: no moves to race with
		}
		t.Run(hs.name, func(t *testing.T) {
			stable := 2000
			churn := 4096
			if hs.name != "hash=real" {
				stable, churn = 300, 1000
			}
			fresh := func() *hashmap.Map[int, int] {
				m := hashmap.New[int, int](hs.opts...)
				for k := range stable {
					m.Store(k, value(k))
				}
				return m
			}
			var cur atomic.Pointer[hashmap.Map[int, int]]
			cur.Store(fresh())
			var stop atomic.Bool
			var wg sync.WaitGroup
			var reads, ranges atomic.Int64
			fail := make(chan string, 1)
			report := func(s string) {
				select {
				case fail <- s:
				default:
				}
				stop.Store(true)
			}
			readers := max(2, runtime.GOMAXPROCS(0))
			for r := range readers {
				wg.Go(func() {
					for i := r; !stop.Load(); i++ {
						k := i % stable
						m := cur.Load()
						if v, ok := m.Load(k); !ok || v != value(k) {
							report(fmt.Sprintf("Load(%d) = %d, %v; want %d, true", k, v, ok, value(k)))
							return
						}
						reads.Add(1)
						if r == 0 && i%20000 == 19999 {
							seen := make([]int, stable)
							m.Range(func(k, v int) bool {
								if k < stable {
									seen[k]++
								}
								return true
							})
							for k, c := range seen {
								if c != 1 {
									report(fmt.Sprintf("Range visited stable key %d %d times", k, c))
									return
								}
							}
							ranges.Add(1)
						}
					}
				})
			}
			var maps atomic.Int64
			for w := range 2 {
				wg.Go(func() {
					base := stable + w*churn
					for round := 0; !stop.Load(); round++ {
						m := cur.Load()
						for k := base; k < base+churn && !stop.Load(); k++ {
							m.Store(k, value(k))
						}
						for k := base; k < base+churn && !stop.Load(); k++ {
							if v, ok := m.LoadAndDelete(k); !ok || v != value(k) {
								report(fmt.Sprintf("writer: LoadAndDelete(%d) = %d, %v", k, v, ok))
								return
							}
						}
						if w == 0 {
							cur.Store(fresh())
							maps.Add(1)
						}
					}
				})
			}
			time.Sleep(stressTime())
			stop.Store(true)
			wg.Wait()
			select {
			case s := <-fail:
				t.Fatal(s)
			default:
			}
			check(t, cur.Load())
			t.Logf("%d reads, %d ranges, %d maps grown from empty", reads.Load(), ranges.Load(), maps.Load())
		})
	}
}

// TestStressLoadOrStoreOneWinner: goroutines race LoadOrStore on the same
// keys, each offering its own value; per key exactly one must store
// (loaded == false), and every goroutine must get the winner's value.
func TestStressLoadOrStoreOneWinner(t *testing.T) {
	for _, hs := range hashers {
		t.Run(hs.name, func(t *testing.T) {
			keys := 20000
			if hs.name != "hash=real" {
				keys = 500
			}
			if testing.Short() {
				keys /= 4
			}
			const goroutines = 4
			m := hashmap.New[int, int](hs.opts...)
			got := make([][]int, goroutines)
			wins := make([][]bool, goroutines)
			var wg sync.WaitGroup
			for g := range goroutines {
				got[g], wins[g] = make([]int, keys), make([]bool, keys)
				wg.Go(func() {
					for i := range keys {
						k := (i*7919 + g*keys/goroutines) % keys // different orders
						v, loaded := m.LoadOrStore(k, g)
						got[g][k], wins[g][k] = v, !loaded
					}
				})
			}
			wg.Wait()
			for k := range keys {
				winners, winner := 0, -1
				for g := range goroutines {
					if wins[g][k] {
						winners++
						winner = g
					}
				}
				if winners != 1 {
					t.Fatalf("key %d: %d winners", k, winners)
				}
				for g := range goroutines {
					if got[g][k] != winner {
						t.Fatalf("key %d: goroutine %d got %d, the winner was %d", k, g, got[g][k], winner)
					}
				}
				if v, _ := m.Load(k); v != winner {
					t.Fatalf("key %d holds %d, the winner was %d", k, v, winner)
				}
			}
			check(t, m)
		})
	}
}

// TestStressComputeIncrements: goroutines increment shared counters with
// Compute while another inserts keys that make the table grow; no increment
// may be lost.
func TestStressComputeIncrements(t *testing.T) {
	for _, hs := range hashers {
		t.Run(hs.name, func(t *testing.T) {
			const goroutines, counters = 4, 16
			incs := 5000
			if testing.Short() {
				incs = 1000
			}
			m := hashmap.New[int, int](hs.opts...)
			var wg sync.WaitGroup
			var done atomic.Bool
			wg.Go(func() { // growth and displacement under the counters
				for k := counters; !done.Load() && k < counters+50000; k++ {
					m.Store(k, value(k))
				}
			})
			var incWG sync.WaitGroup
			for g := range goroutines {
				incWG.Go(func() {
					for i := range incs {
						m.Compute((i+g)%counters, func(old int, _ bool) (int, hashmap.ComputeOp) {
							return old + 1, hashmap.UpdateOp
						})
					}
				})
			}
			incWG.Wait()
			done.Store(true)
			wg.Wait()
			total := 0
			for k := range counters {
				v, _ := m.Load(k)
				total += v
			}
			if total != goroutines*incs {
				t.Fatalf("counters sum to %d, want %d", total, goroutines*incs)
			}
			check(t, m)
		})
	}
}

// TestStressComputePanics: Compute calls that panic race with writers of
// the same keys; afterwards the map must be usable (every lock free) and
// consistent.
func TestStressComputePanics(t *testing.T) {
	m := hashmap.New[int, int]()
	const keys = 64
	var wg sync.WaitGroup
	var panics atomic.Int64
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := (i * (g + 1)) % keys
				if g%2 == 0 {
					m.Store(k, value(k))
					m.Store(keys+i, i) // growth while the others panic
					continue
				}
				func() {
					defer func() {
						if recover() != nil {
							panics.Add(1)
						}
					}()
					m.Compute(k, func(old int, loaded bool) (int, hashmap.ComputeOp) {
						if i%3 == 0 {
							panic("boom")
						}
						return value(k), hashmap.UpdateOp
					})
				}()
			}
		})
	}
	wg.Wait()
	if panics.Load() == 0 {
		t.Fatal("no Compute panicked")
	}
	done := make(chan struct{})
	go func() {
		for k := range keys {
			m.Store(k, value(k))
		}
		m.Range(func(int, int) bool { return true })
		m.Clear()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("map locked after panicking Computes")
	}
	check(t, m)
}
