// Package bench compares the cuckoo filter with peer Go libraries on the
// same workloads. It is a separate module so that the library's go.mod
// lists only what the library needs.
//
// # The filters
//
//   - cuckoo: this project's filter.Filter with 12-bit fingerprints and 4
//     slots a bucket, sized by Config.Capacity = n. Inserting n keys brings
//     it to its design load of 95%.
//   - seiflotfy: github.com/seiflotfy/cuckoofilter, NewFilter(n). It has
//     8-bit fingerprints, 4 slots a bucket and a power-of-two bucket count,
//     so its load after n keys is n/nextpow2(n): 95% at n = 1e6, 60% at
//     n = 1e7. An insert that runs out of kicks drops a fingerprint that
//     was already stored, so it can lose keys (the "fnr" figure).
//   - cuckoo-eqrate: this project's filter at seiflotfy's rate:
//     filter.New(Config{Capacity: n, FalsePositiveRate: r}), r being
//     seiflotfy's false-positive rate measured at n (SeiflotfyRate: about
//     3% at n = 1e6, 1.9% at 1e7), with the layout New chooses (ranked
//     buckets at those rates). The cuckoo row's 12-bit fingerprints give a
//     rate some 16 times lower than seiflotfy's 8-bit ones; this row
//     compares the two at equal rates.
//   - bloom: github.com/bits-and-blooms/bloom/v3, NewWithEstimates(n, p)
//     where p is the expected false-positive rate of the cuckoo filter at
//     its load after n keys, so that both answer wrongly equally often.
//   - fuse8, fuse16: github.com/FastFilter/xorfilter BinaryFuse[uint8] and
//     BinaryFuse[uint16]. They are static (built once from all keys) and
//     take uint64 keys, so each key is hashed with github.com/zeebo/xxh3 on
//     every build and lookup, and that hashing is part of their times, as
//     hashing is part of everyone else's.
//
// # The workload
//
// Keys are 16 random bytes from a seeded PCG generator (math/rand/v2), so
// every run and every filter sees the same keys. The n present keys come
// from one stream; absent keys from others (two 128-bit random keys are
// equal with negligible probability). A lookup set of LookupSetSize keys
// holds hit% present keys drawn uniformly from the n and (100-hit)% absent
// keys, shuffled, and copied back to back in lookup order, so reading the
// keys themselves costs the same for every filter and is not the bottleneck.
//
// # The figures
//
//   - bits/item: the filter's memory in bits divided by n. For cuckoo,
//     SizeInBytes; for seiflotfy, the length of its Encode output, which is
//     its bucket array (4 one-byte slots a bucket); for bloom, Cap() bits;
//     for the fuse filters, the fingerprint array.
//   - load: the fraction of slots in use for the cuckoo filters, n over the
//     number of fingerprints for the fuse filters, and for bloom the
//     fraction of bits that are set (about half at the optimal k).
//   - fpr: the share of AbsentKeysForRate keys, never inserted, that a
//     filter holding the n keys reports present.
//   - fnr: the share of the n inserted keys that it does not find (0 for
//     every filter except one that loses keys).
//   - insert: the time to fill an empty filter to n keys, divided by n. For
//     the fuse filters, the time to build one from the n keys (hashing
//     them included), divided by n.
//
// The benchmarks in filters_test.go and the program cmd/compare run these
// workloads; cmd/compare prints the table docs/performance.md quotes.
package bench
