package cf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/internal/tables"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// denseRuns is the encoder before the ever-written marks: it reads every
// bucket of the range. The sparse one must write the same bytes.
func denseRuns(dst []byte, st tables.Table, first, n uint64) []byte {
	w := st.BucketBytes()
	end := first + n
	for i := first; i < end; {
		zeros := i
		for zeros < end && st.BucketBits(zeros) == 0 {
			zeros++
		}
		lits := zeros
		for lits < end && st.BucketBits(lits) != 0 {
			lits++
		}
		dst = binary.AppendUvarint(dst, zeros-i)
		dst = binary.AppendUvarint(dst, lits-zeros)
		for j := zeros; j < lits; j++ {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], st.BucketBits(j))
			dst = append(dst, b[:w]...)
		}
		i = lits
	}
	return dst
}

// runsTables returns an empty table of each kind, a growing table of
// about 2^15 buckets and a lock-free stage of 2^15, and for each a supply
// of valid non-empty bucket words, from a table of the same shape filled.
func runsTables(t testing.TB) (tables []func() rawTable, words [][]uint64) {
	nop := func(_, _ uint64) error { return nil }
	g := Params{Capacity: 110_000, BucketSize: 4, MaxIter: 20, Expansion: 1, Seed: 1}
	fixed := Params{Capacity: 100_000, BucketSize: 4, MaxIter: 20, Expansion: 0, Seed: 1}
	for _, p := range []Params{g, fixed} {
		newTable := func() rawTable {
			c := new(Filter)
			if err := c.Init(p, nop); err != nil {
				t.Fatal(err)
			}
			return c.tables()[0]
		}
		src := newTable()
		for i := range 2000 {
			var err error
			switch s := src.(type) {
			case growTable:
				err = s.InsertString(fmt.Sprint("w", i))
			case fixedTable:
				err = s.InsertString(fmt.Sprint("w", i))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		var ws []uint64
		for i := range src.Buckets() {
			if v := src.raw().BucketBits(i); v != 0 {
				ws = append(ws, v)
			}
		}
		tables = append(tables, newTable)
		words = append(words, ws)
	}
	return tables, words
}

// FuzzRunsSparse places bucket words in a table where the input says, in
// clusters and alone, some then emptied (their blocks stay marked), and
// checks the sparse encoder against the dense one and the loader:
//   - appendRuns writes the bytes denseRuns writes, for any range, within
//     runsBound;
//   - writeRuns (as a snapshot streams a table) read back with readRuns
//     into a fresh table gives every bucket equal, its count equal, and
//     marks only on blocks holding something.
func FuzzRunsSparse(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 0})
	f.Add([]byte{1, 7, 30, 0, 9, 200, 3, 1, 255, 255, 2, 4, 64, 0, 80, 2})
	f.Add([]byte{0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 1, 255, 3, 0, 128, 0, 1})
	f.Add(bytes.Repeat([]byte{0, 5, 255, 1}, 40))
	f.Add(bytes.Repeat([]byte{1, 255, 2}, 60))
	tables, words := runsTables(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 1000 {
			return // longer inputs only take longer
		}
		kind := int(data[0]) % len(tables)
		st, ws := tables[kind](), words[kind]
		n := st.Buckets()
		// Each op of 3 bytes: a position (16 bits, scaled to the table), a
		// run length (1..8, or a whole block for 255) and whether to empty
		// it again.
		ops := data[1:]
		for k := 0; len(ops) >= 3; ops, k = ops[3:], k+1 {
			at := uint64(binary.LittleEndian.Uint16(ops)) * n >> 16
			length := uint64(ops[2]&7) + 1
			if ops[2] == 255 {
				length = 512
			}
			for i := at; i < min(at+length, n); i++ {
				if err := st.raw().SetBucketBits(i, ws[(k+int(i))%len(ws)]); err != nil {
					t.Fatal(err)
				}
				if ops[2]&8 != 0 {
					if err := st.raw().SetBucketBits(i, 0); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		// Ranges: the whole table, and chunk-like ranges the input picks.
		ranges := [][2]uint64{{0, n}}
		for i := 1; i+3 < len(data) && len(ranges) < 32; i += 4 {
			first := uint64(binary.LittleEndian.Uint16(data[i:])) * n >> 16
			ranges = append(ranges, [2]uint64{first, min(n-first, uint64(binary.LittleEndian.Uint16(data[i+2:]))+1)})
		}
		for _, r := range ranges {
			sparse := appendRuns(nil, st.raw(), r[0], r[1])
			if dense := denseRuns(nil, st.raw(), r[0], r[1]); !bytes.Equal(sparse, dense) {
				t.Fatalf("buckets [%d, +%d): sparse runs %x, dense %x", r[0], r[1], sparse, dense)
			}
			if b := runsBound(st.raw(), r[0], r[1]); uint64(len(sparse)) > b {
				t.Fatalf("buckets [%d, +%d): %d bytes, bound %d", r[0], r[1], len(sparse), b)
			}
		}
		var buf bytes.Buffer
		if _, err := writeRuns(&buf, st.raw(), nil); err != nil {
			t.Fatal(err)
		}
		dst := tables[kind]()
		fps, err := readRuns(bufio.NewReader(&buf), dst, 0, n, dst.raw())
		if err != nil {
			t.Fatal(err)
		}
		if fps != st.stored() || dst.stored() != st.stored() {
			t.Fatalf("read back %d fingerprints, the table holds %d, the copy %d", fps, st.stored(), dst.stored())
		}
		for i := range n {
			if dst.raw().BucketBits(i) != st.raw().BucketBits(i) {
				t.Fatalf("bucket %d: %#x read back, %#x written", i, dst.raw().BucketBits(i), st.raw().BucketBits(i))
			}
		}
		// The copy's marks are exactly the blocks holding something.
		for lo, hi := dst.raw().NextWritten(0, n); lo < n; lo, hi = dst.raw().NextWritten(hi, n) {
			for b := lo; b < hi; b += 512 {
				held := false
				for i := b; i < min(b+512, hi); i++ {
					held = held || dst.raw().BucketBits(i) != 0
				}
				if !held {
					t.Fatalf("the copy marks block %d written, and it holds nothing", b/512)
				}
			}
		}
	})
}

// TestRunsBoundFull: a full table's bound stays what the dense one was,
// w+2 bytes a bucket (plus a few bytes), and a reserved table's holding
// one bucket is a block's.
func TestRunsBoundFull(t *testing.T) {
	st, err := lockfree.New(Params{Capacity: 1 << 16, BucketSize: 4, MaxIter: 20, Seed: 1}.stageConfig(0))
	if err != nil {
		t.Fatal(err)
	}
	tab := newFixedTable(st)
	n := tab.Buckets()
	if b := runsBound(tab.raw(), 0, n); b != 16 {
		t.Errorf("an empty table: bound %d, want 16", b)
	}
	tab.raw().SetBucketBits(n/2, 1)
	if b := runsBound(tab.raw(), 0, n); b != 512*8+11+16 {
		t.Errorf("one bucket: bound %d, want a block's", b)
	}
	for i := range n {
		tab.raw().SetBucketBits(i, 1)
	}
	if b := runsBound(tab.raw(), 0, n); b != n*8+11+16 {
		t.Errorf("a full table: bound %d, want %d", b, n*8+11+16)
	}
	g, err := growing.New(growing.Config{InitialCapacity: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	if b := runsBound(newGrowTable(g).raw(), 0, g.Buckets()); b != 16 {
		t.Errorf("an empty growing table: bound %d, want 16", b)
	}
}
