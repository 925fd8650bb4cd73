package redisbloom

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// Protocol. Writers (Add, AddUnique, Delete, Compact, LoadChunk) take mu
// for a whole operation. Readers (Contains, Count, Info) take no lock:
// they load seq, the list of sub-filters (an immutable slice behind an
// atomic pointer) and the slots, each slot with an atomic load.
//
//   - A fingerprint stored into an empty slot, or a slot cleared by a
//     delete, is one atomic store: the linearization point of that add or
//     delete.
//   - A displacement walk (kicks, and the rollback of a walk that found no
//     room) and a compaction move fingerprints between slots; while they
//     run, a fingerprint is briefly in no slot. The writer makes seq odd
//     before the first move and even after the last. A reader that finds
//     its fingerprint answers at once (every fingerprint in a slot is an
//     item's that was added and not deleted, or one being added); to answer
//     "absent" or to give a count, it checks that seq was even and did not
//     change while it read, and otherwise reads again. So a lookup never
//     misses an item added before it began and not deleted, and it is
//     lock-free: a retry means a writer finished a walk meanwhile.
//   - A new sub-filter is allocated zeroed and published (a new list)
//     before anything is stored in it; a compaction that empties the newest
//     one publishes the shorter list. A reader holding the old list reads
//     slots that no longer change. A list carries its slots' bytes, so
//     that Info reads one moment's figures in O(1).

// Limits of RedisBloom's filters, which this package keeps.
const (
	MaxBucketSize    = 255
	MaxIterations    = 65535
	MaxExpansion     = 32768
	maxSubFilters    = math.MaxUint16
	maxBuckets       = 1<<56 - 1 // a sub-filter's bucket count is 56 bits
	filterStructSize = 40        // RedisBloom's CuckooFilter struct, counted in CF.INFO's Size
	subStructSize    = 16        // and each SubCF
)

// DefaultMaxBytes bounds a filter's slots when no Reserve is given: a
// forged header or payload cannot make the process allocate more.
const DefaultMaxBytes = 1 << 32

// Errors. Their texts are RedisBloom's replies where it has one.
var (
	// ErrFull is an add that found no room and may not grow: EXPANSION 0.
	ErrFull error = reply("Filter is full")
	// ErrGrow is an add that found no room and cannot grow: the next
	// sub-filter would pass 2^56 buckets, or the filter has 65535.
	// RedisBloom answers "Memory allocation failure".
	ErrGrow error = reply("Memory allocation failure")
	// ErrParams is a filter RedisBloom could not build: a bucket size,
	// iteration count or expansion outside its ranges.
	ErrParams error = reply("ERR Could not create filter")
	// ErrTooLarge is a filter whose first sub-filter would pass 2^56
	// buckets: RedisBloom's reply when it cannot allocate a new filter,
	// which New also returns when Reserve refuses the bytes.
	ErrTooLarge error = reply("ERR Insufficient memory to create filter")
)

// reply is an error whose text is RedisBloom's reply, word for word.
type reply string

func (e reply) Error() string { return string(e) }

// Reserve is asked for the bytes of every sub-filter before it is
// allocated, and may refuse them with an error that the operation
// returns.
type Reserve func(bytes uint64) error

// Params are CF.RESERVE's arguments.
type Params struct {
	Capacity      uint64
	BucketSize    int // 1..255
	MaxIterations int // 1..65535
	Expansion     int // 0..32768, rounded up to a power of two
	// Reserve, if set, is asked for every sub-filter's bytes; if nil, a
	// filter may take at most DefaultMaxBytes.
	Reserve Reserve
}

// Filter is a RedisBloom cuckoo filter: the same bytes, the same answers
// and the same figures as RedisBloom's after the same operations. Lookups
// take no lock; writers take turns (see the protocol above).
type Filter struct {
	mu   sync.Mutex // writers
	seq  atomic.Uint64
	subs atomic.Pointer[subList]
	// open is the sub-filters with a free slot (open.go), which inserts
	// and compactions visit. Writers only.
	open openSet
	// naive makes them visit every sub-filter: the tests' model (export_test.go).
	naive bool

	buckets       uint64 // the first sub-filter's bucket count, a power of two
	bucketSize    int
	maxIterations int
	expansion     int // a power of two, or 0
	items         atomic.Uint64
	deletes       atomic.Uint64
	reserve       Reserve
}

// New returns an empty filter as CF.RESERVE makes it: the first
// sub-filter has Capacity/BucketSize buckets rounded up to a power of two.
func New(p Params) (*Filter, error) {
	if p.BucketSize < 1 || p.BucketSize > MaxBucketSize || p.MaxIterations < 1 || p.MaxIterations > MaxIterations ||
		p.Expansion < 0 || p.Expansion > MaxExpansion {
		return nil, ErrParams
	}
	f := &Filter{
		buckets:       max(nextPow2(p.Capacity/uint64(p.BucketSize)), 1),
		bucketSize:    p.BucketSize,
		maxIterations: p.MaxIterations,
		expansion:     int(nextPow2(uint64(p.Expansion))),
		reserve:       p.Reserve,
	}
	f.subs.Store(&subList{})
	if err := f.grow(); err != nil {
		if errors.Is(err, ErrGrow) {
			return nil, ErrTooLarge
		}
		return nil, fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	return f, nil
}

// subList is the sub-filters, oldest first, and the bytes of their
// slots, kept with them so that no figure has to visit them all.
type subList struct {
	subs  []*sub
	bytes uint64
}

func (f *Filter) list() []*sub { return f.subs.Load().subs }

// charge asks for n more bytes of slots, beside the have the filter holds.
func (f *Filter) charge(have, n uint64) error {
	if f.reserve != nil {
		return f.reserve(n)
	}
	if have+n > DefaultMaxBytes || have+n < have {
		return fmt.Errorf("a filter may take at most %d bytes without a Reserve, this one would take %d", uint64(DefaultMaxBytes), have+n)
	}
	return nil
}

// grow appends a sub-filter of expansion^k times the first one's buckets
// (k the number there is). Writers only.
func (f *Filter) grow() error {
	l := f.subs.Load()
	old := l.subs
	k := len(old)
	if k == maxSubFilters {
		return ErrGrow
	}
	growth, ok := power(uint64(f.expansion), k)
	if !ok || growth > maxBuckets/f.buckets || growth == 0 {
		return ErrGrow
	}
	s := growth * f.buckets
	bytes := s * uint64(f.bucketSize)
	if err := f.charge(l.bytes, bytes); err != nil {
		return err
	}
	// Appending in place is safe for readers: a published slice is never
	// written below its length, and a shorter one (compactSub) has its
	// capacity cut, so the next append copies.
	next := append(old, newSub(s, f.bucketSize, &f.open, k))
	f.subs.Store(&subList{next, l.bytes + bytes})
	return nil
}

// publish makes subs the sub-filters readers see, in O(len(subs)).
// Writers only.
func (f *Filter) publish(subs []*sub) {
	var n uint64
	for _, s := range subs {
		n += s.bytes
	}
	f.subs.Store(&subList{subs, n})
}

// power is base^exp, and whether it fits in 64 bits.
func power(base uint64, exp int) (uint64, bool) {
	switch { // in O(1) where it can: a filter may have 65535 sub-filters
	case base == 1 || exp == 0:
		return 1, true
	case base == 0:
		return 0, true
	case base&(base-1) == 0:
		shift := bits.TrailingZeros64(base) * exp
		if shift >= 64 {
			return 0, false
		}
		return 1 << shift, true
	}
	r := uint64(1)
	for range exp {
		if base != 0 && r > math.MaxUint64/base {
			return 0, false
		}
		r *= base
	}
	return r, true
}

// slotBytes is the bytes of all sub-filters' slots.
func (f *Filter) slotBytes() uint64 { return f.subs.Load().bytes }

// key is an item's position: its fingerprint and its two hashes, reduced
// to each sub-filter's buckets where they are used.
type key struct {
	fp     byte
	h1, h2 uint64
}

func keyOf(item []byte) key {
	h := Hash(item)
	fp := fingerprint(h)
	return key{fp: fp, h1: h, h2: altIndex(fp, h)}
}

// Contains reports whether item may have been added (and not deleted):
// CF.EXISTS. It visits the sub-filters oldest first. No lock.
func (f *Filter) Contains(item []byte) bool {
	k := keyOf(item)
	for {
		seq := f.seq.Load()
		for _, s := range f.list() {
			if s.find(s.start(k.h1, f.bucketSize), f.bucketSize, k.fp) ||
				s.find(s.start(k.h2, f.bucketSize), f.bucketSize, k.fp) {
				return true
			}
		}
		if seq&1 == 0 && f.seq.Load() == seq {
			return false
		}
		runtime.Gosched()
	}
}

// Count is the copies of item's fingerprint in its buckets, in every
// sub-filter: CF.COUNT. A bucket is counted twice when both hashes pick
// it, as RedisBloom does. No lock.
func (f *Filter) Count(item []byte) uint64 {
	k := keyOf(item)
	for {
		seq := f.seq.Load()
		var n uint64
		for _, s := range f.list() {
			n += s.count(s.start(k.h1, f.bucketSize), f.bucketSize, k.fp) +
				s.count(s.start(k.h2, f.bucketSize), f.bucketSize, k.fp)
		}
		if seq&1 == 0 && f.seq.Load() == seq {
			return n
		}
		runtime.Gosched()
	}
}

// Add inserts a copy of item, present or not: CF.ADD and CF.INSERT. With
// no free slot in its buckets of any sub-filter, it displaces fingerprints
// in the newest one; if that fails it grows, unless EXPANSION is 0
// (ErrFull). RedisBloom's bound on sub-filters (cf-max-expansions) is the
// caller's to check before a command adds.
func (f *Filter) Add(item []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.insert(keyOf(item))
}

// AddUnique inserts item unless it may be present, and reports whether it
// did: CF.ADDNX and CF.INSERTNX.
func (f *Filter) AddUnique(item []byte) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Contains(item) {
		return false, nil
	}
	if err := f.insert(keyOf(item)); err != nil {
		return false, err
	}
	return true, nil
}

func (f *Filter) insert(k key) error {
	for {
		subs := f.list()
		// Newest first, skipping full sub-filters (open.go).
		for i := f.prevOpen(len(subs) - 1); i >= 0; i = f.prevOpen(i - 1) {
			if slot := subs[i].freeFor(k.h1, k.h2, f.bucketSize); slot >= 0 {
				subs[i].set(uint64(slot), k.fp)
				f.items.Add(1)
				return nil
			}
		}
		if f.kick(subs[len(subs)-1], k) {
			f.items.Add(1)
			return nil
		}
		if f.expansion == 0 {
			return ErrFull
		}
		if err := f.grow(); err != nil {
			return err
		}
	}
}

// prevOpen is the newest sub-filter at most i that may have a free slot,
// or -1.
func (f *Filter) prevOpen(i int) int {
	if f.naive {
		return i
	}
	return f.open.prev(i)
}

// nextOpen is the oldest sub-filter at least i that may have a free slot,
// or -1; the caller bounds it.
func (f *Filter) nextOpen(i int) int {
	if f.naive {
		return i
	}
	return f.open.next(i)
}

// kick is RedisBloom's displacement walk in the newest sub-filter s: from
// h1's bucket, it swaps the fingerprint in hand with the bucket's slot 0,
// 1, 2, ... in turn (one slot further each step), moves to the evicted
// fingerprint's other bucket and stops at a free slot there. After
// MaxIterations steps with no free slot it walks back, undoing every swap,
// and reports false. Bucket positions here are not wrapped to 32 bits as
// lookups' are. Writers only.
func (f *Filter) kick(s *sub, k key) bool {
	f.seq.Add(1) // odd: fingerprints move
	defer f.seq.Add(1)
	bs := uint64(f.bucketSize)
	fp := k.fp
	victim := uint64(0)
	b := s.reduce(k.h1)
	for range f.maxIterations {
		slot := b*bs + victim
		fp = s.swap(slot, fp)
		b = s.reduce(altIndex(fp, b))
		if free := s.free(b*bs, f.bucketSize); free >= 0 {
			s.set(uint64(free), fp)
			return true
		}
		victim = (victim + 1) % bs
	}
	for range f.maxIterations {
		victim = (victim + bs - 1) % bs
		b = s.reduce(altIndex(fp, b))
		slot := b*bs + victim
		fp = s.swap(slot, fp)
	}
	return false
}

// Delete removes one copy of item's fingerprint, from the newest
// sub-filter that has it, h1's bucket first: CF.DEL. With more than one
// sub-filter, once the deletes since the last compaction pass a tenth of
// the items, it compacts, stopping at the first sub-filter it cannot empty.
func (f *Filter) Delete(item []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := keyOf(item)
	subs := f.list()
	for i := len(subs) - 1; i >= 0; i-- {
		s := subs[i]
		if s.remove(s.start(k.h1, f.bucketSize), f.bucketSize, k.fp) ||
			s.remove(s.start(k.h2, f.bucketSize), f.bucketSize, k.fp) {
			items := f.items.Add(math.MaxUint64) // minus one, wrapping as RedisBloom's counter does
			deletes := f.deletes.Add(1)
			if len(subs) > 1 && float64(deletes) > float64(items)*0.10 {
				f.compact(false)
			}
			return true
		}
	}
	return false
}

// Compact moves fingerprints from newer sub-filters into free slots of
// older ones, newest first, and frees the newest while it empties:
// CF.COMPACT. It resets the delete count.
func (f *Filter) Compact() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.compact(true)
}

// compact is RedisBloom's compaction; with cont false it stops at the
// first sub-filter that keeps a fingerprint. Writers only.
func (f *Filter) compact(cont bool) {
	f.seq.Add(1) // odd: fingerprints move
	defer f.seq.Add(1)
	for i := len(f.list()) - 1; i > 0; i-- {
		if !f.compactSub(i) && !cont {
			break
		}
	}
	f.deletes.Store(0)
}

// compactSub tries to move every fingerprint of sub-filter i into an older
// one, and frees it if it emptied and is the newest. It reports whether
// every fingerprint moved. A fingerprint's buckets in an older sub-filter
// follow from its bucket number here, since sizes divide each other.
func (f *Filter) compactSub(i int) bool {
	subs := f.list()
	cur := subs[i]
	bs := uint64(f.bucketSize)
	emptied := true
	for b := range cur.buckets {
		for j := range bs {
			slot := b*bs + j
			fp := cur.get(slot)
			if fp == 0 {
				continue
			}
			moved := false
			for o := f.nextOpen(0); o >= 0 && o < i; o = f.nextOpen(o + 1) {
				older := subs[o]
				if free := older.freeFor(b, altIndex(fp, b), f.bucketSize); free >= 0 {
					older.set(uint64(free), fp)
					cur.set(slot, 0)
					moved = true
					break
				}
			}
			emptied = emptied && moved
		}
	}
	if emptied && i == len(subs)-1 {
		f.publish(subs[:i:i])
	}
	return emptied
}

// Info is CF.INFO's figures.
type Info struct {
	// Size is RedisBloom's: its structures' bytes and every slot.
	Size uint64
	// Buckets is the first sub-filter's bucket count.
	Buckets uint64
	// Filters is the number of sub-filters.
	Filters uint64
	// Items is the items inserted and not deleted; Deletes the deletes
	// since the last compaction.
	Items, Deletes                       uint64
	BucketSize, Expansion, MaxIterations uint64
}

// Info returns f's figures, in O(1). No lock.
func (f *Filter) Info() Info {
	l := f.subs.Load() // one list: one moment's sub-filters and bytes
	subs := l.subs
	return Info{
		Size:          filterStructSize + subStructSize*uint64(len(subs)) + l.bytes,
		Buckets:       f.buckets,
		Filters:       uint64(len(subs)),
		Items:         f.items.Load(),
		Deletes:       f.deletes.Load(),
		BucketSize:    uint64(f.bucketSize),
		Expansion:     uint64(f.expansion),
		MaxIterations: uint64(f.maxIterations),
	}
}

// Bytes is the memory of f's slots, what Reserve was asked for.
func (f *Filter) Bytes() uint64 { return f.slotBytes() }

// touchSink keeps Touch's loads from being optimised away.
var touchSink atomic.Uint64

// touchBatch bounds the slots Touch computes before it loads them, so that
// the loads of a batch are few instructions apart and their cache misses
// overlap.
const touchBatch = 16

// touchSubs bounds the sub-filters Touch reads.
const touchSubs = 4

// Touch reads both buckets of each item in the newest sub-filters and changes
// nothing, so that adds or lookups of the same items that follow find them
// in the cache: a CF.INSERT's or CF.MEXISTS's misses overlap instead of
// coming one after another. Only the newest touchSubs sub-filters are
// read, where adds look first: in a filter of many small sub-filters a
// lookup's time goes to visiting them, not to cache misses. No lock.
func (f *Filter) Touch(items [][]byte) {
	subs := f.list()
	subs = subs[max(len(subs)-touchSubs, 0):]
	var keys [touchBatch]key
	var sink uint64
	for len(items) > 0 {
		n := min(len(items), touchBatch)
		for i, it := range items[:n] {
			keys[i] = keyOf(it)
		}
		for _, s := range subs {
			for _, k := range keys[:n] {
				sink += atomic.LoadUint64(&s.words[s.start(k.h1, f.bucketSize)>>3]) +
					atomic.LoadUint64(&s.words[s.start(k.h2, f.bucketSize)>>3])
			}
		}
		items = items[n:]
	}
	touchSink.Store(sink)
}
