// Package hashmap is a concurrent generic hash map built on cuckoo hashing,
// with lock-free reads and per-bucket-locked writes. Its method set follows
// sync.Map (and puzpuzpuz/xsync's Map):
//
//	m := hashmap.New[string, int]()
//	m.Store("a", 1)
//	v, ok := m.Load("a")
//
// # Terminology
//
// The table is a power-of-two array of buckets. A bucket is one 64-byte
// cache line: a version word (whose bit 0 is the bucket's lock), a tags
// word and six slots. A slot is a tag
// (one byte of the tags word) and a pointer to an entry. An entry is an
// immutable (key, value) pair: an update stores a pointer to a new entry,
// so a reader that loads a pointer always sees a whole entry, and moving an
// entry moves a pointer, never a large value (key-value separation).
//
// A key's hash h (hash/maphash with a per-table random seed, or a seeded
// 128-bit-multiply mix for integer keys; WithHasher replaces it) gives its
// tag, tagOf(h) = the top byte of h, with 0 (the empty mark) folded onto
// 1, and its first bucket i1 = h & mask. Its second bucket is
//
//	i2 = alt(i1, tag) = i1 XOR (odd offset derived from the tag) & mask
//
// which depends on the tag alone (partial-key cuckoo hashing), so that a
// displacement search can follow entries from bucket to bucket reading
// only tags. alt is an involution, alt(alt(i, t), t) == i, and since the
// offset is odd and a table has at least two buckets, alt(i, t) != i: each
// key has twelve candidate slots in two distinct buckets.
//
// # Operations
//
// Load hashes the key, matches its tag against the six tags of bucket i1
// at once (SWAR byte compare), loads the pointer of each matching slot and
// compares keys. A hit returns. On a miss in i1 it searches i2, but only
// if i1's overflow count for the key's tag class is not 0 (the top byte of
// the tags word holds four 2-bit counts, one per class tag & 3, of the keys
// whose first bucket is i1 and which sit in their second), then the stash
// if there is one, and a miss is final if i1's version was even
// before the search and is unchanged after it: every writer and mover of
// the key holds i1's lock, so no writer held i1 meanwhile means that the
// key's place, and the overflow count, were fixed for the whole search.
// Only if a writer held i1 does it search i1, i2 and the stash again
// between two readings of both buckets' versions, reporting a miss only
// if neither version changed (see Moves). Load takes no lock, never waits,
// and allocates nothing for integer and string keys.
//
// Writers lock buckets: bit 0 of the version word, set by compare-and-swap
// (spinning briefly, then yielding), cleared by an increment, so every
// critical section moves the version on by 2. Locks are always taken in
// increasing bucket order, so writers cannot deadlock. Every writer of a
// key, and every move of it, locks the key's first bucket, so holding i1
// owns the key: nobody else can add, remove, update or move it. A writer
// locks i1, and also i2 only if it must look there or insert there (the
// key is not in i1 and i1's overflow count for its class is not 0, or i1
// is full). Store,
// Swap, LoadOrStore, LoadAndDelete, Delete and Compute then decide and act
// in one critical section. LoadOrStore on a present key and
// LoadAndDelete/Delete on an absent one answer from a lock-free Load
// first. An insert whose buckets are both full releases its locks, makes
// room and starts again; so Compute's fn runs exactly once, with the key's
// locks held and room for the key already made, and a panic in fn unwinds
// through a deferred unlock, leaving the map unchanged and usable.
//
// Len sums striped counters (16 per P, padded to a cache line), each
// changed under the lock of the key's first bucket: no scan, and writers
// of different stripes share no counter line.
//
// # Moves
//
// When both buckets are full, the writer searches breadth-first from them
// for a free slot (at most 5 moves and 512 buckets examined), reading only
// tags and changing nothing. It then carries out the path back to front:
// the entry next to the free slot moves first, into it, which frees the
// slot that its predecessor on the path moves into next, and so on, until
// a slot of the key's own buckets is free. Each move locks its two
// buckets, checks that the path still holds there (the source slot
// holds an entry whose other bucket is the destination, the destination
// slot is free, the table is current) and moves one entry; if the check
// fails, the rest of the path is abandoned and the insert starts again:
// each move on its own keeps every key in the map, so there is nothing to
// undo.
//
// A move (table.move) takes these steps, each an atomic store:
//
//  1. the destination slot's tag, then its pointer: the entry is now in
//     both buckets (the arrival);
//  2. the source bucket's version goes up by 2 (it stays locked, odd);
//  3. the source slot's pointer is cleared, then its tag (the departure);
//
// and the first bucket's overflow count for the entry's class goes up
// before the arrival (a move out of the first bucket) or down after the
// departure (a move back).
//
// A key is never absent: it arrives before it departs. A reader could still
// look in the destination before step 1 and in the source after step 3.
// Such a reader read the versions before its first search and reads them
// again after its last; step 2 lies between, so the source's version
// differs and the reader searches again. In general (the argument is in
// table.lookup): if a key is present for the whole lookup and neither
// version changed, the key stayed in one slot of one of its buckets for
// the whole lookup, and the search of that bucket found it. So a validated
// miss is linearizable at a moment when the key was absent, and a hit is
// linearizable at the load of the pointer (entries are immutable; during a
// move both slots hold the same pointer). Versions are 64-bit and only
// grow, so they never come back to an old value.
//
// # Invariants
//
// Checked by CheckInvariants (export_test.go) after mutations in tests:
//
//   - tag 0 marks an empty slot: under the locks, tag == 0 exactly when
//     the pointer is nil. At every instant, even between a writer's
//     stores, a non-nil pointer has its entry's tag beside it (filling
//     stores the tag first, emptying clears the pointer first), so a reader
//     scanning tags never skips an entry;
//   - every entry sits in bucket i1 or alt(i1, tag) of its key, with its
//     key's tag, and its slot's alt bit says which;
//   - a bucket's overflow count for a class is the number of keys of that
//     class whose first bucket it is that sit in their second (or 3,
//     saturated: it then never goes down, and misses of that class read
//     the second bucket);
//   - alt(alt(i, t), t) == i and alt(i, t) != i;
//   - no key is in two places, except the same entry during a move;
//   - Len equals the number of entries.
//
// # Growth
//
// The table doubles when an insert needs room and the load (entries in
// slots over slots) has reached 93% (WithMaxLoad), or when the search finds
// no path at a load of at least 50%. A failed search at a lower load means
// the hash is degenerate for this key (a constant hash, or keys chosen
// against a custom hasher): doubling would not help, so the entry goes into
// the table's stash, a copy-on-write slice that readers search after both
// buckets. So a cycle of displacements always ends, in a move, a growth or
// the stash, and the map never grows forever.
//
// To grow, a writer takes every bucket lock (in order), checks that the
// table is still the one it meant to grow, builds a table of twice the
// buckets with new seeds, re-inserting every entry pointer, and publishes
// it with one atomic store of the map's table pointer; then it unlocks.
// Other writers wait on their bucket's lock, then find the table pointer changed
// and retry on the new table. Readers never wait: a reader that loaded the
// old table searches it, and that is correct, because the old table is
// frozen from the moment the grower holds every lock and so holds the
// map's exact contents at the publication, a moment inside the reader's
// call.
//
// The map never shrinks, except through Clear, which publishes an empty
// table of the initial size in the same way.
//
// # Iteration
//
// Range and All lock every bucket just long enough to copy the entry
// pointers, then call the function with no lock held (it may use the map).
// Each key present for the whole iteration is visited exactly once, with
// its value at the snapshot; keys inserted or deleted meanwhile may or may
// not be visited.
//
// # Measurements
//
// Stats reports the table's size and load; LoadProbe counts the buckets,
// slots and keys a lookup inspects; WithCapacity and WithMaxLoad build a
// table at an exact load factor (see Stats).
package hashmap
