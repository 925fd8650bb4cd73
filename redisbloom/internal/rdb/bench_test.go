package rdb_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

// benchTable is a 16 MiB filter table of one of the two shapes payloads
// carry: mostly zeros (a sparse filter: 1 byte in 64 set) or random bytes
// (a full one).
func benchTable(shape string) []byte {
	rng := rand.New(rand.NewPCG(7, 8))
	b := make([]byte, 16<<20)
	for i := range b {
		if shape == "random" || rng.IntN(64) == 0 {
			b[i] = byte(1 + rng.IntN(255))
		}
	}
	return b
}

// BenchmarkLZF compresses and decompresses a 16 MiB table, with Redis's
// bar (4 bytes saved); a random table does not compress, and the benchmark
// measures how long finding that out takes.
func BenchmarkLZF(b *testing.B) {
	for _, shape := range []string{"mostly-zero", "random"} {
		src := benchTable(shape)
		comp, ok := rdb.AppendLZF(nil, src, len(src)-4)
		b.Run(fmt.Sprintf("op=compress/data=%s", shape), func(b *testing.B) {
			dst := make([]byte, 0, len(src))
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				rdb.AppendLZF(dst, src, len(src)-4)
			}
			if ok {
				b.ReportMetric(float64(len(comp))/float64(len(src)), "ratio")
			}
		})
		if !ok {
			continue
		}
		b.Run(fmt.Sprintf("op=decompress/data=%s", shape), func(b *testing.B) {
			out := make([]byte, len(src))
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if err := rdb.DecompressLZF(out, comp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
