package cf

import (
	"fmt"
	"io"
	"testing"

	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/internal/tables"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// BenchmarkPersist times the three ways a filter leaves the server whole,
// for a growing table and a fixed lock-free stage filled to every bucket
// (FillForTest): a snapshot entry streamed to a writer (SAVE), a DUMP
// payload, and every chunk of CF.SCANDUMP; and the way back, RESTORE of
// that payload into a new filter. Each reads or writes every bucket through
// the tables' raw access, so it times that access per bucket. Beside ns/op
// it reports cpu-ns/op, the processor time an operation took (the process's
// user and system time): on a machine shared with other work that figure
// moves less from run to run.
func BenchmarkPersist(b *testing.B) {
	nop := func(_, _ uint64) error { return nil }
	for _, c := range []struct {
		name string
		p    Params
	}{
		{"table=growing", Params{Capacity: 4 << 20, BucketSize: 4, MaxIter: 20, Expansion: 1, Seed: 1}},
		{"table=lockfree", Params{Capacity: 4 << 20, BucketSize: 4, MaxIter: 20, Expansion: 0, Seed: 1}},
	} {
		f := new(Filter)
		if err := f.Init(c.p, nop); err != nil {
			b.Fatal(err)
		}
		if err := f.FillForTest(persistWords(b, c.p)); err != nil {
			b.Fatal(err)
		}
		size := int64(f.SizeBytes())
		b.Run(c.name+"/op=snapshot", func(b *testing.B) {
			b.SetBytes(size)
			var buf []byte
			start := cpuTime()
			for b.Loop() {
				var err error
				if buf, err = f.WriteSnapshot(io.Discard, buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
		b.Run(c.name+"/op=payload", func(b *testing.B) {
			b.SetBytes(size)
			start := cpuTime()
			for b.Loop() {
				f.DumpPayload()
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
		b.Run(c.name+"/op=restore", func(b *testing.B) {
			payload := f.DumpPayload()
			b.SetBytes(size)
			start := cpuTime()
			for b.Loop() {
				if err := new(Filter).LoadPayload(payload, nop, func(uint64) {}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
		b.Run(c.name+"/op=scandump", func(b *testing.B) {
			b.SetBytes(size)
			start := cpuTime()
			for b.Loop() {
				for iter := int64(0); ; {
					next, chunk := f.ScanDump(iter)
					if chunk == nil {
						break
					}
					iter = next
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// persistWords returns valid non-empty bucket words for p's table: the
// buckets of a small table of the same shape holding a few keys.
func persistWords(b *testing.B, p Params) []uint64 {
	var words []uint64
	if p.growingTable() {
		src, err := growing.New(growing.Config{InitialCapacity: 1000, BucketSize: p.Bucket(), Seed: 2})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 900 {
			if err := src.InsertString(fmt.Sprint(i)); err != nil {
				b.Fatal(err)
			}
		}
		t := tables.OfGrowing(src)
		for j := range t.Buckets() {
			if w := t.BucketBits(j); w != 0 {
				words = append(words, w)
			}
		}
		return words
	}
	src, err := lockfree.New(p.stageConfig(0))
	if err != nil {
		b.Fatal(err)
	}
	for i := range 900 {
		if err := src.InsertString(fmt.Sprint(i)); err != nil {
			b.Fatal(err)
		}
	}
	t := tables.OfLockfree(src)
	for j := range t.Buckets() {
		if w := t.BucketBits(j); w != 0 {
			words = append(words, w)
		}
	}
	return words
}
