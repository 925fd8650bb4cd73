package growing_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// BenchmarkLookup compares, in one run, lookups of absent keys in a growing
// filter grown from 1,000 keys and in the server's fixed-size lock-free
// filter built for the final count (4 slots of 12 bits), at 10^6 keys, one
// goroutine and all of them.
func BenchmarkLookup(b *testing.B) {
	const n = 1_000_000
	g, err := growing.New(growing.Config{InitialCapacity: 1000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	l, err := lockfree.New(filter.Config{Capacity: n, FingerprintBits: 12, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		k := binary.LittleEndian.AppendUint64(nil, uint64(i))
		if err := g.Insert(k); err != nil {
			b.Fatal(err)
		}
		if err := l.Insert(k); err != nil {
			b.Fatal(err)
		}
	}
	keys := absentKeys()
	for _, s := range []struct {
		name     string
		contains func([]byte) bool
		bytes    uint64
	}{{"growing", g.Contains, g.SizeInBytes()}, {"lockfree-fixed", l.Contains, l.SizeInBytes()}} {
		b.Run(fmt.Sprintf("%s/goroutines=1", s.name), func(b *testing.B) {
			lookups(b, s.contains, keys)
			b.ReportMetric(float64(8*s.bytes)/n, "bits/key")
		})
		b.Run(fmt.Sprintf("%s/goroutines=all", s.name), func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					s.contains(keys[i&(len(keys)-1)])
					i++
				}
			})
		})
	}
}

// absentKeys returns 2^16 keys no benchmark inserts.
func absentKeys() [][]byte {
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = binary.LittleEndian.AppendUint64([]byte("absent"), uint64(i))
	}
	return keys
}

// lookups looks keys up in turn, one a loop.
func lookups(b *testing.B, contains func([]byte) bool, keys [][]byte) {
	i := 0
	for b.Loop() {
		contains(keys[i&(len(keys)-1)])
		i++
	}
}

// BenchmarkLookupShapes compares, in one run, lookups of absent keys in
// filters reserved for n keys and holding them, of 4 slots of 16 bits and
// of 5 of 12: in the caches (10^5) and far beyond them (2·10^7, the
// server benchmark's reservation).
func BenchmarkLookupShapes(b *testing.B) {
	keys := absentKeys()
	for _, n := range []int{100_000, 20_000_000} {
		for _, slots := range []int{4, 5} {
			g, err := growing.New(growing.Config{InitialCapacity: uint64(n), BucketSize: slots, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if err := g.Insert(binary.LittleEndian.AppendUint64(nil, uint64(i))); err != nil {
					b.Fatal(err)
				}
			}
			b.Run(fmt.Sprintf("n=%d/slots=%d", n, slots), func(b *testing.B) {
				lookups(b, g.Contains, keys)
				b.ReportMetric(float64(8*g.SizeInBytes())/float64(n), "bits/key")
			})
		}
	}
}

// BenchmarkInsert grows a filter from 1,000 to 10^6 keys: ns per insert.
func BenchmarkInsert(b *testing.B) {
	for b.Loop() {
		g, err := growing.New(growing.Config{InitialCapacity: 1000, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 1_000_000 {
			if err := g.Insert(binary.LittleEndian.AppendUint64(nil, uint64(i))); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/insert")
}

// BenchmarkTouch compares inserting batches of 10 keys (a CF.INSERT) into
// a table far larger than the caches, as the server's 20-million-key
// reservation is, with and without Touch first; and the same for lookups.
func BenchmarkTouch(b *testing.B) {
	const capacity, batch = 20_000_000, 10
	for _, touch := range []bool{false, true} {
		f, err := growing.New(growing.Config{InitialCapacity: capacity, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		keys := make([][]byte, batch)
		next := uint64(0)
		fill := func() {
			for i := range keys {
				next++
				keys[i] = binary.LittleEndian.AppendUint64(keys[i][:0], next*0x9E3779B97F4A7C15)
			}
		}
		for range 5_000_000 / batch { // a quarter full, as after a while
			fill()
			for _, k := range keys {
				if err := f.Insert(k); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(fmt.Sprintf("insert/touch=%v", touch), func(b *testing.B) {
			for b.Loop() {
				fill()
				if touch {
					f.Touch(keys)
				}
				for _, k := range keys {
					if err := f.Insert(k); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/key")
		})
		b.Run(fmt.Sprintf("lookup/touch=%v", touch), func(b *testing.B) {
			found := 0
			for b.Loop() {
				fill()
				if touch {
					f.Touch(keys)
				}
				for _, k := range keys {
					if f.Contains(k) {
						found++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/key")
		})
	}
}
