package written_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/written"
)

// model is the marks as a plain set of blocks.
type model map[uint64]bool

// next is Marks.Next computed bucket by bucket.
func (md model) next(from, end uint64) (lo, hi uint64) {
	lo = from
	for lo < end && !md[lo>>written.Shift] {
		lo++
	}
	hi = lo
	for hi < end && md[hi>>written.Shift] {
		hi++
	}
	if lo == end {
		return end, end
	}
	return lo, hi
}

// TestNextModel checks Next, Count and Marked against a model, bucket by
// bucket, over tables whose sizes straddle word and block edges, with marks
// sparse, dense and in between.
func TestNextModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []uint64{1, 7, written.Block - 1, written.Block, written.Block + 1, 64 * written.Block, 64*written.Block + 3, 200 * written.Block} {
		for _, density := range []float64{0, 0.01, 0.3, 0.9, 1} {
			t.Run(fmt.Sprintf("buckets=%d/marked=%v", n, density), func(t *testing.T) {
				m := make(written.Marks, written.Words(n))
				md := model{}
				blocks := (n + written.Block - 1) / written.Block
				for b := range blocks {
					if r.Float64() < density {
						j := b<<written.Shift + r.Uint64N(min(written.Block, n-b<<written.Shift))
						m.Mark(j)
						m.Mark(j) // marking twice changes nothing
						md[b] = true
					}
				}
				for j := range n {
					if m.Marked(j) != md[j>>written.Shift] {
						t.Fatalf("Marked(%d) = %v", j, m.Marked(j))
					}
				}
				for range 200 {
					from, end := r.Uint64N(n+1), r.Uint64N(n+1)
					if from > end {
						from, end = end, from
					}
					lo, hi := m.Next(from, end)
					wlo, whi := md.next(from, end)
					if lo != wlo || hi != whi {
						t.Fatalf("Next(%d, %d) = [%d, %d), want [%d, %d)", from, end, lo, hi, wlo, whi)
					}
					var buckets, runs uint64
					for at := from; at < end; {
						lo, hi := md.next(at, end)
						if hi > lo {
							runs++
						}
						buckets += hi - lo
						at = hi
					}
					if b, rr := m.Count(from, end); b != buckets || rr != runs {
						t.Fatalf("Count(%d, %d) = %d buckets in %d runs, want %d in %d", from, end, b, rr, buckets, runs)
					}
				}
				m.Clear()
				if lo, _ := m.Next(0, n); lo != n {
					t.Fatalf("after Clear, Next found bucket %d", lo)
				}
			})
		}
	}
}

// TestWords checks that the marks cover every bucket: the last bucket's
// mark is inside them, and they are never more than one word over.
func TestWords(t *testing.T) {
	for _, n := range []uint64{0, 1, 64*written.Block - 1, 64 * written.Block, 64*written.Block + 1, 1 << 32} {
		w := written.Words(n)
		if n > 0 && (n-1)>>written.Shift>>6 >= w || w > 1 && (w-1)*64*written.Block >= n {
			t.Errorf("Words(%d) = %d", n, w)
		}
	}
}

// TestMarkConcurrent marks blocks from several goroutines at once, the same
// blocks and neighbours sharing a word: every mark is kept (under -race, no
// race is reported between Mark and Next).
func TestMarkConcurrent(t *testing.T) {
	const n = 256 * written.Block
	m := make(written.Marks, written.Words(n))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := uint64(g); b < n/written.Block; b += 2 {
				m.Mark(b << written.Shift)
				m.Next(0, n)
			}
		}()
	}
	wg.Wait()
	if lo, hi := m.Next(0, n); lo != 0 || hi != n {
		t.Fatalf("Next = [%d, %d), want every bucket", lo, hi)
	}
}
