package growing_test

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/cuckoohash/cuckoo/growing"
)

// TestTouchChangesNothing: Touch of any number of keys, present or not,
// leaves every word, the geometry and the answers as they were, also while
// a writer inserts (run under -race).
func TestTouchChangesNothing(t *testing.T) {
	f, err := growing.New(growing.Config{InitialCapacity: 100, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(i)) }
	for i := range 1000 {
		if err := f.Insert(key(i)); err != nil {
			t.Fatal(err)
		}
	}
	words := func() []uint64 {
		out := make([]uint64, f.Buckets())
		for j := range out {
			out[j] = rawOf(f).BucketBits(uint64(j))
		}
		return out
	}
	before := words()
	var keys [][]byte
	for i := range 2000 { // more than a batch, half of them absent
		keys = append(keys, key(i))
	}
	f.Touch(nil)
	f.Touch(keys[:1])
	f.Touch(keys)
	after := words()
	if len(after) != len(before) {
		t.Fatalf("Touch changed the table: %d buckets, %d before", len(after), len(before))
	}
	for j := range before {
		if after[j] != before[j] {
			t.Fatalf("Touch changed bucket %d: %#x, %#x before", j, after[j], before[j])
		}
	}
	for i := range 1000 {
		if !f.Contains(key(i)) {
			t.Fatalf("key %d missing after Touch", i)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1000; i < 20000; i++ {
			if err := f.Insert(key(i)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 200 {
		f.Touch(keys)
	}
	wg.Wait()
}
