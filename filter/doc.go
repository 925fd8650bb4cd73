// Package filter implements a cuckoo filter: an approximate set that answers
// "may this key have been inserted?" by reading at most two buckets, supports
// deletion, and takes less space than a Bloom filter at false-positive rates
// below about 0.4%: there its (log2(1/ε) + 3) / 0.95 bits a key (b=4, 95%
// load) meet an optimal Bloom filter's 1.44·log2(1/ε). The paper's "below
// 3%" is for its semi-sorted variant, which saves a bit a key; this filter
// does not semi-sort.
//
// It follows Fan, Andersen, Kaminsky and Mitzenmacher, "Cuckoo Filter:
// Practically Better Than Bloom" (CoNEXT 2014).
//
// # Terminology
//
// A filter is a table of m buckets of b slots (b = 2, 4 or 8). A slot holds
// an f-bit fingerprint of a key, 4 <= f <= 32, or 0 for empty. A key's hash
// (XXH3-64 with the filter's seed) gives its fingerprint fp, from the low 32
// bits, and its primary bucket i1, from the high 32 bits; its alternate
// bucket is i2 = alt(i1, fp). The load factor is the fraction of the m·b
// slots in use.
//
// # Partial-key cuckoo hashing
//
// alt depends only on a bucket and a fingerprint, so a stored fingerprint can
// be moved to its other bucket without the key. alt(i, fp) = (offset(fp) - i)
// mod m is an involution for every m, so m is whatever the capacity needs and
// not rounded up to a power of two (rounding wastes up to half the memory).
//
// # Layout
//
// Slots are packed with no padding: slot j of bucket i occupies bits
// [(i·b+j)·f, (i·b+j+1)·f) of a byte array, little-endian, so the table
// takes m·b·f bits plus 8 bytes of slack that let any slot, and any bucket
// of at most 57 bits (or 64 aligned bits), be read with one unaligned 64-bit
// load. Those one-word buckets (b=4 with f <= 16, b=2 with f <= 28, b=8 with
// f <= 8: the common shapes) are matched whole, all slots at once, with SWAR
// arithmetic; other shapes are read slot by slot.
//
// # Operations
//
// Contains reads both buckets and the victim slot (below). Insert stores the
// fingerprint in a free slot of either bucket; if both are full it searches,
// breadth first and without writing anything, for a chain of fingerprints
// ending at a bucket with a free slot, examining at most MaxKicks buckets,
// then moves the chain back to front: the last fingerprint into the free
// slot, each predecessor into the slot its successor left, the new
// fingerprint into the freed slot of its own bucket. The breadth-first search
// beat the reference's random walk of kicks at high load (see
// BenchmarkInsertHighLoad) and reaches higher loads, and a failed search
// changes nothing. Delete clears one slot holding the fingerprint. Count
// counts the copies in both buckets.
//
// # The victim slot
//
// When the search fails, the fingerprint goes into a one-entry victim slot
// and the insert succeeds. Only when the victim slot is taken does Insert
// return ErrFull, and the filter is then unchanged. So a key that an Insert
// accepted is never lost. A Delete that frees a slot moves the victim back
// into the table.
//
// # Capacity
//
// New sizes the table so that inserting Config.Capacity distinct keys into a
// new filter succeeds: m = Capacity / (b · (load - c/sqrt(m))), with extra
// room for tables of under 64 buckets. The design load is a margin below
// the lowest load at which the victim slot was first needed over seeds,
// measured in tables of 2^20 and 8·10^6 keys: for f >= 10 it is 84% for
// b=2, 95% for b=4 and 98% for b=8 (the paper reports 84%, 95.5% and 98%).
// The term c/sqrt(m) covers the spread of that load between small tables
// (TestCapacityPromise: every capacity from 1 to 2000 and a sample up to
// 200000, three seeds, five widths, three bucket sizes). Narrow
// fingerprints (f < 10) give each bucket only 2^f-1 alternates, and the
// reachable load falls, the more so the larger the table: the design loads
// for them (config.go) are measured up to 10^7 keys. At f = 12 and b = 4 a
// filter takes 12.64 bits a key from 10^5 keys up; smaller filters pay for
// the margin and the fixed header.
//
// # Duplicates and deletion
//
// Inserting a key k times stores k copies of its fingerprint, and k deletes
// remove them; at most 2b copies fit in a key's two buckets (b if they
// coincide), one more in the victim slot. Deleting a key that was never
// inserted may remove the fingerprint of another key with the same
// fingerprint and bucket, which is then reported absent: delete only keys
// known to be present. Count and InsertUnique help keep that rule.
//
// # False positives
//
// A lookup of an absent key compares its fingerprint with up to 2b stored
// ones, each equal with probability 1/(2^f-1), so the rate is about
// 2b·load/2^f. With Config.FalsePositiveRate ε, f = ceil(log2(2b/ε)); the
// default ε = 0.01 gives f = 10 with b = 4.
//
// # Invariants
//
//   - A slot holds 0 (empty) or a fingerprint in [1, 2^f-1]; fingerprint 0
//     is never stored.
//   - alt(alt(i, fp), fp) == i, and every stored fingerprint sits in one of
//     its key's two buckets, or in the victim slot with one of them recorded.
//   - Len counts the stored fingerprints, the victim included.
//   - Each insert examines at most MaxKicks buckets.
//   - A refused insert (ErrFull) leaves every byte of the filter as it was.
//
// # Scalable filters
//
// A Scalable is a list of filters (stages). When the newest stage holds its
// capacity a new stage Growth times larger is added, with one more
// fingerprint bit, so that the stages' rates halve in turn: with the first
// stage built for ε/2 the total stays below ε however far it grows.
//
// # Format
//
// WriteTo and MarshalBinary write a fixed little-endian layout (see
// format.go): magic, version, parameters, seed, counts, victim, the table and
// a CRC-32C of every byte. Read and UnmarshalBinary check every field and the
// checksum; every failure wraps ErrCorrupt.
package filter
