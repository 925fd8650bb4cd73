// Command refbench runs the workload of the C++ reference implementation's
// benchmark (efficient/cuckoofilter, benchmarks/bulk-insert-and-query.cc)
// on this project's filter, and prints a row in the same format, so that
// the two can be run side by side on one machine:
//
//	go run ./cmd/refbench 1000000
//	./bulk-insert-and-query.exe 1000000   # built from the reference, under /tmp
//
// The workload, as the reference's: n random 64-bit keys added to a filter
// built for n keys (12-bit fingerprints, 4 slots a bucket), timed; then, for
// each share p of 0%, 25%, 50%, 75% and 100%, a million lookups of which p
// are added keys and the rest random ones, in random order, timed; ε is the
// share of the 0% lookups found. Keys are hashed as the reference hashes
// them: the high 64 bits of a + m·key in 128-bit arithmetic, with random
// 128-bit m and a (its TwoIndependentMultiplyShift), and handed to
// InsertHash and ContainsHash. The only difference left is the table: this
// filter has as many buckets as the capacity needs, the reference a power
// of two, which is why their bits/item differ.
package main

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/cuckoohash/cuckoo/filter"
)

// sampleSize is the reference's SAMPLE_SIZE: lookups a measured share.
const sampleSize = 1000 * 1000

// batch is the number of keys a ContainsHashBatch call looks up.
const batch = 1024

// multiplyShift is a 2-independent hash of 64-bit keys, the reference's
// TwoIndependentMultiplyShift.
type multiplyShift struct{ mHi, mLo, aHi, aLo uint64 }

func newMultiplyShift(r *rand.Rand) multiplyShift {
	return multiplyShift{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
}

// hash returns the high 64 bits of (a + m·k) mod 2^128.
func (h multiplyShift) hash(k uint64) uint64 {
	hi, lo := bits.Mul64(h.mLo, k)
	hi += h.mHi * k
	_, carry := bits.Add64(lo, h.aLo, 0)
	hi, _ = bits.Add64(hi, h.aHi, carry)
	return hi
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: refbench N")
		os.Exit(2)
	}
	n, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil || n < 1 || n > 1e10 {
		fmt.Fprintf(os.Stderr, "refbench: %q is not a number of keys\n", os.Args[1])
		os.Exit(2)
	}
	if err := run(uint64(n)); err != nil {
		fmt.Fprintln(os.Stderr, "refbench:", err)
		os.Exit(1)
	}
}

func run(n uint64) error {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	toAdd := make([]uint64, n)
	for i := range toAdd {
		toAdd[i] = r.Uint64()
	}
	toLookup := make([]uint64, sampleSize)
	for i := range toLookup {
		toLookup[i] = r.Uint64()
	}
	h := newMultiplyShift(r)

	f, err := filter.New(filter.Config{Capacity: n, FingerprintBits: 12, BucketSize: 4})
	if err != nil {
		return err
	}
	f.Reset() // touch the table's pages before timing, as the reference's constructor does
	start := time.Now()
	for _, k := range toAdd {
		if err := f.InsertHash(h.hash(k)); err != nil {
			return fmt.Errorf("the filter is too small to hold all of the elements: %w", err)
		}
	}
	addsPerNano := float64(n) / float64(time.Since(start).Nanoseconds())
	bitsPerItem := float64(8*f.SizeInBytes()) / float64(n)

	var finds, batchFinds []float64
	var fpr float64
	found := 0
	var hs [batch]uint64
	var out [batch]bool
	for _, p := range []float64{0, 0.25, 0.5, 0.75, 1} {
		mixed := mixIn(r, toLookup, toAdd, p)
		start := time.Now()
		for _, k := range mixed {
			if f.ContainsHash(h.hash(k)) {
				found++
			}
		}
		finds = append(finds, sampleSize/float64(time.Since(start).Nanoseconds()))
		if p == 0 {
			fpr = float64(found) / sampleSize
		}
		// The same lookups through ContainsHashBatch, which the reference
		// has no counterpart of: hash a batch, then probe it.
		batchFound := 0
		start = time.Now()
		for len(mixed) > 0 {
			ks := mixed[:min(batch, len(mixed))]
			for i, k := range ks {
				hs[i] = h.hash(k)
			}
			f.ContainsHashBatch(hs[:len(ks)], out[:len(ks)])
			for _, o := range out[:len(ks)] {
				if o {
					batchFound++
				}
			}
			mixed = mixed[len(ks):]
		}
		batchFinds = append(batchFinds, sampleSize/float64(time.Since(start).Nanoseconds()))
		if p == 1 && batchFound != sampleSize {
			return fmt.Errorf("ContainsHashBatch found %d of %d added keys", batchFound, sampleSize)
		}
	}
	fmt.Printf("%13s%12s%8s%8s%8s%8s%8s%9s%11s%11s%8s\n", "", "Million", "Find", "Find", "Find", "Find", "Find", "", "", "optimal", "wasted")
	fmt.Printf("%13s%12s%8s%8s%8s%8s%8s%9s%11s%11s%8s\n", "", "adds/sec", "0%", "25%", "50%", "75%", "100%", "ε", "bits/item", "bits/item", "space")
	fmt.Printf("%13s%12.2f", "Go cuckoo12", addsPerNano*1000)
	for _, x := range finds {
		fmt.Printf("%8.2f", x*1000)
	}
	minBits := math.Log2(1 / fpr)
	fmt.Printf("%7.3f%%%11.2f%11.2f%7.1f%%\n", 100*fpr, bitsPerItem, minBits, 100*(bitsPerItem/minBits-1))
	fmt.Printf("%13s%12s", "Go batch", "")
	for _, x := range batchFinds {
		fmt.Printf("%8.2f", x*1000)
	}
	fmt.Println()
	return nil
}

// mixIn returns sampleSize keys, a share p of them drawn from present and
// the rest from absent, shuffled (the reference's MixIn).
func mixIn(r *rand.Rand, absent, present []uint64, p float64) []uint64 {
	fromPresent := int(p * sampleSize)
	out := make([]uint64, 0, sampleSize)
	for range fromPresent {
		out = append(out, present[r.IntN(len(present))])
	}
	out = append(out, absent[:sampleSize-fromPresent]...)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
