// Package server is a Redis-protocol (RESP2) cuckoo filter server with
// RedisBloom's CF.* commands and a persistence layer that loses nothing it
// acknowledged. `cuckoo serve` runs it.
//
// # Shape
//
// Server is shaped like net/http's: New(Config) builds it (recovering its data
// directory), Serve(ln) serves a listener until Shutdown(ctx) or Close, and
// Shutdown is graceful: listeners close, every connection finishes the
// pipeline it is running and gets its replies, the log is written and
// fsynced, a snapshot is taken. Each connection runs in its own goroutine:
// it reads requests with the server's own RESP reader (package resp), runs each
// as soon as it is complete, and when no complete request is left in its
// buffer it passes the durability barrier (below) and flushes every reply
// with one write. A malformed request is answered "ERR Protocol error: ..."
// and the connection closed.
//
// # Limits at the door
//
// Every size a client announces is checked when its header arrives, before
// anything is allocated for it, as Redis does (Limits): a client that must
// still authenticate may send at most 10 arguments of 16 KiB; any other at
// most MaxArgs arguments of MaxBulk bytes (proto-max-bulk-len), and at most
// QueryBuffer bytes pending (client-query-buffer-limit). Buffers grow by
// doubling as bytes arrive, never by what a header announces, and parsing
// resumes where it stopped, so a request trickled one byte at a time costs
// linear time, constant stack and memory in proportion to what arrived.
// Items and keys are held to MaxItem; dump chunks (CF.LOADCHUNK's data) only
// to MaxBulk. Timeout closes a connection silent for that long. Shutdown
// wakes every blocked read, so it completes whatever requests are half-read.
//
// # Terminology
//
// A key holds one filter (type MBbloomCF, as RedisBloom names it). A filter
// is a list of stages, each a lockfree.Filter; an expanding filter adds a
// stage when its newest is full (RedisBloom's sub-filters, counted by
// CF.INFO's "Number of filters"). The key space is a hashmap.Map from key to
// filter. An op is the logged effect of a write command.
//
// # Concurrency
//
// Lookups (CF.EXISTS, CF.MEXISTS, CF.COUNT) take no lock anywhere: a map Load,
// an atomic load of the stage list, and lock-free filter reads, so any number
// of connections query one filter at once. Writers of one key are serialised
// by the key's mutex, held across the change and its log append, so the log
// holds each key's ops in the order they were applied; writers of different
// keys run in parallel. A read-write gate, read-locked by every write, is
// taken exclusively only by FLUSHALL and by a snapshot's copy (store.go).
//
// # Mapping RedisBloom's parameters
//
// RedisBloom builds 8-bit fingerprints in buckets of BUCKETSIZE (1..255,
// default 2) slots and walks MAXITERATIONS (default 20) random kicks. The
// lock-free filter packs a bucket into one 64-bit word, b·f fingerprint bits
// plus at least 15 counter bits, so it supports b=2 with f<=24, b=4 with f<=12
// and b=8 with f<=6. Every shape takes 8 bytes a bucket, so:
//
//   - BUCKETSIZE 1 or 2 builds b=2 with 16-bit fingerprints in the first
//     stage, one bit more each stage up to 24 (the stages' rates halve, the
//     total stays below 2·4/2^16); 32 bits a slot.
//   - BUCKETSIZE 3..255 builds b=4 with 12-bit fingerprints: a stage's rate
//     is at most 8/4095 ≈ 0.2%, 16 bits a slot, 95% reachable load. b=8 would
//     need 6-bit fingerprints (a 12% rate) and is never chosen.
//   - With no BUCKETSIZE (and for keys CF.ADD or CF.INSERT create) the shape
//     is b=4: RedisBloom's default of 2 would double the memory per item for
//     nothing. CF.INFO's "Bucket size" reports the size built.
//   - MAXITERATIONS (1..65535) is kept and reported, and bounds the
//     breadth-first displacement search at max(MAXITERATIONS, 500) buckets:
//     the capacity promise of package filter is measured at 500.
//   - Capacity (1..2^32, at least 2·BUCKETSIZE) is a promise here: a new
//     stage holds that many distinct items. EXPANSION e (0..32768) makes
//     stage i e^i times the first (e=1: all equal); e=0 is a fixed-size
//     filter that answers "Filter is full". At most 32 stages, then "Maximum
//     expansions reached", as RedisBloom. A stage is added when the newest
//     holds its capacity or refuses an item, but not when the item's two
//     buckets already hold 2b copies of its fingerprint: inserting one item
//     thousands of times answers "Filter is full" instead of growing.
//   - With b=4 the false-positive rate grows with the number of stages
//     (about stages·0.2%); RedisBloom's grows as stages·3%.
//   - A known hazard of filters with more than one stage (issue 13, open):
//     the stages differ in size, so an item that is a false positive of a
//     newer stage than its own is deleted there by CF.DEL, taking another
//     item's only copy; about 30 of 100,000 kept items were lost after
//     200,000 CF.ADD and 100,000 CF.DEL on CF.RESERVE k 1000 EXPANSION 2. A
//     filter that never grows past its first stage (reserve its capacity)
//     has no such hazard. docs/design/growing-filters.md has the plan.
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
// fsynced, renamed to snapshot.cks, the directory fsynced, and the older logs
// removed (snapshot.go). A snapshot needs memory for a block of buckets, not
// a copy of the data set, and empty buckets cost almost nothing in it.
// Startup loads the snapshot and replays the logs from G on, skipping in log
// G each key's ops before its position (recover.go). A torn final record of
// the last log is dropped with a warning; any other damage refuses startup
// with a message naming the file and offset, unless Config.Repair.
//
// # Memory
//
// used_memory_filters (INFO) is the sum of the filters' sizes (CF.INFO's
// Size): every stage is charged before it is allocated, against MaxMemory and
// against MaxFilterMemory (one filter's bound, by default the machine's
// memory), and a filter's bytes are released once, when it is deleted or
// compacted. A refused reservation allocates nothing. A CF.SCANDUMP chunk is
// charged against MaxMemory too, at its largest, from before it is built
// until its reply is sent (INFO's used_memory_dump_chunks).
//
// # Invariants
//
//   - A reply to a write is sent only after commit of its record returned.
//   - The log holds the ops of each key in the order they were applied; a
//     key's create op precedes its other ops, a DEL's drop op follows them.
//   - Replay applies the same ops to the same seeds in the same order, so it
//     rebuilds the same filters; a replayed insert is never refused (a stage
//     is forced in if needed): it was acknowledged once.
//   - A snapshot plus the logs from its generation on is the whole state at
//     every moment, crashes included: each key's entry holds exactly its ops
//     logged before the entry's position.
//
// # Dump format
//
// CF.SCANDUMP and CF.LOADCHUNK use this package's own chunks (dump.go): a
// header chunk with the parameters and each stage's geometry and count, then
// data chunks of at most 2^20 buckets (under 8 MiB), each with a magic and a
// CRC-32C, read from the live filter under its writer lock. Every field is
// checked, a malformed chunk is an error that changes nothing, and writes to
// a key whose load is pending are refused until its last chunk arrives.
//
// # Measurements
//
// The README's "The server against redis-server" section has the throughput
// and memory measured with redis-benchmark against Debian's redis-server, and
// the commands that reproduce them. In short: pipelined, CF.ADD and CF.EXISTS
// are faster than SADD and SISMEMBER; unpipelined on two cores shared with the
// benchmark they are 0.8-0.9x, the same as a server that does nothing but
// parse and answer (bench/cmd/respfloor); an item takes 1/25 of the memory.
//
// Inserting one item more often than its two buckets hold (2b copies)
// answers "Filter is full" rather than growing (see above), so CF.ADD from
// redis-benchmark with a small -r range stops at that error.
package server
