// Package stripedfilter is a fine-grained-lock cuckoo filter: the baseline
// that lock-free filters are measured against (the lockfree package's
// benchmarks and cuckoo eval's concurrency experiment). It is written for
// comparison, not for use: filter.Filter behind a lock, or lockfree.Filter,
// are the filters to use.
package stripedfilter

import (
	"sync"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/hashing"
)

// Filter is the fine-grained-lock cuckoo filter the benchmarks compare
// against, the baseline of the paper: a partial-key cuckoo filter of 4
// slots of 12-bit fingerprints a bucket, with the hashing of package
// filter, and a mutex per stripe of buckets (bucket i belongs to stripe
// i mod stripes). Every operation on a key locks the stripes of its two
// buckets, in index order, so two operations never deadlock:
//
//   - Contains, Delete and the first try of Insert hold both locks while
//     they read or write the two buckets.
//   - When both are full, Insert searches breadth first for a path to a
//     free slot, locking each bucket it reads on its own, then moves the
//     fingerprints from the end of the path backwards, each move under the
//     locks of its two buckets (checking that the slot still holds the
//     fingerprint and the target still has room, else searching again),
//     as libcuckoo does.
//
// No lock is ever held while another is awaited out of order, and no
// global lock exists.
type Filter struct {
	buckets  [][4]uint16
	m        uint64
	seed     uint64
	maxKicks int
	locks    [stripes]paddedMutex
}

// stripes is the number of locks: enough that two goroutines rarely want
// the same one, few enough to stay in cache.
const stripes = 1024

type paddedMutex struct {
	sync.Mutex
	_ [56]byte // one cache line each, so stripes do not share lines
}

const stripedBits = 12

// New returns an empty filter with the table of filter.New for capacity
// keys, 12-bit fingerprints and 4 slots a bucket. It panics on a capacity
// filter.New refuses.
func New(capacity uint64, seed uint64) *Filter {
	lay, err := filter.Config{Capacity: capacity, FingerprintBits: stripedBits, Seed: seed}.Layout()
	if err != nil {
		panic(err)
	}
	return &Filter{buckets: make([][4]uint16, lay.Buckets), m: lay.Buckets, seed: seed, maxKicks: lay.MaxKicks}
}

// Buckets returns the number of buckets.
func (s *Filter) Buckets() uint64 { return s.m }

func (s *Filter) locate(h uint64) (i1, i2 uint64, fp uint16) {
	i1 = hashing.Index(h, s.m)
	f := hashing.Fingerprint(h, stripedBits)
	return i1, hashing.Alt(i1, f, s.m), uint16(f)
}

// unlock2 undoes lock2.
func (s *Filter) unlock2(a, b uint64) {
	sa, sb := a%stripes, b%stripes
	if sa != sb {
		s.locks[max(sa, sb)].Unlock()
	}
	s.locks[min(sa, sb)].Unlock()
}

// lock2 locks the stripes of buckets a and b, lower stripe first.
func (s *Filter) lock2(a, b uint64) {
	sa, sb := a%stripes, b%stripes
	if sa == sb {
		s.locks[sa].Lock()
		return
	}
	s.locks[min(sa, sb)].Lock()
	s.locks[max(sa, sb)].Lock()
}

func has(b *[4]uint16, fp uint16) bool {
	return b[0] == fp || b[1] == fp || b[2] == fp || b[3] == fp
}

func slotWith(b *[4]uint16, fp uint16) int {
	for j, x := range b {
		if x == fp {
			return j
		}
	}
	return -1
}

func (s *Filter) hash(key []byte) uint64 { return hashing.Key(key, s.seed) }

func (s *Filter) Contains(key []byte) bool { return s.ContainsHash(s.hash(key)) }

// ContainsHash is Contains for a caller-computed hash, as filter's.
func (s *Filter) ContainsHash(h uint64) bool {
	i1, i2, fp := s.locate(h)
	s.lock2(i1, i2)
	ok := has(&s.buckets[i1], fp) || has(&s.buckets[i2], fp)
	s.unlock2(i1, i2)
	return ok
}

func (s *Filter) Delete(key []byte) bool { return s.DeleteHash(s.hash(key)) }

// DeleteHash is Delete for a caller-computed hash.
func (s *Filter) DeleteHash(h uint64) bool {
	i1, i2, fp := s.locate(h)
	s.lock2(i1, i2)
	defer s.unlock2(i1, i2)
	for _, i := range [2]uint64{i1, i2} {
		if j := slotWith(&s.buckets[i], fp); j >= 0 {
			s.buckets[i][j] = 0
			return true
		}
	}
	return false
}

// tryAdd puts fp into a free slot of i1 or i2 under their locks.
func (s *Filter) tryAdd(i1, i2 uint64, fp uint16) bool {
	s.lock2(i1, i2)
	defer s.unlock2(i1, i2)
	for _, i := range [2]uint64{i1, i2} {
		if j := slotWith(&s.buckets[i], 0); j >= 0 {
			s.buckets[i][j] = fp
			return true
		}
	}
	return false
}

// stripedNode is a bucket reached by the path search: fingerprint fp in
// slot slot of the parent's bucket has this bucket as its other one.
type stripedNode struct {
	bucket uint64
	parent int
	slot   int
	fp     uint16
}

func (s *Filter) Insert(key []byte) error { return s.InsertHash(s.hash(key)) }

// InsertHash is Insert for a caller-computed hash.
func (s *Filter) InsertHash(h uint64) error {
	i1, i2, fp := s.locate(h)
	for range 8 {
		if s.tryAdd(i1, i2, fp) {
			return nil
		}
		if !s.makeRoom(i1, i2) {
			return filter.ErrFull
		}
	}
	return filter.ErrFull
}

// readBucket returns a copy of bucket i, read under its lock.
func (s *Filter) readBucket(i uint64) [4]uint16 {
	l := &s.locks[i%stripes]
	l.Lock()
	b := s.buckets[i]
	l.Unlock()
	return b
}

// makeRoom searches breadth first from i1 and i2 for a bucket with a free
// slot and moves the path's fingerprints towards it, and reports whether it
// found a path.
func (s *Filter) makeRoom(i1, i2 uint64) bool {
	q := make([]stripedNode, 0, 64)
	q = append(q, stripedNode{bucket: i1, parent: -1}, stripedNode{bucket: i2, parent: -1})
	for head := 0; head < len(q) && head < s.maxKicks; head++ {
		x := q[head].bucket
		b := s.readBucket(x)
		for j, fp := range b {
			if fp == 0 {
				return true // freed meanwhile: the caller retries
			}
			y := hashing.Alt(x, uint32(fp), s.m)
			if y == x {
				continue
			}
			q = append(q, stripedNode{bucket: y, parent: head, slot: j, fp: fp})
			if by := s.readBucket(y); slotWith(&by, 0) >= 0 {
				s.movePath(q, len(q)-1)
				return true
			}
		}
	}
	return false
}

// movePath moves the fingerprints of the path ending at node n, from its
// end backwards, each move under the locks of its two buckets; it stops at
// a move that finds the table changed.
func (s *Filter) movePath(q []stripedNode, n int) {
	for ; q[n].parent >= 0; n = q[n].parent {
		from, to := q[q[n].parent].bucket, q[n].bucket
		j, fp := q[n].slot, q[n].fp
		s.lock2(from, to)
		e := slotWith(&s.buckets[to], 0)
		ok := s.buckets[from][j] == fp && e >= 0
		if ok {
			s.buckets[to][e] = fp
			s.buckets[from][j] = 0
		}
		s.unlock2(from, to)
		if !ok {
			return
		}
	}
}

// TestStriped checks the benchmark baseline: single-goroutine fill to 95%
// and drain, then concurrent inserts and deletes of disjoint keys (run it
// with -race).
