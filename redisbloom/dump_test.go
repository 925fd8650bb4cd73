package redisbloom_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
)

// dumpAll returns every chunk DumpChunk gives, with the iterators that
// load them.
func dumpAll(t *testing.T, f *redisbloom.Filter) (iters []int64, chunks [][]byte) {
	t.Helper()
	for iter := int64(0); ; {
		next, chunk := f.DumpChunk(iter)
		if next == 0 {
			return iters, chunks
		}
		iters, chunks = append(iters, next), append(chunks, chunk)
		iter = next
	}
}

func filled(t *testing.T, p redisbloom.Params, n int) *redisbloom.Filter {
	t.Helper()
	f, err := redisbloom.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := f.Add(fmt.Appendf(nil, "item:%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestDumpRoundTrip moves filters of several shapes through their chunks
// into new filters, which must give the same chunks and answers.
func TestDumpRoundTrip(t *testing.T) {
	for _, p := range []redisbloom.Params{
		{Capacity: 1000, BucketSize: 2, MaxIterations: 20, Expansion: 1},
		{Capacity: 100, BucketSize: 4, MaxIterations: 20, Expansion: 2},
		{Capacity: 10, BucketSize: 1, MaxIterations: 5, Expansion: 4},
		{Capacity: 600, BucketSize: 255, MaxIterations: 1, Expansion: 0},
	} {
		t.Run(fmt.Sprintf("bucket=%d/expansion=%d", p.BucketSize, p.Expansion), func(t *testing.T) {
			f := filled(t, p, 500)
			iters, chunks := dumpAll(t, f)
			g, err := redisbloom.Load(chunks[0], nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(chunks); i++ {
				if err := g.LoadChunk(iters[i], chunks[i]); err != nil {
					t.Fatalf("chunk %d: %v", i, err)
				}
			}
			_, again := dumpAll(t, g)
			if len(again) != len(chunks) {
				t.Fatalf("%d chunks, %d after the load", len(chunks), len(again))
			}
			for i := range chunks {
				if !bytes.Equal(chunks[i], again[i]) {
					t.Fatalf("chunk %d differs after the load", i)
				}
			}
			if f.Info() != g.Info() {
				t.Fatalf("figures %+v, after the load %+v", f.Info(), g.Info())
			}
			for i := range 2000 {
				it := fmt.Appendf(nil, "item:%d", i)
				if f.Contains(it) != g.Contains(it) || f.Count(it) != g.Count(it) {
					t.Fatalf("%s answered differently after the load", it)
				}
			}
		})
	}
}

// TestEmptyDump: a filter with no items dumps as [0, nil] at once, as
// RedisBloom's does.
func TestEmptyDump(t *testing.T) {
	f := filled(t, redisbloom.Params{Capacity: 100, BucketSize: 2, MaxIterations: 20, Expansion: 1}, 0)
	if next, chunk := f.DumpChunk(0); next != 0 || chunk != nil {
		t.Fatalf("an empty filter dumps %d, %x", next, chunk)
	}
}

// TestBigSubFilterChunks: a sub-filter over 16 MiB goes in 16 MiB pieces.
func TestBigSubFilterChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 32 MiB")
	}
	f := filled(t, redisbloom.Params{Capacity: 32 << 20, BucketSize: 1, MaxIterations: 20, Expansion: 1}, 10)
	iters, chunks := dumpAll(t, f)
	if len(chunks) != 3 || len(chunks[1]) != redisbloom.MaxChunk || len(chunks[2]) != redisbloom.MaxChunk ||
		iters[1] != 1+redisbloom.MaxChunk || iters[2] != 1+2*redisbloom.MaxChunk {
		t.Fatalf("iterators %v, chunk sizes %d %d", iters, len(chunks[1]), len(chunks[2]))
	}
}

func header(items, buckets, deletes, filters uint64, bucketSize, maxIter, expansion uint16) []byte {
	return redisbloom.Header{Items: items, Buckets: buckets, Deletes: deletes, Filters: filters,
		BucketSize: bucketSize, MaxIterations: maxIter, Expansion: expansion}.AppendBinary(nil)
}

// TestLoadRefuses checks every header RedisBloom refuses, and that a
// header asking for more than the Reserve allows allocates nothing.
func TestLoadRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		header []byte
		want   error
	}{
		{"short", make([]byte, 37), redisbloom.ErrHeader},
		{"long", make([]byte, 39), redisbloom.ErrHeader},
		{"2.2.0 header", make([]byte, 46), redisbloom.ErrOldHeader},
		{"bucket size 0", header(1, 8, 0, 1, 0, 20, 1), redisbloom.ErrBadFilter},
		{"bucket size 256", header(1, 8, 0, 1, 256, 20, 1), redisbloom.ErrBadFilter},
		{"no buckets", header(1, 0, 0, 1, 2, 20, 1), redisbloom.ErrBadFilter},
		{"2^56 buckets", header(1, 1<<56, 0, 1, 2, 20, 1), redisbloom.ErrBadFilter},
		{"buckets not a power of two", header(1, 12, 0, 1, 2, 20, 1), redisbloom.ErrBadFilter},
		{"no filters", header(1, 8, 0, 0, 2, 20, 1), redisbloom.ErrBadFilter},
		{"65536 filters, cut to 0", header(1, 8, 0, 1<<16, 2, 20, 1), redisbloom.ErrBadFilter},
		{"no iterations", header(1, 8, 0, 1, 2, 0, 1), redisbloom.ErrBadFilter},
		{"expansion 0 with two filters", header(1, 8, 0, 2, 2, 20, 0), redisbloom.ErrBadFilter},
		{"sub-filter past 2^56 buckets", header(1, 1<<40, 0, 3, 2, 20, 1<<15), redisbloom.ErrBadFilter},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := redisbloom.Load(c.header, nil); !errors.Is(err, c.want) {
				t.Fatalf("Load: %v, want %v", err, c.want)
			}
		})
	}
	t.Run("more than DefaultMaxBytes", func(t *testing.T) {
		if _, err := redisbloom.Load(header(1, 1<<40, 0, 1, 2, 20, 1), nil); err == nil {
			t.Fatal("a 2 TiB filter loaded")
		}
	})
	t.Run("refused by Reserve", func(t *testing.T) {
		refused := errors.New("OOM")
		var asked uint64
		_, err := redisbloom.Load(header(1, 1<<20, 0, 3, 4, 20, 2), func(n uint64) error { asked = n; return refused })
		if !errors.Is(err, refused) || asked != (1+2+4)<<20*4 {
			t.Fatalf("Load: %v after asking for %d bytes", err, asked)
		}
	})
}

// TestLoadChunkRefuses checks the chunks RedisBloom refuses.
func TestLoadChunkRefuses(t *testing.T) {
	f, err := redisbloom.Load(header(1, 512, 0, 2, 2, 20, 2), nil) // 1,024 + 2,048 slots
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		iter int64
		data []byte
	}{
		{"empty", 1025, nil},
		{"iterator 0", 0, []byte{1}},
		{"negative", -5, []byte{1}},
		{"ends before its start", 3, make([]byte, 4)},
		{"spans two sub-filters", 1 + 1024 + 8, make([]byte, 16)},
		{"past the end", 1 + 3072 + 5000, make([]byte, 10)},
	} {
		if err := f.LoadChunk(c.iter, c.data); !errors.Is(err, redisbloom.ErrBadChunk) {
			t.Errorf("%s: %v, want %v", c.name, err, redisbloom.ErrBadChunk)
		}
	}
	// In range: the second sub-filter's first 8 slots.
	if err := f.LoadChunk(1+1024+8, bytes.Repeat([]byte{7}, 8)); err != nil {
		t.Fatal(err)
	}
}

// FuzzLoad loads any header and chunks: never a panic, never more than
// the Reserve allows.
func FuzzLoad(f *testing.F) {
	f.Add(header(2, 512, 0, 1, 2, 20, 1), int64(1025), []byte{1, 2, 3})
	f.Add(header(0, 1, 0, 3, 1, 1, 2), int64(2), []byte{9})
	f.Fuzz(func(t *testing.T, h []byte, iter int64, chunk []byte) {
		const limit = 1 << 20
		g, err := redisbloom.Load(h, func(n uint64) error {
			if n > limit {
				return errors.New("too big")
			}
			return nil
		})
		if err != nil {
			return
		}
		if g.Bytes() > limit {
			t.Fatalf("a filter of %d bytes loaded past the limit", g.Bytes())
		}
		_ = g.LoadChunk(iter, chunk)
		g.Contains(chunk)
		g.Count(chunk)
		_ = g.Add(chunk)
		g.Delete(chunk)
		g.Compact()
		for it := int64(0); ; {
			next, _ := g.DumpChunk(it)
			if next == 0 {
				break
			}
			it = next
		}
	})
}
