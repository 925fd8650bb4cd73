package keyspace

import (
	"math/bits"
	"unsafe"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// MemoryUsage is MEMORY USAGE of c under key: for RedisBloom's layout what
// Redis 7 reports for RedisBloom's value (redisUsage), for this server's the
// filter's size and what the key takes besides (keyOverhead).
func (c *Entry) MemoryUsage(key string) uint64 {
	if c.Filter.Params().Layout == cf.LayoutRedisBloom {
		return redisUsage(key, uint64(c.Filter.Info()[0].Value))
	}
	return c.SizeBytes() + keyOverhead(key, c)
}

// keyOverhead is what a key takes besides its filter's SizeInBytes (which
// counts the tables, their marks and the filters' own structs, so they are
// not counted here again): its name (string header and bytes), the cuckoo
// struct, the list's pointer to each stage, and the key space's entry (a
// pointer to an entry holding the key and the value's pointer).
func keyOverhead(key string, c *Entry) uint64 {
	str := uint64(unsafe.Sizeof(key))
	return uint64(len(key)) + str + uint64(unsafe.Sizeof(*c)) + 8 + str + 8 + c.StagePointers()
}

// redisUsage is Redis 7's MEMORY USAGE of a module value whose mem_usage is
// size, under key: size, the key's sds as jemalloc allocates it, and a dict
// entry of 24 bytes.
func redisUsage(key string, size uint64) uint64 {
	n := uint64(len(key))
	var hdr uint64 // sds header by length: sdshdr5, 8, 16, 32, 64
	switch {
	case n < 1<<5:
		hdr = 1
	case n < 1<<8:
		hdr = 3
	case n < 1<<16:
		hdr = 5
	case n < 1<<32:
		hdr = 9
	default:
		hdr = 17
	}
	return size + jemallocSize(hdr+n+1) + 24
}

// jemallocSize is the size class jemalloc (x86-64, 16-byte quantum) gives
// an allocation of n bytes: 8, then multiples of 16 up to 128, then four
// classes to each doubling.
func jemallocSize(n uint64) uint64 {
	if n <= 8 {
		return 8
	}
	if n <= 128 {
		return (n + 15) &^ 15
	}
	step := uint64(1) << (bits.Len64(n-1) - 3)
	return (n + step - 1) &^ (step - 1)
}
