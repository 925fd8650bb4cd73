package eval

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/FastFilter/xorfilter"
	"github.com/bits-and-blooms/bloom/v3"
)

// PeerFPRRow is a filter other than the cuckoo filter in the
// false-positive experiment: its space and measured rate.
type PeerFPRRow struct {
	Filter      string // PeerBloom, PeerCountingBloom, PeerFuse8, PeerFuse16
	BitsPerItem float64
	Measured    float64 // NaN for a computed row
	Computed    bool    // the counting Bloom filter's space is computed, not measured
}

// Peer filter names in PeerFPRRow.
const (
	PeerBloom         = "Bloom (bits-and-blooms/bloom/v3)"
	PeerCountingBloom = "counting Bloom, 4-bit counters (computed)"
	PeerFuse8         = "BinaryFuse8 (FastFilter/xorfilter, static)"
	PeerFuse16        = "BinaryFuse16 (FastFilter/xorfilter, static)"
)

// bloomKey is the 8-byte form of a key that the Bloom filter hashes.
func bloomKey(buf *[8]byte, k uint64) []byte {
	binary.LittleEndian.PutUint64(buf[:], k)
	return buf[:]
}

// newBloom returns a Bloom filter of the keys with bitsPerItem bits a key
// and the optimal number of hash functions, round(ln 2 · bitsPerItem).
func newBloom(keys []uint64, bitsPerItem float64) *bloom.BloomFilter {
	m := uint(math.Ceil(bitsPerItem * float64(len(keys))))
	bf := bloom.New(m, uint(max(1, math.Round(math.Ln2*bitsPerItem))))
	var buf [8]byte
	for _, key := range keys {
		bf.Add(bloomKey(&buf, key))
	}
	return bf
}

// PeerFPR measures, for each number of bits per item in bitsPerItem, a
// Bloom filter of n keys with that many bits and the optimal number of
// hash functions, and computes a counting Bloom filter's space for the
// Bloom filter's measured rate; then it measures the two static binary fuse
// filters, whose space is fixed by their fingerprint width.
func PeerFPR(n int, absent int, bitsPerItem []float64, seed uint64) ([]PeerFPRRow, error) {
	present := keys(n, seed)
	probe := keys(absent, seed+500)
	var rows []PeerFPRRow
	var buf [8]byte
	for _, bits := range bitsPerItem {
		bf := newBloom(present, bits)
		hits := 0
		for _, key := range probe {
			if bf.Test(bloomKey(&buf, key)) {
				hits++
			}
		}
		rate := float64(hits) / float64(absent)
		rows = append(rows, PeerFPRRow{Filter: PeerBloom, BitsPerItem: float64(bf.Cap()) / float64(n), Measured: rate})
		if rate > 0 {
			rows = append(rows, PeerFPRRow{Filter: PeerCountingBloom, BitsPerItem: CountingBloomBitsPerItem(rate), Measured: rate, Computed: true})
		}
	}
	f8, err := xorfilter.NewBinaryFuse[uint8](present)
	if err != nil {
		return nil, fmt.Errorf("BinaryFuse8: %w", err)
	}
	f16, err := xorfilter.NewBinaryFuse[uint16](present)
	if err != nil {
		return nil, fmt.Errorf("BinaryFuse16: %w", err)
	}
	for _, p := range []struct {
		name  string
		bits  float64
		check func(uint64) bool
	}{
		{PeerFuse8, float64(8*len(f8.Fingerprints)) / float64(n), f8.Contains},
		{PeerFuse16, float64(16*len(f16.Fingerprints)) / float64(n), f16.Contains},
	} {
		for _, key := range present {
			if !p.check(key) {
				return nil, fmt.Errorf("%s: a present key was not found", p.name)
			}
		}
		hits := 0
		for _, key := range probe {
			if p.check(key) {
				hits++
			}
		}
		rows = append(rows, PeerFPRRow{Filter: p.name, BitsPerItem: p.bits, Measured: float64(hits) / float64(absent)})
	}
	return rows, nil
}

// BloomAfterDeletes is what a Bloom filter answers in the delete
// experiment: it cannot delete, so every "deleted" key is still found.
func BloomAfterDeletes(n, absent int, bitsPerItem float64, seed uint64) (deletedFound, absentFound float64) {
	present := keys(n, seed)
	bf := newBloom(present, bitsPerItem)
	var buf [8]byte
	hits := 0
	for _, key := range present[:n/2] { // the half the cuckoo filter deleted
		if bf.Test(bloomKey(&buf, key)) {
			hits++
		}
	}
	deletedFound = float64(hits) / float64(n/2)
	hits = 0
	for _, key := range keys(absent, seed+900) {
		if bf.Test(bloomKey(&buf, key)) {
			hits++
		}
	}
	return deletedFound, float64(hits) / float64(absent)
}
