package eval

import (
	"math"

	"github.com/cuckoohash/cuckoo/filter"
)

// chain is filter.Scalable as it was when the growth experiment was written
// (issue 13): a list of independent filter.Filter stages, each Growth times
// the last one's capacity with fingerprints one bit wider, inserts into the
// newest, lookups in all, deletes newest first. It is kept here, built from
// the public Filter, so that the experiment keeps this baseline when
// Scalable's design changes; TestChainIsScalable checks that the two agree
// while Scalable is still a chain.
type chain struct {
	growth, bits int // growth factor; fingerprint width of stage 0
	seed         uint64
	stages       []*filter.Filter
}

// chainHeaderBytes is Scalable's own share of its SizeInBytes.
const chainHeaderBytes = 64

// newChain returns a chain of one stage. As Scalable does, it gives stage 0
// fingerprints for rate eps/2, since stage k's rate, at most
// 2b/2^(f0+k), sums to below twice stage 0's.
func newChain(capacity uint64, eps float64, growth int, seed uint64) (*chain, error) {
	c := &chain{growth: growth, seed: seed, bits: int(math.Ceil(math.Log2(2 * 4 / (eps / 2))))}
	return c, c.grow(capacity)
}

// grow appends a stage of the given capacity.
func (c *chain) grow(capacity uint64) error {
	f, err := filter.New(filter.Config{Capacity: capacity, FingerprintBits: c.bits + len(c.stages), BucketSize: 4, Seed: c.seed})
	if err != nil {
		return err
	}
	c.stages = append(c.stages, f)
	return nil
}

func (c *chain) newest() *filter.Filter { return c.stages[len(c.stages)-1] }

// InsertHash inserts into the newest stage, adding one first when it holds
// its capacity, or after it refuses the key below its capacity.
func (c *chain) InsertHash(h uint64) error {
	if last := c.newest(); last.Len() >= last.Capacity() {
		if err := c.grow(last.Capacity() * uint64(c.growth)); err != nil {
			return err
		}
	}
	last := c.newest()
	err := last.InsertHash(h)
	if err == nil || last.CountHash(h) >= 2*last.BucketSize() {
		return err
	}
	if err := c.grow(last.Capacity() * uint64(c.growth)); err != nil {
		return err
	}
	return c.newest().InsertHash(h)
}

// ContainsHash reports whether any stage holds h's fingerprint.
func (c *chain) ContainsHash(h uint64) bool {
	for i := len(c.stages) - 1; i >= 0; i-- {
		if c.stages[i].ContainsHash(h) {
			return true
		}
	}
	return false
}

// DeleteHash removes one copy from the newest stage that matches, which
// may be another key's when h is a false positive of a newer stage than
// its own: the loss issue 13 is about.
func (c *chain) DeleteHash(h uint64) bool {
	for i := len(c.stages) - 1; i >= 0; i-- {
		if c.stages[i].DeleteHash(h) {
			return true
		}
	}
	return false
}

// SizeInBytes counts the stages and Scalable's fixed header.
func (c *chain) SizeInBytes() uint64 {
	n := uint64(chainHeaderBytes)
	for _, s := range c.stages {
		n += s.SizeInBytes()
	}
	return n
}

// FalsePositiveRate is the chance that at least one stage answers falsely.
func (c *chain) FalsePositiveRate() float64 {
	miss := 1.0
	for _, s := range c.stages {
		miss *= 1 - s.FalsePositiveRate()
	}
	return 1 - miss
}

// Stages returns the number of stages.
func (c *chain) Stages() int { return len(c.stages) }
