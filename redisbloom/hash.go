package redisbloom

import (
	"encoding/binary"
	"math/bits"
)

// Hash is RedisBloom's hash of an item: MurmurHash64A (Austin Appleby's
// 64-bit MurmurHash2) with seed 0, reading the item's 8-byte blocks
// little-endian, as RedisBloom does on the little-endian machines it runs
// on. Every position, fingerprint and bucket follows from it.
func Hash(item []byte) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := uint64(len(item)) * m // seed 0
	for len(item) >= 8 {
		k := binary.LittleEndian.Uint64(item)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		item = item[8:]
	}
	if n := len(item); n > 0 {
		var tail uint64
		for i := n - 1; i >= 0; i-- {
			tail = tail<<8 | uint64(item[i])
		}
		h ^= tail
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// fingerprint is the one-byte fingerprint of hash h: 1..255, since 0
// marks an empty slot.
func fingerprint(h uint64) byte { return byte(h%255 + 1) }

// altIndex is the other bucket of fingerprint fp from index i (a hash or a
// bucket number), before it is reduced to a sub-filter's size. It is its
// own inverse: altIndex(fp, altIndex(fp, i)) == i.
func altIndex(fp byte, i uint64) uint64 { return i ^ uint64(fp)*0x5bd1e995 }

// nextPow2 is the least power of two at or above n; 0 for 0 and for n
// above 2^63, as RedisBloom's rounding gives.
func nextPow2(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	l := bits.Len64(n - 1)
	if l == 64 {
		return 0
	}
	return 1 << l
}
