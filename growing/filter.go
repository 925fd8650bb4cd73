package growing

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cuckoohash/cuckoo/internal/hashing"
	"github.com/cuckoohash/cuckoo/internal/linhash"
	"github.com/cuckoohash/cuckoo/internal/written"
)

// Config describes a Filter.
type Config struct {
	// InitialCapacity is the number of keys the filter is first sized for;
	// required. It grows past it as keys arrive.
	InitialCapacity uint64
	// BucketSize is 2, 4 or 5 (0 means 4): 2 entries of 32 bits, 4 of 16
	// or 5 of 12 in a bucket's 64-bit word. 5 is the smallest (about 13.9
	// bits a key) and 4 the one whose false-positive rate holds best as
	// the filter grows (package documentation).
	BucketSize int
	// MaxKicks bounds the buckets an insert's path search examines. 0
	// means 500.
	MaxKicks int
	// Seed seeds the key hash.
	Seed uint64
	// Fixed keeps the table at the size New gives it: it never splits a
	// bucket, and an insert that finds no place once the stash is full
	// returns ErrFull. Sized for InitialCapacity at its split load, it
	// holds at least that many keys.
	Fixed bool
	// Reserve, if set, is called with the bytes of every allocation after
	// New's own (which Size returns, for the caller to charge first) before
	// it is made: a segment added by growth, or by the server's restore of
	// a saved table (package internal/tables). An error stops the growth
	// (the insert still succeeds if there is room, and otherwise returns
	// the error).
	Reserve func(bytes uint64) error
}

// ErrFull is returned by Insert when the key's buckets already hold 2b
// copies of its entry, or the stash is full, or growth was refused.
var ErrFull = errors.New("growing: filter is full")

const (
	defaultMaxKicks = 500
	maxMaxKicks     = 1 << 16
)

// Filter is a growing cuckoo filter: lock-free lookups, serialized writers.
// See the package documentation for the protocol.
type Filter struct {
	shape    linhash.Shape
	lanes    linhash.Lanes
	cfg      Config // defaults filled in
	initial  uint64 // the initial bucket count
	level0   uint
	layout   linhash.Segments // fixed by level0
	maxKicks int

	geom  atomic.Uint64 // packed geometry: level<<58 | split
	dir   atomic.Pointer[directory]
	moves atomic.Uint64 // bumped between a move's store and its clear
	stash atomic.Pointer[[]uint64]

	items   atomic.Int64 // inserts less deletes
	entries atomic.Int64 // entries in the table, copies included
	byTail  [linhash.MaxTailBits]atomic.Int64

	mu   sync.Mutex     // writers
	path []linhash.Node // path-search scratch, under mu
	// growErr is Reserve's refusal of the last segment growth asked for,
	// nil once one is granted; under mu.
	growErr error
}

// directory is the table's segments, placed by linhash.Segments: never
// moved or merged, so the directory only grows, a segment at a time. Each
// segment has its ever-written marks (package internal/written), allocated
// alongside it: a bucket's word is non-zero only in a marked block
// (write.go's store sets the mark first).
type directory struct {
	layout  *linhash.Segments
	segs    [][]atomic.Uint64
	marks   []written.Marks // of each segment, its buckets numbered from 0
	buckets uint64          // the buckets the segments hold
	bytes   uint64          // the bytes of the segments and their marks
}

func (d *directory) word(j uint64) *atomic.Uint64 {
	seg, off := d.layout.Locate(j)
	return &d.segs[seg][off]
}

// grown returns d with one more segment, of n words.
func (d *directory) grown(n uint64) *directory {
	words, marks := newSegment(n)
	return &directory{
		layout:  d.layout,
		segs:    append(slices.Clip(d.segs), words),
		marks:   append(slices.Clip(d.marks), marks),
		buckets: d.buckets + n,
		bytes:   d.bytes + segmentBytes(n),
	}
}

// newSegment allocates a segment of n buckets and its marks. Nothing
// touches the segment: make's fresh pages stay unresident until a bucket of
// theirs is written. The marks are an allocation of their own: appended to
// the segment's, they would push its power-of-two size into the next size
// class of the runtime's allocator, an eighth more.
func newSegment(n uint64) ([]atomic.Uint64, written.Marks) {
	return make([]atomic.Uint64, n), make(written.Marks, written.Words(n))
}

// segmentBytes is the memory of a segment of n buckets and its marks.
func segmentBytes(n uint64) uint64 { return 8 * (n + written.Words(n)) }

// segmentsBytes is the memory of the first n segments of layout.
func segmentsBytes(layout *linhash.Segments, n uint64) uint64 {
	var b uint64
	for i := range n {
		b += segmentBytes(layout.Size(layout.First(i)))
	}
	return b
}

// New returns an empty filter sized for cfg.InitialCapacity keys.
func New(cfg Config) (*Filter, error) {
	if cfg.BucketSize == 0 {
		cfg.BucketSize = 4
	}
	if !bucketSizeOK(cfg.BucketSize) {
		return nil, fmt.Errorf("growing: Config.BucketSize is %d: it must be 2, 4 or 5", cfg.BucketSize)
	}
	switch {
	case cfg.MaxKicks == 0:
		cfg.MaxKicks = defaultMaxKicks
	case cfg.MaxKicks < 0 || cfg.MaxKicks > maxMaxKicks:
		return nil, fmt.Errorf("growing: Config.MaxKicks is %d: it must be in 1..%d", cfg.MaxKicks, maxMaxKicks)
	}
	if cfg.InitialCapacity == 0 {
		return nil, errors.New("growing: Config.InitialCapacity is 0: it must be at least 1")
	}
	b := uint(cfg.BucketSize)
	buckets, ok := linhash.InitialBuckets(cfg.InitialCapacity, b)
	if !ok {
		return nil, fmt.Errorf("growing: Config.InitialCapacity %d: more than the largest table holds", cfg.InitialCapacity)
	}
	width := 64 / b
	shape := linhash.NewShape(b, width, linhash.FingerprintBits(b, width))
	f := &Filter{shape: shape, lanes: shape.Lanes(), cfg: cfg, initial: buckets, maxKicks: cfg.MaxKicks}
	g := linhash.NewGeometry(f.initial)
	f.level0, f.layout = g.Level, linhash.NewSegments(g.Level)
	f.reset(g, false, false) // cannot fail: nothing is charged
	return f, nil
}

// bucketSizeOK reports whether b slots of a bucket word are a shape the
// filter has (Config.BucketSize).
func bucketSizeOK(b int) bool { return b == 2 || b == 4 || b == 5 }

// Size returns the bytes New(cfg) allocates, to be charged before it does.
func Size(cfg Config) (uint64, error) {
	if cfg.BucketSize == 0 {
		cfg.BucketSize = 4
	}
	if !bucketSizeOK(cfg.BucketSize) || cfg.InitialCapacity == 0 {
		return 0, fmt.Errorf("growing: bad Config %+v", cfg)
	}
	buckets, _ := linhash.InitialBuckets(cfg.InitialCapacity, uint(cfg.BucketSize))
	g := linhash.NewGeometry(buckets)
	layout := linhash.NewSegments(g.Level)
	return segmentsBytes(&layout, layout.Count(g.Buckets())) + fixedBytes, nil
}

// reset empties the filter and gives it geometry g, with fresh segments,
// or with keep the segments it has, which must be empty (Restore): only
// those beyond are allocated, so that a filter restored to a saved geometry
// is allocated once, never twice over (the second time in memory the first
// had freed and the runtime then zeroes, page by page). With charge, the
// bytes beyond what it had are charged through Reserve first. Writers only.
func (f *Filter) reset(g linhash.Geometry, charge, keep bool) error {
	n := f.layout.Count(g.Buckets())
	need := segmentsBytes(&f.layout, n)
	old := f.dir.Load()
	var have uint64
	if old != nil {
		have = old.bytes
	}
	if charge && f.cfg.Reserve != nil && need > have {
		if err := f.cfg.Reserve(need - have); err != nil {
			return err
		}
	}
	d := &directory{layout: &f.layout, segs: make([][]atomic.Uint64, n), marks: make([]written.Marks, n),
		buckets: f.layout.First(n), bytes: need}
	kept := 0
	if keep && old != nil {
		kept = copy(d.segs, old.segs)
		copy(d.marks, old.marks)
	}
	for i := kept; i < len(d.segs); i++ {
		d.segs[i], d.marks[i] = newSegment(f.layout.Size(f.layout.First(uint64(i))))
	}
	// The geometry first: a reader checks that its directory holds it.
	f.geom.Store(pack(g))
	f.dir.Store(d)
	f.stash.Store(&[]uint64{})
	f.items.Store(0)
	f.entries.Store(0)
	for i := range f.byTail {
		f.byTail[i].Store(0)
	}
	return nil
}

func pack(g linhash.Geometry) uint64 { return uint64(g.Level)<<58 | g.Split }

func unpack(w uint64) linhash.Geometry { return linhash.At(uint(w>>58), w&(1<<58-1)) }

func (f *Filter) geometry() linhash.Geometry { return unpack(f.geom.Load()) }

func (f *Filter) hash(key []byte) uint64       { return hashing.Key(key, f.cfg.Seed) }
func (f *Filter) hashString(key string) uint64 { return hashing.String(key, f.cfg.Seed) }

// Contains reports whether key may have been inserted: never false for a key
// inserted and not deleted. It takes no lock.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.hash(key)) }

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool { return f.ContainsHash(f.hashString(key)) }

// ContainsHash is Contains for a caller-computed hash.
func (f *Filter) ContainsHash(h uint64) bool {
	fp, a, b := f.shape.Key(h)
	for {
		moves, packed := f.moves.Load(), f.geom.Load()
		g := unpack(packed)
		d := f.dir.Load()
		if g.Buckets() > d.buckets {
			continue // a Reset between the two loads
		}
		if f.lookup(g, d, fp, a, b) || f.stashed(h) {
			return true
		}
		if f.geom.Load() == packed && f.moves.Load() == moves {
			return false
		}
	}
}

// lookup reads the key's two buckets under geometry g and directory d. A
// bucket that is being split is matched under both its encodings, and the
// bucket it splits into is read after it (see the package documentation).
func (f *Filter) lookup(g linhash.Geometry, d *directory, fp, a, b uint64) bool {
	j1, l1 := g.Bucket(a)
	j2, l2 := g.Bucket(b)
	w1, w2 := d.word(j1).Load(), d.word(j2).Load()
	if f.lanes.Candidates(w1, fp)|f.lanes.Candidates(w2, fp) == 0 && j1 != g.Split && j2 != g.Split {
		return false // no fingerprint matches: the common miss, decided cheaply
	}
	hit := f.lanes.Match(w1, f.lanes.Query(fp, a, l1)) | f.lanes.Match(w2, f.lanes.Query(fp, b, l2))
	if j1 == j2 {
		hit |= f.lanes.Match(w1, f.lanes.Query(fp, b, l1))
	}
	if hit != 0 {
		return true
	}
	if j1 == g.Split && l1 == g.Level && f.splitting(g, d, w1, fp, a) {
		return true
	}
	return j2 == g.Split && l2 == g.Level && f.splitting(g, d, w2, fp, b)
}

// splitting matches address v against bucket p = g.Split (word wp, read
// already) as a split of it leaves it, and against the bucket it splits
// into, read now.
func (f *Filter) splitting(g linhash.Geometry, d *directory, wp, fp, v uint64) bool {
	if f.lanes.Match(wp, f.lanes.Query(fp, v, g.Level+1)) != 0 {
		return true
	}
	q := g.Split + 1<<g.Level
	if q >= d.buckets {
		return false // its segment is not there yet: nothing was stored in it
	}
	return f.lanes.Match(d.word(q).Load(), f.lanes.Query(fp, v, g.Level+1)) != 0
}

func (f *Filter) stashed(h uint64) bool {
	s := *f.stash.Load()
	return len(s) != 0 && slices.Contains(s, h)
}

// Count returns the entries that match key. Unlike lookups it takes the
// writer lock, briefly, so that no entry is counted twice while it moves.
// It never counts fewer copies than were inserted and not deleted; for a key
// never inserted it may count 0 where Contains answers true, because a
// lookup also matches the bucket next to split under its split encoding.
func (f *Filter) Count(key []byte) int { return f.CountHash(f.hash(key)) }

// CountString is Count for a string key.
func (f *Filter) CountString(key string) int { return f.CountHash(f.hashString(key)) }

// CountHash is Count for a caller-computed hash.
func (f *Filter) CountHash(h uint64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.matches(h, nil)) + f.stashCount(h)
}

func (f *Filter) stashCount(h uint64) int {
	n := 0
	for _, x := range *f.stash.Load() {
		if x == h {
			n++
		}
	}
	return n
}

// Len returns the keys inserted and not deleted.
func (f *Filter) Len() uint64 { return uint64(f.items.Load()) }

// Entries returns the entries stored, copies made by splits included.
func (f *Filter) Entries() uint64 {
	return uint64(f.entries.Load()) + uint64(len(*f.stash.Load()))
}

// Stashed returns the keys held beside the table.
func (f *Filter) Stashed() int { return len(*f.stash.Load()) }

// Buckets returns the table's buckets.
func (f *Filter) Buckets() uint64 { return f.geometry().Buckets() }

// BucketSize returns the slots a bucket.
func (f *Filter) BucketSize() int { return int(f.shape.Slots) }

// Slots returns the table's slots: Buckets times BucketSize.
func (f *Filter) Slots() uint64 { return f.Buckets() * uint64(f.shape.Slots) }

// SlotBits returns the width of a slot: fingerprint and tail.
func (f *Filter) SlotBits() int { return int(f.shape.Bits) }

// FingerprintBits returns the width of an entry's fingerprint, the part of
// a slot that never shrinks (the tail gives a bit to each split).
func (f *Filter) FingerprintBits() int { return int(f.shape.FPBits) }

// LoadFactor returns the fraction of the slots in use: the entries in the
// table (Entries, the stashed keys aside) over Slots. It takes no lock:
// while writers run, it reads the count and the table's size at nearby
// moments.
func (f *Filter) LoadFactor() float64 {
	return float64(max(f.entries.Load(), 0)) / float64(f.Slots())
}

// InitialBuckets returns the buckets the table was created with: its first
// generation, as CF.INFO reports RedisBloom's first sub-filter.
func (f *Filter) InitialBuckets() uint64 { return f.initial }

// Stages returns the doublings of the table since it was created, plus one.
func (f *Filter) Stages() int { return int(f.geometry().Level-f.level0) + 1 }

// Capacity returns the keys the table holds before it next grows.
func (f *Filter) Capacity() uint64 {
	g := f.geometry()
	return uint64(linhash.SplitLoadAt(f.shape.Slots, g) * float64(g.Buckets()*uint64(f.shape.Slots)))
}

// Config returns the configuration with its defaults filled in.
func (f *Filter) Config() Config { return f.cfg }

// fixedBytes is what a filter takes besides its bucket words: the struct,
// a full stash and a directory of 24-byte entries, bounded, so that
// SizeInBytes changes only when words are allocated, each time by what
// Reserve was asked for.
const fixedBytes = 1024

// SizeInBytes returns the memory of the filter: its bucket words, their
// ever-written marks (a word for every 2^15 buckets, at least one a
// segment) and a fixed part. It grows only by the bytes passed to Reserve,
// and shrinks only on Reset.
func (f *Filter) SizeInBytes() uint64 {
	d := f.dir.Load()
	return fixedBytes + d.bytes
}

// FalsePositiveRate returns the expected rate at the current load.
func (f *Filter) FalsePositiveRate() float64 {
	var byTail [linhash.MaxTailBits]float64
	for n := range f.byTail {
		byTail[n] = float64(f.byTail[n].Load())
	}
	return f.shape.ExpectedRate(byTail[:], f.Buckets())
}

// Tails returns the entries by the length of their tail: entry n counts
// the entries that know n bits of their address beyond their bucket's
// level, which they match keys on besides the fingerprint.
func (f *Filter) Tails() []uint64 {
	out := make([]uint64, f.shape.TailBits)
	for i := range out {
		out[i] = uint64(f.byTail[i].Load())
	}
	return out
}

// Reset empties the filter and gives it its initial size.
func (f *Filter) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Not charged to Reserve: it only shrinks the table, so it cannot fail.
	if err := f.reset(linhash.NewGeometry(f.initial), false, false); err != nil {
		panic("growing: Reset: " + err.Error()) // not reached: only a charge fails
	}
}

// touchSink keeps Touch's loads from being optimised away.
var touchSink atomic.Uint64

// touchBatch bounds the addresses Touch computes before it loads them: the
// loads of a batch are then few instructions apart, so the processor has
// most of their cache misses in flight at once.
const touchBatch = 16

// Touch reads the two buckets of each key and changes nothing, so that
// inserts or lookups of the same keys that follow find their words in the
// cache: the cache misses of a batch overlap instead of coming one after
// another, as for the filter package's batch lookups. It takes no lock; a
// geometry or directory that changes meanwhile only makes it less useful.
func (f *Filter) Touch(keys [][]byte) {
	g, d := f.geometry(), f.dir.Load()
	if g.Buckets() > d.buckets {
		return // a Reset between the two loads
	}
	var at [2 * touchBatch]uint64
	var sink uint64
	for len(keys) > 0 {
		n := min(len(keys), touchBatch)
		for i, k := range keys[:n] {
			_, a, b := f.shape.Key(f.hash(k))
			at[2*i], _ = g.Bucket(a)
			at[2*i+1], _ = g.Bucket(b)
		}
		for _, j := range at[:2*n] {
			sink += d.word(j).Load()
		}
		keys = keys[n:]
	}
	touchSink.Store(sink)
}
