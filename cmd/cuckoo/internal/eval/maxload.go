package eval

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cuckoohash/cuckoo/filter"
)

// MaxLoadRow is the load factor a cuckoo filter reached before its first
// failed insert, averaged over seeds.
type MaxLoadRow struct {
	Impl       string // ImplRandomWalk or ImplFilterBFS
	BucketSize int
	MaxKicks   int
	Load       float64 // mean over the seeds
	MinLoad    float64 // the lowest of the seeds
	Seeds      int
}

// Implementations in MaxLoadRow.
const (
	// ImplRandomWalk is the paper's insertion: kick a random fingerprint
	// of a full bucket to its other bucket, up to MaxKicks times.
	ImplRandomWalk = "random walk (reference)"
	// ImplFilterBFS is package filter: a breadth-first search of the
	// displacement path examining up to MaxKicks buckets.
	ImplFilterBFS = "filter (breadth-first)"
)

// walkFilter is a minimal partial-key cuckoo filter for this experiment:
// any bucket size (the filter package supports 2, 4 and 8), a power-of-two
// table, alt(i, fp) = i XOR hash(fp) as in the paper, and random-walk
// insertion.
type walkFilter struct {
	slots    []uint16 // bucket i is slots[i*b : (i+1)*b]; 0 = empty
	b        int
	mask     uint64
	maxKicks int
	rng      *rand.Rand
}

func newWalkFilter(buckets, b, maxKicks int, seed uint64) *walkFilter {
	return &walkFilter{
		slots: make([]uint16, buckets*b), b: b, mask: uint64(buckets - 1),
		maxKicks: maxKicks, rng: rand.New(rand.NewPCG(seed, 7)),
	}
}

func (w *walkFilter) alt(i uint64, fp uint16) uint64 { return (i ^ mix(uint64(fp))) & w.mask }

func (w *walkFilter) add(i uint64, fp uint16) bool {
	for j := range w.b {
		if s := &w.slots[int(i)*w.b+j]; *s == 0 {
			*s = fp
			return true
		}
	}
	return false
}

// insert reports whether the key with hash h was stored; a false return
// leaves one fingerprint homeless, which ends the experiment.
func (w *walkFilter) insert(h uint64) bool {
	fp := uint16(h>>32)&0xfff | 1 // 12 bits, never 0
	i := h & w.mask
	if w.add(i, fp) || w.add(w.alt(i, fp), fp) {
		return true
	}
	if w.rng.IntN(2) == 1 {
		i = w.alt(i, fp)
	}
	for range w.maxKicks {
		s := &w.slots[int(i)*w.b+w.rng.IntN(w.b)]
		fp, *s = *s, fp
		i = w.alt(i, fp)
		if w.add(i, fp) {
			return true
		}
	}
	return false
}

// MaxLoad measures the load reached before the first failed insert, for
// random-walk insertion at bucket sizes 1, 2, 4, 8 and for package filter
// at 2, 4, 8, with each kick bound, in tables of about `slots` slots.
func MaxLoad(slots int, kicks []int, seeds int) ([]MaxLoadRow, error) {
	var rows []MaxLoadRow
	for _, b := range []int{1, 2, 4, 8} {
		buckets := 1
		for buckets*b < slots {
			buckets *= 2
		}
		for _, k := range kicks {
			r := MaxLoadRow{Impl: ImplRandomWalk, BucketSize: b, MaxKicks: k, MinLoad: 1, Seeds: seeds}
			for s := range seeds {
				w := newWalkFilter(buckets, b, k, uint64(s))
				n := 0
				for w.insert(mix(uint64(s)<<40 | uint64(n))) {
					n++
				}
				load := float64(n) / float64(buckets*b)
				r.Load += load / float64(seeds)
				r.MinLoad = min(r.MinLoad, load)
			}
			rows = append(rows, r)
		}
	}
	for _, b := range []int{2, 4, 8} {
		for _, k := range kicks {
			r := MaxLoadRow{Impl: ImplFilterBFS, BucketSize: b, MaxKicks: k, MinLoad: 1, Seeds: seeds}
			for s := range seeds {
				f, err := filter.New(filter.Config{Capacity: uint64(slots * 8 / 10), BucketSize: b, FingerprintBits: 12, MaxKicks: k, Seed: uint64(s)})
				if err != nil {
					return nil, err
				}
				total := float64(f.Buckets()) * float64(b)
				var n uint64
				for ; !f.VictimUsed(); n++ {
					if err := f.InsertHash(mix(uint64(s)<<40 | n)); err != nil {
						return nil, fmt.Errorf("filter b=%d kicks=%d: %w", b, k, err)
					}
				}
				// The n-th insert was the first that needed the victim slot.
				load := float64(n-1) / total
				r.Load += load / float64(seeds)
				r.MinLoad = min(r.MinLoad, load)
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// InsertRateRow is the average time of an insert while package filter
// (b = 4, f = 12) fills from one load factor to the next.
type InsertRateRow struct {
	FromLoad, ToLoad float64
	NsPerInsert      float64
}

// InsertRates fills a filter of n keys' capacity to 95% load and times the
// inserts in bands of 5 points of load. Times depend on the machine and its
// load; the shape of the curve is the point.
func InsertRates(n uint64, seed uint64) ([]InsertRateRow, error) {
	f, err := filter.New(filter.Config{Capacity: n, BucketSize: 4, FingerprintBits: 12, Seed: seed})
	if err != nil {
		return nil, err
	}
	slots := float64(f.Buckets() * 4)
	hs := make([]uint64, int(0.95*slots))
	for i := range hs {
		hs[i] = mix(seed<<40 | uint64(i))
	}
	var rows []InsertRateRow
	next := 0
	for band := 0; band < 19; band++ {
		end := int(float64(band+1) * 0.05 * slots)
		start := time.Now()
		for ; next < end && next < len(hs); next++ {
			if err := f.InsertHash(hs[next]); err != nil {
				return nil, fmt.Errorf("insert at load %.3f: %w", f.LoadFactor(), err)
			}
		}
		count := end - int(float64(band)*0.05*slots)
		rows = append(rows, InsertRateRow{
			FromLoad: float64(band) * 0.05, ToLoad: float64(band+1) * 0.05,
			NsPerInsert: float64(time.Since(start).Nanoseconds()) / float64(max(count, 1)),
		})
	}
	return rows, nil
}
