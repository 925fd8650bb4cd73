package keyspace_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// TestScanPartitions: paging through a key space with SCAN's cursor, at
// several page sizes, returns every key exactly once and ends at cursor 0;
// a pattern keeps only its keys; KEYS and RANDOMKEY see the same keys.
func TestScanPartitions(t *testing.T) {
	st, _ := recorded()
	w := &keyspace.Writer{}
	if k, ok := st.RandomKey(); ok {
		t.Fatalf("RandomKey of an empty key space: %q", k)
	}
	var all []string
	for i := range 200 {
		k := fmt.Sprintf("key:%d", i)
		mustAdd(t, st, w, k, growing, items("x", 1))
		all = append(all, k)
	}
	slices.Sort(all)
	for _, count := range []int{1, 3, 10, 1000} {
		var got []string
		cur, calls := uint64(0), 0
		for {
			page, next := st.Scan(cur, count, "*")
			got = append(got, page...)
			calls++
			if next == 0 {
				break
			}
			if next <= cur {
				t.Fatalf("count %d: the cursor went from %d to %d", count, cur, next)
			}
			cur = next
		}
		slices.Sort(got)
		if !slices.Equal(got, all) {
			t.Fatalf("count %d: a scan returned %d keys, want each of %d once", count, len(got), len(all))
		}
		if count == 1 && calls < 100 {
			t.Errorf("count 1: %d calls for 200 keys", calls)
		}
	}
	page, _ := st.Scan(0, 1000, "key:1?")
	if len(page) != 10 {
		t.Errorf("MATCH key:1?: %d keys, want 10", len(page))
	}
	if got := st.Matching("key:1?"); len(got) != 10 {
		t.Errorf("KEYS key:1?: %d keys, want 10", len(got))
	}
	if k, ok := st.RandomKey(); !ok || !slices.Contains(all, k) {
		t.Errorf("RandomKey: %q %v", k, ok)
	}
}

// TestMemoryUsage: a filter's MEMORY USAGE is at least its size, grows with
// its key's name, and for RedisBloom's layout is Redis's figure for its
// value: the filter's size plus the key's allocation and a dict entry.
func TestMemoryUsage(t *testing.T) {
	st, _ := recorded()
	w := &keyspace.Writer{}
	mustAdd(t, st, w, "k", growing, items("x", 10))
	mustAdd(t, st, w, "a-much-longer-key-name", growing, items("x", 10))
	short, long := st.Peek("k"), st.Peek("a-much-longer-key-name")
	if u := short.MemoryUsage("k"); u <= short.SizeBytes() {
		t.Errorf("MEMORY USAGE %d, not above the filter's %d bytes", u, short.SizeBytes())
	}
	if d := long.MemoryUsage("a-much-longer-key-name") - short.MemoryUsage("k"); d != uint64(len("a-much-longer-key-name")-1) {
		t.Errorf("a longer name adds %d bytes, want its %d more bytes", d, len("a-much-longer-key-name")-1)
	}
	mustAdd(t, st, w, "rb", rbGrow, items("x", 10))
	rb := st.Peek("rb")
	size := uint64(rb.Info()[0].Value)
	// "rb": a 1-byte sds header, 2 bytes and a NUL, in jemalloc's 8-byte
	// class, and a 24-byte dict entry.
	if u := rb.MemoryUsage("rb"); u != size+8+24 {
		t.Errorf("RedisBloom's layout: %d, want %d", u, size+8+24)
	}
}
