package clientmem

import (
	"cmp"
	"slices"
)

// Candidate is a client eviction may close: C is the caller's handle, ID
// the client's id (the older, smaller, goes first among equals) and Mem
// its Usage's Total when the round began.
type Candidate[C any] struct {
	Client C
	ID     int64
	Mem    int64
}

// Evict is an eviction round's choice, as Redis's evictClients: with total
// the normal clients' memory (less the clients already on their way out)
// and limit maxmemory-clients, it calls close on the candidates holding the
// most, largest first, until total is under limit, and returns the total
// left. close reports whether it closed the client; one that was closing
// already is passed over, its memory still counted (it goes when its
// connection ends). cands is sorted in place. Hold Totals.EvictMu.
func Evict[C any](cands []Candidate[C], total, limit int64, close func(Candidate[C]) bool) int64 {
	if limit <= 0 {
		return total
	}
	slices.SortFunc(cands, func(a, b Candidate[C]) int {
		if c := cmp.Compare(b.Mem, a.Mem); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for _, c := range cands {
		if total < limit {
			break
		}
		if close(c) {
			total -= c.Mem
		}
	}
	return total
}
