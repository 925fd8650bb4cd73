package cf

import (
	"fmt"
	"io"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/internal/tables"
	"github.com/cuckoohash/cuckoo/lockfree"
	"github.com/cuckoohash/cuckoo/server/internal/fields"
)

// A filter in a snapshot entry, after the entry's key, position and
// deadline (the key space writes those):
//
//	the description (appendDesc, as in a dump's header chunk)
//	each table's runs, in order (runs.go)
//	uvarint 0, or 1 for a load pending: uvarint the next bucket, then each
//	table's fingerprints as the header announced them
//
// Tables are read straight into a freshly allocated filter, or only checked
// (verifying a snapshot allocates no filter).

// WriteSnapshot writes f as a snapshot entry holds it, reusing buf for the
// runs, and returns buf. Preconditions: the key's lock held.
func (f *Filter) WriteSnapshot(w io.Writer, buf []byte) ([]byte, error) {
	if f.rb != nil {
		return buf, f.writeSnapshotRB(w)
	}
	if _, err := w.Write(appendDesc(nil, f)); err != nil {
		return buf, err
	}
	for _, st := range f.tables() {
		var err error
		if buf, err = writeRuns(w, st.raw(), buf); err != nil {
			return buf, err
		}
	}
	e := fields.Writer{0}
	if ls := f.load; ls != nil {
		e = fields.Writer{1}.Uvarint(ls.next)
		for _, n := range ls.fps {
			e = e.Uvarint(n)
		}
	}
	_, err := w.Write(e)
	return buf, err
}

// ReadSnapshot reads a filter that WriteSnapshot wrote into f, a zero
// Filter, or, with f nil, only checks it, allocating no table; withSlots
// says its description records its slots (the entry is marked so where
// Params.RecordedSlots is not 0). Nothing is charged: a snapshot's filters
// are counted once loaded.
func ReadSnapshot(r *fields.Stream, f *Filter, withSlots bool) error {
	d, err := readDesc(r, withSlots)
	if err != nil {
		return err
	}
	var into []rawTable
	shapes, err := d.shapes()
	if err == nil && f != nil {
		if err = d.build(f, func(_, _ uint64) error { return nil }); err == nil {
			into = f.tables()
		}
	}
	if err != nil {
		return err
	}
	stored := d.stored()
	for i, sh := range shapes {
		var dst tables.Table
		if into != nil {
			dst = into[i].raw()
		}
		fps, err := readRuns(r.R, sh, 0, sh.Buckets(), dst)
		if err != nil {
			return fmt.Errorf("stage %d: %v", i, err)
		}
		if fps != stored[i] {
			return fmt.Errorf("stage %d holds %d fingerprints, its description %d", i, fps, stored[i])
		}
	}
	switch r.Uvarint() {
	case 0:
	case 1:
		ls := &loadState{next: r.Uvarint()}
		for _, sh := range shapes {
			ls.total += sh.Buckets()
			ls.fps = append(ls.fps, r.Uvarint())
		}
		if r.Err == nil && ls.next >= ls.total {
			return fmt.Errorf("a load at bucket %d of %d", ls.next, ls.total)
		}
		if f != nil {
			f.load = ls
		}
	default:
		return fmt.Errorf("bad load flag")
	}
	return r.Err
}

// ErrV1Load is a version 1 snapshot's filter with a load pending, which
// cannot be resumed.
var ErrV1Load = fmt.Errorf("a CF.LOADCHUNK was in progress, which this server cannot resume from a version 1 snapshot: start the previous version once, finish or delete the load, and SAVE")

// ReadV1 reads a filter of a version 1 snapshot into f, a zero Filter:
// uvarints capacity, bucket size, max iterations, expansion, seed, items
// inserted, items deleted, number of stages, each stage as a string in
// package filter's binary format, and uvarint 0 (1: a load pending). A
// truncated record leaves r.Err set.
func (f *Filter) ReadV1(r *fields.Reader) error {
	var p Params
	p.Capacity = r.Uvarint()
	p.BucketSize = r.Int(MaxBucketSize)
	p.MaxIter = r.Int(MaxIterations)
	p.Expansion = r.Int(MaxExpansion)
	p.Seed = r.Uvarint()
	p.SetRecordedSlots(0)
	ins, del := int64(r.Uvarint()), int64(r.Uvarint())
	ns := r.Int(MaxStages * 2)
	if r.Err != nil {
		return r.Err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if ns == 0 {
		return fmt.Errorf("no stages")
	}
	var raw []byte
	var lens []int
	for range ns {
		b := r.Str()
		raw = append(raw, b...)
		lens = append(lens, len(b))
	}
	if loading := r.Uvarint(); loading != 0 && r.Err == nil {
		return ErrV1Load
	}
	if r.Err != nil {
		return r.Err
	}
	stages, err := decodeStages(raw, lens)
	if err != nil {
		return err
	}
	f.p = p
	f.stages.Store(&stages)
	f.inserted.Store(ins)
	f.deleted.Store(del)
	return nil
}

// decodeStages decodes concatenated filters of the given lengths.
func decodeStages(body []byte, lens []int) ([]*lockfree.Filter, error) {
	var out []*lockfree.Filter
	for i, n := range lens {
		if n > len(body) {
			return nil, fmt.Errorf("stage %d: truncated", i)
		}
		var f filter.Filter
		if err := f.UnmarshalBinary(body[:n]); err != nil {
			return nil, fmt.Errorf("stage %d: %v", i, err)
		}
		lf, err := lockfree.FromFilter(&f)
		if err != nil {
			return nil, fmt.Errorf("stage %d: %v", i, err)
		}
		out = append(out, lf)
		body = body[n:]
	}
	if len(body) != 0 {
		return nil, fmt.Errorf("trailing bytes")
	}
	return out, nil
}
