package redisbloom_test

import (
	"bytes"
	"encoding/binary"
	"sync"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
)

// TestTouchChangesNothing: Touch of any number of items, in every
// sub-filter, leaves the filter's bytes and answers as they were, also
// while a writer adds (run under -race).
func TestTouchChangesNothing(t *testing.T) {
	f, err := redisbloom.New(redisbloom.Params{Capacity: 200, BucketSize: 2, MaxIterations: 20, Expansion: 2})
	if err != nil {
		t.Fatal(err)
	}
	item := func(i int) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(i)) }
	for i := range 1000 {
		if err := f.Add(item(i)); err != nil {
			t.Fatal(err)
		}
	}
	if f.Info().Filters < 2 {
		t.Fatalf("want several sub-filters, have %d", f.Info().Filters)
	}
	dump := func() []byte {
		var b bytes.Buffer
		if _, err := f.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	before := dump()
	var items [][]byte
	for i := range 2000 {
		items = append(items, item(i))
	}
	f.Touch(nil)
	f.Touch(items)
	if !bytes.Equal(dump(), before) {
		t.Fatal("Touch changed the filter")
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1000; i < 5000; i++ {
			if err := f.Add(item(i)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 100 {
		f.Touch(items)
	}
	wg.Wait()
}
