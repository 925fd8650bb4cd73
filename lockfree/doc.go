// Package lockfree is a cuckoo filter that any number of goroutines may use
// at once with no lock: lookups, inserts and deletes all proceed in
// parallel, and a goroutine stalled anywhere delays no other.
//
// It is sized as package filter's Filter is, by a filter.Config, and shared
// as it is, with no lock around it:
//
//	f, err := lockfree.New(filter.Config{Capacity: 1_000_000, FalsePositiveRate: 0.01})
//	if err != nil {
//		return err
//	}
//	// In any number of goroutines at once:
//	err = f.InsertString("apple")   // ErrFull once no room can be made
//	ok := f.ContainsString("apple") // true; for an absent key, false but about 1% of the time
//	ok = f.DeleteString("apple")    // delete only keys known to be present
//
// Its capacity is fixed: Insert returns ErrFull, the filter logically
// unchanged, when no room can be made (package growing grows). WriteTo saves it in package
// filter's binary format; FromFilter loads a filter.Filter of plain or
// semi-sorted buckets, such as one read back or built offline with `cuckoo
// build --packing plain`. It refuses ranked buckets, filter.New's default
// for a rate alone, whose fingerprints and alternate buckets differ.
//
// It follows 王瀚橙, 陈志鹏, 戴海鹏, 顾荣, KIM Chaewon, 陈贵海, "无锁并发布谷鸟过滤器"
// (Lock-free concurrent cuckoo filter), Journal of Software 36(7), 2025:
// two-stage lookups against migration counters, path search separated from
// migration, and migration by a multi-word compare-and-swap. Bucket
// mapping, fingerprints and hashing are those of package filter (package
// internal/hashing), so a Filter built offline loads with FromFilter and a
// snapshot (WriteTo) is a filter.Filter file.
//
// # The bucket word
//
// Each bucket is one atomic.Uint64:
//
//	bits [0, b·f)   b fingerprints of f bits, slot 0 lowest, 0 = empty
//	bits [b·f, 63)  a migration counter, incremented by every change
//	bit 63          marked: a K-CAS is in flight, and bits 0..62 name its
//	                descriptor (package internal/kcas)
//
// With b = 4 and f = 12, or b = 2 and f = 24, the counter has 15 bits;
// New never builds a shape that leaves it fewer (Bucket sizes, below).
//
// # Bucket sizes
//
// b·f + 15 <= 63 bounds the fingerprints: 4 slots of up to 12 bits, 2 of
// up to 24, 8 of up to 6. filter.New derives f = ceil(log2(2b/ε)) from the
// rate ε, with b = 4 unless BucketSize says otherwise, so its default
// buckets fit rates down to 8/2^12 = 2^-9 (about 0.002). When a Config
// leaves BucketSize 0 and needs wider fingerprints (a lower rate, or
// FingerprintBits 13 to 24), New builds what filter.New builds with
// BucketSize 2: f = ceil(log2(4/ε)), which fits rates down to 4/2^24 =
// 2^-22 (about 2.4e-7), in a table sized for filter's design load of 2
// slots (0.84 against 0.95), so that Capacity keys still fit; Snapshot and
// FromFilter then go through 2-slot filter.Filters. It refuses lower rates
// and wider fingerprints, naming the lowest rate (config.go), and an
// explicit BucketSize whose fingerprints do not fit.
//
// The cost, measured (BenchmarkRate: Capacity 10^6 filled to Capacity,
// one goroutine; TestFalsePositiveRateMeetsRequest checks the rates):
//
//	requested rate  b×f    bits an item  measured rate
//	0.01            4×10   16.9          0.0073
//	0.002           4×12   16.9          0.0018
//	0.001           2×12   38.2          0.00085
//	0.0001          2×16   38.2          0.000044
//
// A 2-slot bucket still takes a whole word and the table runs at a lower
// load, so it takes 2.3 times the memory of the 4-slot one. The rate is
// better than asked: about 2b·α/2^f at load α, which the ceiling in f puts
// below ε·α. Lookups in a table that fits the cache take as long in both
// layouts; in one that does not, the larger 2-slot table misses the cache
// more, and its lookups take two to three times as long as 4-slot ones.
// Inserts up to Capacity take as long in both. The timings are in
// docs/performance.md ("Bucket sizes: 2-slot buckets against 4-slot ones").
//
// Other layouts weighed:
//   - 4 slots of 12 bits in a larger table. The rate at load α is about
//     8α/2^12, so 0.001 needs α <= 0.51, 31 bits an item (less than the 38
//     of 2 slots), but 0.0001 needs α <= 0.05, 312 bits an item; and the
//     table would no longer be the one filter.New(cfg) builds, which
//     Snapshot, WriteTo and FromFilter rely on.
//   - 3 slots of 16 bits (48 + 15 = 63): about 24 bits an item at a load
//     near 0.9 (not measured) for rates down to about 1e-4, but filter's
//     Config, table and file format have buckets of 2, 4 or 8 slots only,
//     and a snapshot must be a filter file.
//   - 8 slots hold 6-bit fingerprints, rates of 0.25 and up only.
//
// # Operations and their linearization points
//
// Every read of a bucket goes through kcas.Load, which returns the word's
// logical value and never waits or writes; every writer first completes any
// K-CAS it meets on a word (kcas.Settle) and then changes it with a CAS.
//
//   - Insert: a single CAS that puts the fingerprint into an empty slot of
//     either bucket is the linearization point. If both are full, the
//     writer searches breadth first for a displacement chain, reading only,
//     then migrates it from its end backwards (insert.go). The chain's last
//     moves, up to three, and the store of the new fingerprint into the slot
//     they free at the chain's head are one K-CAS of up to four words; its
//     linearization point (below) is the insert's. If a step fails, the
//     insert tries again from the start.
//   - Migration of one fingerprint from bucket x to bucket y: one K-CAS of
//     the two words that clears the slot in x, fills a free slot in y and
//     increments both counters, or a part of the insert's K-CAS that moves
//     several fingerprints each one bucket along the chain. Its
//     linearization point is the CAS that marks its last word (kcas). A
//     fingerprint is therefore in exactly one of its buckets at every
//     moment: never in none (a lookup would miss it) and never in both (a
//     concurrent Delete could remove one copy and leave a phantom).
//   - Delete: the CAS that clears one slot holding the fingerprint, after
//     the same two-stage search as a lookup.
//   - Contains (two-stage lookup): read bucket i1 (time t1), bucket i2 (t2),
//     and i1 again (t3). A fingerprint seen in any read is a hit. If none
//     holds it and i1's counter is the same at t1 and t3, the key is absent
//     at t2, the linearization point of the miss; otherwise retry.
//
// # Why a lookup never misses a present key
//
// Suppose key k's Insert returned before the lookup began and no Delete has
// removed it. Its fingerprint is then, at every moment, in i1 or in i2 (a
// migration moves it between them in one atomic step, and nothing else
// moves it). At t2 it is in i2 or in i1. If in i2, the read at t2 sees it.
// If in i1: every change of i1 increments its counter, and the counter is
// the same at t1 and t3, so i1 did not change during [t1, t3] and the read
// at t1 saw the same word as i1 held at t2, fingerprint included. Either
// way some read saw it, so the lookup returns true.
//
// The one gap is wrap-around: a counter of c bits returns to its value
// after exactly 2^c changes, so a lookup could miss a migration if i1
// changed a multiple of 2^c times (32768 with c = 15) between two reads a
// few nanoseconds apart, which would take a goroutine descheduled inside
// one lookup while that one bucket was rewritten 32768 times.
//
// # The K-CAS
//
// Package internal/kcas implements it (its doc states the protocol): the
// words are marked in a fixed order (lower address, that is lower bucket
// index, first), a goroutine that meets a marked word completes that
// operation instead of waiting, and descriptors live in a fixed table and
// are named in marks by index and sequence number. kcas requires that a
// word never repeats a value; the counter provides that up to the same
// 2^c wrap-around, for a helper stalled between reading a mark and its
// CAS.
//
// # Progress
//
// Lookups complete unless a concurrent write changes i1 between their
// reads, so some operation completes on every retry: lock-free. Writers
// never wait on another goroutine: a marked word is completed by whoever
// meets it, marks are taken in one global order so helping never cycles,
// and every failed CAS means another goroutine's CAS succeeded. Nothing
// allocates on the lookup, insert or delete paths (path-search scratch
// comes from a sync.Pool).
//
// # Capacity under concurrency
//
// There is no victim slot: a failed path search changes nothing, so
// nothing is lost, and Insert returns ErrFull. One goroutine inserting
// alone gets the same promise as filter.New: Capacity distinct keys fit.
// With several goroutines inserting near full load, a chain may be
// invalidated by another writer mid-migration (its head slot is freed only
// by the insert's own K-CAS, so no other insert can take it); Insert then
// searches again, at most 8 rounds, and may return ErrFull slightly before
// Capacity keys are in. Retrying the insert is always safe.
//
// # Snapshots
//
// Snapshot and WriteTo collect the buckets twice or more, until two
// successive collections agree (double collect): the copy is then the state
// at one instant. Under writes that never pause it gives up after 4
// collections and returns a fuzzy copy; its doc says what that may miss.
//
// # Ever-written marks
//
// New allocates the table with make and touches none of it: the kernel
// supplies a page when it is first touched, so a filter reserved far
// beyond its keys takes almost no memory. To keep dumps from touching it
// either (reading a page commits it too), a bit for each block of 512
// buckets (4 KiB, a page: package internal/written) says the block was
// ever written. Invariant: every bucket holding a fingerprint lies in a
// marked block. A writer that read a bucket with no fingerprint and is
// about to put one in marks its block first, then does its CAS (addTo) or
// K-CAS (shift: only the chain's tail bucket can be empty; every other
// bucket of a chain holds the fingerprint that leaves it, so its block is
// marked already); FromFilter and the server's loads (raw.SetBucketBits,
// through package internal/tables) do the same. A bucket read non-empty
// needs no mark: the write that filled it marked it. Marks and words are
// atomic, so a reader that finds a block unmarked missed no fingerprint
// stored before it looked. The server's dumps read only the runs of marked
// blocks (nextWritten); Reset clears only those, then the marks.
package lockfree
