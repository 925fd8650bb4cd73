package cf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/internal/linhash"
	"github.com/cuckoohash/cuckoo/internal/tables"
	"github.com/cuckoohash/cuckoo/lockfree"
	"github.com/cuckoohash/cuckoo/redisbloom"
	"github.com/cuckoohash/cuckoo/server/internal/fields"
)

// CF.SCANDUMP and CF.LOADCHUNK move a filter in chunks, in this server's own
// format (RedisBloom's chunks are its memory layout; ours are not
// interchangeable with them). Iterator 0 asks for the header chunk, answered
// with iterator 1:
//
//	"CKCH" magic, uvarint version 3,
//	uvarints: capacity, bucket size, max iterations, expansion, seed,
//	          items inserted, items deleted, stages, then for each stage its
//	          capacity, fingerprint bits and number of fingerprints; or, for
//	          a growing table, 0 stages, then its level, split pointer,
//	          entries, and stashed keys (a count, then each key's hash),
//	u32 CRC-32C of everything before it.
//
// Version 2 headers (chains of stages only) still load. A growing table
// dumps as one table of 2^level+split 8-byte words. The tables' buckets,
// concatenated, are numbered from 0; iterator i >= 1
// asks for the chunk that starts at bucket i-1, answered with iterator
// i+n and the data chunk
//
//	"CKCD" magic, uvarint first bucket, uvarint n, the buckets as runs
//	(runs.go), u32 CRC-32C of everything before it,
//
// which covers at most ChunkBuckets buckets and never crosses a stage; past
// the last bucket the answer is iterator 0 and no data. Each chunk is read
// from the live stages with the key's writer lock held, so it is one
// moment's buckets, and only the header's few bytes and the chunk itself are
// ever allocated: nothing is copied whole.
//
// CF.LOADCHUNK with iterator 1 takes a header: every field is checked, the
// stages it describes are charged to --maxmemory and allocated empty, and the
// key is created with the load pending. Iterator i >= 2 takes the chunk that
// SCANDUMP answered with i; it must start where the previous one ended, and
// it is checked whole before any bucket is written, so a bad chunk is an
// error that changes nothing. The chunk that completes a stage must bring its
// fingerprint count to the header's. While a load is pending the key's
// writes are refused (its remaining chunks would overwrite them); lookups
// see the buckets loaded so far.

const (
	headerMagic = "CKCH"
	chunkMagic  = "CKCD"
	dumpVersion = 3
	// dumpVersionSlots is a header whose description records its bucket
	// slots (appendDesc): written only for a filter that needs it, so the
	// dumps of filters older servers also build stay readable by them.
	dumpVersionSlots = 4
)

// ChunkBuckets bounds a data chunk: with at most 8 bytes a bucket (a
// growing table's word), a chunk stays about 8 MiB. A variable, so that
// tests make small filters dump in several chunks.
var ChunkBuckets uint64 = 1 << 20

var (
	// ErrInvalidPosition is RedisBloom's answer to a bad iterator.
	ErrInvalidPosition = reply("Invalid position")
	errInvalidHeader   = badHeader("invalid header chunk (bad magic, checksum or field)")
	// ErrBadChunk is RedisBloom's answer to a data chunk at a negative
	// iterator.
	ErrBadChunk = badChunk("a data chunk at a negative iterator")
)

// LoadError is a refused CF.LOADCHUNK: the client gets RedisBloom's text,
// the server log the detail.
type LoadError struct {
	reply  string // "Couldn't create filter!" or "Couldn't load chunk!"
	Detail string // why, for the server's log
	cause  error  // what refused it, if not the data itself (Unwrap)
}

func (e *LoadError) Error() string { return e.reply }
func (e *LoadError) Unwrap() error { return e.cause }

func badHeader(detail string) error {
	return &LoadError{reply: "Couldn't create filter!", Detail: detail}
}

func badChunk(format string, a ...any) error {
	return &LoadError{reply: "Couldn't load chunk!", Detail: fmt.Sprintf(format, a...)}
}

// stageInfo is one stage as a header or snapshot describes it.
type stageInfo struct {
	capacity uint64
	bits     int
	fps      uint64 // fingerprints stored
}

// loadState is a CF.LOADCHUNK in progress.
type loadState struct {
	next  uint64   // the bucket the next chunk must start at
	total uint64   // buckets of all stages
	fps   []uint64 // each stage's fingerprints, as the header announced
}

// stageInfos describes f's stages. Preconditions: the key's lock held, so the counts
// are exact.
func stageInfos(f *Filter) []stageInfo {
	var out []stageInfo
	for _, st := range f.list() {
		out = append(out, stageInfo{st.Capacity(), st.FingerprintBits(), st.Len()})
	}
	return out
}

// dumpHeader returns f's header chunk. Preconditions: the key's lock held.
func dumpHeader(f *Filter) []byte {
	v := uint64(dumpVersion)
	if f.p.RecordedSlots() != 0 {
		v = dumpVersionSlots
	}
	w := appendDesc(fields.Writer(headerMagic).Uvarint(v), f)
	return binary.LittleEndian.AppendUint32(w, crc32.Checksum(w, castagnoli))
}

// appendDesc appends f's description: the fields readDesc reads, the
// slots among them where Params.RecordedSlots keeps them (the caller marks
// the record as one that has them). Preconditions: the key's lock held.
func appendDesc(w fields.Writer, f *Filter) fields.Writer {
	w = w.Uvarint(f.p.Capacity).Uvarint(uint64(f.p.BucketSize)).Uvarint(uint64(f.p.MaxIter)).
		Uvarint(uint64(f.p.Expansion)).Uvarint(f.p.Seed)
	if slots := f.p.RecordedSlots(); slots != 0 {
		w = w.Uvarint(uint64(slots))
	}
	w = w.Uvarint(uint64(f.inserted.Load())).Uvarint(uint64(f.deleted.Load()))
	infos := stageInfos(f)
	if t := f.table; t != nil {
		gt := newGrowTable(t)
		level, split := gt.rw.Geometry()
		stash := gt.rw.Stash()
		w = w.Uvarint(0).Uvarint(uint64(level)).Uvarint(split).Uvarint(gt.stored()).Uvarint(uint64(len(stash)))
		for _, h := range stash {
			w = w.Uvarint(h)
		}
		return w
	}
	w = w.Uvarint(uint64(len(infos)))
	for _, si := range infos {
		w = w.Uvarint(si.capacity).Uvarint(uint64(si.bits)).Uvarint(si.fps)
	}
	return w
}

// ScanDump answers CF.SCANDUMP key iter: the next iterator and the chunk
// (nil at the end). Preconditions: the key's lock held.
func (f *Filter) ScanDump(iter int64) (int64, []byte) {
	if f.rb != nil {
		return f.rb.DumpChunk(iter)
	}
	if iter == 0 {
		return 1, dumpHeader(f)
	}
	st, first, n, g := dumpSpan(f, iter)
	if st == nil {
		return 0, nil
	}
	w := fields.Writer(chunkMagic).Uvarint(g).Uvarint(n)
	w = appendRuns(w, st.raw(), first, n)
	return iter + int64(n), binary.LittleEndian.AppendUint32(w, crc32.Checksum(w, castagnoli))
}

// dumpSpan returns the table, first bucket and bucket count of data chunk
// iter (>= 1), and its first bucket g across the tables; a nil table past
// the end.
func dumpSpan(f *Filter, iter int64) (st rawTable, first, n, g uint64) {
	g = uint64(iter - 1)
	var start uint64
	for _, s := range f.tables() {
		if g < start+s.Buckets() {
			first = g - start
			return s, first, min(ChunkBuckets, s.Buckets()-first), g
		}
		start += s.Buckets()
	}
	return nil, 0, 0, g
}

// ChunkBound bounds the bytes of data chunk iter of f: its runs' bound
// (runsBound: the buckets in blocks ever written), and its magic, first
// bucket, count and checksum. Preconditions: the key's lock held.
func (f *Filter) ChunkBound(iter int64) uint64 {
	if f.rb != nil {
		return min(redisbloom.MaxChunk, f.rb.Bytes())
	}
	st, first, n, _ := dumpSpan(f, iter)
	if st == nil {
		return 0
	}
	return runsBound(st.raw(), first, n) + 64
}

// checkCRC splits b into the part between its magic and its trailing
// CRC-32C, if both are right.
func checkCRC(b []byte, magic string) ([]byte, bool) {
	if len(b) < len(magic)+4 || string(b[:len(magic)]) != magic {
		return nil, false
	}
	n := len(b) - 4
	if crc32.Checksum(b[:n], castagnoli) != binary.LittleEndian.Uint32(b[n:]) {
		return nil, false
	}
	return b[len(magic):n], true
}

// filterDesc is a filter as a header or a snapshot entry describes it:
// stages, or a growing table.
type filterDesc struct {
	p        Params
	ins, del int64
	stages   []stageInfo
	grow     *growDesc
}

// growDesc is a growing table's geometry, entries and stash.
type growDesc struct {
	level   uint
	split   uint64
	entries uint64
	stash   []uint64
}

// stored returns the entries each of d's tables holds, in order.
func (d filterDesc) stored() []uint64 {
	if d.grow != nil {
		return []uint64{d.grow.entries}
	}
	var out []uint64
	for _, si := range d.stages {
		out = append(out, si.fps)
	}
	return out
}

// readDesc reads a filter's description (appendDesc), with its slots if
// the record says it has them, and checks that it can be built.
func readDesc(r fields.Source, withSlots bool) (filterDesc, error) {
	var d filterDesc
	d.p.Capacity = r.Uvarint()
	d.p.BucketSize = r.Int(MaxBucketSize)
	d.p.MaxIter = r.Int(MaxIterations)
	d.p.Expansion = r.Int(MaxExpansion)
	d.p.Seed = r.Uvarint()
	var slots int
	if withSlots {
		// 0 would be a field that need not be there: refused as any
		// slot count Validate refuses.
		if slots = r.Int(MaxBucketSize); slots == 0 {
			slots = -1
		}
	}
	d.p.SetRecordedSlots(slots)
	d.ins = int64(r.Int(1 << 62))
	d.del = int64(r.Int(1 << 62))
	n := r.Int(MaxStages * 2)
	if n == 0 {
		g := &growDesc{level: uint(r.Int(64)), split: r.Uvarint(), entries: r.Uvarint()}
		for range r.Int(64) {
			g.stash = append(g.stash, r.Uvarint())
		}
		d.grow = g
	}
	for range n {
		d.stages = append(d.stages, stageInfo{capacity: r.Uvarint(), bits: r.Int(64), fps: r.Uvarint()})
	}
	if err := r.Failed(); err != nil {
		return d, err
	}
	if err := d.p.Validate(); err != nil {
		return d, err
	}
	if g := d.grow; g != nil {
		// The geometry must be one the parameters' table grows to: never
		// fewer buckets than it starts with (tables.Growing's Restore checks the
		// same; here a bad header is the client's "invalid header chunk").
		// A fixed one (EXPANSION 0) never split.
		initial, _ := linhash.InitialBuckets(d.p.Capacity, uint(d.p.Bucket()))
		first := linhash.NewGeometry(initial)
		grew := g.level != first.Level || g.split != first.Split
		if !d.p.growingTable() || d.p.Expansion == 0 && grew || g.level > linhash.MaxLevel || g.split >= 1<<g.level ||
			g.level < first.Level || 1<<g.level+g.split < initial {
			return d, fmt.Errorf("a growing table of level %d, split %d, expansion %d", g.level, g.split, d.p.Expansion)
		}
		if slots := (uint64(1)<<g.level + g.split) * uint64(d.p.Bucket()); g.entries > slots {
			return d, fmt.Errorf("%d entries in %d slots", g.entries, slots)
		}
		return d, nil
	}
	for i, si := range d.stages {
		cfg := d.p.config(si.capacity, si.bits)
		if si.capacity == 0 || si.capacity > MaxCapacity {
			return d, fmt.Errorf("stage %d: capacity %d", i, si.capacity)
		}
		lay, err := cfg.Layout()
		if err != nil {
			return d, fmt.Errorf("stage %d: %v", i, err)
		}
		if si.fps > lay.Buckets*uint64(lay.BucketSize) {
			return d, fmt.Errorf("stage %d: %d fingerprints in %d slots", i, si.fps, lay.Buckets*uint64(lay.BucketSize))
		}
		if _, err := lockfree.Size(cfg); err != nil {
			return d, fmt.Errorf("stage %d: %v", i, err)
		}
	}
	return d, nil
}

// shapes returns the shapes of d's tables, in order, allocating none of
// them: what checking their runs needs (verifySnapshot). Preconditions: d
// came from readDesc, which checked that each can be built.
func (d filterDesc) shapes() ([]tableShape, error) {
	if g := d.grow; g != nil {
		check, err := growing.New(growing.Config{InitialCapacity: 1, BucketSize: d.p.Bucket()})
		if err != nil {
			return nil, err
		}
		return []tableShape{growShape{1<<g.level + g.split, tables.OfGrowing(check)}}, nil
	}
	out := make([]tableShape, len(d.stages))
	for i, si := range d.stages {
		// The server's stages set BucketSize, so lockfree.New builds
		// cfg.Layout() as it is.
		lay, err := d.p.config(si.capacity, si.bits).Layout()
		if err != nil {
			return nil, err
		}
		out[i] = stageShape{lay.Buckets, uint(lay.FingerprintBits), uint(lay.BucketSize)}
	}
	return out, nil
}

// build makes f d's filter: its stages charged and allocated, empty, with
// d's counters. A growing table is allocated once: Restore
// (tables.Growing's) keeps the segments New made. Preconditions: f is a zero Filter.
func (d filterDesc) build(f *Filter, mem Charger) error {
	if g := d.grow; g != nil {
		if err := f.initGrowing(d.p, mem); err != nil {
			return err
		}
		f.mem = mem
		err := tables.OfGrowing(f.table).Restore(g.level, g.split, g.stash, uint64(d.ins))
		f.mem = nil
		if err != nil {
			return &partialCharge{err, f.SizeBytes()}
		}
		f.inserted.Store(d.ins)
		f.deleted.Store(d.del)
		return nil
	}
	var have uint64
	for _, si := range d.stages {
		n, err := lockfree.Size(d.p.config(si.capacity, si.bits))
		if err != nil {
			return err
		}
		if err := mem(have, n); err != nil {
			return &partialCharge{err, have}
		}
		have += n
	}
	stages := make([]*lockfree.Filter, len(d.stages))
	for i, si := range d.stages {
		st, err := lockfree.New(d.p.config(si.capacity, si.bits))
		if err != nil {
			return &partialCharge{err, have} // not reached: Size accepted the Config
		}
		stages[i] = st
	}
	f.p = d.p
	f.stages.Store(&stages)
	f.inserted.Store(d.ins)
	f.deleted.Store(d.del)
	return nil
}

// partialCharge is a build that failed after charging bytes; the caller
// releases them.
type partialCharge struct {
	err     error
	charged uint64
}

func (e *partialCharge) Error() string { return e.err.Error() }
func (e *partialCharge) Unwrap() error { return e.err }

// BeginLoad makes f the filter a header chunk describes (CF.LOADCHUNK's
// iterator 1), empty, with the load pending; its stages are charged to mem
// before they are allocated. On failure it releases what it charged.
// Preconditions: f is a zero Filter.
func (f *Filter) BeginLoad(header []byte, mem Charger, release func(uint64)) error {
	if isRBHeader(header) {
		return f.beginLoadRB(header, mem)
	}
	body, ok := checkCRC(header, headerMagic)
	if !ok {
		return errInvalidHeader
	}
	r := &fields.Reader{B: body}
	v := r.Uvarint()
	if v != dumpVersionSlots && v != dumpVersion && v != 2 {
		if r.Err == nil {
			return badHeader(fmt.Sprintf("dump format version %d, this server reads %d", v, dumpVersionSlots))
		}
		return errInvalidHeader
	}
	d, err := readDesc(r, v == dumpVersionSlots)
	if err != nil || len(r.B) != 0 {
		return errInvalidHeader
	}
	if err := d.build(f, mem); err != nil {
		if pc, ok := err.(*partialCharge); ok {
			release(pc.charged)
			err = pc.err
		}
		return err
	}
	ls := &loadState{fps: d.stored()}
	for _, st := range f.tables() {
		ls.total += st.Buckets()
	}
	f.load = ls
	return nil
}

// LoadChunk applies data chunk iter (CF.LOADCHUNK's iterator >= 2) to f,
// or changes nothing and fails. Preconditions: the key's lock held.
func (f *Filter) LoadChunk(iter int64, chunk []byte) error {
	if f.rb != nil {
		return f.loadChunkRB(iter, chunk)
	}
	ls := f.load
	if ls == nil {
		return badChunk("no CF.LOADCHUNK header (iterator 1) was loaded into this key")
	}
	b, ok := checkCRC(chunk, chunkMagic)
	if !ok {
		return badChunk("bad magic or checksum")
	}
	r := &fields.Reader{B: b}
	g, n := r.Uvarint(), r.Uvarint()
	if r.Err != nil {
		return badChunk("truncated")
	}
	if g != ls.next {
		return badChunk("it starts at bucket %d, expected %d", g, ls.next)
	}
	if n == 0 || n > ChunkBuckets || n > ls.total-g || uint64(iter) != g+n+1 {
		return badChunk("%d buckets at %d with iterator %d", n, g, iter)
	}
	var start uint64
	for i, st := range f.tables() {
		if g >= start+st.Buckets() {
			start += st.Buckets()
			continue
		}
		first := g - start
		if n > st.Buckets()-first {
			return badChunk("it crosses a stage boundary")
		}
		rr := bytes.NewReader(r.B)
		fps, err := readRuns(rr, st, first, n, nil)
		if err != nil {
			return badChunk("%v", err)
		}
		if rr.Len() != 0 {
			return badChunk("trailing bytes")
		}
		have := st.stored() + fps
		if have > ls.fps[i] || first+n == st.Buckets() && have != ls.fps[i] {
			return badChunk("stage %d would hold %d fingerprints, the header says %d", i, have, ls.fps[i])
		}
		if _, err := readRuns(bytes.NewReader(r.B), st, first, n, st.raw()); err != nil {
			return badChunk("%v", err) // not reached: checked above
		}
		ls.next = g + n
		if ls.next == ls.total {
			f.load = nil
		}
		return nil
	}
	return badChunk("past the last stage") // not reached: n <= total-g
}

// castagnoli is the CRC-32C table of the chunks' and payloads' checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)
