package redisbloom_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
)

// An insert and a compaction visit only the sub-filters with a free slot
// (open.go); RedisBloom visits them all. The tests below run the same
// operations on a filter of each and require the same answers and the
// same bytes after every one, and the open set's invariants throughout.

// twin is a filter and its model, which visits every sub-filter.
type twin struct {
	f, model *redisbloom.Filter
}

// smallReserve refuses a sub-filter of more than 4 KiB, so that an
// expansion of 2 stops growing early, and both filters alike.
func smallReserve(n uint64) error {
	if n > 4096 {
		return errors.New("test: sub-filter too large")
	}
	return nil
}

// loadReserve is smallReserve, except that it takes the first charge
// whole: Load's, of every sub-filter at once.
func loadReserve() redisbloom.Reserve {
	first := true
	return func(n uint64) error {
		if first {
			first = false
			return nil
		}
		return smallReserve(n)
	}
}

// decodeParams takes a tiny shape from data's first 4 bytes.
func decodeParams(data []byte) (redisbloom.Params, []byte) {
	var h [4]byte
	copy(h[:], data)
	p := redisbloom.Params{
		Capacity:      2 + uint64(h[0]%15),
		BucketSize:    1 + int(h[1]%4),
		MaxIterations: 1 + int(h[2]%8),
		Expansion:     int(h[3] % 3),
		Reserve:       smallReserve,
	}
	return p, data[min(len(data), 4):]
}

// maxOps bounds the operations of one run, so that fuzzing runs many.
const maxOps = 600

// runPlacement decodes data into a shape and operations, two bytes each,
// on a few items, and checks the filter against its model after each.
func runPlacement(t *testing.T, data []byte) {
	p, ops := decodeParams(data)
	f, err := redisbloom.New(p)
	if err != nil {
		t.Skip(err) // a shape CF.RESERVE refuses too
	}
	m, _ := redisbloom.New(p)
	redisbloom.SetNaive(m, true)
	tw := twin{f, m}
	var a, b []byte // the filters' slots
	ops = ops[:min(len(ops), 2*maxOps)]
	for len(ops) >= 2 {
		op, arg := ops[0], ops[1]
		item := []byte{'i', '0' + arg%6}
		desc := fmt.Sprintf("%+v: op %d on %q", p, op%8, item)
		ops = ops[2:]
		switch op % 8 {
		case 0, 1, 2, 3:
			e1, e2 := tw.f.Add(item), tw.model.Add(item)
			if fmt.Sprint(e1) != fmt.Sprint(e2) {
				t.Fatalf("%s: add: %v, the model %v", desc, e1, e2)
			}
		case 4:
			a1, e1 := tw.f.AddUnique(item)
			a2, e2 := tw.model.AddUnique(item)
			if a1 != a2 || fmt.Sprint(e1) != fmt.Sprint(e2) {
				t.Fatalf("%s: add unique: %v %v, the model %v %v", desc, a1, e1, a2, e2)
			}
		case 5:
			if d1, d2 := tw.f.Delete(item), tw.model.Delete(item); d1 != d2 {
				t.Fatalf("%s: delete: %v, the model %v", desc, d1, d2)
			}
		case 6:
			if c1, c2 := tw.f.Count(item), tw.model.Count(item); c1 != c2 {
				t.Fatalf("%s: count: %d, the model %d", desc, c1, c2)
			}
		case 7:
			tw.reload(t, arg%4)
		}
		if err := redisbloom.CheckInvariants(tw.f); err != nil {
			t.Fatalf("%s: %v", desc, err)
		}
		a, b = redisbloom.AppendSlots(a[:0], tw.f), redisbloom.AppendSlots(b[:0], tw.model)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: the filter's bytes differ from the model's\n%+v\n%+v", desc, tw.f.Info(), tw.model.Info())
		}
		if a, b := tw.f.Info(), tw.model.Info(); a != b {
			t.Fatalf("%s: figures %+v, the model's %+v", desc, a, b)
		}
	}
}

// reload compacts both filters (how 0), or replaces each by a copy read
// back from its DUMP payload (1), its stream (2) or its chunks (3).
func (tw *twin) reload(t *testing.T, how byte) {
	if how == 0 {
		tw.f.Compact()
		tw.model.Compact()
		return
	}
	copyOf := func(f *redisbloom.Filter) *redisbloom.Filter {
		var g *redisbloom.Filter
		var err error
		switch how {
		case 1:
			g, err = redisbloom.ParsePayload(f.AppendPayload(nil), smallReserve)
		case 2:
			var buf bytes.Buffer
			if _, err = f.WriteTo(&buf); err == nil {
				g, err = redisbloom.ReadFrom(&buf, smallReserve, false)
			}
		case 3:
			if f.Info().Items == 0 {
				return f // no chunks to give
			}
			iters, chunks := dumpAll(t, f)
			if g, err = redisbloom.Load(chunks[0], loadReserve()); err == nil {
				for i := 1; i < len(chunks) && err == nil; i++ {
					err = g.LoadChunk(iters[i], chunks[i])
				}
			}
		}
		if err != nil {
			t.Fatalf("reload %d: %v", how, err)
		}
		return g
	}
	tw.f, tw.model = copyOf(tw.f), copyOf(tw.model)
	redisbloom.SetNaive(tw.model, true)
}

// placementSeeds are the shapes and sequences the tests always run:
// RedisBloom's smallest shape taking one item over and over, then losing
// it (deletes compact), and mixed items in larger buckets.
func placementSeeds() [][]byte {
	var seeds [][]byte
	one := []byte{0, 0, 19, 1} // capacity 2, bucket size 1, 20 iterations, expansion 1
	for range 300 {
		one = append(one, 0, 1)
	}
	for range 200 {
		one = append(one, 5, 1)
	}
	seeds = append(seeds, one)
	mixed := []byte{6, 1, 3, 2}
	for i := range 400 {
		mixed = append(mixed, byte(i*7), byte(i*13))
	}
	return append(seeds, mixed)
}

// TestPlacementMatchesNaive runs the seeds and random sequences.
func TestPlacementMatchesNaive(t *testing.T) {
	for i, s := range placementSeeds() {
		t.Run(fmt.Sprintf("seed=%d", i), func(t *testing.T) { runPlacement(t, s) })
	}
	runs, n := 300, 1200
	if testing.Short() {
		runs, n = 25, 1200
	}
	r := rand.New(rand.NewPCG(43, 4))
	for i := range runs {
		data := make([]byte, 4+n)
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		// Mostly adds, as growth is where sub-filters pile up.
		for j := 4; j+1 < len(data); j += 2 {
			if r.IntN(3) > 0 {
				data[j] &^= 4
			}
		}
		t.Run(fmt.Sprintf("random=%d", i), func(t *testing.T) { runPlacement(t, data) })
	}
}

// FuzzPlacementMatchesNaive decodes random bytes into a shape and
// operations and checks the filter against its model.
func FuzzPlacementMatchesNaive(f *testing.F) {
	for _, s := range placementSeeds() {
		f.Add(s)
	}
	f.Fuzz(runPlacement)
}
