package redisbloom

import (
	"math/rand/v2"
	"testing"
)

// TestOpenSetMatchesSlice marks random indexes in and out and checks has,
// prev and next against a slice of bools, up to RedisBloom's 65535
// sub-filters, where both levels of bitmaps have several words.
func TestOpenSetMatchesSlice(t *testing.T) {
	const n = maxSubFilters
	r := rand.New(rand.NewPCG(1, 2))
	var o openSet
	in := make([]bool, n)
	prev := func(i int) int {
		for ; i >= 0 && !in[i]; i-- {
		}
		return max(i, -1)
	}
	next := func(i int) int {
		for ; i < n; i++ {
			if in[i] {
				return i
			}
		}
		return -1
	}
	for round := range 2000 {
		// Runs of marks, so that whole words and summary words empty.
		at, m, on := r.IntN(n), 1+r.IntN(300), r.IntN(2) == 0
		for i := at; i < min(n, at+m); i++ {
			o.mark(i, on)
			in[i] = on
		}
		for range 20 {
			i := r.IntN(n+70) - 2
			if i >= 0 && i < n && o.has(i) != in[i] {
				t.Fatalf("round %d: has(%d) = %v", round, i, o.has(i))
			}
			if got, want := o.prev(i), prev(min(i, n-1)); got != want {
				t.Fatalf("round %d: prev(%d) = %d, want %d", round, i, got, want)
			}
			if i >= 0 {
				if got, want := o.next(i), next(i); got != want {
					t.Fatalf("round %d: next(%d) = %d, want %d", round, i, got, want)
				}
			}
		}
	}
}
