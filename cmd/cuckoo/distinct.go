package main

// Build stores every distinct key of its input exactly once. It cannot ask
// the filter whether a key is new: a key that is only a false positive of
// another would be skipped, and deleting it later (it was in the input, so a
// user deletes it) would remove the other key's fingerprint, a kept key that
// then answers absent (issue 24). Instead build tells keys apart by a 128-bit
// identity of each, sorts the identities and drops the equal ones.
//
// Memory and time. Build holds 16 bytes for every key it reads, repeats
// included, but not the keys. When the input's size is known (a file) it
// makes room for them at once (reserve): 18 to 21 bytes a key with the slack.
// From a pipe the bins grow by copying, which allocates about 50 bytes a key
// in all (the garbage is collected as it goes) for 21 live at the end. A Go
// map of the same identities (a swiss-table slot is 16 bytes and a control
// byte, at most 7/8 full, and a growing map leaves its old tables behind)
// held 56 bytes a key and took 4 to 8 times as long (BenchmarkDistinct, a
// million URLs: 190 ns a key with reserve, 370 without, 1,600 for the map).
//
// Collisions. Two distinct keys that share an identity are stored once, and
// deleting one would remove the other: the failure this file exists to
// prevent. With b-bit identities, n distinct keys collide somewhere with
// probability about n²/2^(b+1). At n = 10^9 that is 2.7% for b = 64, too much,
// and 1.5e-21 for b = 128, negligible; hence two independent 64-bit hashes.

import (
	"cmp"
	"hash/maphash"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cuckoohash/cuckoo/internal/hashing"
)

// keyID identifies a key. h is the filter's own hash of it (hashing.Key with
// the build's seed, what InsertHash takes); m is maphash's, with a seed drawn
// for the run: a different algorithm with a secret seed, so that it is
// independent of h, and input crafted to collide XXH3 does not collide both.
type keyID struct{ m, h uint64 }

func compareIDs(a, b keyID) int {
	if c := cmp.Compare(a.m, b.m); c != 0 {
		return c
	}
	return cmp.Compare(a.h, b.h)
}

// binBits is log2 of the number of bins the identities are spread over by the
// top bits of m. Each bin is sorted on its own: a bin of a million-key input
// is a thousand identities, 16 KB, sorted in cache, and the bins are sorted in
// parallel.
const binBits = 10

// distinctKeys collects the identities of the keys read and drops repeats.
// Its zero value is not usable; call newDistinctKeys.
type distinctKeys struct {
	seed   uint64 // the filter's hash seed
	mseed  maphash.Seed
	bins   [][]keyID // bins[i] holds the identities whose m has top bits i
	read   uint64    // keys added, repeats included
	sorted bool
}

func newDistinctKeys(seed uint64) *distinctKeys {
	return &distinctKeys{seed: seed, mseed: maphash.MakeSeed(), bins: make([][]keyID, 1<<binBits)}
}

// add records key, read from the input.
func (d *distinctKeys) add(key []byte) {
	d.addID(keyID{m: maphash.Bytes(d.mseed, key), h: hashing.Key(key, d.seed)})
}

// addID records a key by its identity.
func (d *distinctKeys) addID(id keyID) {
	i := id.m >> (64 - binBits)
	d.bins[i] = append(d.bins[i], id)
	d.read++
}

// reserve makes room for n keys in all, spread over the bins as their top
// bits spread them (each bin gets n/2^binBits, give or take its square root),
// so that a build whose input size is known does not grow the bins by
// copying, which leaves up to as much garbage again as the bins hold.
func (d *distinctKeys) reserve(n uint64) {
	mean := float64(n) / (1 << binBits)
	per := int(mean + 4*math.Sqrt(mean) + 16)
	for i, b := range d.bins {
		if cap(b) < per {
			d.bins[i] = slices.Grow(b, per-len(b))
		}
	}
}

// sort sorts each bin and drops its repeated identities, and returns the
// number of distinct keys. add may not be called after it.
func (d *distinctKeys) sort() uint64 {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(d.bins)) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(d.bins)); i = next.Add(1) - 1 {
				slices.SortFunc(d.bins[i], compareIDs)
				d.bins[i] = slices.Compact(d.bins[i])
			}
		})
	}
	wg.Wait()
	d.sorted = true
	var n uint64
	for _, b := range d.bins {
		n += uint64(len(b))
	}
	return n
}

// each calls insert with the filter hash of every distinct key, in the order
// of m, which is random with respect to the buckets (the order the filter's
// capacity promise is tested in), and stops at its first error. Each bin is
// released once inserted. It must follow sort.
func (d *distinctKeys) each(insert func(h uint64) error) error {
	if !d.sorted {
		panic("cuckoo: distinctKeys.each before sort")
	}
	for i, bin := range d.bins {
		for _, id := range bin {
			if err := insert(id.h); err != nil {
				return err
			}
		}
		d.bins[i] = nil
	}
	return nil
}
