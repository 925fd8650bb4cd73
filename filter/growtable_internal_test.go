package filter

import (
	"math/rand/v2"
	"testing"
)

// TestContains4x14 checks the lookup of the 1% shape against the general
// one, entry by entry, for keys held and absent, at every size while a
// table grows 256×, with a stashed key among them.
func TestContains4x14(t *testing.T) {
	s, err := NewScalable(ScalableConfig{InitialCapacity: 200, FalsePositiveRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if !s.t.is4x14 {
		t.Fatalf("a 1%% filter has %d slots of %d bits, %d of fingerprint", s.t.shape.Slots, s.t.shape.Bits, s.t.shape.FPBits)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var held []uint64
	check := func() {
		for _, h := range held {
			if !s.t.contains4x14(h) {
				t.Fatalf("%d keys: held hash %#x not found", len(held), h)
			}
		}
		for range 2000 {
			h := rng.Uint64()
			if got, want := s.t.contains4x14(h), s.t.contains(s.t.key(h)); got != want {
				t.Fatalf("%d keys: hash %#x: contains4x14 %v, contains %v", len(held), h, got, want)
			}
		}
	}
	s.t.stash = append(s.t.stash, 12345)
	held = append(held, 12345)
	for n := 1; n <= 200*256; n++ {
		h := rng.Uint64()
		if err := s.InsertHash(h); err != nil {
			t.Fatal(err)
		}
		held = append(held, h)
		if n&(n-1) == 0 || n%5000 == 0 {
			check()
		}
	}
}

// TestPairIsSlot checks the two-load bucket read, and the free slots found
// and counted with it, against the slot-by-slot ones, bucket by bucket, in tables
// of buckets from 60 to 112 bits grown from a few keys.
func TestPairIsSlot(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct {
		b    int
		rate float64
	}{{4, 0.001}, {4, 1e-4}, {4, 1e-6}, {2, 1e-7}, {8, 0.1}} {
		s, err := NewScalable(ScalableConfig{InitialCapacity: 50, BucketSize: c.b, FalsePositiveRate: c.rate})
		if err != nil {
			t.Fatal(err)
		}
		if !s.t.twoWord {
			t.Fatalf("b=%d rate=%g: %d-bit buckets, not read by pair", c.b, c.rate, s.t.bucketBits)
		}
		for range 20000 {
			if err := s.InsertHash(rng.Uint64()); err != nil {
				t.Fatal(err)
			}
		}
		for j := range s.t.buckets() {
			lo, hi := s.t.pair(j)
			for i := range s.t.shape.Slots {
				if got, want := s.t.slotOf(lo, hi, i), s.t.slot(j, i); got != want {
					t.Fatalf("b=%d rate=%g (%d-bit buckets): bucket %d slot %d: pair gives %#x, slot %#x", c.b, c.rate, s.t.bucketBits, j, i, got, want)
				}
			}
			e := s.t.entries(j)
			empty, first := 0, -1
			for i := range s.t.shape.Slots {
				if e[i] == 0 {
					if empty == 0 {
						first = int(i)
					}
					empty++
				}
			}
			if got := s.t.free(j); got != first {
				t.Fatalf("b=%d rate=%g: bucket %d: free gives slot %d, the entries %d", c.b, c.rate, j, got, first)
			}
			if got, _ := s.t.freeSlots(j); got != empty {
				t.Fatalf("b=%d rate=%g: bucket %d: freeSlots counts %d, the entries %d empty", c.b, c.rate, j, got, empty)
			}
		}
	}
}
