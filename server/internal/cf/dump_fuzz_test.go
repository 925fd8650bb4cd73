package cf

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/lockfree"
)

// smallChunks makes dumps cut chunks of 16 buckets for the rest of a test.
func smallChunks(t testing.TB) {
	old := ChunkBuckets
	ChunkBuckets = 16
	t.Cleanup(func() { ChunkBuckets = old })
}

// newChain returns a filter that is a chain of stages, as format-2 dumps and
// snapshots load: new keys are growing tables, so it is built by hand.
func newChain(t testing.TB, p Params) *Filter {
	st, err := lockfree.New(p.stageConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	c := &Filter{p: p}
	c.stages.Store(&[]*lockfree.Filter{st})
	return c
}

// dumpOf returns the header and data chunks of a small filter of 300 items,
// as CF.SCANDUMP answers them, with their iterators: a growing table of 4
// or 5 slots in chunks of 16 buckets (smallChunks), or a chain grown to a
// few stages.
func dumpOf(t testing.TB, chain bool, slots int) (chunks [][]byte, iters []int64) {
	p := Params{Capacity: 64, BucketSize: 4, MaxIter: 20, Expansion: 2, Seed: 42, Slots: slots}
	if slots == 5 {
		p.BucketSize = 8 // recorded: older servers built 4 slots for it
	}
	var c *Filter
	if chain {
		c = newChain(t, p)
	} else {
		c = new(Filter)
		if err := c.Init(p, func(_, _ uint64) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		if _, err := c.Add([]byte(fmt.Sprint("item", i)), false, false, func(_, _ uint64) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for iter := int64(0); ; {
		next, chunk := c.ScanDump(iter)
		if chunk == nil {
			return chunks, iters
		}
		chunks = append(chunks, chunk)
		iters = append(iters, next)
		iter = next
	}
}

// FuzzLoadChunk feeds a header and then a data chunk, both mutated, to the
// loader: never a panic; a refused header charges nothing; an accepted one
// charges exactly its stages; a refused chunk changes nothing.
func FuzzLoadChunk(f *testing.F) {
	smallChunks(f)
	var chunks [][]byte
	var iters []int64
	for _, d := range []struct {
		chain bool
		slots int
	}{{false, 4}, {true, 4}, {false, 5}} {
		chunks, iters = dumpOf(f, d.chain, d.slots)
		for i := 1; i < len(chunks); i++ {
			f.Add(chunks[0], chunks[i], iters[i])
		}
	}
	f.Add(chunks[0], []byte("CKCD"), int64(2))
	f.Fuzz(func(t *testing.T, header, chunk []byte, iter int64) {
		st := &meter{limit: 1 << 24}
		c := new(Filter)
		if err := c.BeginLoad(header, st.charge, st.release); err != nil {
			if st.mem != 0 {
				t.Fatalf("a refused header left %d bytes charged", st.mem)
			}
			return
		}
		if got := st.mem; got != int64(c.SizeBytes()) {
			t.Fatalf("charged %d for stages of %d bytes", got, c.SizeBytes())
		}
		// The real first chunk, when the header is the real one, so that
		// the mutated chunk can also land second.
		if string(header) == string(chunks[0]) && len(chunks) > 2 && iter%2 == 0 {
			if err := c.LoadChunk(iters[1], chunks[1]); err != nil {
				t.Fatalf("the real first chunk: %v", err)
			}
		}
		if c.rb != nil {
			// A header of RedisBloom's length: its chunks go straight into
			// the live filter, with no load pending to check.
			c.LoadChunk(iter, chunk)
			return
		}
		var lens []uint64
		for _, s := range c.tables() {
			lens = append(lens, s.stored())
		}
		next := c.load.next
		if err := c.LoadChunk(iter, chunk); err != nil {
			for i, s := range c.tables() {
				if s.stored() != lens[i] {
					t.Fatalf("a refused chunk changed stage %d: %d fingerprints, was %d", i, s.stored(), lens[i])
				}
			}
			if !c.Loading() || c.load.next != next {
				t.Fatal("a refused chunk moved the load")
			}
		}
	})
}

// TestLoadChunkRoundTrip loads a dump into a fresh filter: the same
// fingerprints in every bucket, the load complete after the last chunk.
func TestLoadChunkRoundTrip(t *testing.T) {
	smallChunks(t)
	for _, chain := range []bool{false, true} {
		t.Run(fmt.Sprintf("chain=%v", chain), func(t *testing.T) { loadChunkRoundTrip(t, chain) })
	}
}

func loadChunkRoundTrip(t *testing.T, chain bool) {
	chunks, iters := dumpOf(t, chain, 4)
	st := &meter{limit: 1 << 30}
	c := new(Filter)
	if err := c.BeginLoad(chunks[0], st.charge, st.release); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(chunks); i++ {
		if !c.Loading() {
			t.Fatalf("the load ended before chunk %d", i)
		}
		if err := c.LoadChunk(iters[i], chunks[i]); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	if c.Loading() {
		t.Fatalf("the load is pending after every chunk: next %d of %d", c.load.next, c.load.total)
	}
	for i := range 300 {
		if !c.Exists([]byte(fmt.Sprint("item", i))) {
			t.Fatalf("item%d missing", i)
		}
	}
	if c.Filters() < 3 || len(chunks) < 4 || (c.table != nil) == chain {
		t.Errorf("%d stages in %d chunks, growing table %v; the dump was meant to cover several", c.Filters(), len(chunks), c.table != nil)
	}
}

// meter is the key space's memory account, as the loaders see it: it
// charges up to limit and counts what is released.
type meter struct {
	mem, limit int64
}

func (m *meter) charge(_, n uint64) error {
	if m.mem > m.limit || n > uint64(m.limit-m.mem) { // in uint64: a forged size may pass 2^63
		return errors.New("ERR Insufficient memory")
	}
	m.mem += int64(n)
	return nil
}

func (m *meter) release(n uint64) { m.mem -= int64(n) }

// TestHeaderSlotsRefused: a header whose recorded slots no table has (3,
// 2^64-1, 256), or 2 for a fixed growing table, is refused and charges
// nothing.
func TestHeaderSlotsRefused(t *testing.T) {
	for _, tc := range []struct {
		slots, expansion int
	}{{3, 1}, {-1, 1}, {256, 1}, {2, 0}} {
		f := new(Filter)
		if err := f.Init(Params{Capacity: 64, BucketSize: 8, MaxIter: 20, Expansion: 1, Slots: 5}, func(_, _ uint64) error { return nil }); err != nil {
			t.Fatal(err)
		}
		f.p.Slots, f.p.Expansion = tc.slots, tc.expansion // what a forged header says
		st := &meter{limit: 1 << 24}
		if err := new(Filter).BeginLoad(dumpHeader(f), st.charge, st.release); err == nil || st.mem != 0 {
			t.Errorf("a header of %d slots, expansion %d: %v, %d bytes charged; want it refused, nothing charged", tc.slots, tc.expansion, err, st.mem)
		}
	}
}

// TestHeaderFixedGrewRefused: a fixed table (EXPANSION 0, 5 slots) never
// splits, so a header that gives one a grown geometry is refused.
func TestHeaderFixedGrewRefused(t *testing.T) {
	free := func(_, _ uint64) error { return nil }
	f := new(Filter)
	if err := f.Init(Params{Capacity: 64, BucketSize: 5, MaxIter: 20, Expansion: 1, Slots: 5}, free); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if _, err := f.Add([]byte(fmt.Sprint("item", i)), false, false, free); err != nil {
			t.Fatal(err)
		}
	}
	st := &meter{limit: 1 << 24}
	if err := new(Filter).BeginLoad(dumpHeader(f), st.charge, st.release); err != nil {
		t.Fatalf("the grown table's own header: %v", err)
	}
	f.p.Expansion = 0 // what a forged header says
	st = &meter{limit: 1 << 24}
	if err := new(Filter).BeginLoad(dumpHeader(f), st.charge, st.release); err == nil || st.mem != 0 {
		t.Errorf("a fixed table with a grown geometry: %v, %d bytes charged; want it refused, nothing charged", err, st.mem)
	}
}
