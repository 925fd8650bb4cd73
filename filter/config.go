package filter

import (
	"cmp"
	"fmt"
	"math"

	"github.com/cuckoohash/cuckoo/internal/hashing"
)

// Config describes a filter to build. Only Capacity is required.
//
// With BucketSize and FingerprintBits left 0, New builds the smallest table
// whose expected rate when it holds Capacity keys is at most
// FalsePositiveRate (doc.go, "Choosing the layout"):
// among bucket sizes 2, 4 and 8, plain or, for 4 slots, semi-sorted or
// ranked, and every fingerprint width or range. Packing narrows the choice
// to one packing. Setting BucketSize or FingerprintBits fixes the table
// instead, plain unless Packing says otherwise (ranked tables are chosen by
// the rate alone).
type Config struct {
	// Capacity is the number of keys the filter is guaranteed to hold: a new
	// filter accepts at least Capacity inserts of distinct keys.
	Capacity uint64
	// FalsePositiveRate is the target rate ε when FingerprintBits is 0. 0
	// means 0.01. When BucketSize is set, the fingerprint has
	// ceil(log2(2b/ε)) bits.
	FalsePositiveRate float64
	// FingerprintBits is the fingerprint width f, 4..32 (5..16 semi-sorted).
	// 0 derives it from FalsePositiveRate. It must be 0 for ranked buckets.
	FingerprintBits int
	// BucketSize is the number of slots b per bucket: 2, 4 or 8 (4
	// semi-sorted or ranked). 0 means 4, unless New chooses the layout (see
	// Config).
	BucketSize int
	// Packing is how buckets are stored. PackingAuto lets New choose when
	// BucketSize and FingerprintBits are 0, and means PackingPlain when
	// either is set; the others hold either way.
	Packing Packing
	// MaxKicks bounds the work of one insert that finds both buckets full:
	// the buckets the displacement-path search examines. 0 means 500.
	MaxKicks int
	// Seed seeds the key hash. Filters that are to be compared or merged need
	// the same seed; a secret seed keeps others from choosing colliding keys.
	Seed uint64
}

// Packing is how a filter's buckets are stored.
type Packing uint8

const (
	// PackingAuto chooses: see Config.
	PackingAuto Packing = iota
	// PackingPlain stores each slot's fingerprint as it is, f bits.
	PackingPlain
	// PackingSemiSorted keeps each bucket of 4 slots sorted and codes the
	// top 4 bits of its fingerprints together in 12 bits: 4f-4 bits a
	// bucket, a bit a key less than plain for the same rate, for lookups
	// that take 1.4-1.55 times as long and inserts about twice. It requires 4
	// slots and fingerprints of 5..16 bits.
	PackingSemiSorted
	// PackingRanked keeps each bucket of 4 slots sorted, with fingerprints
	// that range over R = Q·2^L values, Q one of 19, 23, 28 and 33, and
	// codes the four high parts (fp / 2^L) together in 13..16 bits, the
	// four low parts following: a fractional number of bits a fingerprint,
	// so that the rate, and the space, step by at most 1.2x rather than
	// 2x (doc.go, "Ranked buckets"). New chooses Q and L from
	// FalsePositiveRate; FingerprintBits must be 0.
	PackingRanked
)

// String returns the packing's name.
func (p Packing) String() string {
	switch p {
	case PackingAuto:
		return "auto"
	case PackingPlain:
		return "plain"
	case PackingSemiSorted:
		return "semi-sorted"
	case PackingRanked:
		return "ranked"
	}
	return fmt.Sprintf("Packing(%d)", uint8(p))
}

const (
	defaultFalsePositiveRate = 0.01
	defaultBucketSize        = 4
	defaultMaxKicks          = 500
	minFingerprintBits       = 4
	maxFingerprintBits       = 32
	// maxMaxKicks keeps the path-search scratch space (16 bytes a bucket)
	// within a megabyte.
	maxMaxKicks = 1 << 16
)

// Layout is the table that a filter built from a Config has.
type Layout struct {
	Capacity        uint64
	Buckets         uint64 // m
	BucketSize      int    // b
	FingerprintBits int    // f; ranked, the bits a fingerprint's range needs, ceil(log2 R)
	SemiSorted      bool   // buckets packed semi-sorted, in 4f-4 bits
	// Packing is PackingPlain, PackingSemiSorted or PackingRanked.
	Packing Packing
	// FingerprintRange is R: fingerprints take the values 1..R-1. It is
	// 2^f but for ranked buckets, whose R = Q·2^L lies between powers of
	// two; the expected rate follows R.
	FingerprintRange uint64
	MaxKicks         int
	Seed             uint64
}

// TableBytes returns the bytes the layout's table takes: a Filter built with
// it takes that, and a few hundred bytes more.
func (l Layout) TableBytes() uint64 {
	return packedBytes(l.Buckets, l.shape().bucketBits()) + slack
}

// ExpectedFalsePositiveRate returns the false-positive rate of a table of
// this layout at the given load factor: 1 - (1 - load/(R-1))^(2b), R =
// FingerprintRange (2^FingerprintBits if it is 0). It reads BucketSize and
// FingerprintRange only. The function ExpectedFalsePositiveRate takes R to be
// 2^f, which a ranked table's R = Q·2^L is not.
func (l Layout) ExpectedFalsePositiveRate(load float64) float64 {
	r := l.FingerprintRange
	if r == 0 {
		r = 1 << l.FingerprintBits
	}
	return rateForRange(load, uint(l.BucketSize), r-1)
}

// shape returns the shape of the layout's table.
func (l Layout) shape() shape {
	s := shape{slots: uint(l.BucketSize), bits: uint(l.FingerprintBits), semi: l.SemiSorted}
	if l.Packing == PackingRanked {
		for _, q := range rankQs {
			if s.bits >= qBits(q) && uint64(q)<<(s.bits-qBits(q)) == l.FingerprintRange {
				s.q = q
			}
		}
	}
	return s
}

// Layout validates c and returns the table New would build, without
// building it; the error is the one New would return.
func (c Config) Layout() (Layout, error) {
	p, err := c.params()
	if err != nil {
		return Layout{}, err
	}
	return Layout{
		Capacity:         p.capacity,
		Buckets:          p.buckets,
		BucketSize:       int(p.slots),
		FingerprintBits:  int(p.bits),
		SemiSorted:       p.semi,
		Packing:          p.packing(),
		FingerprintRange: p.fpMax() + 1,
		MaxKicks:         p.maxKicks,
		Seed:             p.seed,
	}, nil
}

// packing returns the Packing of tables of shape s.
func (s shape) packing() Packing {
	switch {
	case s.q != 0:
		return PackingRanked
	case s.semi:
		return PackingSemiSorted
	}
	return PackingPlain
}

// params is a validated Config with every default filled in.
type params struct {
	shape
	capacity uint64
	buckets  uint64
	maxKicks int
	seed     uint64
}

func (c Config) params() (params, error) {
	p := params{capacity: c.Capacity, seed: c.Seed, maxKicks: c.MaxKicks}
	if c.Capacity == 0 {
		return p, fmt.Errorf("filter: Config.Capacity is 0: it must be at least 1")
	}
	switch {
	case c.MaxKicks == 0:
		p.maxKicks = defaultMaxKicks
	case c.MaxKicks < 0 || c.MaxKicks > maxMaxKicks:
		return p, fmt.Errorf("filter: Config.MaxKicks is %d: it must be in 1..%d", c.MaxKicks, maxMaxKicks)
	}
	switch c.Packing {
	case PackingAuto, PackingPlain:
	case PackingSemiSorted:
		if c.BucketSize != 0 && c.BucketSize != rankSlots {
			return p, fmt.Errorf("filter: Config.BucketSize is %d: semi-sorted buckets have %d slots", c.BucketSize, rankSlots)
		}
		p.semi = true
	case PackingRanked:
		if c.BucketSize != 0 && c.BucketSize != rankSlots {
			return p, fmt.Errorf("filter: Config.BucketSize is %d: ranked buckets have %d slots", c.BucketSize, rankSlots)
		}
		if c.FingerprintBits != 0 {
			return p, fmt.Errorf("filter: Config.FingerprintBits is %d: ranked buckets are sized by Config.FalsePositiveRate, and it must be 0", c.FingerprintBits)
		}
		return c.smallest(p)
	default:
		return p, fmt.Errorf("filter: Config.Packing is %d: it must be PackingAuto, PackingPlain, PackingSemiSorted or PackingRanked", c.Packing)
	}
	if c.BucketSize == 0 && c.FingerprintBits == 0 {
		return c.smallest(p)
	}
	switch c.BucketSize {
	case 0:
		p.slots = defaultBucketSize
	case 2, 4, 8:
		p.slots = uint(c.BucketSize)
	default:
		return p, fmt.Errorf("filter: Config.BucketSize is %d: it must be 2, 4 or 8", c.BucketSize)
	}
	if c.FingerprintBits != 0 {
		if c.FingerprintBits < minFingerprintBits || c.FingerprintBits > maxFingerprintBits {
			return p, fmt.Errorf("filter: Config.FingerprintBits is %d: it must be in %d..%d",
				c.FingerprintBits, minFingerprintBits, maxFingerprintBits)
		}
		p.bits = uint(c.FingerprintBits)
	} else {
		bits, err := bitsForRate(c.FalsePositiveRate, p.slots)
		if err != nil {
			return p, err
		}
		p.bits = bits
	}
	if p.semi && (p.bits < minSemiBits || p.bits > maxSemiBits) {
		return p, fmt.Errorf("filter: semi-sorted buckets hold fingerprints of %d..%d bits, not %d",
			minSemiBits, maxSemiBits, p.bits)
	}
	buckets, err := bucketsFor(c.Capacity, p.shape, 1)
	if err != nil {
		return p, err
	}
	p.buckets = buckets
	return p, nil
}

// layoutChoices are the tables New chooses among, in order of preference
// when two take the same space: faster lookups first. Ranked tables come
// after them all.
var layoutChoices = []struct {
	slots uint
	semi  bool
}{{4, false}, {2, false}, {8, false}, {4, true}}

// smallest completes p with the smallest table of the layoutChoices and
// ranked shapes that c.Packing allows, and of the fingerprint widths or
// ranges, whose expected false-positive rate when it holds Capacity keys is
// at most c's.
func (c Config) smallest(p params) (params, error) {
	rate, err := checkRate(c.FalsePositiveRate)
	if err != nil {
		return p, err
	}
	best, bestBits := p, uint64(0)
	var firstErr error
	consider := func(s shape, load float64) {
		buckets, err := bucketsFor(c.Capacity, s, load)
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			return
		}
		if size := buckets * uint64(s.bucketBits()); bestBits == 0 || size < bestBits {
			best, bestBits = p, size
			best.shape, best.buckets = s, buckets
		}
	}
	for _, choice := range layoutChoices {
		if c.Packing != PackingAuto && (c.Packing == PackingRanked || choice.semi != (c.Packing == PackingSemiSorted)) {
			continue
		}
		minBits, maxBits := uint(minFingerprintBits), uint(maxFingerprintBits)
		if choice.semi {
			minBits, maxBits = minSemiBits, maxSemiBits
		}
		// Every width, each in a table no fuller at Capacity than the rate
		// allows: the narrowest that meets the rate at its design load is
		// not always the smallest (narrow fingerprints have lower design
		// loads), and one bit narrower at a lower load can be smaller
		// still, which smooths the steps of the integer width.
		for bits := minBits; bits <= maxBits; bits++ {
			s := shape{slots: choice.slots, bits: bits, semi: choice.semi}
			load := loadForRate(rate, s)
			if load < designLoad(choice.slots, bits)/2 {
				// A bit more halves the rate for less than twice the
				// space: a table this empty is never the smallest.
				continue
			}
			consider(s, load)
		}
	}
	if c.Packing == PackingAuto || c.Packing == PackingRanked {
		// Each Q with the least L that meets the rate at the design load,
		// always at that load: the ranges step by 1.2x, too little for a
		// table less full to pay.
		for _, q := range rankQs {
			for low := uint(minRankedLow); low <= maxRankedLow; low++ {
				s := shape{slots: rankSlots, bits: low + qBits(q), q: q}
				if loadForRate(rate, s) >= rankedDesignLoad {
					consider(s, 1)
					break
				}
			}
		}
	}
	if bestBits == 0 {
		if firstErr != nil {
			return p, firstErr
		}
		switch c.Packing {
		case PackingSemiSorted:
			return p, fmt.Errorf("filter: semi-sorted buckets hold fingerprints of %d..%d bits, too few for Config.FalsePositiveRate %v",
				minSemiBits, maxSemiBits, rate)
		case PackingRanked:
			return p, fmt.Errorf("filter: ranked buckets reach false-positive rates down to %.2g, not Config.FalsePositiveRate %v",
				minRankedRate(), rate)
		}
		if _, err := bitsForRate(rate, defaultBucketSize); err != nil {
			return p, err // it says how many bits the rate needs
		}
		return p, fmt.Errorf("filter: Config.FalsePositiveRate %v needs fingerprints of more than %d bits",
			rate, maxFingerprintBits)
	}
	return best, nil
}

// minRankedRate returns the expected rate of the ranked table of the
// largest range, at its design load.
func minRankedRate() float64 {
	return expectedRate(rankedDesignLoad, shape{slots: rankSlots, bits: maxRankedLow + qBits(33), q: 33})
}

// checkRate returns the target rate, 0 meaning the default, or why it is
// out of range.
func checkRate(rate float64) (float64, error) {
	if rate == 0 {
		return defaultFalsePositiveRate, nil
	}
	if !(rate > 0 && rate < 1) { // also refuses NaN
		return 0, fmt.Errorf("filter: Config.FalsePositiveRate is %v: it must be in (0, 1)", rate)
	}
	return rate, nil
}

// bitsForRate returns f = ceil(log2(2b/ε)), at least 4.
func bitsForRate(rate float64, slots uint) (uint, error) {
	rate, err := checkRate(rate)
	if err != nil {
		return 0, err
	}
	f := math.Ceil(math.Log2(2 * float64(slots) / rate))
	if f > maxFingerprintBits {
		return 0, fmt.Errorf("filter: Config.FalsePositiveRate %v needs %v-bit fingerprints, more than %d",
			rate, f, maxFingerprintBits)
	}
	return max(uint(f), minFingerprintBits), nil
}

// designLoad is the load factor a table is sized for: the highest at which
// inserting Capacity distinct keys into a new filter succeeded for every
// capacity and seed tried (see TestCapacityPromise and doc.go). Narrow
// fingerprints give each bucket fewer distinct alternates, which lowers it.
func designLoad(slots, bits uint) float64 {
	row := designLoads[slots]
	if bits-minFingerprintBits < uint(len(row)) {
		return row[bits-minFingerprintBits]
	}
	return row[len(row)-1]
}

// designLoads[b][f-4] is the design load for b slots and f-bit fingerprints;
// the last entry of a row holds for every wider fingerprint. Each is a margin
// below the lowest load at which the victim slot was first needed, over
// seeds, in tables of 2^20 and 8·10^6 keys (TestLoadExperiment). Narrow
// fingerprints give a bucket only 2^f-1 alternates, and the reachable load
// then falls as the table grows: the rows' first entries are for tables of
// at most about 10^7 keys.
var designLoads = map[uint][]float64{
	2: {0.15, 0.28, 0.45, 0.76, 0.80, 0.82, 0.84},
	4: {0.78, 0.85, 0.88, 0.91, 0.925, 0.94, 0.95},
	8: {0.86, 0.91, 0.935, 0.95, 0.965, 0.97, 0.98},
}

// smallTableBuckets is the bucket count below which tables get extra room
// on top of the load margin: in a tiny table one full bucket pair is a large
// part of the whole.
const smallTableBuckets = 64

// loadSpread returns c in the design load's small-table margin c/sqrt(m).
// The load a random table reaches before its first failure varies from
// table to table by about 1/sqrt(m) (TestCapacityPromise found failures in
// tables of 66 to 530 buckets without it); narrow fingerprints, with fewer
// alternates a bucket, vary more.
func loadSpread(slots, bits uint) float64 {
	c := map[uint]float64{2: 1.2, 4: 0.4, 8: 0.35}[slots]
	if bits < 10 {
		c *= 2.5
	}
	return c
}

// loadForRate returns the load at which a table of shape s has the
// expected false-positive rate ε: expectedRate inverted.
func loadForRate(rate float64, s shape) float64 {
	return float64(s.fpMax()) * -math.Expm1(math.Log1p(-rate)/float64(2*s.slots))
}

// expectedRate returns the false-positive rate of a table of shape s at the
// given load: a lookup compares its fingerprint with 2b slots, each
// occupied with probability load and equal with probability 1/(R-1).
func expectedRate(load float64, s shape) float64 {
	return rateForRange(load, s.slots, s.fpMax())
}

// rateForRange is expectedRate for b slots a bucket and fingerprints
// 1..fpMax.
func rateForRange(load float64, slots uint, fpMax uint64) float64 {
	p := load / float64(fpMax)
	return -math.Expm1(float64(2*slots) * math.Log1p(-p))
}

// bucketsFor returns the number of buckets m that holds capacity keys at
// the design load less its margin, or at maxLoad if that is lower: m =
// capacity / (b·min(load - c/sqrt(m), maxLoad)), solved by iterating from
// the margin-free size.
func bucketsFor(capacity uint64, s shape, maxLoad float64) (uint64, error) {
	load, c := s.designLoad(), loadSpread(s.slots, s.bits)
	n, b := float64(capacity), float64(s.slots)
	m := math.Ceil(n / (b * min(load, maxLoad)))
	for range 4 {
		m = math.Ceil(n / (b * min(max(load-c/math.Sqrt(m), load/2), maxLoad)))
	}
	if m < smallTableBuckets {
		m = math.Ceil(m + 2*math.Sqrt(m) + 1)
	}
	if m > hashing.MaxBuckets {
		return 0, fmt.Errorf("filter: Config.Capacity %d needs %.0f buckets of %d, more than the 2^32 supported",
			capacity, m, s.slots)
	}
	return uint64(m), nil
}
