package rdb_test

import (
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

// crc64Model is Redis's CRC-64 one bit at a time, from its definition:
// reflected, polynomial 0xad93d23594c935a9 (0x95ac9329ac4bc9b5 reversed),
// initial value 0, no final xor.
func crc64Model(crc uint64, p []byte) uint64 {
	for _, b := range p {
		crc ^= uint64(b)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x95ac9329ac4bc9b5
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

func TestCRC64(t *testing.T) {
	// The check value: the CRC of "123456789" with these parameters.
	if got := rdb.CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Errorf("CRC64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	if got := rdb.CRC64(0, nil); got != 0 {
		t.Errorf("CRC64 of nothing = %#x, want 0", got)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	// Lengths on both sides of hash/crc64's 64- and 2048-byte paths.
	for _, n := range []int{1, 7, 63, 64, 65, 2047, 2048, 5000} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		want := crc64Model(0, p)
		if got := rdb.CRC64(0, p); got != want {
			t.Errorf("n=%d: CRC64 = %#x, model %#x", n, got, want)
		}
		// Continuing from a prefix's CRC is the CRC of the whole.
		cut := n / 3
		if got := rdb.CRC64(rdb.CRC64(0, p[:cut]), p[cut:]); got != want {
			t.Errorf("n=%d: CRC64 continued at %d = %#x, want %#x", n, cut, got, want)
		}
	}
}
