package lockfree

import (
	"sync"
	"sync/atomic"
)

// countStripes is the number of cache lines Len's count is spread over.
const countStripes = 8

type paddedCount struct {
	n atomic.Int64
	_ [56]byte
}

// lenCount is the number of fingerprints in the table, spread over stripes
// so that cores updating it at once do not write one cache line. A
// goroutine adds to the stripe of the P it runs on: sync.Pool keeps one
// stripe token per P, so a core keeps writing the same line and never takes
// it from another core's cache, which striping by bucket could not avoid
// (two cores writing random stripes meet on every line). The sum of the
// stripes is exact; a stripe alone may be negative.
type lenCount struct {
	stripes [countStripes]paddedCount
	tokens  sync.Pool // *stripeToken, one per P
	next    atomic.Uint32
}

func (c *lenCount) add(n int64) {
	t, _ := c.tokens.Get().(*stripeToken)
	if t == nil {
		// One per P, again after a GC empties the pool: handed out in
		// turn, so the Ps of a small machine get stripes of their own.
		t = &stripeToken{stripe: c.next.Add(1) % countStripes}
	}
	c.stripes[t.stripe].n.Add(n)
	c.tokens.Put(t)
}

// stripeToken is padded to a cache line so that no other object written by
// another core shares its line.
type stripeToken struct {
	stripe uint32
	_      [60]byte
}

func (c *lenCount) load() int64 {
	var n int64
	for i := range c.stripes {
		n += c.stripes[i].n.Load()
	}
	return n
}

func (c *lenCount) reset() {
	for i := range c.stripes {
		c.stripes[i].n.Store(0)
	}
}
