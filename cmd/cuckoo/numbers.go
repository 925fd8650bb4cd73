package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/cuckoohash/cuckoo/filter"
)

// decimalRE is a decimal number with an optional fraction and exponent,
// once parseCount has removed its underscores. Spelling it out keeps
// ParseFloat's other syntax (0x1p3, Inf, NaN) out of count flags.
var decimalRE = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// errNotCount is the complaint about a count that is not a whole number.
var errNotCount = errors.New("not a whole number (write 1000000, 1_000_000 or 1e6)")

// parseCount parses a count flag: a whole number written in digits, with
// underscores between digits (1_000_000), or in e notation (1e9, 2.5e6),
// which must lie in lo..hi. Out of range, the error gives the range, so that
// -5 is told what it should have been rather than that it did not parse.
func parseCount(s string, lo, hi int64) (int64, error) {
	digits := strings.ReplaceAll(s, "_", "")
	if strings.Contains(s, "__") || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") ||
		strings.Contains(s, "_.") || strings.Contains(s, "._") || !decimalRE.MatchString(digits) {
		return 0, errNotCount
	}
	if n, err := strconv.ParseInt(digits, 10, 64); err == nil {
		if n < lo || n > hi {
			return 0, rangeError(lo, hi)
		}
		return n, nil
	}
	// Exact arithmetic: 1e9 and 9007199254740993 mean just that.
	f, _, err := big.ParseFloat(digits, 10, 256, big.ToNearestEven)
	if err != nil || f.IsInf() {
		return 0, rangeError(lo, hi) // an exponent too large for any float
	}
	if !f.IsInt() {
		return 0, errNotCount
	}
	if f.Cmp(big.NewFloat(float64(lo))) < 0 || f.Cmp(new(big.Float).SetInt64(hi)) > 0 {
		return 0, rangeError(lo, hi)
	}
	n, _ := f.Int64()
	return n, nil
}

func rangeError(lo, hi int64) error {
	return fmt.Errorf("out of range: it must be in %d..%d", lo, hi)
}

// rangedFlag is a flag's value that parse reads within lo..hi, and format
// writes back (for -h's defaults): count and size flags.
type rangedFlag struct {
	n      int64
	lo, hi int64
	parse  func(s string, lo, hi int64) (int64, error)
	format func(int64) string
}

func (v *rangedFlag) String() string {
	if v.format == nil { // the zero value flag.PrintDefaults makes
		return strconv.FormatInt(v.n, 10)
	}
	return v.format(v.n)
}

func (v *rangedFlag) Set(s string) error {
	n, err := v.parse(s, v.lo, v.hi)
	if err != nil {
		return err
	}
	v.n = n
	return nil
}

// countVar defines a count flag on fs with the default value and range.
func countVar(fs *flag.FlagSet, name string, value, lo, hi int64, usage string) *rangedFlag {
	v := &rangedFlag{n: value, lo: lo, hi: hi, parse: parseCount,
		format: func(n int64) string { return strconv.FormatInt(n, 10) }}
	fs.Var(v, name, usage)
	return v
}

// capacityFlag is build's --capacity. A filter's table has at most 2^32
// buckets (filter.New enforces it), so the most keys it may be built for
// depends on its bucket size and fingerprint width, which other flags give,
// possibly after this one. So Set only parses the count, and check, once
// every flag is parsed, holds it to the limit of the filter's shape.
type capacityFlag struct {
	n    int64  // the count, saturated to int64's range
	text string // as the user wrote it, for the error
}

func (v *capacityFlag) String() string { return strconv.FormatInt(v.n, 10) }

func (v *capacityFlag) Set(s string) error {
	n, err := parseCount(s, math.MinInt64, math.MaxInt64)
	switch {
	case errors.Is(err, errNotCount):
		return err
	case err != nil: // beyond int64: out of range either way
		n = math.MaxInt64
		if strings.HasPrefix(s, "-") {
			n = math.MinInt64
		}
	}
	v.n, v.text = n, s
	return nil
}

// check returns an error if the count is negative or more than a filter of
// shape's bucket size and fingerprint width may be built for.
func (v *capacityFlag) check(shape filter.Config) error {
	hi := maxCapacity(shape)
	if v.n < 0 || uint64(v.n) > hi {
		slots := shape.BucketSize
		if shape.Capacity = hi; hi > 0 {
			l, _ := shape.Layout() // the layout the largest filter has
			slots = l.BucketSize
		}
		return fmt.Errorf("--capacity %s: out of range: it must be in 0..%d, the most keys that 2^32 buckets of %d slots hold (0 fits INPUT's distinct keys)",
			v.text, hi, slots)
	}
	return nil
}

// capacityVar defines build's --capacity on fs, 0 by default.
func capacityVar(fs *flag.FlagSet, name, usage string) *capacityFlag {
	v := &capacityFlag{text: "0"}
	fs.Var(v, name, usage)
	return v
}

// maxCapacity returns the largest Config.Capacity that filter.New accepts
// for shape's bucket size and fingerprint width (or rate); shape.Capacity
// is ignored. filter.New refuses tables of more than 2^32 buckets, and how
// many keys those hold depends on the shape's design load: the answer is
// found by asking Config.Layout, where the limit is enforced, so that the
// two cannot disagree. It returns 0 for a shape that is itself invalid.
func maxCapacity(shape filter.Config) uint64 {
	fits := func(c uint64) bool {
		shape.Capacity = c
		_, err := shape.Layout()
		return err == nil
	}
	if !fits(1) {
		return 0
	}
	lo, hi := uint64(1), uint64(8)<<32 // at most 2^32 buckets of at most 8 slots
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// plural returns one if n is 1 and many otherwise, for the verb or noun
// that goes with a count: "1 of 4 nodes is", "2 of 4 nodes are". count
// (build.go) writes the count and its noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
