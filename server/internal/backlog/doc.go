// Package backlog is the replication backlog: the last bytes of a primary's
// replication stream, kept so that a replica that reconnects can continue
// from where it was instead of taking a full copy.
//
// Terminology. The stream is a sequence of records framed as the log frames
// them (keyspace.AppendRecord: u32 length, u32 CRC-32C, payload); an offset
// counts the stream's bytes. The backlog holds the stream from its start to
// its end (master_repl_offset); the end is where the next record will start.
//
// Operations. Append frames a payload and adds it at the end, then trims:
// once the backlog holds more than twice its size it drops whole records
// from the front, keeping at least size bytes and less than size plus one
// record (trimming only past twice the size keeps the copying amortized).
// A pin holds the start at or before an offset, for a replica whose stream
// is sent from there (a full copy in progress, or a link not yet sent
// everything): a trim keeps the bytes from the earliest pin, however far
// behind the end it is. The owner bounds that, as Redis bounds a replica's
// output buffer, by unpinning a replica that lags too far and closing its
// link. Moving or releasing a pin trims as an append does. A trim a pin
// holds back waits until it drops at least as many bytes as it keeps, so
// each byte is copied a bounded number of times. Since returns the bytes
// from an offset to the end. Locate tells where an offset
// lies, walking the record boundaries once. Reset empties the backlog and
// starts it again at an offset, as after a full copy is loaded.
//
// Invariants.
//   - Start() <= End(), and End()-Start() is the number of bytes held.
//   - The start is where a record starts: a trim cuts between records and
//     Reset empties the backlog. So every record boundary from the start
//     is found by reading lengths, and an offset inside a record is one no
//     replica of this stream ever stood at.
//   - Bytes once held are never written over: Append writes past them, a
//     trim moves what stays to a new array, Reset drops the array. A slice
//     Since returned stays valid and unchanged after the lock is released.
//   - The size is fixed by New.
//   - Every pinned offset that was held when pinned stays held until
//     its pin moves or goes.
//
// Concurrency. A Backlog is not locked: its owner's mutex guards it (in
// package server, replication.mu, which also guards the replication ids,
// the replica links and the condition variable that wakes the links on
// each append). Size may be read without the lock, since it never changes.
//
// Imports. The standard library and internal/keyspace, for the record
// framing only (AppendRecord, RecordHeader); never package server, which
// imports it.
package backlog
