package growing

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/internal/bipartite"
	"github.com/cuckoohash/cuckoo/internal/linhash"
	"github.com/cuckoohash/cuckoo/internal/written"
)

// Words returns the table's bucket words and stash, for tests that check an
// operation changed nothing.
func (f *Filter) Words() []uint64 {
	d := f.dir.Load()
	out := make([]uint64, 0, f.Buckets()+8)
	for j := range f.Buckets() {
		out = append(out, d.word(j).Load())
	}
	return append(out, *f.stash.Load()...)
}

// CheckInvariants returns the first broken invariant, or nil: every used
// slot is an entry; the counts match the slots; the words past the last
// bucket are empty; the directory holds the geometry.
func (f *Filter) CheckInvariants() error {
	g, d := f.geometry(), f.dir.Load()
	var held uint64
	for _, seg := range d.segs {
		held += uint64(len(seg))
	}
	if g.Buckets() > d.buckets || held != d.buckets || uint64(len(d.segs)) != f.layout.Count(g.Buckets()) {
		return fmt.Errorf("%d buckets in %d segments holding %d (%d counted)", g.Buckets(), len(d.segs), held, d.buckets)
	}
	var entries int64
	var byTail [linhash.MaxTailBits]int64
	for j := range d.buckets {
		w := d.word(j).Load()
		if j >= g.Buckets() {
			if w != 0 {
				return fmt.Errorf("word %d past the last bucket is %#x", j, w)
			}
			continue
		}
		for i := range f.shape.Slots {
			e := f.slot(w, i)
			if e == 0 {
				continue
			}
			if !f.shape.Valid(e) {
				return fmt.Errorf("bucket %d slot %d: %#x is not an entry", j, i, e)
			}
			entries++
			byTail[f.shape.TailLen(e)]++
		}
	}
	if err := f.checkWritten(d); err != nil {
		return err
	}
	if entries != f.entries.Load() {
		return fmt.Errorf("%d entries counted, %d in the slots", f.entries.Load(), entries)
	}
	for n := range byTail {
		if byTail[n] != f.byTail[n].Load() {
			return fmt.Errorf("tail length %d: %d counted, %d in the slots", n, f.byTail[n].Load(), byTail[n])
		}
	}
	if s := len(*f.stash.Load()); s > linhash.MaxStash || f.items.Load() > entries+int64(s) {
		return fmt.Errorf("%d keys, %d entries, %d stashed", f.items.Load(), entries, s)
	}
	return nil
}

// checkWritten checks the ever-written marks: each segment has its marks,
// and every non-zero word lies in a run raw.NextWritten reports, runs that are
// in order, inside the table and never empty.
func (f *Filter) checkWritten(d *directory) error {
	if len(d.marks) != len(d.segs) {
		return fmt.Errorf("%d segments, %d sets of marks", len(d.segs), len(d.marks))
	}
	var bytes uint64
	for i, seg := range d.segs {
		bytes += segmentBytes(uint64(len(seg)))
		if uint64(len(d.marks[i])) != written.Words(uint64(len(seg))) {
			return fmt.Errorf("segment %d: %d buckets, %d words of marks", i, len(seg), len(d.marks[i]))
		}
	}
	if bytes != d.bytes {
		return fmt.Errorf("segments of %d bytes, %d counted", bytes, d.bytes)
	}
	n := f.Buckets()
	var at uint64
	for from := uint64(0); ; {
		lo, hi := (*raw)(f).NextWritten(from, n)
		if lo < from || hi > n || lo > hi || lo == hi && lo != n {
			return fmt.Errorf("NextWritten(%d, %d) = [%d, %d)", from, n, lo, hi)
		}
		for ; at < lo; at++ {
			if w := d.word(at).Load(); w != 0 {
				return fmt.Errorf("word %d is %#x, outside every run written", at, w)
			}
		}
		if lo == n {
			return nil
		}
		at, from = hi, hi
	}
}

// CheckMatching checks that each copy of each key in held (key -> copies)
// can be assigned an entry of its own that matches it (filter/doc.go;
// bipartite.Check).
func (f *Filter) CheckMatching(held map[string]int) error {
	return bipartite.Check(held, func(key string) []bipartite.Entry {
		h := f.hash([]byte(key))
		var out []bipartite.Entry
		for _, m := range f.matches(h, nil) {
			out = append(out, bipartite.Entry{m.Bucket, uint64(m.Slot)})
		}
		for i, x := range *f.stash.Load() {
			if x == h {
				out = append(out, bipartite.Entry{1 << 63, uint64(i)})
			}
		}
		return out
	})
}

// MaxStash is the most keys a Filter keeps beside its table.
const MaxStash = linhash.MaxStash
