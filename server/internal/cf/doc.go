// Package cf is the value of a CF.* key: one cuckoo filter with its
// RedisBloom parameters, and everything done to it whole. It turns
// CF.RESERVE's and CF.INSERT's arguments and the cf-* settings into
// parameters with RedisBloom's error texts (args.go), reports CF.INFO's and
// CF.DEBUG's figures (figures.go), adds, deletes, looks up and counts items,
// compacts, and moves the filter in and out: CF.SCANDUMP's chunks and CF.LOADCHUNK (dump.go), DUMP's payload for
// RESTORE (payload.go), and the filter's part of a snapshot entry
// (snapshot.go), all of them as runs of buckets (runs.go).
//
// It knows nothing of keys, connections, logs or replicas. The key space
// (package internal/keyspace) holds each key's Filter embedded in its entry, holds the
// key's writer lock around every method that says so, and accounts memory
// through the Charger each allocating method is given: a table is charged
// before it is allocated, and a Charger may refuse it.
//
// It imports the library's filters (filter, growing, lockfree, redisbloom,
// internal/linhash), internal/fields and internal/integer, and nothing of
// the server; packages internal/keyspace and server import it.
//
// # Layouts
//
// A filter has one of two layouts, fixed when it is made. This server's
// (LayoutCuckoo, the default) is described below. RedisBloom's
// (LayoutRedisBloom: cf-layout redisbloom, a RedisBloom dump header given to
// CF.LOADCHUNK, or a RedisBloom payload given to RESTORE) is package
// redisbloom's filter, RedisBloom's bit for bit (rb.go): its CF.INFO and
// CF.DEBUG figures, CF.SCANDUMP chunks and DUMP payloads are RedisBloom's,
// so it moves to RedisBloom and back; its snapshot entry is the filter
// whole. The layout is logged with the create record (a field absent for
// this server's layout, so older logs read the same).
//
// # Shapes
//
// A filter with EXPANSION >= 1 (the default, and keys CF.ADD or CF.INSERT
// create) is one growing table (package growing): it splits a bucket
// whenever its load passes the split load, so it grows in small steps and a
// lookup reads two buckets however far it grew. A filter with EXPANSION 0
// is a growing table that never splits (growing.Config.Fixed) when it has
// 5 slots, and otherwise one fixed lockfree.Filter, a stage. Snapshots and
// dumps of format 2 hold filters as lists of stages, RedisBloom's
// sub-filters; those still load and grow as before.
//
// # Mapping RedisBloom's parameters
//
// RedisBloom builds 8-bit fingerprints in buckets of BUCKETSIZE (1..255,
// default 2) slots and walks MAXITERATIONS (default 20) random kicks. Both
// of this server's tables keep a bucket in one 64-bit word, so the shape is
// chosen when a filter is made (Params.Slots, recorded with it):
//
//   - BUCKETSIZE 1 or 2 builds b=2: a growing table of 32-bit entries (16
//     fingerprint bits, a tail of up to 15); a fixed stage of 24-bit
//     fingerprints.
//   - BUCKETSIZE 3 or 4 builds b=4: a growing table of 16-bit entries (6
//     fingerprint bits, a tail of up to 9), a fixed stage of 12-bit
//     fingerprints (95% reachable load).
//   - BUCKETSIZE 5..255, and none given to CF.RESERVE or to CF.INSERT's
//     CAPACITY, builds b=5: a growing table of 12-bit entries (6
//     fingerprint bits, a tail of up to 5), about 13.9 bits an item at a
//     false-positive rate of about 0.5%, smaller than RedisBloom's default
//     at a lower rate. A client that gives the capacity means the filter
//     to hold about that; as a b=5 table grows its short tails run out and
//     its rate rises (3% grown 2000 times, package growing). With
//     EXPANSION 0 the b=5 table never splits: sized for the capacity at
//     92% load, it takes 2-6% more (94% of its slots at 10^5 items, 97% at
//     10^7, and a stash of 64) before "Filter is full". A lock-free stage
//     has no room for 5 slots beside its migration counter.
//   - Keys CF.ADD or CF.INSERT create at cf-initial-size (no BUCKETSIZE
//     given, nor cf-bucket-size) build b=4: they start small and grow, and
//     b=4's rate holds as they do. CF.INFO's "Bucket size" reports the size
//     built.
//   - Servers before b=5 built b=4 for BUCKETSIZE 3..255: their records
//     leave the shape out and load as they were built (RecordedSlots).
//   - MAXITERATIONS (1..65535) is kept and reported, and bounds the
//     breadth-first displacement search at max(MAXITERATIONS, 500) buckets:
//     the capacity promise of package filter is measured at 500.
//   - Capacity (1..2^32, at least 2·BUCKETSIZE): a growing table starts
//     sized for it at a load of 92% for b=5, 90% for b=4 and 80% for
//     b=2; a fixed table or stage (EXPANSION 0) promises it, and past it
//     answers "Filter is full".
//     EXPANSION e >= 1 is kept and reported: a growing table grows a bucket
//     at a time whatever e is, since growth in steps of e times the size is
//     what made a chain large (up to 2x its items' worth, and e times that
//     while it grows) and slow (a lookup read every stage).
//   - Inserting one item until its two buckets hold 2b copies answers
//     "Filter is full" instead of growing.
//   - False positives of a growing table stay below 2b·α·15·1.5/2^w while it
//     grows up to 2^15 times its first size (filter/doc.go, "Growing
//     filters"), that is while CF.INFO's "Number of filters" is at most 16,
//     and rise by a fifteenth of that per filter beyond: 0.25% for b=4
//     (w=16), about 10^-8 for b=2 (w=32);
//     measured 0.11% for b=4 grown 2000x with half its items deleted
//     (package growing's TestGrowAndDeleteHalf). A fixed stage's rate is at most
//     8/4095 ≈ 0.2% at b=4. RedisBloom's grows with its sub-filters, about
//     3% each.
//   - No item is lost to deletes: CF.DEL of an item added k times, at most
//     k times, leaves every other item found (the growing table's invariant;
//     TestExpandingKeepsKeptItems: 200,000 CF.ADD and 100,000 CF.DEL on
//     CF.RESERVE k 1000 EXPANSION 2, every kept item found, also after a
//     restart and in another server loaded with CF.LOADCHUNK). Lists of
//     stages loaded from format 2 keep the hazard that made them lose items
//     (an item that is a false positive of a newer stage than its own is
//     deleted there, taking another item's only copy): rebuild those keys
//     from their items to be rid of it.
//
// # Dump format
//
// CF.SCANDUMP and CF.LOADCHUNK use this package's own chunks (dump.go): a
// header chunk with the parameters and each stage's geometry and count (or
// the growing table's), then data chunks of at most 2^20 buckets (about
// 8 MiB), each with a magic and a CRC-32C, read from the live filter under
// its writer lock. Every field is checked, a malformed chunk is an error
// that changes nothing, and writes to a key whose load is pending are
// refused until its last chunk arrives.
package cf
