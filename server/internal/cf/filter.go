package cf

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/lockfree"
	"github.com/cuckoohash/cuckoo/redisbloom"
)

// This file is the filter: the value of every key. A key created with
// EXPANSION >= 1 (the default) is one growing table (package growing:
// lock-free lookups, writers serialized by the key's lock as below), which
// grows a bucket at a time and never loses a kept key. A key created with
// EXPANSION 0 is such a table that never grows (5 slots) or one fixed
// lock-free stage (2 or 4). A chain of stages, as snapshots and dumps of
// format 2 hold them, still loads and works as before.
//
// Protocol of a chain. A Filter holds its stages behind an atomic pointer to
// an immutable slice. Readers (CF.EXISTS, CF.COUNT, CF.INFO, SCANDUMP) load
// the pointer once and query every stage with no lock: each stage is a
// lockfree.Filter. Writers hold the key's writer lock (its entry's, in the
// key space) for the whole command and its log append, so the writes to one
// key reach the log in the order they were applied (replay depends on it).
// A new stage is built in full, then published by storing a new slice that
// ends with it: a reader sees either the old list or the new one, and an
// item inserted into the new stage is inserted only after the publish, so no
// reader can miss it.

// Limits taken from RedisBloom, so that clients see the same ranges.
const (
	MaxBucketSize    = 255   // BUCKETSIZE 1..255
	MaxIterations    = 65535 // MAXITERATIONS 1..65535
	MaxExpansion     = 32768 // EXPANSION 0..32768
	MaxStages        = 32    // "Maximum expansions reached" beyond this
	DefaultCapacity  = 1024  // CF.ADD / CF.INSERT on a missing key
	DefaultMaxIter   = 20
	DefaultExpansion = 1
	// DefaultMaxExpansions is cf-max-expansions' default: inserts are
	// refused once a filter has this many sub-filters ("Number of filters").
	DefaultMaxExpansions = 32
	// MaxCapacity bounds one filter's capacity: 2^32 items is 4 GiB of
	// buckets, far beyond any sensible single key.
	MaxCapacity = 1 << 32
	// minKicks is the least displacement-search budget the filters are given,
	// whatever MAXITERATIONS says: below it a breadth-first search cannot
	// reach the load that the capacity promise is measured at (see doc.go).
	minKicks = 500
)

// Errors with RedisBloom's texts. They are error values, so that returning
// one allocates nothing.
var (
	ErrFull          error = reply("Filter is full")
	ErrMaxExpansions error = reply("Maximum expansions reached")
)

// Params are a filter's creation parameters, as the client gave them (after
// defaults), and the seed its stages hash with. They are logged with the
// create record and stored in snapshots, so a replay builds the same stages.
type Params struct {
	Capacity   uint64
	BucketSize int // as requested, 1..255; Bucket() is what is built
	MaxIter    int
	Expansion  int
	Seed       uint64 // unused by the RedisBloom layout, which hashes with seed 0
	Layout     Layout
	// Slots is the slots a bucket of this server's tables holds, 2, 4 or
	// 5 (slotsFor chose it when the filter was made; 0 in the RedisBloom
	// layout). Records of filters made before 5-slot buckets leave it out,
	// and their readers take legacySlots (RecordedSlots).
	Slots int
}

// Layout is how a filter is built: this server's tables, or RedisBloom's
// (package redisbloom), bit for bit.
type Layout uint8

const (
	LayoutCuckoo Layout = iota
	LayoutRedisBloom
)

// Layouts are the names of the layouts, as cf-layout takes them.
var Layouts = []string{LayoutCuckoo: "cuckoo", LayoutRedisBloom: "redisbloom"}

func (l Layout) String() string { return Layouts[l] }

// Bucket returns the bucket size the tables are built with (CF.INFO's
// "Bucket size"): Slots, or the size asked for in the RedisBloom layout.
func (p Params) Bucket() int {
	switch {
	case p.Layout == LayoutRedisBloom:
		return p.BucketSize
	case p.Slots != 0:
		return p.Slots
	}
	return legacySlots(p.BucketSize)
}

// slotsFor returns the slots of a new filter's buckets for the bucket size
// asked for (1..255): see doc.go, "Mapping RedisBloom's parameters". Five
// slots are a growing table, a fixed one (Fixed) for EXPANSION 0: a
// lock-free stage keeps a migration counter in its bucket word beside the
// fingerprints, with no room for a fifth.
func slotsFor(bucket int) int {
	switch {
	case bucket <= 2:
		return 2
	case bucket <= 4:
		return 4
	}
	return 5
}

// legacySlots is what servers before 5-slot buckets built for a bucket size.
func legacySlots(bucket int) int {
	if bucket <= 2 {
		return 2
	}
	return 4
}

// RecordedSlots returns what records (the create op, a dump's header, a
// snapshot entry) keep of Slots: p.Slots where legacySlots would not give
// it, else 0, and they then leave the field out, so a filter older servers
// also build is recorded as they recorded it.
func (p Params) RecordedSlots() int {
	if p.Layout != LayoutCuckoo || p.Slots == legacySlots(p.BucketSize) {
		return 0
	}
	return p.Slots
}

// SetRecordedSlots sets p.Slots from a record's field, 0 where it was left
// out. Validate checks it.
func (p *Params) SetRecordedSlots(n int) {
	if p.Layout == LayoutCuckoo && n == 0 {
		n = legacySlots(p.BucketSize)
	}
	p.Slots = n
}

// stageBits returns the fingerprint width of stage i: the widest the 64-bit
// bucket word allows for b=4 (12 bits), and for b=2 16 bits growing one bit a
// stage up to 24, so the stages' false-positive rates halve in turn.
func (p Params) stageBits(i int) int {
	if p.Bucket() == 4 {
		return 12
	}
	return min(16+i, 24)
}

// stageCapacity returns the capacity of stage i: Capacity·Expansion^i
// (Expansion 0 or 1: Capacity), clipped at MaxCapacity.
func (p Params) stageCapacity(i int) uint64 {
	c := float64(p.Capacity)
	if p.Expansion > 1 {
		c *= math.Pow(float64(p.Expansion), float64(i))
	}
	if c > MaxCapacity {
		return MaxCapacity
	}
	return uint64(c)
}

func (p Params) stageConfig(i int) filter.Config {
	return p.config(p.stageCapacity(i), p.stageBits(i))
}

// config is the filter.Config of a stage of the given capacity and
// fingerprint width: stages share the bucket size, kick budget and seed.
func (p Params) config(capacity uint64, bits int) filter.Config {
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
func (p Params) stageBytes(i int) (uint64, error) {
	n, err := lockfree.Size(p.stageConfig(i))
	if err != nil {
		return 0, fmt.Errorf("ERR %v", err)
	}
	return n, nil
}

// Validate checks p against RedisBloom's ranges, with its error texts. A
// RedisBloom-layout capacity has no upper bound here: as RedisBloom, a
// filter too large to allocate is refused when it is built.
func (p Params) Validate() error {
	switch {
	case p.Capacity == 0 || p.Capacity > MaxCapacity && p.Layout != LayoutRedisBloom:
		return reply("ERR Bad capacity")
	case p.BucketSize < 1 || p.BucketSize > MaxBucketSize:
		return reply("ERR Bad bucket size")
	case p.MaxIter < 1 || p.MaxIter > MaxIterations:
		return reply("ERR Bad maxIterations")
	case p.Expansion < 0 || p.Expansion > MaxExpansion:
		return reply("ERR Bad expansion")
	case p.Layout > LayoutRedisBloom:
		return reply("ERR Bad layout")
	case p.Layout == LayoutRedisBloom && p.Slots != 0,
		p.Layout == LayoutCuckoo && p.Slots != 0 && p.Slots != 2 && p.Slots != 4 && p.Slots != 5:
		return reply("ERR Bad bucket size")
	}
	return nil
}

// Filter is one key's filter: a growing table, or a list of lock-free
// stages. Its zero value is empty until Init (or a loader) fills it; it is
// never copied after, since a growing table's Reserve refers to it.
type Filter struct {
	p Params
	// table is the growing table, or nil for a list of stages. Set before
	// the filter is published, never changed.
	table *growing.Filter
	// mem charges the growing table's new segments: the Charger of the
	// write in progress (Add, or build's Restore), set under the key's
	// lock. Only those allocate; New's own segments are charged before it,
	// from Size.
	mem    Charger
	stages atomic.Pointer[[]*lockfree.Filter]
	// inserted and deleted are RedisBloom's "Number of items inserted" (the
	// items currently in, deletes subtracted) and "Number of items deleted".
	// Written under the key's lock, read by CF.INFO without it.
	inserted atomic.Int64
	deleted  atomic.Int64

	// load is a CF.LOADCHUNK in progress (nil otherwise), guarded by the
	// key's lock.
	load *loadState

	// rb is the filter of the RedisBloom layout (rb.go), nil for this
	// server's; set before the filter is published, never changed.
	rb *redisbloom.Filter
}

// Init makes f a new, empty filter of parameters p: its first stage or its
// growing table, charged to mem first. Preconditions: f is a zero Filter.
func (f *Filter) Init(p Params, mem Charger) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if p.Layout == LayoutRedisBloom {
		return f.initRB(p, mem)
	}
	if p.growingTable() {
		return f.initGrowing(p, mem)
	}
	n, err := p.stageBytes(0)
	if err != nil {
		return err
	}
	if err := mem(0, n); err != nil {
		return err
	}
	st, err := lockfree.New(p.stageConfig(0))
	if err != nil {
		return fmt.Errorf("ERR %v", err) // not reached: stageBytes built the same Config
	}
	f.p = p
	f.stages.Store(&[]*lockfree.Filter{st})
	return nil
}

// growingTable reports whether a filter of parameters p is a growing table
// rather than lock-free stages: one that grows, or one of 5 slots, which a
// stage cannot hold, kept at its size (Fixed) for EXPANSION 0.
func (p Params) growingTable() bool { return p.Expansion > 0 || p.Bucket() == 5 }

// growingConfig is the growing table of a filter of parameters p.
func (p Params) growingConfig() growing.Config {
	return growing.Config{InitialCapacity: p.Capacity, BucketSize: p.Bucket(), MaxKicks: max(p.MaxIter, minKicks), Seed: p.Seed,
		Fixed: p.Expansion == 0}
}

// initGrowing makes f a growing table, its first segments charged to mem
// first.
func (f *Filter) initGrowing(p Params, mem Charger) error {
	cfg := p.growingConfig()
	n, err := growing.Size(cfg)
	if err != nil {
		return fmt.Errorf("ERR %v", err)
	}
	if err := mem(0, n); err != nil {
		return err
	}
	f.p = p
	cfg.Reserve = func(n uint64) error {
		return f.mem(f.table.SizeInBytes(), n)
	}
	if f.table, err = growing.New(cfg); err != nil {
		return fmt.Errorf("ERR %v", err) // not reached: Size took the same Config
	}
	return nil
}

// Params returns f's creation parameters.
func (f *Filter) Params() Params { return f.p }

// Inserted is CF.INFO's "Number of items inserted": the items in f.
func (f *Filter) Inserted() int64 {
	if f.rb != nil {
		return int64(f.rb.Info().Items)
	}
	return f.inserted.Load()
}

// Deleted is CF.INFO's "Number of items deleted".
func (f *Filter) Deleted() int64 {
	if f.rb != nil {
		return int64(f.rb.Info().Deletes)
	}
	return f.deleted.Load()
}

// Loading reports whether a CF.LOADCHUNK into f is pending: its writes are
// refused until the last chunk arrives. Preconditions: the key's lock held.
func (f *Filter) Loading() bool { return f.load != nil }

// Encoding is OBJECT ENCODING's answer: "growing", "fixed" (EXPANSION 0)
// or "chain" (stages, as old snapshots and dumps hold them).
func (f *Filter) Encoding() string {
	if f.rb != nil {
		return "redisbloom"
	}
	switch {
	case f.p.Expansion == 0:
		return "fixed"
	case f.table != nil:
		return "growing"
	}
	return "chain"
}

// StagePointers is the bytes of f's list of stages, beside the stages'
// own (SizeBytes counts those): MEMORY USAGE's overhead.
func (f *Filter) StagePointers() uint64 {
	if f.rb != nil {
		return f.rb.Info().Size - f.rb.Bytes()
	}
	return 8 * uint64(len(f.list()))
}

// list returns a chain's stages, nil for a growing table.
func (f *Filter) list() []*lockfree.Filter {
	if f.rb != nil {
		return nil
	}
	if f.table != nil {
		return nil
	}
	return *f.stages.Load()
}

// Filters returns CF.INFO's "Number of filters": a growing table's
// doublings plus one (its Stages), or a list's stages.
func (f *Filter) Filters() int {
	if f.rb != nil {
		return int(f.rb.Info().Filters)
	}
	if f.table != nil {
		return f.table.Stages()
	}
	return len(f.list())
}

// Exists reports whether item may be in the filter. No lock.
func (f *Filter) Exists(item []byte) bool {
	if f.rb != nil {
		return f.rb.Contains(item)
	}
	if f.table != nil {
		return f.table.Contains(item)
	}
	st := f.list()
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].Contains(item) {
			return true
		}
	}
	return false
}

// Count returns the copies of item's fingerprint in all stages. No lock.
func (f *Filter) Count(item []byte) int {
	if f.rb != nil {
		return int(f.rb.Count(item))
	}
	if f.table != nil {
		return f.table.Count(item)
	}
	n := 0
	for _, s := range f.list() {
		n += s.Count(item)
	}
	return n
}

// SizeBytes returns the memory of all stages.
func (f *Filter) SizeBytes() uint64 {
	if f.rb != nil {
		return f.rb.Bytes()
	}
	if f.table != nil {
		return f.table.SizeInBytes()
	}
	var n uint64
	for _, s := range f.list() {
		n += s.SizeInBytes()
	}
	return n
}

// FirstBuckets is CF.INFO's "Number of buckets": RedisBloom's first
// sub-filter's. A growing table's first sub-filter is the table it started
// as, its initial buckets; a list's is its first stage.
func (f *Filter) FirstBuckets() uint64 {
	if f.rb != nil {
		return f.rb.Info().Buckets
	}
	if f.table != nil {
		return f.table.InitialBuckets()
	}
	if l := f.list(); len(l) > 0 {
		return l[0].Buckets()
	}
	return 0
}

// Charger accounts the bytes of a new stage before it is allocated: have is
// what the filter takes now, n what the stage will add. It may refuse them
// (store.charge); replay's never does.
type Charger func(have, n uint64) error

// grow adds a stage, charged to mem first. Preconditions: the key's lock held.
func (f *Filter) grow(mem Charger) (*lockfree.Filter, error) {
	old := f.list()
	if len(old) >= MaxStages {
		return nil, ErrMaxExpansions
	}
	i := len(old)
	n, err := f.p.stageBytes(i)
	if err != nil {
		return nil, err
	}
	if err := mem(f.SizeBytes(), n); err != nil {
		return nil, err
	}
	st, err := lockfree.New(f.p.stageConfig(i))
	if err != nil {
		return nil, fmt.Errorf("ERR %v", err) // not reached: stageBytes built the same Config
	}
	next := make([]*lockfree.Filter, i+1)
	copy(next, old)
	next[i] = st
	// Publish the stage; inserts into it happen after this store.
	f.stages.Store(&next)
	return st, nil
}

// Add inserts item; with nx only if it is not already present, and then
// reports false when it was. force (log replay) adds a stage past every limit
// rather than fail: a replayed insert was acknowledged once.
// Preconditions: the key's lock held.
func (f *Filter) Add(item []byte, nx, force bool, mem Charger) (bool, error) {
	if f.rb != nil {
		return f.addRB(item, nx, mem)
	}
	if nx && f.Exists(item) {
		return false, nil
	}
	if f.table != nil {
		f.mem = mem
		err := f.table.Insert(item)
		f.mem = nil
		switch {
		case err == nil:
			f.inserted.Add(1)
			return true, nil
		case errors.Is(err, growing.ErrFull):
			return false, ErrFull
		}
		return false, err // the memory for its growth was refused
	}
	st := f.list()
	last := st[len(st)-1]
	if f.p.Expansion > 0 && last.Len() >= last.Capacity() {
		s, err := f.grow(mem)
		if err == nil {
			last = s
		} else if !force && !errors.Is(err, ErrMaxExpansions) {
			return false, err
		}
	}
	err := last.Insert(item)
	if err == nil {
		f.inserted.Add(1)
		return true, nil
	}
	if !errors.Is(err, lockfree.ErrFull) {
		return false, fmt.Errorf("ERR %v", err)
	}
	if !force && (f.p.Expansion == 0 || last.Count(item) >= 2*last.BucketSize()) {
		// A fixed-size filter, or the key's two buckets are full of its own
		// fingerprint: another stage would only take more copies.
		return false, ErrFull
	}
	s, gerr := f.grow(mem)
	if gerr != nil && force && errors.Is(gerr, ErrMaxExpansions) {
		s, gerr = f.forceGrow(mem)
	}
	if gerr != nil {
		return false, gerr
	}
	if err := s.Insert(item); err != nil {
		return false, ErrFull
	}
	f.inserted.Add(1)
	return true, nil
}

// forceGrow adds a stage past MaxStages, for replay: a replayed insert was
// acknowledged once. Preconditions: the key's lock held.
func (f *Filter) forceGrow(mem Charger) (*lockfree.Filter, error) {
	old := f.list()
	cfg := f.p.stageConfig(len(old))
	n, err := lockfree.Size(cfg)
	if err != nil {
		return nil, err
	}
	if err := mem(f.SizeBytes(), n); err != nil {
		return nil, err
	}
	st, err := lockfree.New(cfg)
	if err != nil {
		return nil, err
	}
	next := append(append([]*lockfree.Filter(nil), old...), st)
	f.stages.Store(&next)
	return st, nil
}

// Del removes one copy of item's fingerprint, newest stage first.
// Preconditions: the key's lock held.
func (f *Filter) Del(item []byte) bool {
	if f.rb != nil {
		return f.rb.Delete(item)
	}
	if f.table != nil {
		if !f.table.Delete(item) {
			return false
		}
		f.inserted.Add(-1)
		f.deleted.Add(1)
		return true
	}
	st := f.list()
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].Delete(item) {
			f.inserted.Add(-1)
			f.deleted.Add(1)
			return true
		}
	}
	return false
}

// Compact drops empty stages after the first. It reports whether it changed
// anything. Preconditions: the key's lock held.
func (f *Filter) Compact() bool {
	if f.rb != nil {
		f.rb.Compact()
		return true // it resets the delete count, whatever moved
	}
	if f.table != nil {
		return false // a growing table has no stages to drop
	}
	st := f.list()
	keep := []*lockfree.Filter{st[0]}
	for _, s := range st[1:] {
		if s.Len() > 0 {
			keep = append(keep, s)
		}
	}
	if len(keep) == len(st) {
		return false
	}
	f.stages.Store(&keep)
	return true
}

// reply is an error whose text is the client's reply, exactly as RedisBloom
// or Redis spell it.
type reply string

func (e reply) Error() string { return string(e) }

// replyCause is a reply whose text is RedisBloom's and whose cause stays
// for errors.Is.
type replyCause struct {
	text  string
	cause error
}

func (e replyCause) Error() string { return e.text }
func (e replyCause) Unwrap() error { return e.cause }

// Touch reads the buckets of items, changing nothing, so that adds and
// lookups of them that follow find their words in the cache and a batch's
// cache misses overlap (growing.Filter.Touch, redisbloom.Filter.Touch). No
// lock. Filters kept as a list of stages are not touched.
func (f *Filter) Touch(items [][]byte) {
	switch {
	case f.rb != nil:
		f.rb.Touch(items)
	case f.table != nil:
		f.table.Touch(items)
	}
}
