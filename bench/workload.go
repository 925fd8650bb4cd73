package bench

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// KeySize is the length of every benchmark key in bytes.
const KeySize = 16

const (
	// LookupSetSize is the number of keys in a lookup set: 16 MiB of keys,
	// enough that a timed pass over it is long against the clock's
	// resolution, and the same for every n so that lookups at different n
	// differ only in the filter.
	LookupSetSize = 1 << 20
	// AbsentKeysForRate is the number of absent keys a false-positive rate
	// is measured on: at rates near 0.2% that is about 2000 false
	// positives, a relative standard error near 2%.
	AbsentKeysForRate = 1_000_000
)

// Seeds of the independent key streams.
const (
	presentSeed = 0x243f6a8885a308d3
	absentSeed  = 0x13198a2e03707344 // lookup sets' absent keys
	rateSeed    = 0xa4093822299f31d0 // keys for measuring the false-positive rate
	drawSeed    = 0x082efa98ec4e6c89 // choice and order of keys in lookup sets
)

// Keys is a sequence of KeySize-byte keys stored back to back.
type Keys []byte

// Len returns the number of keys.
func (k Keys) Len() int { return len(k) / KeySize }

// At returns key i. Its capacity is KeySize, so appending to it cannot
// overwrite the next key.
func (k Keys) At(i int) []byte { return k[i*KeySize : (i+1)*KeySize : (i+1)*KeySize] }

// randomKeys returns n keys from the PCG stream with the given seed.
func randomKeys(n int, seed uint64) Keys {
	r := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	k := make(Keys, n*KeySize)
	for i := 0; i < len(k); i += 8 {
		binary.LittleEndian.PutUint64(k[i:], r.Uint64())
	}
	return k
}

// PresentKeys returns the n keys that the filters hold. PresentKeys(m) is a
// prefix of PresentKeys(n) for m < n.
func PresentKeys(n int) Keys { return randomKeys(n, presentSeed) }

// RateKeys returns the keys, never inserted, on which false-positive rates
// are measured.
func RateKeys() Keys { return randomKeys(AbsentKeysForRate, rateSeed) }

// LookupSet returns count keys in random order, of which hitPercent percent
// (rounded down) are drawn uniformly, with replacement, from present and the
// rest are absent keys. The keys are copied into one array in lookup order.
func LookupSet(present Keys, hitPercent, count int) [][]byte {
	if hitPercent < 0 || hitPercent > 100 {
		panic(fmt.Sprintf("bench: LookupSet: hit percentage %d is not in 0..100", hitPercent))
	}
	hits := count * hitPercent / 100
	r := rand.New(rand.NewPCG(drawSeed, uint64(hitPercent)))
	absent := randomKeys(count-hits, absentSeed)
	backing := make(Keys, count*KeySize)
	for i := range hits {
		copy(backing.At(i), present.At(r.IntN(present.Len())))
	}
	copy(backing[hits*KeySize:], absent)
	out := make([][]byte, count)
	for i := range out {
		out[i] = backing.At(i)
	}
	// Shuffle the keys' contents, not just the slice headers, so that the
	// lookups read the key array in order.
	r.Shuffle(count, func(i, j int) {
		var t [KeySize]byte
		copy(t[:], out[i])
		copy(out[i], out[j])
		copy(out[j], t[:])
	})
	return out
}

// Slices returns keys[lo:hi] as a slice of slices, for APIs that take
// [][]byte.
func (k Keys) Slices(lo, hi int) [][]byte {
	out := make([][]byte, hi-lo)
	for i := range out {
		out[i] = k.At(lo + i)
	}
	return out
}

// ParseSizes parses a comma-separated list of key counts such as
// "1e5,1e6,1e7" or "250000".
func ParseSizes(s string) ([]int, error) {
	var sizes []int
	for field := range strings.SplitSeq(s, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		v, err := strconv.ParseFloat(field, 64)
		if err != nil || v != math.Trunc(v) || v < 1 || v > 1<<32 {
			return nil, fmt.Errorf("bench: size %q is not a whole number of keys in 1..2^32", field)
		}
		sizes = append(sizes, int(v))
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("bench: no sizes in %q", s)
	}
	return sizes, nil
}

// SizeName formats n as the benchmarks name it: "1e6" for 1000000, "2.5e5"
// for 250000, "1234" otherwise.
func SizeName(n int) string {
	if n < 10 {
		return strconv.Itoa(n)
	}
	s := strconv.FormatFloat(float64(n), 'e', -1, 64) // "1e+06", "2.5e+05", "1.234e+03"
	mantissa, exp, _ := strings.Cut(s, "e+")
	if len(mantissa) > 3 { // more than one decimal: plain digits read better
		return strconv.Itoa(n)
	}
	return mantissa + "e" + strings.TrimLeft(exp, "0")
}
