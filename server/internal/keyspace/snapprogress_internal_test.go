package keyspace

import (
	"slices"
	"testing"
)

// TestSnapProgressRequeued: a key queued again by a rename into it is
// unvisited until that later visit, so a rename away from it queues the
// next key in turn (its earlier entry stands before the first rename).
func TestSnapProgressRequeued(t *testing.T) {
	var p snapProgress
	p.begin([]string{"f", "t"})
	p.visit("t")
	p.renamed("f", "t") // f unvisited: t queued again
	p.renamed("t", "u") // t's later visit is still to come: u queued
	p.visit("f")
	p.renamed("f", "x") // f visited: its entry and the log cover it
	var got []string
	for i := 0; ; i++ {
		k, more := p.next(i)
		if !more {
			break
		}
		got = append(got, k)
	}
	if want := []string{"f", "t", "t", "u"}; !slices.Equal(got, want) {
		t.Errorf("queue %q, want %q", got, want)
	}
	p.end()
	p.renamed("a", "b") // no snapshot: nothing queued
	if _, more := p.next(0); more {
		t.Error("a rename with no snapshot running queued a key")
	}
}

// TestSnapProgressVisitMissing: a key found missing is marked visited only
// if it is still missing when the mark is made; one a rename published
// meanwhile is captured instead.
func TestSnapProgressVisitMissing(t *testing.T) {
	var p snapProgress
	p.begin([]string{"k"})
	if p.visitMissing("k", func() bool { return true }) {
		t.Error("visitMissing marked a key that is present")
	}
	if p.visited["k"] {
		t.Error("a present key is marked visited")
	}
	if !p.visitMissing("k", func() bool { return false }) || !p.visited["k"] {
		t.Error("a missing key is not marked visited")
	}
}
