package keyspace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/fields"
)

// A snapshot is the key space in one file, streamed from the live filters:
//
//	"CKSNAP04"  magic ("CKSNAP03", and "CKSNAP02" whose filters are all
//	            chains of stages, read the same way without the deadline)
//	u64         generation G: the snapshot stands for the logs before
//	            appendonly.G.log and part of that log (below)
//	per key:
//	  byte      1, or 2 for a filter of RedisBloom's layout (below), or
//	            3 for one of this server's whose description records its
//	            bucket slots (cf.Params.RecordedSlots)
//	  string    key
//	  uvarint   position P: the key's state is the one after every op of
//	            the key that starts before offset P of log G, and before
//	            every op that starts at or after it
//	  uvarint   the key's deadline, Unix ms, 0 for none (from CKSNAP04)
//	  uvarints  the filter's description, as in a dump header (dump.go):
//	            parameters, items inserted and deleted, and each stage's
//	            capacity, fingerprint bits and fingerprints, or a growing
//	            table's geometry, entries and stash
//	  runs      each table's buckets, in order (internal/cf/runs.go)
//	  uvarint   0, or 1 for a CF.LOADCHUNK in progress, then the next bucket
//	            it expects and each stage's fingerprints as its header said
//	byte        0
//	u32         CRC-32C of every byte before it
//
// An entry of tag 2 holds, after the deadline, the RedisBloom filter whole
// as redisbloom.WriteTo streams it (its header, then each sub-filter's
// bucket count and slots).
//
// Writing one. With the gate held exclusively (no write in flight), note the
// keys and rotate the log to generation G; release the gate. Then, for each
// noted key still present: take the gate's read side and the key's writer
// lock (as a write does), read P = the log position, release the gate, write
// the key's entry straight from its stages, and unlock the key. Writes to
// other keys go on meanwhile, and lookups to every key: a snapshot holds one
// key at a time, for as long as its stages take to write, and needs memory
// for a block of buckets, not a copy of the filters. Then fsync
// snapshot.tmp, read it back and verify it, and install it as snapshot.cks,
// the one it replaces becoming snapshot.prev.cks; only then remove the logs
// the older previous generation needed (installSnapshot). The directory so
// holds two generations, each loadable with the logs from its G on: a
// damaged newest snapshot is replaced by the previous one (recover.go).
//
// RENAME is the one op that moves a filter between keys. A rename of f to t
// at offset X of log G while the snapshot runs queues t once more
// (snapProgress): t's last entry then stands after X and holds the moved
// filter, unless a later rename took it from t, whose new key is queued in
// turn; a key may so have several entries, and the last one counts. Replay
// skips the rename's op when f's last entry stands after X, and drops only
// f's copy when t's does (recover.go). This holds whether or not the
// snapshot had reached f: a rename into f after X queues f again, and f's
// last entry, a later life of f, then stands after the rename without
// holding what it moved.
//
// Replay of log G (recover.go) skips each op of a key that starts before the
// key's P. Why that rebuilds every key:
//   - A key with an entry: its ops before P are in the entry (they were
//     applied before its lock was taken, and a key's ops are logged under
//     its lock), the ops from P on are not (they waited for the lock).
//   - FLUSHALL (logged at F with the gate held exclusively) clears the keys
//     with P <= F; a key captured later holds its state after F.
//   - A key with no entry was absent when its turn came, or created after
//     the rotation; either way every op of its final life is in log G,
//     from its create on. Ops on such a key while it is missing belong to
//     a life that ended (DEL) in log G before its turn: skipped.
// The logs after G are replayed in full. A crash at any step leaves the old
// snapshot with all the logs after it, or the new one with log G and after
// (and the previous one with the logs from its own generation on).

const (
	SnapName    = "snapshot.cks"      // the newest snapshot
	SnapPrev    = "snapshot.prev.cks" // the previous generation
	SnapTmp     = "snapshot.tmp"      // being written
	snapDamaged = ".damaged"          // appended by --repair to a damaged snapshot set aside
	snapMagic   = "CKSNAP04"
	snapMagicV3 = "CKSNAP03"
	snapMagicV2 = "CKSNAP02"
	snapMagicV1 = "CKSNAP01"
	// maxSnapKey bounds a key's length in a snapshot; longer is corruption.
	maxSnapKey = 1 << 30
)

// TestHookSnapshotEntry is run, if set, after each entry a snapshot writes,
// with no lock held: tests widen the window in which writes interleave.
var TestHookSnapshotEntry func()

// Snapshot is Server.snapshot's work: rotate, write snapshot.tmp, verify and
// install it (see the format above). It returns the keys written, the
// file's size and its generation. Preconditions: st.aof set; no other
// snapshot runs.
func (st *Store) Snapshot(dir string) (int, int64, uint64, error) {
	if err := st.AOF.Err(); err != nil {
		return 0, 0, 0, err
	}
	st.gate.Lock()
	gen := st.AOF.gen + 1
	names := make([]string, 0, st.keys.Len())
	for k := range st.keys.All() {
		names = append(names, k)
	}
	if err := st.AOF.rotate(gen); err != nil {
		st.gate.Unlock()
		return 0, 0, 0, err
	}
	if st.Repl != nil && st.Replica.Load() {
		// A replica's position starts the new generation (position.go).
		st.Repl.WithPosition(func(id string, offset int64) {
			st.AOF.Append(EncodeReplPos(id, offset))
		})
	}
	dirty := st.Dirty.Swap(0)
	st.snap.begin(names)
	st.gate.Unlock()

	n, size, err := st.writeSnapshot(dir, gen)
	st.snap.end()
	if err == nil {
		err = st.installSnapshot(dir, gen)
	}
	if err != nil {
		st.Dirty.Add(dirty)
		os.Remove(filepath.Join(dir, SnapTmp)) // never leave a partial file on a full disk
		return 0, 0, 0, fmt.Errorf("ERR snapshot failed: %v", err)
	}
	return n, size, gen, nil
}

// TestHookInstallStep is run, if set, after each step of installSnapshot
// ("written", "verified", "demoted", "installed", "logs removed") with the
// directory as a crash at that moment would leave it: tests copy it.
var TestHookInstallStep func(step string)

func installStep(step string) {
	if TestHookInstallStep != nil {
		TestHookInstallStep(step)
	}
}

// installSnapshot makes snapshot.tmp, written and fsynced, of generation gen
// the newest snapshot. Each step leaves a directory that loads with nothing
// lost (recover.go):
//
//  1. Read snapshot.tmp back and verify it: its checksum, and a parse of
//     every entry (each key's description and runs checked against the
//     shape of its tables, which are not allocated). A snapshot that does
//     not read back fails here, and the newest and previous generations
//     stay as they are.
//  2. Rename snapshot.cks (generation C) to snapshot.prev.cks, replacing
//     the older previous one (generation P); fsync the directory. A crash
//     now leaves snapshot.prev.cks alone, which startup loads as the
//     newest, with the logs from C on.
//  3. Rename snapshot.tmp to snapshot.cks; fsync the directory. The pair is
//     now gen and C, and the logs from P on are still there.
//  4. Remove the logs before C: the older previous generation's, which no
//     snapshot needs any more.
//
// With no snapshot.cks (the first snapshot, or one after a crash in step 2
// or a --repair that set the newest aside) step 2 is skipped and whatever
// snapshot.prev.cks holds stays the previous generation; with no snapshot
// at all no log is removed, so the empty state at generation 0 plus every
// log is the previous generation.
func (st *Store) installSnapshot(dir string, gen uint64) error {
	installStep("written")
	tmp := filepath.Join(dir, SnapTmp)
	if err := verifySnapshot(tmp, gen); err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	installStep("verified")
	newest := filepath.Join(dir, SnapName)
	if _, err := os.Stat(newest); err == nil {
		if err := os.Rename(newest, filepath.Join(dir, SnapPrev)); err != nil {
			return err
		}
		if err := syncDir(dir); err != nil {
			return err
		}
		installStep("demoted")
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, newest); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	installStep("installed")
	a := st.AOF
	if a.hasSnap {
		// The snapshot installed before this one is the previous
		// generation now, whether it was in snapshot.cks (renamed in
		// step 2) or, after a crash or a repair, in snapshot.prev.cks.
		removeLogsBefore(dir, a.snapGen, a.log)
		if err := syncDir(dir); err != nil {
			a.log.Warn("syncing the data directory after removing old logs", "err", err)
		}
	}
	a.snapGen, a.hasSnap = gen, true
	installStep("logs removed")
	return nil
}

// verifySnapshot reads the snapshot at path back from the file and checks
// it whole: checksum, generation, and every entry parsed, without keeping
// the filters.
func verifySnapshot(path string, gen uint64) error {
	g, _, err := readSnapshot(path, false, func(snapEntry) {})
	if err != nil {
		return err
	}
	if g != gen {
		return corruptFile(path, "generation %d, want %d", g, gen)
	}
	return nil
}

// writeSnapshot streams the entries of the keys st.snap holds to
// snapshot.tmp, fsynced and closed. It returns the keys written and the
// file's size.
func (st *Store) writeSnapshot(dir string, gen uint64) (int, int64, error) {
	f, err := os.OpenFile(filepath.Join(dir, SnapTmp), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	crc := crc32.New(castagnoli)
	cw := &countWriter{w: io.MultiWriter(bw, crc)}
	head := binary.LittleEndian.AppendUint64([]byte(snapMagic), gen)
	cw.Write(head)
	var buf []byte
	n := 0
	for i := 0; ; i++ {
		k, more := st.snap.next(i)
		if !more {
			break
		}
		c, pos, ok := st.capture(k)
		if !ok {
			continue
		}
		buf, err = writeEntry(cw, k, pos, c, buf)
		c.Mu.Unlock()
		if err != nil {
			return 0, 0, err
		}
		n++
		if TestHookSnapshotEntry != nil {
			TestHookSnapshotEntry()
		}
	}
	cw.Write([]byte{0})
	if cw.err != nil {
		return 0, 0, cw.err
	}
	if _, err := bw.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
		return 0, 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, 0, err
	}
	if err := f.Close(); err != nil {
		return 0, 0, err
	}
	return n, cw.n + 4, nil
}

// Entry tags: a filter of this server's layout, of RedisBloom's, or of
// this server's with its slots recorded.
const (
	tagCuckoo      = 1
	tagRedisBloom  = 2
	tagCuckooSlots = 3
)

// entryTag returns the tag of an entry holding a filter of parameters p.
func entryTag(p cf.Params) byte {
	switch {
	case p.Layout == cf.LayoutRedisBloom:
		return tagRedisBloom
	case p.RecordedSlots() != 0:
		return tagCuckooSlots
	}
	return tagCuckoo
}

// capture returns key k's filter with its writer lock held, and the log
// position its entry stands at; false if k is absent. The gate's read side,
// held while the position is read, orders it with FLUSHALL.
func (st *Store) capture(k string) (*Entry, uint64, bool) {
	for {
		c, ok := st.keys.Load(k)
		if !ok {
			st.snap.visit()
			return nil, 0, false
		}
		st.gate.RLock()
		c.Mu.Lock()
		if !st.at(k, c) {
			c.Mu.Unlock()
			st.gate.RUnlock()
			continue
		}
		pos := st.AOF.Position()
		st.snap.visit()
		st.gate.RUnlock()
		return c, pos, true
	}
}

// writeEntry writes key's entry. Preconditions: c.mu held.
func writeEntry(w io.Writer, key string, pos uint64, c *Entry, buf []byte) ([]byte, error) {
	e := fields.Writer{entryTag(c.Params())}.Str([]byte(key)).Uvarint(pos).Uvarint(uint64(c.Deadline.Load()))
	if _, err := w.Write(e); err != nil {
		return buf, err
	}
	return c.WriteSnapshot(w, buf)
}

// countWriter counts the bytes written and keeps the first error.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// snapEntry is one key of a decoded snapshot.
type snapEntry struct {
	key      string
	c        *Entry
	pos      uint64 // see the format above; 0 for a version 1 snapshot
	deadline int64  // Unix ms, 0 for none
}

// ReadSnapshotFile decodes the snapshot at path. fuzzy reports a version 2
// snapshot, whose entries' positions apply to log gen. Every error wraps
// ErrCorrupt and names the file, except I/O errors.
func ReadSnapshotFile(path string) (gen uint64, entries []snapEntry, fuzzy bool, err error) {
	gen, fuzzy, err = readSnapshot(path, true, func(e snapEntry) { entries = append(entries, e) })
	if err != nil {
		return 0, nil, false, err
	}
	return gen, entries, fuzzy, nil
}

// readSnapshot decodes the snapshot at path and hands each entry to each,
// in order. Without apply, each entry's runs are checked against its
// tables' shapes, and no table is allocated: its entries have no filter
// (verifySnapshot).
func readSnapshot(path string, apply bool, each func(snapEntry)) (gen uint64, fuzzy bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	magic := make([]byte, len(snapMagic))
	if _, err := io.ReadFull(f, magic); err != nil || string(magic) != snapMagic && string(magic) != snapMagicV3 && string(magic) != snapMagicV2 {
		if string(magic) == snapMagicV1 {
			data, err := os.ReadFile(path)
			if err != nil {
				return 0, false, err
			}
			gen, entries, err := readSnapshotV1(path, data)
			for _, e := range entries {
				each(e)
			}
			return gen, false, err
		}
		return 0, false, corruptFile(path, "not a snapshot (bad magic or too short)")
	}
	size := fi.Size()
	if size < int64(len(snapMagic))+8+1+4 {
		return 0, false, corruptFile(path, "too short")
	}
	// First pass: the checksum, so that nothing is built from damaged bytes.
	crc := crc32.New(castagnoli)
	crc.Write(magic)
	if _, err := io.CopyN(crc, f, size-int64(len(snapMagic))-4); err != nil {
		return 0, false, err
	}
	var sum [4]byte
	if _, err := f.ReadAt(sum[:], size-4); err != nil {
		return 0, false, err
	}
	if crc.Sum32() != binary.LittleEndian.Uint32(sum[:]) {
		return 0, false, corruptFile(path, "checksum mismatch (the file's %d bytes do not match its CRC-32C)", size)
	}
	if _, err := f.Seek(int64(len(snapMagic)), io.SeekStart); err != nil {
		return 0, false, err
	}
	cr := &countReader{r: io.LimitReader(f, size-int64(len(snapMagic))-4)}
	br := bufio.NewReaderSize(cr, 1<<20)
	offset := func() int64 { return int64(len(snapMagic)) + cr.n - int64(br.Buffered()) }
	gen, err = readEntries(br, string(magic) == snapMagic, apply, each)
	if err != nil {
		return 0, false, corruptFile(path, "at offset %d: %v", offset(), err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return 0, false, corruptFile(path, "bytes after the last entry, at offset %d", offset()-1)
	}
	return gen, true, nil
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func corruptFile(path, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", path, ErrCorrupt, fmt.Sprintf(format, args...))
}

// readEntries decodes a version 2, 3 or 4 (withDeadlines) snapshot after
// its magic, handing each entry to each; apply as readSnapshot.
func readEntries(br *bufio.Reader, withDeadlines, apply bool, each func(snapEntry)) (uint64, error) {
	var g [8]byte
	if _, err := io.ReadFull(br, g[:]); err != nil {
		return 0, err
	}
	gen := binary.LittleEndian.Uint64(g[:])
	r := &fields.Stream{R: br}
	for {
		tag, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		if tag == 0 {
			return gen, nil
		}
		if tag != tagCuckoo && tag != tagRedisBloom && tag != tagCuckooSlots {
			return 0, fmt.Errorf("entry tag %d", tag)
		}
		key := string(r.Str(maxSnapKey))
		pos := r.Uvarint()
		var deadline int64
		if withDeadlines {
			deadline = int64(r.Int(math.MaxInt64))
		}
		if r.Err != nil {
			return 0, r.Err
		}
		var c *Entry
		if apply {
			c = new(Entry)
		}
		var into *cf.Filter
		if c != nil {
			into = &c.Filter
		}
		if tag == tagRedisBloom {
			err = cf.ReadSnapshotRB(r, into)
		} else {
			err = cf.ReadSnapshot(r, into, tag == tagCuckooSlots)
		}
		if err != nil {
			return 0, fmt.Errorf("key %q: %v", key, err)
		}
		each(snapEntry{key, c, pos, deadline})
	}
}

// snapProgress is the snapshot being written, as RENAME needs it: the keys
// it will visit, in order (those noted at the rotation, then the new names
// of keys renamed while it runs), and how many of them it has visited (for
// the tests of its boundaries: the queue is visited in order, one visit a
// key, so the visited keys are queue[:visits]).
type snapProgress struct {
	mu     sync.Mutex
	active bool
	queue  []string
	visits int
}

// begin starts a snapshot of names. Preconditions: gate held exclusively,
// so no rename is in flight.
func (p *snapProgress) begin(names []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active, p.queue, p.visits = true, names, 0
}

func (p *snapProgress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active, p.queue, p.visits = false, nil, 0
}

// next returns the i-th key to visit, false past the last.
func (p *snapProgress) next(i int) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i >= len(p.queue) {
		return "", false
	}
	return p.queue[i], true
}

// visit records that the snapshot has taken its next key's position (or
// found it missing). Preconditions: that key's lock held, if it is present.
func (p *snapProgress) visit() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active {
		p.visits++
	}
}

// renamed records a rename of from to to, logged just now: to is visited
// again, so that its last entry stands after the rename and holds the
// moved filter. Preconditions: from's and to's locks held, from still
// mapped to its filter.
//
// Whether the snapshot has visited from does not matter. If it has, its
// entry stands before the rename, but a rename into from later in the
// snapshot queues from again, and its last entry, a later life, then
// stands after this rename, which replay then skips: only to's own later
// entry can hold the filter.
func (p *snapProgress) renamed(from, to string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active {
		p.queue = append(p.queue, to)
	}
}
