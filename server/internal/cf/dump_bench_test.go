package cf

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// BenchmarkScanDump dumps a whole filter, header and every chunk, as
// CF.SCANDUMP's callers do, at two sizes four times apart: the time per
// byte stays flat (each call reads only its chunk), where copying the filter
// on every call made a full dump quadratic (issue 12: 0.79 s at 42 MB, 8.0 s
// at 168 MB).
func BenchmarkScanDump(b *testing.B) {
	for _, capacity := range []uint64{20_000_000, 80_000_000} {
		p := Params{Capacity: capacity, BucketSize: 4, MaxIter: 20, Expansion: 0, Seed: 1} // one fixed stage
		c := new(Filter)
		if err := c.Init(p, func(_, _ uint64) error { return nil }); err != nil {
			b.Fatal(err)
		}
		st := c.list()[0]
		var key [8]byte
		for i := range capacity * 9 / 10 {
			binary.LittleEndian.PutUint64(key[:], i)
			if err := st.Insert(key[:]); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("filter=%dMB", st.SizeInBytes()>>20), func(b *testing.B) {
			b.SetBytes(int64(st.SizeInBytes()))
			start := cpuTime()
			for range b.N {
				chunks := 0
				for iter := int64(0); ; chunks++ {
					next, chunk := c.ScanDump(iter)
					if chunk == nil {
						break
					}
					iter = next
				}
				b.ReportMetric(float64(chunks), "chunks")
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
