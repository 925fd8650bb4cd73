package lockfree_test

import (
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// BenchmarkRate measures what a requested false-positive rate costs in one
// goroutine. New keeps the default 4 slots a bucket down to rate 2^-9 and
// takes 2 below it (doc.go, "Bucket sizes"); the sub-benchmarks are named
// rate=/layout=bxf/op=:
//
//	go test -run '^$' -bench Rate -count 3 ./lockfree
//
// op=contains looks up keys in a filter of Capacity 1e6 filled to
// Capacity, present and absent keys in turn, and reports the measured
// false-positive rate of the absent ones (fpr) and the memory over Capacity
// (bits/item). op=insert inserts into empty filters of Capacity 1e5 until
// each holds Capacity keys.
func BenchmarkRate(b *testing.B) {
	for _, rate := range []float64{0.01, 0.002, 0.001, 0.0001} {
		cfg := filter.Config{Capacity: 1e6, FalsePositiveRate: rate, Seed: 1}
		lay, err := lockfree.New(filter.Config{Capacity: 1, FalsePositiveRate: rate})
		if err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("rate=%v/layout=%dx%d", rate, lay.BucketSize(), lay.FingerprintBits())
		b.Run(name+"/op=contains", func(b *testing.B) { benchRateContains(b, cfg) })
		cfg.Capacity = 1e5
		b.Run(name+"/op=insert", func(b *testing.B) { benchRateInsert(b, cfg) })
	}
}

func benchRateContains(b *testing.B, cfg filter.Config) {
	f, err := lockfree.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	present := flatKeys(int(cfg.Capacity), 7)
	for _, k := range present {
		if err := f.Insert(k); err != nil {
			b.Fatal(err)
		}
	}
	absent := flatKeys(int(cfg.Capacity), 8)
	b.ReportAllocs()
	hits, falses, lookups, next := 0, 0, 0, 0
	for b.Loop() {
		// Alternate a present and an absent key, each walked in order.
		if lookups&1 == 0 {
			if f.Contains(present[next]) {
				hits++
			}
		} else {
			if f.Contains(absent[next]) {
				falses++
			}
			if next++; next == len(absent) {
				next = 0
			}
		}
		lookups++
	}
	reportOps(b, b.N)
	if hits != (lookups+1)/2 {
		b.Fatalf("%d of %d present keys found", hits, (lookups+1)/2)
	}
	if n := lookups / 2; n > 0 {
		b.ReportMetric(float64(falses)/float64(n), "fpr")
	}
	b.ReportMetric(float64(8*f.SizeInBytes())/float64(cfg.Capacity), "bits/item")
}

func benchRateInsert(b *testing.B, cfg filter.Config) {
	ks := flatKeys(int(cfg.Capacity), 9)
	b.ReportAllocs()
	b.StopTimer()
	for done := 0; done < b.N; {
		f, err := lockfree.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		round := min(len(ks), b.N-done)
		b.StartTimer()
		for _, k := range ks[:round] {
			if err := f.Insert(k); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		done += round
	}
	reportOps(b, b.N)
}
