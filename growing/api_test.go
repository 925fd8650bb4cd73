package growing_test

import (
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/growing"
)

// TestStringAndByteKeysAgree: the String forms of every keyed method hash as
// the []byte forms do, so either finds what the other inserted, as in
// packages filter and lockfree.
func TestStringAndByteKeysAgree(t *testing.T) {
	f := mustNew(t, growing.Config{InitialCapacity: 100, Seed: 4})
	for i := range 1000 {
		k := fmt.Sprint("key-", i)
		if i%2 == 0 {
			if ok, err := f.InsertUniqueString(k); !ok || err != nil {
				t.Fatalf("InsertUniqueString(%q) of a new key: %v, %v", k, ok, err)
			}
		} else if err := f.InsertString(k); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 {
		k := fmt.Sprint("key-", i)
		if ok, err := f.InsertUnique([]byte(k)); ok || err != nil {
			t.Fatalf("InsertUnique(%q) of a key InsertString added: %v, %v", k, ok, err)
		}
		if ok, err := f.InsertUniqueString(k); ok || err != nil {
			t.Fatalf("InsertUniqueString(%q) of a present key: %v, %v", k, ok, err)
		}
		if n, m := f.CountString(k), f.Count([]byte(k)); n != m || n < 1 {
			t.Fatalf("key %q: CountString %d, Count %d, want equal and at least 1", k, n, m)
		}
	}
	if f.Len() != 1000 {
		t.Fatalf("Len %d after 1000 distinct keys and 2000 refused InsertUniques", f.Len())
	}
	if err := f.InsertString("key-7"); err != nil {
		t.Fatal(err)
	}
	if n := f.CountString("key-7"); n < 2 {
		t.Fatalf("CountString of a key inserted twice: %d", n)
	}
	for i := range 2 {
		if !f.DeleteString("key-7") {
			t.Fatalf("DeleteString %d of a key inserted twice found nothing", i+1)
		}
	}
}

// TestShapeAccessors: Slots is Buckets times BucketSize; a slot is 64/b
// bits (12 for 5 slots, 6 of them fingerprint, package documentation), the
// fingerprint part of it and the tail Tails counts by length adding up to
// it; LoadFactor is the entries in the table over Slots, 0 once Reset.
func TestShapeAccessors(t *testing.T) {
	for _, c := range []struct{ b, slotBits int }{{2, 32}, {4, 16}, {5, 12}} {
		t.Run(fmt.Sprintf("b=%d", c.b), func(t *testing.T) {
			f := mustNew(t, growing.Config{InitialCapacity: 1000, BucketSize: c.b, Seed: 2})
			if f.SlotBits() != c.slotBits {
				t.Errorf("SlotBits %d, want %d", f.SlotBits(), c.slotBits)
			}
			if fp := f.FingerprintBits(); fp < 1 || fp >= f.SlotBits() || c.b == 5 && fp != 6 {
				t.Errorf("FingerprintBits %d of a %d-bit slot", fp, f.SlotBits())
			}
			if tails := len(f.Tails()); tails != f.SlotBits()-f.FingerprintBits() {
				t.Errorf("Tails has %d lengths, a slot %d bits beyond its fingerprint", tails, f.SlotBits()-f.FingerprintBits())
			}
			if f.LoadFactor() != 0 {
				t.Errorf("an empty filter's LoadFactor is %v", f.LoadFactor())
			}
			for i := range 20_000 {
				if err := f.Insert(key(i)); err != nil {
					t.Fatal(err)
				}
			}
			if f.Slots() != f.Buckets()*uint64(f.BucketSize()) {
				t.Errorf("Slots %d, %d buckets of %d", f.Slots(), f.Buckets(), f.BucketSize())
			}
			want := float64(f.Entries()-uint64(f.Stashed())) / float64(f.Slots())
			if got := f.LoadFactor(); got != want || got <= 0.5 || got > 1 {
				t.Errorf("LoadFactor %v, want %v: the table's entries over its slots, above half in a grown table", got, want)
			}
			f.Reset()
			if f.LoadFactor() != 0 || f.Len() != 0 || f.Buckets() != f.InitialBuckets() {
				t.Errorf("after Reset: LoadFactor %v, Len %d, %d buckets of the initial %d", f.LoadFactor(), f.Len(), f.Buckets(), f.InitialBuckets())
			}
		})
	}
}
