// Package bipartite checks the invariant no false negative of a growing
// filter rests on, for the tests of filter.Scalable and package growing.
package bipartite

import "fmt"

// Entry names one entry of a filter: where it is (for example its bucket
// and slot, or a stash index).
type Entry [2]uint64

// Check checks the invariant no false negative of a growing filter
// rests on (filter/doc.go, "Growing filters"): each copy of each key in
// held (key -> copies) can be assigned an entry of its own among those that
// match it, as entries(key) lists them. It is a bipartite matching, found
// by augmenting paths.
func Check(held map[string]int, entries func(key string) []Entry) error {
	ids := map[Entry]int{}
	var names []string
	var edges [][]int // copy -> entry ids
	for key, n := range held {
		var e []int
		for _, x := range entries(key) {
			id, ok := ids[x]
			if !ok {
				id = len(ids)
				ids[x] = id
			}
			e = append(e, id)
		}
		for range n {
			names = append(names, key)
			edges = append(edges, e)
		}
	}
	owner := make([]int, len(ids))
	for i := range owner {
		owner[i] = -1
	}
	var try func(c int, seen []bool) bool
	try = func(c int, seen []bool) bool {
		for _, e := range edges[c] {
			if !seen[e] {
				seen[e] = true
				if owner[e] < 0 || try(owner[e], seen) {
					owner[e] = c
					return true
				}
			}
		}
		return false
	}
	for c := range names {
		if !try(c, make([]bool, len(ids))) {
			return fmt.Errorf("a copy of %q has no entry of its own (%d match)", names[c], len(edges[c]))
		}
	}
	return nil
}
