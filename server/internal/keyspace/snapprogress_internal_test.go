package keyspace

import (
	"slices"
	"testing"
)

// TestSnapProgressRenamed: every rename while a snapshot runs queues its
// new key, whether or not the snapshot has visited the old one: the old
// key may be queued again by a later rename into it, and its last entry
// then stands after the rename without the filter it moved.
func TestSnapProgressRenamed(t *testing.T) {
	var p snapProgress
	p.begin([]string{"f", "t"})
	p.visit()           // f, the first key
	p.renamed("f", "t") // f visited: t is queued all the same
	p.renamed("x", "f") // f queued again: its last entry will be a later life
	var got []string
	for i := 0; ; i++ {
		k, more := p.next(i)
		if !more {
			break
		}
		got = append(got, k)
	}
	if want := []string{"f", "t", "t", "f"}; !slices.Equal(got, want) {
		t.Errorf("queue %q, want %q", got, want)
	}
	p.end()
	p.renamed("a", "b") // no snapshot: nothing queued
	if _, more := p.next(0); more {
		t.Error("a rename with no snapshot running queued a key")
	}
}
