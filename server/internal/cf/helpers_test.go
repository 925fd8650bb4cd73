package cf_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/server/internal/cf"
	fld "github.com/cuckoohash/cuckoo/server/internal/fields"
)

// free is a Charger that takes every charge, as log replay's does.
func free(_, _ uint64) error { return nil }

// errRefused is a meter's refusal, as the key space's ERR of --maxmemory.
var errRefused = errors.New("OOM command not allowed when used memory > 'maxmemory'")

// meter is the key space's memory account as the filter sees it: it takes
// charges up to limit, counts what is released, and records each charge's
// have (the bytes the filter said it held) so tests can check it.
type meter struct {
	mem, limit int64
	charges    int
	haves      []uint64
}

func newMeter(limit int64) *meter { return &meter{limit: limit} }

func (m *meter) charge(have, n uint64) error {
	if m.mem > m.limit || n > uint64(m.limit-m.mem) { // in uint64: a forged size may pass 2^63
		return errRefused
	}
	m.mem += int64(n)
	m.charges++
	m.haves = append(m.haves, have)
	return nil
}

func (m *meter) release(n uint64) { m.mem -= int64(n) }

// item is the i-th test item.
func item(i int) []byte { return fmt.Appendf(nil, "item-%d", i) }

// shape is a kind of filter a key can hold, by the parameters that make it.
type shape struct {
	name string
	p    cf.Params
}

// shapes are the filters Init makes: growing tables of 2, 4 and 5 slots,
// fixed ones (a 5-slot growing table kept at its size, lock-free stages of
// 2 and 4 slots), and RedisBloom's layout.
var shapes = []shape{
	{"growing/b=2", cf.Params{Capacity: 200, BucketSize: 2, MaxIter: 20, Expansion: 1, Seed: 7, Slots: 2}},
	{"growing/b=4", cf.Params{Capacity: 200, BucketSize: 4, MaxIter: 20, Expansion: 1, Seed: 7, Slots: 4}},
	{"growing/b=5", cf.Params{Capacity: 200, BucketSize: 8, MaxIter: 20, Expansion: 2, Seed: 7, Slots: 5}},
	{"fixed/b=5", cf.Params{Capacity: 2000, BucketSize: 5, MaxIter: 20, Expansion: 0, Seed: 7, Slots: 5}},
	{"fixed/b=2", cf.Params{Capacity: 2000, BucketSize: 2, MaxIter: 20, Expansion: 0, Seed: 7, Slots: 2}},
	{"fixed/b=4", cf.Params{Capacity: 2000, BucketSize: 4, MaxIter: 20, Expansion: 0, Seed: 7, Slots: 4}},
	{"redisbloom", cf.Params{Capacity: 200, BucketSize: 2, MaxIter: 20, Expansion: 1, Layout: cf.LayoutRedisBloom}},
}

// newFilter returns a filter of p, charged to nothing.
func newFilter(t testing.TB, p cf.Params) *cf.Filter {
	t.Helper()
	f := new(cf.Filter)
	if err := f.Init(p, free); err != nil {
		t.Fatalf("Init(%+v): %v", p, err)
	}
	return f
}

// addItems adds items [from, to) to f, failing the test on any error.
func addItems(t testing.TB, f *cf.Filter, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if ok, err := f.Add(item(i), false, false, free); !ok || err != nil {
			t.Fatalf("Add(%s): %v, %v", item(i), ok, err)
		}
	}
}

// checkFound fails the test if any of items [from, to) is absent from f.
func checkFound(t testing.TB, f *cf.Filter, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if !f.Exists(item(i)) {
			t.Fatalf("%s is absent: a false negative", item(i))
		}
	}
}

// scanDump returns f's chunks, header first, with the iterator CF.SCANDUMP
// answered each with, as a client collects them.
func scanDump(f *cf.Filter) (chunks [][]byte, iters []int64) {
	for iter := int64(0); ; {
		next, chunk := f.ScanDump(iter)
		if chunk == nil {
			if next != 0 {
				panic(fmt.Sprintf("the end of a dump answered iterator %d", next))
			}
			return chunks, iters
		}
		chunks, iters = append(chunks, chunk), append(iters, next)
		iter = next
	}
}

// loadDump loads chunks into a new filter as CF.LOADCHUNK does: the header
// at iterator 1, each data chunk at the iterator SCANDUMP answered it with.
func loadDump(t testing.TB, chunks [][]byte, iters []int64, m *meter) *cf.Filter {
	t.Helper()
	f := new(cf.Filter)
	if err := f.BeginLoad(chunks[0], m.charge, m.release); err != nil {
		t.Fatalf("the header: %v", err)
	}
	for i := 1; i < len(chunks); i++ {
		if err := f.LoadChunk(iters[i], chunks[i]); err != nil {
			t.Fatalf("chunk %d of %d: %v", i, len(chunks)-1, err)
		}
	}
	return f
}

// smallChunks makes dumps cut chunks of n buckets for the rest of a test.
func smallChunks(t testing.TB, n uint64) {
	old := cf.ChunkBuckets
	cf.ChunkBuckets = n
	t.Cleanup(func() { cf.ChunkBuckets = old })
}

// v1Record returns a version 1 snapshot's record of a chain of stages
// (cf.Filter.ReadV1's input): one package filter table a stage, each
// holding the given items, with p's parameters and counts.
func v1Record(t testing.TB, p cf.Params, ins, del uint64, stages [][]int, loading uint64) []byte {
	t.Helper()
	w := fld.Writer(nil).Uvarint(p.Capacity).Uvarint(uint64(p.BucketSize)).Uvarint(uint64(p.MaxIter)).
		Uvarint(uint64(p.Expansion)).Uvarint(p.Seed).Uvarint(ins).Uvarint(del).Uvarint(uint64(len(stages)))
	for _, items := range stages {
		bits := 12
		if p.Bucket() == 2 {
			bits = 16
		}
		g, err := filter.New(filter.Config{Capacity: p.Capacity, FingerprintBits: bits, BucketSize: p.Bucket(),
			MaxKicks: 500, Seed: p.Seed})
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range items {
			if err := g.Insert(item(i)); err != nil {
				t.Fatal(err)
			}
		}
		b, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		w = w.Str(b)
	}
	return w.Uvarint(loading)
}

// newChain returns a filter that is a chain of stages, as version 1
// snapshots and format 2 dumps hold them, with items [0, n) in its first
// stage (and [n, 2n) in a second one when two is set).
func newChain(t testing.TB, p cf.Params, n int, two bool) *cf.Filter {
	t.Helper()
	var stages [][]int
	var first, second []int
	for i := range n {
		first = append(first, i)
		second = append(second, n+i)
	}
	stages = append(stages, first)
	if two {
		stages = append(stages, second)
	}
	f := new(cf.Filter)
	r := &fld.Reader{B: v1Record(t, p, uint64(n*len(stages)), 0, stages, 0)}
	if err := f.ReadV1(r); err != nil {
		t.Fatalf("ReadV1: %v", err)
	}
	return f
}
