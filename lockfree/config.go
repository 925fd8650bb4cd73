package lockfree

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/filter"
)

// Which bucket word a Config gets.
//
// A bucket is one 64-bit word: b fingerprints of f bits, a migration
// counter of at least minCounterBits, and the K-CAS mark (bucket.go). That
// bounds b·f by 63 - 15 = 48: 4 slots of up to 12 bits, 2 of up to 24, 8 of
// up to 6. filter.New derives f = ceil(log2(2b/ε)) from the rate ε, so with
// its default 4 slots the word fits rates down to 8/2^12 = 2^-9 only. Below
// that, a Config that leaves the bucket size to the package gets 2 slots,
// whose f = ceil(log2(4/ε)) fits down to 4/2^24 = 2^-22, and filter's own
// sizing for 2-slot buckets (a lower design load, so more buckets for the
// same Capacity). doc.go, "Bucket sizes", gives the measured costs.

// defaultSlots is the bucket size New picks when the Config leaves it to
// the package and the fingerprints fit.
const defaultSlots = 4

// narrowSlots is the bucket size New picks when the default 4 slots cannot
// hold the fingerprints the Config needs.
const narrowSlots = 2

// maxBitsFor returns the widest fingerprint a bucket word of the given
// slots holds beside its migration counter.
func maxBitsFor(slots int) int { return (63 - minCounterBits) / slots }

// minRateFor returns the lowest FalsePositiveRate whose derived fingerprints
// fit the given slots: f = ceil(log2(2b/ε)) <= maxBitsFor(b) when
// ε >= 2b/2^maxBitsFor(b), a power of two. (The rounding of log2 also lets
// through rates a few ulps below it; New decides by the derived width.)
func minRateFor(slots int) float64 {
	return 2 * float64(slots) / float64(uint64(1)<<maxBitsFor(slots))
}

// fits reports whether lay's fingerprints leave a bucket word room for the
// migration counter.
func fits(lay filter.Layout) bool {
	return lay.FingerprintBits <= maxBitsFor(lay.BucketSize)
}

// layoutOf returns the Config that New builds for cfg (cfg itself, or cfg
// with BucketSize 2 when the default 4 slots leave too few counter bits)
// and its layout, or why New refuses cfg, in the terms of the fields the
// caller set. The returned Config is what Snapshot passes to filter.New.
func layoutOf(cfg filter.Config) (filter.Config, filter.Layout, error) {
	switch cfg.Packing {
	case filter.PackingAuto, filter.PackingPlain:
		// A bucket word holds plain fingerprints, in buckets of the size
		// chosen here (above), not filter's smallest layout: the bucket
		// size is set before filter sees the Config.
		cfg.Packing = filter.PackingPlain
	default:
		return cfg, filter.Layout{}, fmt.Errorf("lockfree: Config.Packing %v: buckets hold plain fingerprints, beside their migration counter", cfg.Packing)
	}
	sized := cfg
	if sized.BucketSize == 0 {
		sized.BucketSize = defaultSlots
	}
	lay, err := sized.Layout()
	if err != nil {
		return sized, lay, fmt.Errorf("lockfree: %w", err)
	}
	if fits(lay) {
		return sized, lay, nil
	}
	if cfg.BucketSize == 0 && (cfg.FingerprintBits == 0 || cfg.FingerprintBits <= maxBitsFor(narrowSlots)) {
		narrow := cfg
		narrow.BucketSize = narrowSlots
		nlay, err := narrow.Layout()
		if err != nil {
			return cfg, nlay, fmt.Errorf("lockfree: %s takes buckets of %d slots, and %w",
				needsNarrow(cfg), narrowSlots, err)
		}
		if fits(nlay) {
			return narrow, nlay, nil
		}
	}
	return sized, lay, tooWide(cfg, lay)
}

// needsNarrow names what in cfg made New leave the default bucket size.
func needsNarrow(cfg filter.Config) string {
	if cfg.FingerprintBits != 0 {
		return fmt.Sprintf("Config.FingerprintBits %d", cfg.FingerprintBits)
	}
	return fmt.Sprintf("a false-positive rate below %v", minRateFor(4))
}

// tooWide explains why no bucket word holds cfg's layout lay, naming only
// the fields the caller set.
func tooWide(cfg filter.Config, lay filter.Layout) error {
	b := lay.BucketSize
	switch {
	case cfg.FingerprintBits != 0 && cfg.BucketSize != 0:
		return fmt.Errorf("lockfree: Config.BucketSize %d with Config.FingerprintBits %d does not fit a bucket word: %d slots of %d bits leave %d bits for the migration counter, fewer than %d; with BucketSize %d, FingerprintBits may be at most %d",
			b, lay.FingerprintBits, b, lay.FingerprintBits, 63-b*lay.FingerprintBits, minCounterBits, b, maxBitsFor(b))
	case cfg.FingerprintBits != 0:
		return fmt.Errorf("lockfree: Config.FingerprintBits %d is not supported: a bucket word holds at most %d bits a fingerprint (in buckets of %d slots) beside its %d-bit migration counter",
			cfg.FingerprintBits, maxBitsFor(narrowSlots), narrowSlots, minCounterBits)
	case cfg.BucketSize != 0:
		hint := ""
		if cfg.BucketSize != narrowSlots && rateOf(cfg) >= minRateFor(narrowSlots) {
			hint = fmt.Sprintf("; leave BucketSize 0 and New takes buckets of %d slots for this rate", narrowSlots)
		}
		return fmt.Errorf("lockfree: with Config.BucketSize %d, a false-positive rate below %v is not supported (%s)%s",
			b, minRateFor(b), rateText(cfg), hint)
	default:
		return fmt.Errorf("lockfree: a false-positive rate below %v is not supported (%s): a bucket and its migration counter share one 64-bit word",
			minRateFor(narrowSlots), rateText(cfg))
	}
}

// rateOf returns the false-positive rate cfg asks for, its default filled in.
func rateOf(cfg filter.Config) float64 {
	if cfg.FalsePositiveRate == 0 {
		return defaultRate
	}
	return cfg.FalsePositiveRate
}

// defaultRate is filter.Config's rate when FalsePositiveRate is 0.
const defaultRate = 0.01

// rateText names cfg's rate as the caller wrote it.
func rateText(cfg filter.Config) string {
	if cfg.FalsePositiveRate == 0 {
		return fmt.Sprintf("Config.FalsePositiveRate is 0, which means %v", defaultRate)
	}
	return fmt.Sprintf("Config.FalsePositiveRate is %v", cfg.FalsePositiveRate)
}

// configOf returns the Config that rebuilds g's layout.
func configOf(g *filter.Filter) filter.Config {
	return filter.Config{
		Capacity:        g.Capacity(),
		FingerprintBits: g.FingerprintBits(),
		BucketSize:      g.BucketSize(),
		MaxKicks:        g.MaxKicks(),
		Seed:            g.Seed(),
	}
}

// fromFilterFits returns why FromFilter cannot hold g's buckets, or nil.
func fromFilterFits(g *filter.Filter) error {
	if g.Packing() == filter.PackingRanked {
		// Ranked fingerprints range over Q·2^L values and take their
		// alternate bucket from hashing.AltMixed: a plain table of the same
		// width would read them at the wrong buckets.
		return fmt.Errorf("lockfree: FromFilter: the filter's buckets are ranked, whose fingerprints and alternate buckets plain buckets do not share: build it with Packing %v or %v", filter.PackingPlain, filter.PackingSemiSorted)
	}
	b, f := g.BucketSize(), g.FingerprintBits()
	if f <= maxBitsFor(b) {
		return nil
	}
	return fmt.Errorf("lockfree: FromFilter: the filter's buckets of %d slots of %d bits do not fit a bucket word beside its %d-bit migration counter (at most %d bits with %d slots, %d with %d): build it with a false-positive rate of at least %v, or with BucketSize %d",
		b, f, minCounterBits, maxBitsFor(4), 4, maxBitsFor(narrowSlots), narrowSlots, minRateFor(4), narrowSlots)
}
