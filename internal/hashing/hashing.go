// Package hashing derives a cuckoo filter's bucket indexes and fingerprints
// from one seeded 64-bit hash of a key. The filter and the lock-free filter
// share it, so a table built by one is read correctly by the other.
//
// A key's hash h is split into two independent halves: the high 32 bits pick
// the primary bucket and the low 32 bits pick the fingerprint. Correlated
// index and fingerprint bits make many keys share both bucket and
// fingerprint, which fills bucket pairs early and fails inserts at low load.
//
// The alternate bucket is alt(i, fp) = (offset(fp) - i) mod m. It depends only
// on the bucket and the fingerprint (partial-key cuckoo hashing), it is an
// involution for every m, so the table need not be a power of two:
//
//	alt(alt(i, fp), fp) = offset(fp) - (offset(fp) - i) = i   (mod m)
//
// Alt takes offset(fp) from fp times the golden ratio. For a small range of
// fingerprints (a few hundred values) those offsets form a near-arithmetic
// progression mod m, which ties the buckets' alternates together and makes
// the load a table reaches depend on m. AltMixed takes the offset from a
// well-mixed hash of fp instead; the ranked tables, whose fingerprints
// range over as few as 264 values, use it. Plain and semi-sorted tables keep
// Alt: their saved files depend on it.
package hashing

import (
	"math/bits"

	"github.com/zeebo/xxh3"
)

// MaxBuckets is the largest table the index derivation supports: the primary
// index is taken from 32 bits of the hash, so that the other 32 stay
// independent for the fingerprint.
const MaxBuckets = 1 << 32

// Key returns the seeded hash of key. It is XXH3-64, whose output is fixed by
// its specification, so filters saved on one machine load on any other.
func Key(key []byte, seed uint64) uint64 { return xxh3.HashSeed(key, seed) }

// String is Key for a string, without converting it to a byte slice.
func String(key string, seed uint64) uint64 { return xxh3.HashStringSeed(key, seed) }

// Index returns the primary bucket of hash h in a table of m buckets,
// 1 <= m <= MaxBuckets. It maps the high 32 bits onto [0, m) by
// multiplication rather than modulo (Lemire's fast range reduction).
func Index(h uint64, m uint64) uint64 { return (h >> 32) * m >> 32 }

// Fingerprint returns the bits-wide fingerprint of hash h, 1 <= bits <= 32.
// It is never 0, the empty-slot marker: the low 32 bits are mapped uniformly
// onto [1, 2^bits-1] (not by adding 1 to a zero tag, which would make 1 twice
// as likely as any other value and raise the false-positive rate).
func Fingerprint(h uint64, bits uint) uint32 { return FingerprintMasked(h, 1<<bits-1) }

// FingerprintMasked is Fingerprint for a precomputed mask = 2^bits - 1, which
// spares the lookup path the variable shift.
func FingerprintMasked(h uint64, mask uint64) uint32 {
	return uint32(uint64(uint32(h))*mask>>32) + 1
}

// Alt returns the other bucket of fingerprint fp stored in bucket i of a table
// of m buckets. Alt(Alt(i, fp, m), fp, m) == i for every i < m. For about one
// fingerprint in m the two buckets coincide; such a fingerprint has b slots
// rather than 2b.
func Alt(i uint64, fp uint32, m uint64) uint64 {
	return reflect(i, uint64(fp)*0x9e3779b97f4a7c15, m)
}

// reflect returns (offset - i) mod m for offset = x·m / 2^64, the involution
// both alternates share.
func reflect(i, x, m uint64) uint64 {
	offset, _ := bits.Mul64(x, m)
	// offset - i, plus m if negative, without a branch: the sign is a coin
	// toss, and a mispredicted branch here would cost more than the lookup.
	d := int64(offset - i)
	return uint64(d + int64(m)&(d>>63))
}

// AltMixed is Alt with the offset taken from a mixed hash of fp (the
// splitmix64 finalizer's multiply-xorshift rounds) rather than fp times the
// golden ratio. For fingerprints of a few hundred values, the first insert
// that needed the victim slot came at a load of 0.970-0.973 with AltMixed at
// every m tried, against 0.936-0.955 with Alt, depending on m. It is an
// involution for every m, as Alt is.
func AltMixed(i uint64, fp uint32, m uint64) uint64 {
	x := uint64(fp) * 0xbf58476d1ce4e5b9
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return reflect(i, x, m)
}
