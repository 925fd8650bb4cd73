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
