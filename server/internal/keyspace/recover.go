package keyspace

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Startup: load the newest snapshot (or, if it is damaged, what replaces
// it: see loadSnapshots), replay the logs from its generation on, and open
// the last log for appending.
//
// Damaged logs. Only a record cut short by the end of the last log (a
// header of fewer than 8 bytes, or fewer payload bytes than its length
// promises) can be a write that never finished, so never acknowledged: it
// is dropped with a warning naming the file, the offset and the bytes, and
// the file truncated to its last good record. Anything else is damage and
// stops startup with an error naming the file and offset and saying what
// --repair would drop, unless repair is set: a complete record that fails
// its checksum (its length says N bytes and N bytes are there, so the
// write finished and may have been acknowledged), at any position, the
// last included; a record whose checksum holds but whose op does not
// apply; a length above MaxRecord; a record cut short in a log before the
// last. With repair the damaged log is cut at the bad record, dropping the
// rest of that log, with a warning saying how many bytes, and how many
// whole records after the bad one, were dropped; replay goes on with the
// next log. A damaged or missing snapshot: see loadSnapshots.

// listLogs returns the generations of the log files in dir, in order.
func listLogs(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var gens []uint64
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "appendonly.") || !strings.HasSuffix(name, ".log") {
			continue
		}
		g, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, "appendonly."), ".log"), 16, 64)
		if err != nil {
			continue
		}
		gens = append(gens, g)
	}
	slices.Sort(gens)
	return gens, nil
}

func removeLogsBefore(dir string, gen uint64, log *slog.Logger) {
	gens, err := listLogs(dir)
	if err != nil {
		log.Warn("listing logs", "err", err)
		return
	}
	for _, g := range gens {
		if g < gen {
			if err := os.Remove(filepath.Join(dir, LogName(g))); err != nil {
				log.Warn("removing an old log", "err", err)
			}
		}
	}
}

// RecoverDir loads dir into st and returns the open log.
func RecoverDir(st *Store, dir string, mode FsyncMode, repair bool, log *slog.Logger) (*AOF, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	os.Remove(filepath.Join(dir, SnapTmp)) // an unfinished or uninstalled snapshot
	gens, err := listLogs(dir)
	if err != nil {
		return nil, err
	}
	ld, err := loadSnapshots(st, dir, gens, repair, log)
	if err != nil {
		return nil, err
	}
	gens = slices.DeleteFunc(gens, func(g uint64) bool { return g < ld.gen })
	if len(gens) == 0 {
		gens = []uint64{ld.gen}
	}
	size, ops, err := st.replayLogs(dir, gens, ld, repair, log)
	if err != nil {
		return nil, err
	}
	st.Dirty.Store(int64(ops))
	last := gens[len(gens)-1]
	log.Info("log replayed", "dir", dir, "logs", len(gens), "ops", ops, "keys", st.keys.Len())
	a, err := OpenAOF(dir, last, size, mode, log)
	if err != nil {
		return nil, err
	}
	a.snapGen, a.hasSnap = ld.gen, ld.has
	if ld.lenient {
		if err := st.saveRecovered(a, dir, ld.fuzzy, log); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// replayLogs replays the logs of generations gens in dir into st, over what
// loadSnapshots loaded (ld), and answers the size of the last, where
// appending resumes, and the ops applied. A log with a bad record is cut
// before it where cutAt allows, and startup refused where it does not.
func (st *Store) replayLogs(dir string, gens []uint64, ld loaded, repair bool, log *slog.Logger) (size int64, ops int, err error) {
	for i, g := range gens {
		path := filepath.Join(dir, LogName(g))
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, 0, err
		}
		var off int64
		var fz *FuzzyLog
		if ld.fuzzy != nil && (g == ld.fuzzy.gen || ld.lenient) {
			fz = ld.fuzzy
		}
		good, _, err := ScanLog(path, data, func(b []byte) error {
			// scanLog hands over the records in order from offset 0.
			rec := off
			off += RecordHeader + int64(len(b))
			if err := st.Replay(b, rec, fz); err != nil {
				return err
			}
			ops++
			return nil
		})
		if err != nil {
			if err := cutAt(path, data, good, off, err, i == len(gens)-1, repair, log); err != nil {
				return 0, 0, err
			}
			if err := os.Truncate(path, good); err != nil {
				return 0, 0, err
			}
		}
		size = good
	}
	return size, ops, nil
}

// cutAt decides on err, the bad record at offset good of the log path
// (whose contents are data; next is where the record after it starts), in
// the last log if last: it answers nil, having logged why, if the log may be
// cut there (a record cut short at the end of the last log, or with repair
// any), and otherwise the error that refuses startup.
func cutAt(path string, data []byte, good, next int64, err error, last, repair bool, log *slog.Logger) error {
	var le *logError
	if !errors.As(err, &le) {
		// The record's checksum held but its op did not decode or
		// apply: damage that the checksum cannot explain.
		le = &logError{File: path, Offset: good, Reason: err.Error(), Next: next, Op: true}
		err = le
	}
	dropped := int64(len(data)) - le.Offset
	switch {
	case le.Short && last:
		log.Warn("dropping a record cut short at the end of the last log: a write the server never finished, so its reply was never sent "+
			"(unless a power loss under appendfsync everysec or no cut off a write already acknowledged, or the record's length field is damaged)",
			"file", path, "offset", le.Offset, "bytes", dropped, "reason", le.Reason)
	case repair:
		log.Warn("--repair: dropping the rest of a damaged log", "file", path, "offset", le.Offset,
			"bytes", dropped, "dropped", le.dropped(data), "reason", le.Reason)
	default:
		return fmt.Errorf("%w; refusing to start, %s: restart with --repair to drop the log from offset %d on (%s)",
			err, le.why(), le.Offset, le.dropped(data))
	}
	return nil
}

// saveRecovered names the keys lost when the logs were replayed with no
// snapshot under them (fz, lenient), and saves a snapshot of what they
// recovered through a, the open log: a restart could not replay them so
// again.
func (st *Store) saveRecovered(a *AOF, dir string, fz *FuzzyLog, log *slog.Logger) error {
	n, names := st.lostKeys(fz)
	if n > 0 {
		log.Warn("--repair: ops on keys that only the missing or damaged snapshot held were skipped; "+
			"these keys are lost, as is any key the snapshot held that no log touches",
			"keys", n, "ops_skipped", fz.skipped, "lost", names)
	} else {
		log.Warn("--repair: no log op is left on a key that only the snapshot held; any key the snapshot held that no log touches is lost",
			"ops_skipped", fz.skipped)
	}
	st.AOF = a
	n, _, g, err := st.Snapshot(dir)
	st.AOF = nil
	if err != nil {
		return fmt.Errorf("--repair: saving the recovered keys: %w", err)
	}
	log.Warn("--repair: the keys recovered from the logs alone are saved", "keys", n, "generation", g)
	return nil
}

// why says why startup refuses the bad record e. A record cut short is
// refused only in a log before the last.
func (e *logError) why() string {
	switch {
	case e.Short:
		return "as a record cut short is a write that never finished only at the end of the last log"
	case e.Next == 0:
		return "as a record's length is damaged"
	case e.Op:
		return "as a record whose checksum holds has an op that does not apply: damage the checksum cannot explain"
	default:
		return "as a complete record that fails its checksum is damage, not a write that never finished, and may hold an acknowledged write"
	}
}

// dropped says what cutting data, e's log, at e's offset drops.
func (e *logError) dropped(data []byte) string {
	n := int64(len(data)) - e.Offset
	if e.Next == 0 || e.Next > int64(len(data)) {
		return fmt.Sprintf("%d bytes, the rest of the file: the bad record's length cannot be trusted, so what follows it cannot be read", n)
	}
	after := data[e.Next:]
	if len(after) == 0 {
		return fmt.Sprintf("%d bytes: the bad record, the file's last", n)
	}
	return fmt.Sprintf("%d bytes: the bad record of %d bytes and the %d bytes after it, where %d records read whole",
		n, e.Next-e.Offset, len(after), wholeRecords(after))
}

// loaded is what startup took from the snapshots.
type loaded struct {
	gen   uint64 // the first log generation to replay
	has   bool   // a snapshot of generation gen was loaded
	fuzzy *FuzzyLog
	// lenient: no snapshot stands under the logs (--repair found none
	// intact): every log is replayed with fuzzy's empty positions, so ops
	// on keys that do not exist are skipped.
	lenient bool
}

// Damaged snapshots. Startup loads snapshot.cks (or, after a crash in
// installSnapshot's step 2, snapshot.prev.cks alone). If it does not read
// (checksum, parse, or EIO), what replaces it is, in order:
//
//   - the previous snapshot, snapshot.prev.cks of generation P, if it reads
//     whole and the logs from P on are all there: it and those logs are a
//     state as complete as the damaged one and its logs (the logs since P
//     are kept until a newer pair is installed), so nothing acknowledged
//     is lost;
//   - the empty state, if the logs from generation 0 on are all there (a
//     directory whose first snapshot is damaged): again nothing is lost;
//   - else the logs alone, replayed leniently (logsAlone): a key that the
//     logs create comes back whole; the keys that only the snapshot held
//     are lost, and those the logs touch are named.
//
// Without repair startup refuses, with an error naming the file and its
// damage and saying which of the three --repair will do, as Redis refuses a
// damaged RDB: an operator learns of the damage before the server answers
// again, even when nothing is lost. With repair it is done, the damaged
// file renamed (name.damaged) rather than deleted, and a warning logged.

// loadSnapshots loads the newest snapshot of dir into st, or what replaces
// it when it is damaged. gens are the log generations in dir.
func loadSnapshots(st *Store, dir string, gens []uint64, repair bool, log *slog.Logger) (loaded, error) {
	newest, prev := filepath.Join(dir, SnapName), filepath.Join(dir, SnapPrev)
	haveNewest, err := exists(newest)
	if err != nil {
		return loaded{}, err
	}
	havePrev, err := exists(prev)
	if err != nil {
		return loaded{}, err
	}
	if !haveNewest {
		if !havePrev {
			if len(gens) == 0 || gens[0] == 0 {
				return loaded{}, nil // a new directory, or one not yet snapshotted
			}
			return missingSnapshots(dir, gens, repair, log)
		}
		log.Info("loading the previous snapshot as the newest: the server stopped while installing a new one", "file", prev)
		newest, havePrev = prev, false
	}
	g, entries, isFuzzy, err := ReadSnapshotFile(newest)
	if err == nil {
		return st.loadEntries(g, entries, isFuzzy, newest, log), nil
	}
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, syscall.EIO) {
		return loaded{}, err
	}
	d := damagedSnapshot{path: newest, damage: err}
	if d.aside, err = asideName(newest, snapDamaged); err != nil {
		return loaded{}, err
	}
	if havePrev {
		d.prev = prev
	}
	return st.replaceDamaged(d, gens, repair, log)
}

// damagedSnapshot is a snapshot file that did not read, and the previous
// one, which may replace it.
type damagedSnapshot struct {
	path   string // the damaged file
	damage error  // why it did not read
	aside  string // the name --repair renames it to
	prev   string // the previous snapshot's file; "" if there is none
}

// replaceDamaged loads what replaces d (see Damaged snapshots above): the
// previous snapshot if it reads whole and the logs since it are all there,
// else what replaceWithLogs says. Without repair it refuses, saying what
// --repair would do.
func (st *Store) replaceDamaged(d damagedSnapshot, gens []uint64, repair bool, log *slog.Logger) (loaded, error) {
	var pg uint64
	var pEntries []snapEntry
	var pFuzzy bool
	var perr error
	if d.prev != "" {
		pg, pEntries, pFuzzy, perr = ReadSnapshotFile(d.prev)
	}
	if d.prev == "" || perr != nil || !logsFrom(gens, pg) {
		return replaceWithLogs(d, gens, unusablePrevious(d.prev != "", pg, perr), perr != nil, repair, log)
	}
	if !repair {
		return loaded{}, fmt.Errorf("%w; refusing to start: --repair will rename it to %s, load the previous snapshot %s (generation %d) and replay the logs from generation %d on, losing nothing acknowledged",
			d.damage, d.aside, d.prev, pg, pg)
	}
	if err := setAside(d.path, d.aside); err != nil {
		return loaded{}, err
	}
	log.Warn("--repair: the newest snapshot is damaged; loading the previous one and the logs since it, nothing lost",
		"damaged", d.path, "renamed_to", d.aside, "err", d.damage, "file", d.prev, "generation", pg)
	return st.loadEntries(pg, pEntries, pFuzzy, d.prev, log), nil
}

// unusablePrevious says why the previous snapshot (if havePrev, of
// generation pg, read with perr) cannot replace a damaged one.
func unusablePrevious(havePrev bool, pg uint64, perr error) string {
	switch {
	case havePrev && perr != nil:
		return fmt.Sprintf("the previous snapshot is damaged too (%v)", perr)
	case havePrev:
		return fmt.Sprintf("the logs from the previous snapshot's generation %d on are not all there", pg)
	}
	return "there is no previous snapshot"
}

// replaceWithLogs replaces d, with no usable previous snapshot (why), by the
// logs: every log from generation 0 on if they are all there (nothing is
// lost), else the logs there are alone (logsAlone). Without repair it
// refuses, saying what --repair would do; with it, d and the previous
// snapshot (damaged too if prevDamaged) are renamed.
func replaceWithLogs(d damagedSnapshot, gens []uint64, why string, prevDamaged, repair bool, log *slog.Logger) (loaded, error) {
	empty := logsFrom(gens, 0)
	var what string
	if empty {
		what = "replay every log from generation 0 on (the directory's whole history), losing nothing acknowledged"
	} else {
		span := "there are no logs"
		if len(gens) > 0 {
			span = fmt.Sprintf("generations %d to %d", gens[0], gens[len(gens)-1])
		}
		what = fmt.Sprintf("replay the logs there are (%s) alone, losing every key the snapshot held that those logs do not create again", span)
	}
	prevAside := ""
	if d.prev != "" {
		suffix := ".unused"
		if prevDamaged {
			suffix = snapDamaged
		}
		var err error
		if prevAside, err = asideName(d.prev, suffix); err != nil {
			return loaded{}, err
		}
		what = fmt.Sprintf("rename %s to %s and %s", d.prev, prevAside, what)
	}
	if !repair {
		return loaded{}, fmt.Errorf("%w; refusing to start, and %s: --repair will rename it to %s, %s", d.damage, why, d.aside, what)
	}
	if err := setAside(d.path, d.aside); err != nil {
		return loaded{}, err
	}
	if prevAside != "" {
		if err := setAside(d.prev, prevAside); err != nil {
			return loaded{}, err
		}
	}
	if empty {
		log.Warn("--repair: the snapshot is damaged; replaying every log from generation 0, nothing lost",
			"damaged", d.path, "renamed_to", d.aside, "err", d.damage, "why", why)
		return loaded{}, nil
	}
	log.Warn("--repair: the snapshot is damaged and nothing replaces it; replaying the logs alone, the keys only the snapshot held are lost",
		"damaged", d.path, "renamed_to", d.aside, "err", d.damage, "why", why)
	return logsAlone(gens), nil
}

// ErrNoSnapshot is wrapped by startup's refusal when the logs start after
// generation 0 and neither snapshot file is there.
var ErrNoSnapshot = errors.New("no snapshot under the logs")

// Missing snapshots. The logs start at generation G > 0 only once a
// snapshot of generation G or later was installed, and snapshot.cks and
// snapshot.prev.cks are never both absent after that (installSnapshot
// renames one at a time): if both are gone, someone removed them, and the
// keys written before G are nowhere else. Startup refuses, naming the
// missing files, as it refuses a damaged snapshot. With repair the logs
// are replayed alone, as when both snapshots are damaged (logsAlone).

// missingSnapshots refuses, or with repair replays the logs alone, when
// neither snapshot file is in dir and the logs, gens, start after
// generation 0.
func missingSnapshots(dir string, gens []uint64, repair bool, log *slog.Logger) (loaded, error) {
	newest, prev := filepath.Join(dir, SnapName), filepath.Join(dir, SnapPrev)
	first := filepath.Join(dir, LogName(gens[0]))
	if !repair {
		return loaded{}, fmt.Errorf("%w: %s and %s are missing, but the logs start at generation %d (%s): the keys written before it are only in a snapshot; "+
			"refusing to start: --repair will replay the logs there are (generations %d to %d) alone, keeping every key they create, "+
			"skipping each op on a key they do not (one the missing snapshot held) and naming those keys, which are lost, and then save a snapshot",
			ErrNoSnapshot, newest, prev, gens[0], first, gens[0], gens[len(gens)-1])
	}
	log.Warn("--repair: both snapshots are missing; replaying the logs alone, the keys only the snapshot held are lost",
		"missing", newest+" "+prev, "first_log", first, "generations", fmt.Sprintf("%d to %d", gens[0], gens[len(gens)-1]))
	return logsAlone(gens), nil
}

// logsAlone is what startup replays when no snapshot stands under the logs
// gens (both damaged or missing): every log, leniently. Replay skips each op
// on a key that does not exist (its filter was in the snapshot) and notes
// the key (FuzzyLog.lost); RecoverDir names the keys lost at the end. Every
// key the logs create comes back whole, and no log is cut for a missing
// key.
func logsAlone(gens []uint64) loaded {
	var first uint64
	if len(gens) > 0 {
		first = gens[0]
	}
	return loaded{gen: first, fuzzy: &FuzzyLog{Positions: map[string]uint64{}, lost: map[string]int{}}, lenient: true}
}

// lostKeys names the keys fz lost: at most 50, each with the ops skipped,
// then how many more.
func (st *Store) lostKeys(fz *FuzzyLog) (n int, names string) {
	var keys []string
	for k := range fz.lost {
		if _, ok := st.keys.Load(k); !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i == 50 {
			fmt.Fprintf(&b, ", and %d more", len(keys)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q (%d ops skipped)", k, fz.lost[k])
	}
	return len(keys), b.String()
}

// loadEntries stores a snapshot's entries in st.
func (st *Store) loadEntries(gen uint64, entries []snapEntry, isFuzzy bool, path string, log *slog.Logger) loaded {
	ld := loaded{gen: gen, has: true}
	if isFuzzy {
		ld.fuzzy = &FuzzyLog{gen: gen, Positions: make(map[string]uint64, len(entries))}
	}
	for _, e := range entries {
		if old, ok := st.keys.Load(e.key); ok {
			st.dropLocked(e.key, old) // a key renamed during the snapshot: the last entry counts
		}
		st.keys.Store(e.key, e.c)
		st.touch(e.c)
		st.mem.Add(int64(e.c.SizeBytes()))
		if e.deadline != 0 {
			st.exp.set(e.key, e.c, e.deadline)
		}
		if ld.fuzzy != nil {
			ld.fuzzy.Positions[e.key] = e.pos
		}
	}
	log.Info("snapshot loaded", "file", path, "keys", len(entries), "generation", gen)
	return ld
}

// logsFrom reports whether gens (sorted) holds every generation from gen to
// its last, gen included.
func logsFrom(gens []uint64, gen uint64) bool {
	i, found := slices.BinarySearch(gens, gen)
	if !found {
		return false
	}
	for ; i+1 < len(gens); i++ {
		if gens[i+1] != gens[i]+1 {
			return false
		}
	}
	return true
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// asideName returns path+suffix, or with .1, .2 ... appended if that is
// taken: a file set aside never replaces another.
func asideName(path, suffix string) (string, error) {
	name := path + suffix
	for i := 1; ; i++ {
		ok, err := exists(name)
		if err != nil || !ok {
			return name, err
		}
		name = fmt.Sprintf("%s%s.%d", path, suffix, i)
	}
}

// setAside renames a snapshot that startup will not load, and makes the
// rename durable before anything else changes.
func setAside(path, aside string) error {
	if err := os.Rename(path, aside); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// FuzzyLog is the log generation a version 2 snapshot stands in part for:
// each key's position in it (see snapshot.go).
type FuzzyLog struct {
	gen       uint64
	Positions map[string]uint64
	// lost is set when the logs are replayed with no snapshot under them
	// (loaded.lenient): each key whose ops were skipped because a snapshot
	// that is missing or damaged held its filter, with the ops skipped.
	// A key leaves it when its life ends in the logs (a drop, a rename
	// away, a flush); one still in it that does not exist at the end is
	// lost.
	lost    map[string]int
	skipped int // ops skipped in all
}

// skip notes that an op on key, which the missing snapshot held, was
// skipped; ended: the op ended the key's life (a drop, a rename away), so
// its absence is right.
func (fz *FuzzyLog) skip(key string, ended bool) {
	fz.skipped++
	if ended {
		delete(fz.lost, key)
	} else {
		fz.lost[key]++
	}
}

// Replay applies one logged op, which starts at offset at of its log; fz is
// set for the log the snapshot stands in part for. Replayed inserts never
// fail for lack of room or memory: each was acknowledged once.
func (st *Store) Replay(b []byte, at int64, fz *FuzzyLog) error {
	if len(b) > 0 && b[0] == OpMulti {
		return st.replayMulti(b, at, fz)
	}
	if len(b) > 0 && b[0] == OpReplPos {
		return st.replayPosition(b)
	}
	o, err := DecodeOp(b)
	if err != nil {
		return err
	}
	a := &applying{st: st}
	if o.Kind == OpFlush {
		if fz == nil {
			return opKinds[OpFlush].apply(a, &o)
		}
		// Keys the snapshot captured after the flush keep their state.
		var drop []string
		for k := range st.keys.All() {
			if uint64(at) >= fz.Positions[k] {
				drop = append(drop, k)
			}
		}
		for _, k := range drop {
			if c, ok := st.keys.Load(k); ok {
				st.dropLocked(k, c)
			}
		}
		if fz.lost != nil {
			clear(fz.lost) // the keys the snapshot held are gone now anyway
		}
		return nil
	}
	a.Key = string(o.Key)
	if fz != nil && uint64(at) < fz.Positions[a.Key] {
		return nil // in the key's snapshot entry already
	}
	a.At, _ = st.keys.Load(a.Key)
	if a.At == nil && fz != nil && fz.lost != nil && o.needsKey() {
		// No snapshot under the logs: the key's filter was in the one that
		// is missing or damaged. Skip the op; the key is lost until the
		// logs end its life or make it anew.
		fz.skip(a.Key, o.Kind == OpDrop || o.Kind == OpRename && string(o.To) != a.Key)
		if o.Kind == OpRename && string(o.To) != a.Key {
			// The new key would hold the lost filter: it is lost too.
			if c, ok := st.keys.Load(string(o.To)); ok {
				st.dropLocked(string(o.To), c)
			}
			fz.lost[string(o.To)]++
		}
		return nil
	}
	if a.At == nil && o.needsKey() {
		if fz != nil {
			return nil // a life of the key that ended in this log before the snapshot reached it
		}
		return fmt.Errorf("op %d on missing key %q", o.Kind, o.Key)
	}
	if o.Kind == OpRename && a.Key != string(o.To) && fz != nil && uint64(at) < fz.Positions[string(o.To)] {
		// The snapshot's entry of the new key stands after the op, holding
		// the moved filter already: only the old key's copy goes.
		st.dropLocked(a.Key, a.At)
		return nil
	}
	return kindOf(o.Kind).apply(a, &o)
}
