package server

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// This file is the server's filter: the value of every key. A key created
// with EXPANSION >= 1 (the default) is one growing table (package growing:
// lock-free lookups, writers serialized by mu as below), which grows a
// bucket at a time and never loses a kept key. A key created with
// EXPANSION 0 is one fixed lock-free stage. A chain of stages, as snapshots
// and dumps of format 2 hold them, still loads and works as before.
//
// Protocol of a chain. A cuckoo holds its stages behind an atomic pointer to an
// immutable slice. Readers (CF.EXISTS, CF.COUNT, CF.INFO, SCANDUMP) load the
// pointer once and query every stage with no lock: each stage is a
// lockfree.Filter. Writers hold mu, the key's writer lock, for the whole
// command and its log append, so the writes to one key reach the log in the
// order they were applied (replay depends on it). A new stage is built in
// full, then published by storing a new slice that ends with it: a reader
// sees either the old list or the new one, and an item inserted into the new
// stage is inserted only after the publish, so no reader can miss it.

// Limits taken from RedisBloom, so that clients see the same ranges.
const (
	maxBucketSize    = 255   // BUCKETSIZE 1..255
	maxIterationsMax = 65535 // MAXITERATIONS 1..65535
	maxExpansion     = 32768 // EXPANSION 0..32768
	maxStages        = 32    // "Maximum expansions reached" beyond this
	defaultCapacity  = 1024  // CF.ADD / CF.INSERT on a missing key
	defaultMaxIter   = 20
	defaultExpansion = 1
	// defaultMaxExpansions is cf-max-expansions' default: inserts are
	// refused once a filter has this many sub-filters ("Number of filters").
	defaultMaxExpansions = 32
	// maxCapacity bounds one filter's capacity: 2^32 items is 4 GiB of
	// buckets, far beyond any sensible single key.
	maxCapacity = 1 << 32
	// minKicks is the least displacement-search budget the filters are given,
	// whatever MAXITERATIONS says: below it a breadth-first search cannot
	// reach the load that the capacity promise is measured at (see doc.go).
	minKicks = 500
)

// Errors with RedisBloom's texts.
var (
	errFull          = replyErr("Filter is full")
	errMaxExpansions = replyErr("Maximum expansions reached")
)

// params are a filter's creation parameters, as the client gave them (after
// defaults), and the seed its stages hash with. They are logged with the
// create record and stored in snapshots, so a replay builds the same stages.
type params struct {
	Capacity   uint64
	BucketSize int // as requested, 1..255; Bucket() is what is built
	MaxIter    int
	Expansion  int
	Seed       uint64
}

// Bucket returns the bucket size the stages are built with: RedisBloom
// accepts 1..255, the lock-free filter supports 2, 4 and 8 slots in a 64-bit
// word; see doc.go for why 1..2 map to 2 and everything else to 4.
func (p params) Bucket() int {
	if p.BucketSize <= 2 {
		return 2
	}
	return 4
}

// stageBits returns the fingerprint width of stage i: the widest the 64-bit
// bucket word allows for b=4 (12 bits), and for b=2 16 bits growing one bit a
// stage up to 24, so the stages' false-positive rates halve in turn.
func (p params) stageBits(i int) int {
	if p.Bucket() == 4 {
		return 12
	}
	return min(16+i, 24)
}

// stageCapacity returns the capacity of stage i: Capacity·Expansion^i
// (Expansion 0 or 1: Capacity), clipped at maxCapacity.
func (p params) stageCapacity(i int) uint64 {
	c := float64(p.Capacity)
	if p.Expansion > 1 {
		c *= math.Pow(float64(p.Expansion), float64(i))
	}
	if c > maxCapacity {
		return maxCapacity
	}
	return uint64(c)
}

func (p params) stageConfig(i int) filter.Config {
	return p.config(p.stageCapacity(i), p.stageBits(i))
}

// config is the filter.Config of a stage of the given capacity and
// fingerprint width: stages share the bucket size, kick budget and seed.
func (p params) config(capacity uint64, bits int) filter.Config {
	return filter.Config{
		Capacity:        capacity,
		FingerprintBits: bits,
		BucketSize:      p.Bucket(),
		MaxKicks:        max(p.MaxIter, minKicks),
		Seed:            p.Seed,
	}
}

// stageBytes returns the memory stage i will take (its SizeInBytes), to be
// charged before it is allocated.
func (p params) stageBytes(i int) (uint64, error) {
	n, err := lockfree.Size(p.stageConfig(i))
	if err != nil {
		return 0, fmt.Errorf("ERR %v", err)
	}
	return n, nil
}

// validate checks p against RedisBloom's ranges, with its error texts.
func (p params) validate() error {
	switch {
	case p.Capacity == 0 || p.Capacity > maxCapacity:
		return replyErr("ERR Bad capacity")
	case p.BucketSize < 1 || p.BucketSize > maxBucketSize:
		return replyErr("ERR Bad bucket size")
	case p.MaxIter < 1 || p.MaxIter > maxIterationsMax:
		return replyErr("ERR Bad maxIterations")
	case p.Expansion < 0 || p.Expansion > maxExpansion:
		return replyErr("ERR Bad expansion")
	}
	return nil
}

// cuckoo is one key's filter: a list of lock-free stages.
type cuckoo struct {
	// mu is the key's writer lock: held across a write command's change
	// and its log append (see the protocol above).
	mu sync.Mutex
	// dead is set, under mu, when the key is deleted; a writer that finds it
	// set looks the key up again.
	dead bool

	p params
	// table is the growing table, or nil for a list of stages. Set before
	// the filter is published, never changed.
	table *growing.Filter
	// mem charges the growing table's new segments: the charger of the
	// write in progress (add, or build's Restore), set under mu. Only those
	// allocate; New's own segments are charged before it, from Size.
	mem    charger
	stages atomic.Pointer[[]*lockfree.Filter]
	// version counts the changes made by commands, for WATCH.
	version atomic.Uint64
	// inserted and deleted are RedisBloom's "Number of items inserted" (the
	// items currently in, deletes subtracted) and "Number of items deleted".
	// Written under mu, read by CF.INFO without it.
	inserted atomic.Int64
	deleted  atomic.Int64

	// load is a CF.LOADCHUNK in progress (nil otherwise), guarded by mu.
	load *loadState

	// deadline is the key's expiry, Unix milliseconds, 0 for none
	// (keyspace_expire.go). Written under mu with the store's expiry index;
	// read by lookups with one atomic load, no lock: the key is gone once
	// the clock passes it.
	deadline atomic.Int64
	// access is the store's coarse clock (seconds) when the key was last
	// looked up or written, for OBJECT IDLETIME; stored only when it
	// changes, so readers of a hot key write its line once a second.
	access atomic.Int64
}

// newCuckoo returns a filter with its first stage or its growing table,
// charged to mem first.
func newCuckoo(p params, mem charger) (*cuckoo, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if p.Expansion > 0 {
		return newGrowing(p, mem)
	}
	n, err := p.stageBytes(0)
	if err != nil {
		return nil, err
	}
	if err := mem(0, n); err != nil {
		return nil, err
	}
	st, err := lockfree.New(p.stageConfig(0))
	if err != nil {
		return nil, fmt.Errorf("ERR %v", err) // not reached: stageBytes built the same Config
	}
	c := &cuckoo{p: p}
	c.stages.Store(&[]*lockfree.Filter{st})
	return c, nil
}

// growingConfig is the growing table of a filter of parameters p.
func (p params) growingConfig() growing.Config {
	return growing.Config{InitialCapacity: p.Capacity, BucketSize: p.Bucket(), MaxKicks: max(p.MaxIter, minKicks), Seed: p.Seed}
}

// newGrowing returns a filter that is a growing table, its first segments
// charged to mem first.
func newGrowing(p params, mem charger) (*cuckoo, error) {
	cfg := p.growingConfig()
	n, err := growing.Size(cfg)
	if err != nil {
		return nil, fmt.Errorf("ERR %v", err)
	}
	if err := mem(0, n); err != nil {
		return nil, err
	}
	c := &cuckoo{p: p}
	cfg.Reserve = func(n uint64) error {
		return c.mem(c.table.SizeInBytes(), n)
	}
	if c.table, err = growing.New(cfg); err != nil {
		return nil, fmt.Errorf("ERR %v", err) // not reached: Size took the same Config
	}
	return c, nil
}

// list returns a chain's stages, nil for a growing table.
func (c *cuckoo) list() []*lockfree.Filter {
	if c.table != nil {
		return nil
	}
	return *c.stages.Load()
}

// filters returns CF.INFO's "Number of filters": a growing table's
// doublings plus one (its Stages), or a list's stages.
func (c *cuckoo) filters() int {
	if c.table != nil {
		return c.table.Stages()
	}
	return len(c.list())
}

// exists reports whether item may be in the filter. No lock.
func (c *cuckoo) exists(item []byte) bool {
	if c.table != nil {
		return c.table.Contains(item)
	}
	st := c.list()
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].Contains(item) {
			return true
		}
	}
	return false
}

// count returns the copies of item's fingerprint in all stages. No lock.
func (c *cuckoo) count(item []byte) int {
	if c.table != nil {
		return c.table.Count(item)
	}
	n := 0
	for _, s := range c.list() {
		n += s.Count(item)
	}
	return n
}

// sizeBytes returns the memory of all stages.
func (c *cuckoo) sizeBytes() uint64 {
	if c.table != nil {
		return c.table.SizeInBytes()
	}
	var n uint64
	for _, s := range c.list() {
		n += s.SizeInBytes()
	}
	return n
}

// firstBuckets is CF.INFO's "Number of buckets": RedisBloom's first
// sub-filter's. A growing table's first sub-filter is the table it started
// as, its initial buckets; a list's is its first stage.
func (c *cuckoo) firstBuckets() uint64 {
	if c.table != nil {
		return c.table.InitialBuckets()
	}
	if l := c.list(); len(l) > 0 {
		return l[0].Buckets()
	}
	return 0
}

// charger accounts the bytes of a new stage before it is allocated: have is
// what the filter takes now, n what the stage will add. It may refuse them
// (store.charge); replay's never does.
type charger func(have, n uint64) error

// grow adds a stage, charged to mem first. Preconditions: mu held.
func (c *cuckoo) grow(mem charger) (*lockfree.Filter, error) {
	old := c.list()
	if len(old) >= maxStages {
		return nil, errMaxExpansions
	}
	i := len(old)
	n, err := c.p.stageBytes(i)
	if err != nil {
		return nil, err
	}
	if err := mem(c.sizeBytes(), n); err != nil {
		return nil, err
	}
	st, err := lockfree.New(c.p.stageConfig(i))
	if err != nil {
		return nil, fmt.Errorf("ERR %v", err) // not reached: stageBytes built the same Config
	}
	next := make([]*lockfree.Filter, i+1)
	copy(next, old)
	next[i] = st
	// Publish the stage; inserts into it happen after this store.
	c.stages.Store(&next)
	return st, nil
}

// add inserts item; with nx only if it is not already present, and then
// reports false when it was. force (log replay) adds a stage past every limit
// rather than fail: a replayed insert was acknowledged once.
// Preconditions: mu held.
func (c *cuckoo) add(item []byte, nx, force bool, mem charger) (bool, error) {
	if nx && c.exists(item) {
		return false, nil
	}
	if c.table != nil {
		c.mem = mem
		err := c.table.Insert(item)
		c.mem = nil
		switch {
		case err == nil:
			c.inserted.Add(1)
			return true, nil
		case errors.Is(err, growing.ErrFull):
			return false, errFull
		}
		return false, err // the memory for its growth was refused
	}
	st := c.list()
	last := st[len(st)-1]
	if c.p.Expansion > 0 && last.Len() >= last.Capacity() {
		s, err := c.grow(mem)
		if err == nil {
			last = s
		} else if !force && !errors.Is(err, errMaxExpansions) {
			return false, err
		}
	}
	err := last.Insert(item)
	if err == nil {
		c.inserted.Add(1)
		return true, nil
	}
	if !errors.Is(err, lockfree.ErrFull) {
		return false, fmt.Errorf("ERR %v", err)
	}
	if !force && (c.p.Expansion == 0 || last.Count(item) >= 2*last.BucketSize()) {
		// A fixed-size filter, or the key's two buckets are full of its own
		// fingerprint: another stage would only take more copies.
		return false, errFull
	}
	s, gerr := c.grow(mem)
	if gerr != nil && force && errors.Is(gerr, errMaxExpansions) {
		s, gerr = c.forceGrow(mem)
	}
	if gerr != nil {
		return false, gerr
	}
	if err := s.Insert(item); err != nil {
		return false, errFull
	}
	c.inserted.Add(1)
	return true, nil
}

// forceGrow adds a stage past maxStages, for replay: a replayed insert was
// acknowledged once. Preconditions: mu held.
func (c *cuckoo) forceGrow(mem charger) (*lockfree.Filter, error) {
	old := c.list()
	cfg := c.p.stageConfig(len(old))
	n, err := lockfree.Size(cfg)
	if err != nil {
		return nil, err
	}
	if err := mem(c.sizeBytes(), n); err != nil {
		return nil, err
	}
	st, err := lockfree.New(cfg)
	if err != nil {
		return nil, err
	}
	next := append(append([]*lockfree.Filter(nil), old...), st)
	c.stages.Store(&next)
	return st, nil
}

// del removes one copy of item's fingerprint, newest stage first.
// Preconditions: mu held.
func (c *cuckoo) del(item []byte) bool {
	if c.table != nil {
		if !c.table.Delete(item) {
			return false
		}
		c.inserted.Add(-1)
		c.deleted.Add(1)
		return true
	}
	st := c.list()
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].Delete(item) {
			c.inserted.Add(-1)
			c.deleted.Add(1)
			return true
		}
	}
	return false
}

// compact drops empty stages after the first. It reports whether it changed
// anything. Preconditions: mu held.
func (c *cuckoo) compact() bool {
	if c.table != nil {
		return false // a growing table has no stages to drop
	}
	st := c.list()
	keep := []*lockfree.Filter{st[0]}
	for _, s := range st[1:] {
		if s.Len() > 0 {
			keep = append(keep, s)
		}
	}
	if len(keep) == len(st) {
		return false
	}
	c.stages.Store(&keep)
	return true
}
