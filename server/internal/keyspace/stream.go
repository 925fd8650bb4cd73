package keyspace

import (
	"hash/maphash"
	"sync"

	"github.com/cuckoohash/cuckoo/server/internal/fields"
)

// A replica's stream, applied on several cores.
//
// Protocol. The primary applies writes to different keys at once, one
// connection a core; a replica that applied its stream on one goroutine
// fell behind under such a load (issue 39). ReplayStream applies a batch of
// the stream's records with the gate held exclusively by its caller, so no
// client writes, no snapshot writes a key, and lookups, which take no lock,
// go on. The records of one key's ops go, in stream order, to one worker,
// chosen by a hash of the key; each worker replays its records in turn, so
// each key's ops are applied in the primary's order, which is all replay
// needs to rebuild the same filters (doc.go's invariants). What several
// workers share is safe for concurrent use: the map, the memory counter,
// the expiry index (its own lock), the access clock. A record that is not
// one key's op (a transaction, FLUSHALL, RENAME of two keys, a position) is
// a barrier: the workers finish what came before it, it is replayed alone,
// and the batch goes on. The batch's linearization point, for the replica's
// offset, is the caller's: it feeds its backlog after ReplayStream returns.

// streamSeed hashes keys to workers; any seed keeps each key on one worker
// within a batch, which is all the order needs.
var streamSeed = maphash.MakeSeed()

// minParallel is the fewest records of a batch worth sending to workers:
// below it, starting goroutines costs more than it saves.
const minParallel = 8

// ReplayStream replays recs, consecutive records of a primary's stream of
// which the first starts at offset at, on up to workers goroutines. A
// record that starts before fzEnd is replayed with fz (a full copy's
// positions, internal/repl's copy.go), one at or after it without. Heartbeats
// (OpReplPing) are skipped. It returns the first error a record met; the
// batch may then be applied in part, and the caller must not go on from it.
// Preconditions: the gate held exclusively.
func (st *Store) ReplayStream(recs [][]byte, at int64, fz *FuzzyLog, fzEnd int64, workers int) error {
	workers = max(1, min(workers, len(recs)/minParallel))
	r := &streamReplay{st: st, fz: fz, fzEnd: fzEnd, shards: make([][]streamJob, workers)}
	for _, rec := range recs {
		here := at
		at += int64(RecordHeader + len(rec))
		if len(rec) > 0 && rec[0] == OpReplPing {
			continue
		}
		key, ok := oneKey(rec)
		if !ok {
			if err := r.drain(); err != nil {
				return err
			}
			if err := st.Replay(rec, here, r.fuzzy(here)); err != nil {
				return err
			}
			continue
		}
		i := 0
		if workers > 1 {
			i = int(maphash.Bytes(streamSeed, key) % uint64(workers))
		}
		r.shards[i] = append(r.shards[i], streamJob{rec, here})
	}
	return r.drain()
}

// streamReplay is one ReplayStream's state: the records of one key each
// gathered in one shard, in order, until drain replays the shards, each on
// a worker of its own.
type streamReplay struct {
	st     *Store
	fz     *FuzzyLog
	fzEnd  int64
	shards [][]streamJob
}

// streamJob is a record of the stream and the offset it starts at.
type streamJob struct {
	rec []byte
	at  int64
}

// fuzzy is the positions a record at offset at is replayed with.
func (r *streamReplay) fuzzy(at int64) *FuzzyLog {
	if r.fz != nil && at < r.fzEnd {
		return r.fz
	}
	return nil
}

// run replays jobs in order, up to the first error.
func (r *streamReplay) run(jobs []streamJob) error {
	for _, j := range jobs {
		if err := r.st.Replay(j.rec, j.at, r.fuzzy(j.at)); err != nil {
			return err
		}
	}
	return nil
}

// drain replays the shards gathered, in parallel if more than one holds
// records, and empties them; it returns the first error, in shard order.
func (r *streamReplay) drain() error {
	busy := 0
	for _, s := range r.shards {
		if len(s) > 0 {
			busy++
		}
	}
	var err error
	switch busy {
	case 0:
	case 1:
		for _, s := range r.shards {
			if len(s) > 0 {
				err = r.run(s)
			}
		}
	default:
		errs := make([]error, len(r.shards))
		var wg sync.WaitGroup
		for i, s := range r.shards {
			if len(s) > 0 {
				wg.Go(func() { errs[i] = r.run(s) })
			}
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				err = e
				break
			}
		}
	}
	for i := range r.shards {
		r.shards[i] = r.shards[i][:0]
	}
	return err
}

// oneKey returns the key of rec if rec is an op of that key alone, which
// may be replayed beside other keys' ops.
func oneKey(rec []byte) ([]byte, bool) {
	if len(rec) == 0 {
		return nil, false
	}
	switch OpKind(rec[0]) {
	case OpCreate, OpAdd, OpDel, OpDrop, OpCompact, OpChunk, OpExpire, OpPersist, OpRestore:
	default:
		return nil, false // OpFlush, OpRename, OpMulti, OpReplPos, or damage: alone
	}
	r := &fields.Reader{B: rec[1:]}
	k := r.Str()
	return k, r.Err == nil
}
