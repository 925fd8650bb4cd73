package modeltest

import "github.com/cuckoohash/cuckoo/filter"

// MaxFuzzOps bounds the operations one fuzz input runs, so that every input
// is quick.
const MaxFuzzOps = 512

// FuzzConfig decodes the first four bytes of a fuzz input into a small
// filter's configuration, and returns byte 0 for the caller's own flags
// (bits 2-5 and 7) and the rest of the input:
//
//	byte 0: bits 0-1 bucket size (2, 4, 8, 8); bit 6 a small MaxKicks
//	byte 1: fingerprint bits, 4 up to maxBits(bucket size)
//	byte 2: capacity 1..64
//	byte 3: seed, and MaxKicks 1..8 when bit 6 of byte 0 is set
func FuzzConfig(data []byte, maxBits func(bucketSize int) int) (cfg filter.Config, flags byte, rest []byte) {
	var h [4]byte
	copy(h[:], data)
	b := [4]int{2, 4, 8, 8}[h[0]&3]
	cfg = filter.Config{
		BucketSize:      b,
		FingerprintBits: 4 + int(h[1])%(maxBits(b)-3),
		Capacity:        1 + uint64(h[2])%64,
		Seed:            uint64(h[3]) * 0x9e3779b97f4a7c15,
	}
	if h[0]&0x40 != 0 {
		cfg.MaxKicks = 1 + int(h[3])%8
	}
	return cfg, h[0], data[min(len(data), 4):]
}

// FillAndDrain returns a fuzz seed: the configuration header, then inserts
// of n distinct keys, enough to fill a small filter to ErrFull, then their
// deletes.
func FillAndDrain(header [4]byte, n int) []byte {
	seed := header[:]
	for i := range n {
		seed = append(seed, OpInsert, byte(i))
	}
	for i := range n {
		seed = append(seed, OpDelete, byte(i))
	}
	return seed
}
