package growing

import (
	"math/bits"
	"slices"

	"github.com/cuckoohash/cuckoo/internal/linhash"
)

// This file is the writer's side: every function here runs under f.mu, the
// only goroutine changing the table. Its stores follow the orders the
// package documentation relies on.

// Insert adds key, growing the table as its load passes the split load.
func (f *Filter) Insert(key []byte) error { return f.InsertHash(f.hash(key)) }

// InsertString is Insert for a string key.
func (f *Filter) InsertString(key string) error { return f.InsertHash(f.hashString(key)) }

// InsertHash is Insert for a caller-computed hash.
func (f *Filter) InsertHash(h uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.insert(h)
}

// InsertUnique inserts key unless Contains(key) holds, and reports whether
// it inserted; the check and the insert are one step for other writers.
func (f *Filter) InsertUnique(key []byte) (bool, error) { return f.InsertUniqueHash(f.hash(key)) }

// InsertUniqueHash is InsertUnique for a caller-computed hash.
func (f *Filter) InsertUniqueHash(h uint64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ContainsHash(h) {
		return false, nil
	}
	return true, f.insert(h)
}

func (f *Filter) insert(h uint64) error {
	fp, a, b := f.shape.Key(h)
	if !f.place(fp, a, b) {
		// Refused before anything changes: the key's buckets are full of
		// its own entry, or the stash is full, which a refused growth
		// (Reserve's error) explains better than ErrFull.
		if len(f.matches(h, nil)) >= 2*int(f.shape.Slots) {
			return ErrFull
		}
		if len(*f.stash.Load()) >= linhash.MaxStash {
			if f.growErr == nil {
				return ErrFull
			}
			// The stash filled while growth was refused: ask for the
			// memory again, since it may be there now (a limit raised,
			// keys deleted), and place the key in the grown table.
			if !f.growToCapacity() {
				return f.growErr
			}
			return f.insert(h)
		}
		// No path below the split load: rare. Splitting frees room near
		// the split pointer; the stash takes the key if that is not near.
		placed := false
		for range 8 {
			if f.splitOne() != nil {
				break
			}
			if placed = f.place(fp, a, b); placed {
				break
			}
		}
		if !placed {
			next := append(slices.Clip(*f.stash.Load()), h)
			f.stash.Store(&next)
		}
	}
	f.items.Add(1)
	f.growToCapacity()
	return nil
}

// growToCapacity splits buckets until the entries fit the split load, or a
// split is refused, and drains the stash into the room made. It reports
// whether it split any.
func (f *Filter) growToCapacity() bool {
	grew := false
	for f.entries.Load() > int64(f.Capacity()) {
		if f.splitOne() != nil {
			break
		}
		grew = true
	}
	if grew {
		f.drainStash()
	}
	return grew
}

// store writes bucket j's word and keeps the counts: old is its value (read
// under mu, so current). A word that was 0 and will not be has its block
// marked first (package internal/written): every non-zero word lies in a
// marked block, and a raw reader that finds a block unmarked (NextWritten)
// missed nothing stored before it looked.
func (f *Filter) store(d *directory, j uint64, old, w uint64) {
	seg, off := d.layout.Locate(j)
	if old == 0 && w != 0 {
		d.marks[seg].Mark(off)
	}
	d.segs[seg][off].Store(w)
	for i := range f.shape.Slots {
		if e := w >> (i * f.shape.Bits) & f.shape.SlotMask; e != 0 {
			f.entries.Add(1)
			f.byTail[f.shape.TailLen(e)].Add(1)
		}
		if e := old >> (i * f.shape.Bits) & f.shape.SlotMask; e != 0 {
			f.entries.Add(-1)
			f.byTail[f.shape.TailLen(e)].Add(-1)
		}
	}
}

// freeSlot returns a free slot of word w, or -1.
func (f *Filter) freeSlot(w uint64) int {
	z := f.lanes.Empty(w)
	if z == 0 {
		return -1
	}
	return bits.TrailingZeros64(z) / int(f.shape.Bits)
}

func (f *Filter) with(w uint64, slot int, e uint64) uint64 {
	shift := uint(slot) * f.shape.Bits
	return w&^(f.shape.SlotMask<<shift) | e<<shift
}

func (f *Filter) slot(w uint64, i uint) uint64 { return w >> (i * f.shape.Bits) & f.shape.SlotMask }

// place stores the key in a free slot of one of its buckets, making room by
// moving a path of entries when both are full. It changes nothing when it
// fails.
func (f *Filter) place(fp, a, b uint64) bool {
	g, d := f.geometry(), f.dir.Load()
	j1, l1 := g.Addr(a)
	j2, l2 := g.Addr(b)
	w1, w2 := d.word(j1).Load(), d.word(j2).Load()
	e1, e2 := bits.OnesCount64(f.lanes.Empty(w1)), bits.OnesCount64(f.lanes.Empty(w2))
	switch {
	case e1 > 0 && e1 >= e2:
		f.store(d, j1, w1, f.with(w1, f.freeSlot(w1), f.shape.Entry(fp, a, l1)))
		return true
	case e2 > 0:
		f.store(d, j2, w2, f.with(w2, f.freeSlot(w2), f.shape.Entry(fp, b, l2)))
		return true
	}
	return f.searchPath(g, d, j1, f.shape.Entry(fp, a, l1), j2, f.shape.Entry(fp, b, l2))
}

// searchPath looks breadth first, from the full buckets j1 and j2, for a
// chain of entries ending at a bucket with a free slot, examining at most
// maxKicks buckets, reading only; then moves the chain from its end back
// and stores the new entry (e1 in j1 or e2 in j2) in the freed slot.
func (f *Filter) searchPath(g linhash.Geometry, d *directory, j1, e1, j2, e2 uint64) bool {
	q := append(f.path[:0], linhash.Node{Bucket: j1, Parent: -1})
	if j2 != j1 {
		q = append(q, linhash.Node{Bucket: j2, Parent: -1})
	}
	defer func() { f.path = q[:0] }()
	for head := 0; head < len(q) && head < f.maxKicks; head++ {
		x := q[head].Bucket
		lx := g.LevelOf(x)
		wx := d.word(x).Load()
		for s := range f.shape.Slots {
			y, _, ok := f.shape.Other(g, x, lx, f.slot(wx, s))
			if !ok || y == x || linhash.OnPath(q, head, y) {
				continue
			}
			if f.freeSlot(d.word(y).Load()) >= 0 {
				f.movePath(g, d, q, head, s, y, j1, e1, e2)
				return true
			}
			if len(q) < f.maxKicks+2 {
				q = append(q, linhash.Node{Bucket: y, Parent: int32(head), Slot: uint8(s)})
			}
		}
	}
	return false
}

// movePath moves the entry in slot s of node n's bucket into bucket y, every
// entry on the chain one step on, and the new entry into the root's freed
// slot. Each move stores the entry in its new bucket, bumps the move
// counter, and only then clears it in its old one.
func (f *Filter) movePath(g linhash.Geometry, d *directory, q []linhash.Node, n int, s uint, y, j1, e1, e2 uint64) {
	x := q[n].Bucket
	for {
		wx := d.word(x).Load()
		_, moved, _ := f.shape.Other(g, x, g.LevelOf(x), f.slot(wx, s))
		wy := d.word(y).Load()
		f.store(d, y, wy, f.with(wy, f.freeSlot(wy), moved))
		f.moves.Add(1)
		f.store(d, x, wx, f.with(wx, int(s), 0))
		if q[n].Parent < 0 {
			break
		}
		p := int(q[n].Parent)
		n, y, x, s = p, x, q[p].Bucket, uint(q[n].Slot)
	}
	e := e2
	if x == j1 {
		e = e1
	}
	wx := d.word(x).Load()
	f.store(d, x, wx, f.with(wx, int(s), e))
}

// splitOne splits the bucket at the split pointer: the entries whose next
// tail bit is 1 go to the new bucket, stored first; then the rest are
// stored back re-encoded; then the new geometry is published.
func (f *Filter) splitOne() error {
	g, d := f.geometry(), f.dir.Load()
	if g.Level >= linhash.MaxLevel || f.cfg.Fixed {
		return ErrFull
	}
	p, q := g.Split, g.Split+1<<g.Level
	if q >= d.buckets {
		var err error
		if d, err = f.addSegment(d); err != nil {
			f.growErr = err
			return err
		}
		f.growErr = nil
	}
	wp := d.word(p).Load()
	var lo, hi uint64
	var nlo, nhi int
	for i := range f.shape.Slots {
		e := f.slot(wp, i)
		if e == 0 {
			continue
		}
		next, high, both := f.shape.Split(e)
		if both || !high {
			lo = f.with(lo, nlo, next)
			nlo++
		}
		if both || high {
			hi = f.with(hi, nhi, next)
			nhi++
		}
	}
	f.store(d, q, 0, hi)
	f.store(d, p, wp, lo)
	f.geom.Store(pack(g.Next()))
	return nil
}

// addSegment publishes a directory with one more segment, charged first.
func (f *Filter) addSegment(d *directory) (*directory, error) {
	n := f.layout.Size(d.buckets)
	if f.cfg.Reserve != nil {
		if err := f.cfg.Reserve(segmentBytes(n)); err != nil {
			return d, err
		}
	}
	next := d.grown(n)
	f.dir.Store(next)
	return next, nil
}

// drainStash moves stashed keys into the table where they now fit.
func (f *Filter) drainStash() {
	s := *f.stash.Load()
	if len(s) == 0 {
		return
	}
	var keep []uint64
	for _, h := range s {
		fp, a, b := f.shape.Key(h)
		if !f.place(fp, a, b) {
			keep = append(keep, h)
		}
	}
	f.stash.Store(&keep)
}

// matches appends every entry of the table matching the key of hash h.
func (f *Filter) matches(h uint64, out []linhash.Match) []linhash.Match {
	fp, a, b := f.shape.Key(h)
	g, d := f.geometry(), f.dir.Load()
	j1, l1 := g.Addr(a)
	j2, l2 := g.Addr(b)
	scan := func(j uint64, l uint, v, other uint64) {
		w := d.word(j).Load()
		for i := range f.shape.Slots {
			e := f.slot(w, i)
			if f.shape.Matches(e, fp, v, l) || (j1 == j2 && f.shape.Matches(e, fp, other, l)) {
				out = append(out, linhash.Match{Bucket: j, Slot: i, Known: f.shape.Known(e, l)})
			}
		}
	}
	scan(j1, l1, a, b)
	if j2 != j1 {
		scan(j2, l2, b, a)
	}
	return out
}

// Delete removes one copy of key and reports whether there was one: a
// stashed one if any (it is exact), else the matching entry that knows the
// longest prefix of its address, which keeps every other key (filter/doc.go,
// "Growing filters"). Delete only keys known to be present.
func (f *Filter) Delete(key []byte) bool { return f.DeleteHash(f.hash(key)) }

// DeleteString is Delete for a string key.
func (f *Filter) DeleteString(key string) bool { return f.DeleteHash(f.hashString(key)) }

// DeleteHash is Delete for a caller-computed hash.
func (f *Filter) DeleteHash(h uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := *f.stash.Load()
	if i := slices.Index(s, h); i >= 0 {
		next := slices.Delete(slices.Clone(s), i, i+1)
		f.stash.Store(&next)
		f.items.Add(-1)
		return true
	}
	var buf [8]linhash.Match
	ms := f.matches(h, buf[:0])
	if len(ms) == 0 {
		return false
	}
	best := linhash.Longest(ms)
	d := f.dir.Load()
	w := d.word(best.Bucket).Load()
	f.store(d, best.Bucket, w, f.with(w, int(best.Slot), 0))
	f.items.Add(-1)
	f.drainStash()
	return true
}
