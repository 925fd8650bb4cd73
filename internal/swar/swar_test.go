package swar_test

import (
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/swar"
)

// pack builds a word from lane values, lane 0 lowest.
func pack(width uint, lanes []uint32) uint64 {
	var x uint64
	for i, v := range lanes {
		x |= uint64(v) << (uint(i) * width)
	}
	return x
}

// TestAgainstLoop checks every operation against a lane-by-lane loop for all
// shapes the filter uses and random contents biased toward equal lanes.
func TestAgainstLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for width := uint(1); width <= 32; width++ {
		for n := uint(1); n*width <= 64 && n <= 16; n++ {
			l := swar.New(n, width)
			mask := uint32(1<<width - 1)
			for range 2000 {
				lanes := make([]uint32, n)
				v := r.Uint32() & mask
				for i := range lanes {
					switch r.IntN(3) {
					case 0:
						lanes[i] = v
					case 1:
						lanes[i] = 0
					default:
						lanes[i] = r.Uint32() & mask
					}
				}
				x := pack(width, lanes)
				count, first, zero := 0, -1, false
				for i, lane := range lanes {
					if lane == v {
						count++
						if first < 0 {
							first = i
						}
					}
					zero = zero || lane == 0
				}
				if got := l.Count(x, v); got != count {
					t.Fatalf("w=%d n=%d lanes=%v v=%d: Count=%d, want %d", width, n, lanes, v, got, count)
				}
				if got := l.First(x, v); got != first {
					t.Fatalf("w=%d n=%d lanes=%v v=%d: First=%d, want %d", width, n, lanes, v, got, first)
				}
				if got := l.Has(x, v); got != (count > 0) {
					t.Fatalf("w=%d n=%d lanes=%v v=%d: Has=%v", width, n, lanes, v, got)
				}
				if got := l.HasZero(x); got != zero {
					t.Fatalf("w=%d n=%d lanes=%v: HasZero=%v, want %v", width, n, lanes, got, zero)
				}
			}
		}
	}
}

func TestNewRejectsOversizedLanes(t *testing.T) {
	for _, c := range []struct{ n, w uint }{{0, 4}, {4, 0}, {5, 13}, {3, 32}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%d, %d) did not panic", c.n, c.w)
				}
			}()
			swar.New(c.n, c.w)
		}()
	}
}

func TestHas2(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, shape := range []struct{ n, w uint }{{4, 12}, {2, 28}, {8, 8}, {4, 16}, {4, 5}} {
		l := swar.New(shape.n, shape.w)
		mask := uint32(1<<shape.w - 1)
		for range 20000 {
			v := r.Uint32() & mask
			lanes := func() []uint32 {
				out := make([]uint32, shape.n)
				for i := range out {
					if r.IntN(8) == 0 {
						out[i] = v
					} else {
						out[i] = r.Uint32() & mask
					}
				}
				return out
			}
			a, b := lanes(), lanes()
			x, y := pack(shape.w, a), pack(shape.w, b)
			if got, want := l.Has2(x, y, v), l.Has(x, v) || l.Has(y, v); got != want {
				t.Fatalf("%v %v v=%d: Has2=%v want %v", a, b, v, got, want)
			}
		}
	}
}

// TestHas2x4x12IgnoresHighBits: whatever bits 48..63 hold, the answer is the
// general Has2's on the lanes alone.
func TestHas2x4x12IgnoresHighBits(t *testing.T) {
	l := swar.New(4, 12)
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		x, y := r.Uint64(), r.Uint64()
		v := uint32(r.IntN(1 << 12))
		if r.IntN(4) == 0 { // make a match likely
			x = x&^(0xfff<<(12*uint(r.IntN(4)))) | uint64(v)<<(12*uint(r.IntN(4)))
		}
		want := l.Has2(x&(1<<48-1), y&(1<<48-1), v)
		if got := swar.Has2x4x12(x, y, v); got != want {
			t.Fatalf("Has2x4x12(%#x, %#x, %#x) = %v, want %v", x, y, v, got, want)
		}
	}
}

// TestLanes2AgainstLoop checks Lanes2's zero lanes against a lane-by-lane
// loop for every shape of up to 128 bits, lanes straddling the two words
// included, with random contents biased toward zero lanes and lanes of one
// set bit (a lone top bit or bottom bit is where a carry would go wrong),
// and random bits above the last lane.
func TestLanes2AgainstLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for width := uint(1); width <= 63; width++ {
		for n := uint(1); n*width <= 128 && n <= 24; n++ {
			l := swar.New2(n, width)
			mask := uint64(1)<<width - 1
			for range 500 {
				var lo, hi uint64
				zeros, first := 0, -1
				for i := range n {
					var v uint64
					switch r.IntN(5) {
					case 0, 1:
					case 2:
						v = 1 << (width - 1)
					case 3:
						v = 1
					default:
						v = r.Uint64() & mask
					}
					if v == 0 {
						zeros++
						if first < 0 {
							first = int(i)
						}
					}
					at := i * width
					if at < 64 {
						lo |= v << at
						if at+width > 64 {
							hi |= v >> (64 - at)
						}
					} else {
						hi |= v << (at - 64)
					}
				}
				// Bits above the last lane, as a packed bucket's neighbour
				// leaves them, change nothing.
				if end := n * width; end < 64 {
					lo |= r.Uint64() << end
					hi = r.Uint64()
				} else if end < 128 {
					hi |= r.Uint64() << (end - 64)
				}
				zlo, zhi := l.Zeros(lo, hi)
				if got := l.Count(zlo, zhi); got != zeros {
					t.Fatalf("w=%d n=%d lo=%#x hi=%#x: Count=%d, want %d", width, n, lo, hi, got, zeros)
				}
				if got := l.First(zlo, zhi); got != first {
					t.Fatalf("w=%d n=%d lo=%#x hi=%#x: First=%d, want %d", width, n, lo, hi, got, first)
				}
			}
		}
	}
}

func TestNew2RejectsOversizedLanes(t *testing.T) {
	for _, c := range []struct{ n, w uint }{{0, 4}, {4, 0}, {2, 64}, {5, 26}, {9, 15}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New2(%d, %d) did not panic", c.n, c.w)
				}
			}()
			swar.New2(c.n, c.w)
		}()
	}
}
