// Package keyspace is the server's data: the key space (each key's Entry,
// which embeds its filter, package cf), the write protocol every write
// command takes, the one table of the log's record kinds with one apply
// each (ops.go), memory accounting, expiry, RENAME and RESTORE, and the
// key space's durability: the append-only log (aof.go), snapshots
// (snapshot.go) and recovery (recover.go).
//
// Each write is one typed call: Store.Add, Reserve, DeleteItem, Compact,
// LoadChunk, Expire and Persist beside their record kinds (ops.go), Rename
// and Restore (move.go), Drop and FlushAll (store.go), Migrate, and Exec for
// a transaction (writes.go). A command parses its arguments, makes the call
// and writes its reply from the values it returns (per-item AddResults,
// whether anything changed, or an error whose reply the command layer
// chooses, errors.go). The call makes the write's op and commits it
// (apply.go): the kind's apply changes the key with its lock held, and the
// op is logged. Log replay and a replica's stream decode the same ops and
// run the same apply, so live, replayed and replicated state are one code's.
// A write's context is a Writer value the connection carries (its log
// position, its EXEC's ops), never the connection; the ops logged go on to
// replication through the stream interface the server connects.
//
// It imports package cf, internal/fields, the library's hashmap, and the
// standard library; nothing of the server. Package server imports it, and
// internal/conf for the fsync modes of its Config.
//
// # Persistence
//
// A server holds an exclusive flock on its data directory's LOCK file from
// New until Shutdown: a second server on the same directory would rotate,
// truncate and delete the first one's logs, so it is refused.
//
// With a data directory (Config.Dir) every write's op is appended, under the
// key's lock, to an append-only log as a record: u32 length, u32 CRC-32C of
// the length and payload, payload (aof.go, ops.go). When a connection has run
// its pipeline, it commits its highest log position before flushing replies:
// the buffered records of every connection are written with one write(2),
// and with appendfsync always one fsync covers every record written before it
// started (group commit). With everysec a background goroutine fsyncs each
// second; with no the OS decides. In every mode records reach the OS before
// replies leave, so kill -9 of the process loses nothing acknowledged;
// always also survives power loss.
//
// When the log cannot take a write (a full disk), the file is cut back to
// its last complete record and the records are kept; the writes of that
// pipeline are answered with the MISCONF error (they are in memory but may
// not survive a restart), later writes, SAVE and BGSAVE are refused with it,
// and reads go on. The log retries each second and on every commit; once a
// write and an fsync succeed, writes resume, as Redis does (aof.go).
//
// When the log passes SnapshotLogSize (and on SAVE, BGSAVE and shutdown) a
// snapshot is taken: with the gate held, the keys are noted and the log
// rotated to a new generation G; then each key is written straight from its
// live stages to snapshot.tmp under its own writer lock, with the log
// position it stands at, while writes to the other keys go on; the file is
// fsynced, read back and verified (checksum and a parse of every entry
// against its tables' shapes, allocating none), and only then installed:
// snapshot.cks becomes snapshot.prev.cks, snapshot.tmp becomes
// snapshot.cks, the directory fsynced after each rename, and then the logs
// before the previous generation are removed (snapshot.go). The data
// directory so holds up to two snapshots, the newest and the previous one,
// plus the logs from the previous one's generation on; a crash at any step
// leaves a loadable pair.
// A snapshot needs memory for a block of buckets, not a copy of the data
// set, and empty buckets cost almost nothing in it. A table is allocated
// with make and its pages are backed only once touched, so a reservation
// far beyond its items takes address space, not memory; snapshots, DUMP,
// CF.SCANDUMP, full copies to replicas and MIGRATE read only the blocks of
// 512 buckets ever written (each table marks a block before it first
// writes it: packages growing, lockfree and internal/written), and loads
// write only the buckets that hold something (package cf's runs.go). A filter
// reserved for 2^32 items holding one is saved in a few bytes, in
// milliseconds, and comes back from a restart untouched. Startup loads the
// newest snapshot and replays the logs from G on, skipping in log G each
// key's ops before its position (recover.go). A directory written by
// earlier servers (snapshot.cks alone) loads as it is.
//
// Only a record cut short by the end of the last log (its header, or fewer
// payload bytes than its length promises) can be a write that never
// finished: it is dropped with a warning naming the file, offset and bytes.
// A complete record that fails its checksum is damage wherever it is, the
// last record included, and so is any bad record in a log before the last:
// startup refuses with a message naming the file, the offset and what
// --repair would drop (the bad record and the rest of its log, in bytes and
// whole records); with Config.Repair the log is cut there.
//
// A damaged newest snapshot (a flipped byte fails its checksum) refuses
// startup with a message naming the file, the damage, and what --repair
// will do: load the previous snapshot and replay the logs since it, losing
// nothing acknowledged; or, for a directory's first snapshot, replay every
// log from generation 0, losing nothing; or, with neither (a directory of an
// earlier server, or both snapshots damaged), replay the logs there are
// alone, losing the keys only the snapshot held. With --repair it is done,
// and the damaged file is renamed snapshot.cks.damaged, never deleted. The
// fallback needs --repair even when it loses nothing, as Redis refuses to
// start on a damaged RDB: a disk that damages files should be noticed by an
// operator before the server answers again, and the damaged file is there
// to examine. See loadSnapshots in recover.go.
//
// Both snapshot files missing while the logs start after generation 0 (the
// logs from generation G on are kept only once a snapshot of G or later is
// installed, and installing never leaves both names absent) means the keys
// written before G are nowhere: startup refuses with ErrNoSnapshot, naming
// the missing files and the first log. --repair then does what it does when
// both snapshots are damaged, one code path (logsAlone): it replays every
// log, keeping every key the logs create whole; an op on a key that does not
// exist (its filter was in the snapshot) is skipped, not a reason to cut the
// log, and the keys so skipped and not made anew by the logs are named with
// their skipped ops in a warning; a key the snapshot held that no log
// touches is lost without a trace. The recovered keys are then saved as a
// snapshot, so the next start needs no --repair. --repair never cuts a log
// for a missing key, so it drops no key that no damaged record or missing
// snapshot touches.
//
// # Memory
//
// used_memory_filters (INFO) is the sum of the filters' sizes (CF.INFO's
// Size): every stage is charged before it is allocated, against MaxMemory and
// against MaxFilterMemory (one filter's bound, by default the machine's
// memory), and a filter's bytes are released once, when it is deleted or
// compacted. A refused reservation allocates nothing. A CF.SCANDUMP chunk is
// charged against MaxMemory too, at its largest, from before it is built
// until its reply is sent (INFO's used_memory_dump_chunks); its largest is
// bounded by the blocks of its range ever written, so a sparse filter's
// chunks and DUMP payloads are charged their size, not their table's.
// used_memory is Go's HeapAlloc, what the allocator has handed out, as
// Redis's is its allocator's: it counts each table once (a snapshot's or a
// dump's load allocates a growing table once: the restore keeps the
// segments New made), whether or not its pages are resident;
// used_memory_rss is what is resident.
//
// # Expiry
//
// A key may carry a deadline (EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT with
// Redis 7's NX|XX|GT|LT; PERSIST removes it; TTL, PTTL, EXPIRETIME and
// PEXPIRETIME read it), the use case being a filter per day of
// de-duplication. The deadline is an absolute Unix time in milliseconds,
// logged as such (OpExpire, OpPersist) and kept in snapshots (CKSNAP04: one
// uvarint per key; CKSNAP03 and older load with none), so a replay sets the
// same one at any hour. Past the deadline the key is gone for every
// command at once: a lookup checks it with one atomic load and no lock, a
// write finds it expired under the key's lock and drops it (logged as
// OpDrop) before going on as on a missing key, so a filter created in its
// place has no deadline. A sweeper (every 100 ms, as Redis's hz 10) samples
// 20 keys with a deadline and drops the expired ones, again while more than
// a quarter of a sample had expired, for at most 25 ms: memory comes back
// with no access. Every drop is an OpDrop in the log, so replay never reads
// the clock. A non-positive TTL, or a deadline not in the future, deletes
// the key. INFO's db0 line counts the keys with a deadline (expires) and
// their exact mean time to live (avg_ttl, ms). See expire.go.
//
// RENAME and RENAMENX move a filter with its deadline, as one op
// (OpRename); RESTORE logs DUMP's payload (OpRestore). DUMP's payload is
// the filter in the dump format (header chunk, then every table's runs)
// closed by a version and a CRC-32C (package cf's payload.go); Redis's RDB
// payloads are not read. OBJECT ENCODING answers growing, fixed or chain
// (the server's cmd_object.go).
//
// # Invariants
//
//   - A reply to a write is sent only after commit of its record returned.
//   - The log holds the ops of each key in the order they were applied; a
//     key's create op precedes its other ops, a DEL's drop op follows them
//     (and so does the drop of a key whose deadline passed).
//   - Replay applies the same ops to the same seeds in the same order, so it
//     rebuilds the same filters; a replayed insert is never refused (a stage
//     is forced in if needed): it was acknowledged once.
//   - A snapshot plus the logs from its generation on is the whole state at
//     every moment, crashes included: each key's entry holds exactly its ops
//     logged before the entry's position.
//   - So is the previous snapshot plus the logs from its generation on: no
//     log at or after the previous generation is removed until a newer
//     snapshot has been verified and installed, and snapshot.cks is only
//     ever replaced by a file that read back whole.
package keyspace
