package linhash

import (
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
			g := NewGeometry(1 + rng.Uint64N(5000))
			j := rng.Uint64N(g.Buckets())
			l := g.LevelOf(j)
			n := rng.UintN(s.TailBits)
			fp := 1 + rng.Uint64N(s.FPMask)
			e := fp<<s.TailBits | 1<<n | rng.Uint64()&(1<<n-1)
			j2, _, ok := s.Other(g, j, l, e)
			b, ok2 := s.OtherBucket(g, j, l, e)
			if ok != ok2 || ok && b != j2 {
				t.Fatalf("shape %+v, geometry %+v, bucket %d, entry %#x: Other %d %v, OtherBucket %d %v", s, g, j, e, j2, ok, b, ok2)
			}
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
