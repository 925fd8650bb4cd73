package main

import (
	"errors"
	"flag"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
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

// countValue is a count flag's value, parsed by parseCount within lo..hi.
type countValue struct {
	n      int64
	lo, hi int64
}

// countVar defines a count flag on fs with the default value and range.
func countVar(fs *flag.FlagSet, name string, value, lo, hi int64, usage string) *countValue {
	c := &countValue{n: value, lo: lo, hi: hi}
	fs.Var(c, name, usage)
	return c
}

func (c *countValue) String() string { return strconv.FormatInt(c.n, 10) }

func (c *countValue) Set(s string) error {
	n, err := parseCount(s, c.lo, c.hi)
	if err != nil {
		return err
	}
	c.n = n
	return nil
}
