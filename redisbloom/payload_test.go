package redisbloom_test

import (
	"errors"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
)

// TestPayloadRefuses: a payload cut short, with a byte changed, of another
// module type, or asking for more than the Reserve, is an error.
func TestPayloadRefuses(t *testing.T) {
	f := filled(t, redisbloom.Params{Capacity: 200, BucketSize: 2, MaxIterations: 20, Expansion: 2}, 600)
	p := f.AppendPayload(nil)
	if _, err := redisbloom.ParsePayload(p, nil); err != nil {
		t.Fatal(err)
	}
	for cut := range len(p) {
		if _, err := redisbloom.ParsePayload(p[:cut], nil); err == nil {
			t.Fatalf("a payload cut at %d of %d parsed", cut, len(p))
		}
	}
	for i := range len(p) {
		q := append([]byte(nil), p...)
		q[i] ^= 0x40
		if _, err := redisbloom.ParsePayload(q, nil); err == nil {
			t.Fatalf("a payload with byte %d changed parsed", i)
		}
	}
	refused := errors.New("no memory")
	if _, err := redisbloom.ParsePayload(p, func(uint64) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("a refused reservation: %v", err)
	}
}

// FuzzParsePayload parses any bytes: never a panic, never a filter past
// the Reserve; what parses dumps and parses back the same.
func FuzzParsePayload(f *testing.F) {
	for _, p := range []redisbloom.Params{
		{Capacity: 100, BucketSize: 2, MaxIterations: 20, Expansion: 1},
		{Capacity: 8, BucketSize: 1, MaxIterations: 3, Expansion: 2},
	} {
		g, _ := redisbloom.New(p)
		for _, it := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
			_ = g.Add([]byte(it))
		}
		f.Add(g.AppendPayload(nil))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		const limit = 1 << 20
		var total uint64
		g, err := redisbloom.ParsePayload(p, func(n uint64) error {
			if total+n > limit {
				return errors.New("too big")
			}
			total += n
			return nil
		})
		if err != nil {
			return
		}
		if g.Bytes() > limit {
			t.Fatalf("%d bytes past the limit", g.Bytes())
		}
		again, err := redisbloom.ParsePayload(g.AppendPayload(nil), nil)
		if err != nil || again.Info() != g.Info() {
			t.Fatalf("a parsed payload does not round-trip: %v", err)
		}
		g.Contains(p)
		_ = g.Add(p)
		g.Delete(p)
	})
}
