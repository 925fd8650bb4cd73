package lockfree_test

import (
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
)

// shape is a bucket layout New builds, for the concurrent tests that run
// once per layout: the default 4 slots of 12 bits, and the 2 slots New
// takes for rates below 2^-9 (at rate 0.0001: 16-bit fingerprints).
type shape struct {
	name string
	cfg  filter.Config // without Capacity and Seed
	b    int
	// full is the load the tests drive the shape to as "full": filter's
	// design load for it, 0.95 for 4 slots of 12 bits, 0.84 for 2 of 16.
	full float64
}

var shapes = []shape{
	{"b=4/f=12", filter.Config{FingerprintBits: 12}, 4, 0.95},
	{"b=2/f=16", filter.Config{FalsePositiveRate: 0.0001}, 2, 0.84},
}

// config returns the shape's Config for capacity keys and seed.
func (s shape) config(capacity, seed uint64) filter.Config {
	c := s.cfg
	c.Capacity, c.Seed = capacity, seed
	return c
}

// load scales a load written for 4 slots, where 0.95 is full, to the shape.
func (s shape) load(l float64) float64 { return l * s.full / 0.95 }

// forShapes runs body as a sub-test per shape, checking that New built the
// shape's bucket size.
func forShapes(t *testing.T, body func(t *testing.T, s shape)) {
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			if f := mustNew(t, s.config(100, 1)); f.BucketSize() != s.b {
				t.Fatalf("New built %d slots a bucket, want %d", f.BucketSize(), s.b)
			}
			body(t, s)
		})
	}
}
