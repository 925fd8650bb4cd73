package redisbloom_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
)

// TestRealBytes checks the bytes RedisBloom 2.6.28 (in Redis 7.0.15) gave
// after CF.RESERVE k 1000, CF.ADD k foo, CF.ADD k bar: its header, and its
// one data chunk of 1,024 slots with "foo" and "bar" at 514 and 764.
func TestRealBytes(t *testing.T) {
	f, err := redisbloom.New(redisbloom.Params{Capacity: 1000, BucketSize: 2, MaxIterations: 20, Expansion: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range []string{"foo", "bar"} {
		if err := f.Add([]byte(it)); err != nil {
			t.Fatal(err)
		}
	}
	next, header := f.DumpChunk(0)
	want, _ := hex.DecodeString("0200000000000000" + "0002000000000000" + "0000000000000000" + "0100000000000000" + "0200" + "1400" + "0100")
	if next != 1 || !bytes.Equal(header, want) {
		t.Fatalf("header: iterator %d, %x; want 1, %x", next, header, want)
	}
	next, chunk := f.DumpChunk(next)
	if next != 1025 || len(chunk) != 1024 {
		t.Fatalf("data chunk: iterator %d, %d bytes; want 1025, 1024", next, len(chunk))
	}
	var nonzero []int
	for i, b := range chunk {
		if b != 0 {
			nonzero = append(nonzero, i)
		}
	}
	if len(nonzero) != 2 || nonzero[0] != 514 || nonzero[1] != 764 {
		t.Fatalf("non-zero slots %v, want [514 764]", nonzero)
	}
	if next, chunk := f.DumpChunk(next); next != 0 || chunk != nil {
		t.Fatalf("after the last chunk: %d, %x", next, chunk)
	}
}
