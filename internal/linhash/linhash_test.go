package linhash

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBucketIsAddr: the branch-free Bucket agrees with Addr at every
// geometry, and LevelOf with the level Addr reports.
func TestBucketIsAddr(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for g := NewGeometry(1); g.Level < 12; g = g.Next() {
		for range 200 {
			v := rng.Uint64()
			j, l := g.Addr(v)
			j2, l2 := g.Bucket(v)
			if j != j2 || l != l2 || j >= g.Buckets() || g.LevelOf(j) != l {
				t.Fatalf("geometry %+v, v %#x: Addr %d/%d, Bucket %d/%d, LevelOf %d", g, v, j, l, j2, l2, g.LevelOf(j))
			}
		}
	}
}

// TestEntryRoundTrips follows a key's entry through moves and splits: it
// keeps matching the key from whichever of its buckets it sits in, and it
// keeps the bits it knows (less one per split, and the highest when a move
// finds the slot full).
func TestEntryRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range []Shape{NewShape(4, 14, 6), NewShape(4, 16, 6), NewShape(2, 32, 16)} {
		for range 2000 {
			g := NewGeometry(1 + rng.Uint64N(1000))
			fp, a, b := s.Key(rng.Uint64())
			j, l := g.Addr(a)
			e := s.Entry(fp, a, l)
			v := a
			for step := range 40 {
				if !s.Matches(e, fp, v, l) {
					t.Fatalf("shape %+v step %d: entry %#x in bucket %d (level %d) does not match its key", s, step, e, j, l)
				}
				if want, _ := g.Addr(v); want != j {
					t.Fatalf("step %d: entry in bucket %d, its address's bucket is %d", step, j, want)
				}
				if rng.IntN(2) == 0 { // move to the other bucket
					j2, e2, ok := s.Other(g, j, l, e)
					if !ok {
						continue
					}
					v = v ^ a ^ b // the other address
					j, e = j2, e2
					l = g.LevelOf(j)
					continue
				}
				// Split the bucket at the split pointer if it is this one,
				// else grow the geometry to reach it.
				if g.Split != j || g.LevelOf(j) != g.Level {
					if g.Level < 40 && l == g.Level && j > g.Split {
						g = g.Next()
					}
					continue
				}
				next, high, both := s.Split(e)
				g = g.Next()
				e = next
				bit := v >> l & 1
				if !both && high != (bit == 1) {
					t.Fatalf("split sent the entry to the half %v, its address has bit %d", high, bit)
				}
				j, l = g.Addr(v)
			}
		}
	}
}

// TestOtherBucketIsOther: OtherBucket gives the bucket and the ok of Other
// for every entry of every bucket, at geometries mid-round and at a round's
// end, tails of every length.
func TestOtherBucketIsOther(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range []Shape{NewShape(4, 14, 6), NewShape(2, 13, 8), NewShape(8, 19, 7)} {
		for range 5000 {
			g, j, l := randomBucket(rng)
			e := randomEntry(rng, s)
			j2, _, ok := s.Other(g, j, l, e)
			b, ok2 := s.OtherBucket(g, j, l, e)
			if ok != ok2 || ok && b != j2 {
				t.Fatalf("shape %+v, geometry %+v, bucket %d, entry %#x: Other %d %v, OtherBucket %d %v", s, g, j, e, j2, ok, b, ok2)
			}
		}
	}
}

// randomBucket returns a geometry of up to 5000 buckets, at any point of a
// round, and one of its buckets with its level.
func randomBucket(rng *rand.Rand) (Geometry, uint64, uint) {
	g := NewGeometry(1 + rng.Uint64N(5000))
	j := rng.Uint64N(g.Buckets())
	return g, j, g.LevelOf(j)
}

// randomEntry returns an entry of shape s with a random fingerprint and a
// tail of random length and bits.
func randomEntry(rng *rand.Rand, s Shape) uint64 {
	n := rng.UintN(s.TailBits)
	fp := 1 + rng.Uint64N(s.FPMask)
	return fp<<s.TailBits | 1<<n | rng.Uint64()&(1<<n-1)
}

// TestOtherBucketsIsOtherBucket: OtherBuckets gives each slot of a full
// one-word bucket OtherBucket's answer, with the move bit clear where the
// entry cannot move or would stay in its bucket, and leaves empty slots
// clear.
func TestOtherBucketsIsOtherBucket(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range []Shape{NewShape(4, 14, 6), NewShape(2, 13, 8), NewShape(4, 10, 6)} {
		for range 5000 {
			g, j, l := randomBucket(rng)
			var word uint64
			var es [8]uint64
			for i := range s.Slots {
				if rng.IntN(8) == 0 {
					continue // an empty slot
				}
				es[i] = randomEntry(rng, s)
				word |= es[i] << (i * s.Bits)
			}
			var ys [8]uint64
			moves := s.OtherBuckets(g, j, l, word, &ys)
			for i := range s.Slots {
				move := moves>>i&1 == 1
				if es[i] == 0 {
					if move {
						t.Fatalf("shape %+v, bucket %d: empty slot %d may move", s, j, i)
					}
					continue
				}
				y, ok := s.OtherBucket(g, j, l, es[i])
				if ys[i] != y || move != (ok && y != j) {
					t.Fatalf("shape %+v, geometry %+v, bucket %d, slot %d, entry %#x: OtherBuckets %d %v, OtherBucket %d %v", s, g, j, i, es[i], ys[i], move, y, ok)
				}
			}
		}
	}
}

// TestSplitLoadAt: the schedule starts and ends a round at SplitLoad, is
// least at leastAt, and in between never leaves that range.
func TestSplitLoadAt(t *testing.T) {
	for slots, l := range splitLoads {
		const level = 10
		at := func(split uint64) float64 { return SplitLoadAt(slots, At(level, split)) }
		if got := at(0); got != l.most {
			t.Errorf("%d slots: %v at a round's start, want %v", slots, got, l.most)
		}
		if got := at(1<<level - 1); math.Abs(got-l.most) > 1e-3 {
			t.Errorf("%d slots: %v at a round's end, want about %v", slots, got, l.most)
		}
		least := math.Inf(1)
		for p := range uint64(1 << level) {
			x := at(p)
			if x > SplitLoad(slots) || x < l.least {
				t.Fatalf("%d slots, split %d: load %v outside [%v, %v]", slots, p, x, l.least, l.most)
			}
			least = min(least, x)
		}
		if math.Abs(least-l.least) > 1e-5 {
			t.Errorf("%d slots: least load %v, want %v", slots, least, l.least)
		}
	}
}

// TestInitialBucketsPinned: the buckets a table starts with are those
// saved tables were sized with, which loading them checks (InitialBuckets).
func TestInitialBucketsPinned(t *testing.T) {
	for _, c := range []struct {
		capacity uint64
		slots    uint
		want     uint64
	}{{1000, 4, 278}, {1000000, 4, 277778}, {1000, 2, 625}, {1000, 8, 132}, {1, 4, 1}} {
		if got, ok := InitialBuckets(c.capacity, c.slots); got != c.want || !ok {
			t.Errorf("InitialBuckets(%d, %d) = %d, %v; want %d: saved tables of that capacity would no longer load", c.capacity, c.slots, got, ok, c.want)
		}
	}
}

// TestSegments: every bucket has one place, segments are contiguous and in
// order, and a segment's size is its buckets.
func TestSegments(t *testing.T) {
	for _, level0 := range []uint{0, 1, 4, 8, 13} {
		s := NewSegments(level0)
		var prevSeg, prevOff uint64
		for j := range uint64(1) << 20 {
			seg, off := s.Locate(j)
			if j > 0 {
				if seg == prevSeg && off != prevOff+1 || seg != prevSeg && (seg != prevSeg+1 || off != 0 || prevOff != s.Size(j-1)-1) {
					t.Fatalf("level0 %d: bucket %d at %d/%d after %d/%d", level0, j, seg, off, prevSeg, prevOff)
				}
			}
			if off >= s.Size(j) || s.First(seg)+off != j || s.Count(j+1) != seg+1 {
				t.Fatalf("level0 %d: bucket %d at %d/%d, size %d, first %d", level0, j, seg, off, s.Size(j), s.First(seg))
			}
			prevSeg, prevOff = seg, off
		}
	}
}
