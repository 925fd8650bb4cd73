// Package redisbloom is RedisBloom's cuckoo filter, bit for bit: the same
// hash, fingerprints, bucket layout, insertion order, displacement walk,
// growth, deletion and compaction, so that after the same operations it
// holds the same bytes, answers every lookup the same (false positives
// included) and reports the same figures. It reads and writes RedisBloom's
// dumps (CF.SCANDUMP's chunks, CF.LOADCHUNK) and its DUMP payloads, so a
// RedisBloom user's filters, whose items are usually gone, can move here
// and back. Its lookups take no lock.
//
//	f, err := redisbloom.New(redisbloom.Params{Capacity: 1000, BucketSize: 2, MaxIterations: 20, Expansion: 1})
//	if err != nil {
//		return err
//	}
//	err = f.Add([]byte("foo"))      // CF.ADD; adds a sub-filter when full
//	ok := f.Contains([]byte("foo")) // CF.EXISTS
//	n := f.Count([]byte("foo"))     // CF.COUNT
//	ok = f.Delete([]byte("foo"))    // CF.DEL
//	_, header := f.DumpChunk(0)     // CF.SCANDUMP; Load(header) and LoadChunk take it back
//	payload := f.AppendPayload(nil) // DUMP's payload; ParsePayload reads it
//
// Params are CF.RESERVE's arguments; RedisBloom's defaults for the optional
// ones are BucketSize 2, MaxIterations 20 and Expansion 1. Reserve, if set,
// is asked for every sub-filter's bytes before it is allocated.
//
// It is not this module's best filter (package filter is smaller and has
// fewer false positives; package growing never loses a kept item): it is
// the one a RedisBloom user already has.
//
// # The filter
//
// An item hashes to h = MurmurHash64A(item, seed 0). Its fingerprint is
// one byte, fp = h mod 255 + 1 (0 marks an empty slot), and its two
// buckets in a sub-filter of N buckets are h mod N and
// alt(h) mod N, where alt(x) = x XOR fp·0x5bd1e995; alt is its own
// inverse, and since N is a power of two, a bucket number b gives the other
// bucket as alt(b) mod N. A bucket is BucketSize (1..255) one-byte slots;
// bucket b starts at slot b·BucketSize. "foo" hashes to
// 0xcdde38358fd25b01: fingerprint 217, buckets 257 and 76 of 512.
//
// A filter is a list of sub-filters. The first has N0 =
// nextPow2(capacity/BucketSize) buckets (at least 1); sub-filter k has
// N0·E^k, E the expansion rounded up to a power of two. An expansion of 0
// keeps one sub-filter, which then answers "Filter is full".
//
//   - Lookups (CF.EXISTS) visit the sub-filters oldest first, h1's bucket
//     then h2's; CF.COUNT adds the copies in both buckets of every
//     sub-filter (a bucket counted twice if h1 and h2 pick it).
//   - An insert takes the first free slot of h1's bucket, else of h2's, in
//     the newest sub-filter first, then older ones. With none, it walks in
//     the newest sub-filter only: from h1's bucket it swaps the fingerprint
//     in hand with slot 0, then (at the next bucket) slot 1, 2, ... of each
//     bucket it visits, and goes to the evicted fingerprint's other
//     bucket, until a free slot or MaxIterations swaps; then it undoes
//     every swap in reverse, adds a sub-filter and starts over. The
//     search skips full sub-filters, which can offer no slot (open.go):
//     the same placement as visiting them all, in a few steps where
//     RedisBloom's smallest shape piles up thousands of them. RedisBloom
//     refuses a command's inserts once a filter has cf-max-expansions (32)
//     sub-filters: that check is the command's, not this package's.
//   - A delete clears the first copy of the fingerprint, newest sub-filter
//     first, h1's bucket then h2's. With more than one sub-filter, once
//     the deletes pass a tenth of the items it compacts: each fingerprint
//     of the newest sub-filter (and then older ones) moves to a free slot
//     of an older one, and a newest sub-filter left empty is freed; the
//     automatic compaction stops at the first sub-filter it cannot empty,
//     CF.COMPACT goes on. Either resets the delete count.
//
// Positions of lookups, deletes and free-slot searches are computed in 32
// bits, as RedisBloom computes them, so in a sub-filter of more than 2^32
// slots they fall in its first 2^32; its displacement walk uses 64-bit
// positions. This package does the same, so that such filters, too, hold
// the same bytes.
//
// # Dumps and payloads
//
// A dump (dump.go) is a 38-byte little-endian header (items, N0, deletes,
// sub-filters: 8 bytes each; bucket size, max iterations, expansion: 2
// each), then the slots of each sub-filter in order, in chunks of at most
// 16 MiB that never span two; a chunk's iterator is one more than the
// offset of its end. The DUMP payload (payload.go) is Redis's module value
// for the type MBbloomCF, encoding version 4.
//
// # Concurrency
//
// Writers take turns on the filter's mutex; lookups take no lock and
// never miss an item added before they began and not deleted: see the
// protocol in filter.go. Slots are bytes packed in 64-bit words so that
// they can be read atomically.
//
// It imports only the standard library.
package redisbloom
