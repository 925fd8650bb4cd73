// Package filter implements a cuckoo filter: an approximate set that answers
// "may this key have been inserted?" by reading at most two buckets, and
// supports deletion. Size it for the keys it will hold and the
// false-positive rate wanted:
//
//	f, err := filter.New(filter.Config{Capacity: 1_000_000, FalsePositiveRate: 0.01})
//	if err != nil {
//		return err
//	}
//	err = f.InsertString("apple")   // ErrFull, the filter unchanged, once no room can be made
//	ok := f.ContainsString("apple") // true; for an absent key, false but about 1% of the time
//	ok = f.DeleteString("apple")    // delete only keys known to be present
//	_, err = f.WriteTo(w)           // filter.Read(r) loads it back
//
// Capacity distinct keys always fit in a new filter (Capacity, below).
// Goroutines may look keys up at once while none writes; package lockfree
// is the same filter for any number of goroutines writing at once.
// Scalable (Growing filters, below) grows as keys arrive, and package
// growing is that table with lock-free lookups.
//
// It follows Fan, Andersen, Kaminsky and Mitzenmacher, "Cuckoo Filter:
// Practically Better Than Bloom" (CoNEXT 2014).
//
// # Space against a Bloom filter
//
// An optimal Bloom filter takes 1.44·log2(1/ε) bits a key. New's filter
// takes fewer at every rate from 3% down to 10^-5 (TestDocBloomSpace: 40
// rates a decade, 10^6 keys, each against a Bloom filter of the rate the
// table has when full): at least 1.1% smaller, closest at ε = 3%, and 14%
// smaller at 0.1%. Its ranked buckets (below) take (B/4 + L)/0.96 bits a
// key for a fingerprint range of R = Q·2^L, and R steps by at most 1.2x,
// so the rate a table has when full is at most the one asked for and up to
// 1.20 times below. A fingerprint of a whole number of bits, plain or
// semi-sorted, steps by 2x: asked for 3% or 2%, semi-sorted buckets,
// (f-1)/0.95 bits a key, took more than a Bloom filter asked for the same
// rate (at 2%, 8.53 bits for a rate of 1.46% against 8.14), and plain ones
// did from about 0.4% up.
//
// # Terminology
//
// A filter is a table of m buckets of b slots (b = 2, 4 or 8). A slot holds
// a fingerprint of a key, a value in [1, R), or 0 for empty: R = 2^f for
// f-bit fingerprints, 4 <= f <= 32, and R = Q·2^L in ranked buckets. A
// key's hash (XXH3-64 with the filter's seed) gives its fingerprint fp,
// from the low 32 bits mapped onto [1, R-1] by multiplication, and its
// primary bucket i1, from the high 32 bits; its alternate bucket is i2 =
// alt(i1, fp). The load factor is the fraction of the m·b slots in use.
//
// # Partial-key cuckoo hashing
//
// alt depends only on a bucket and a fingerprint, so a stored fingerprint can
// be moved to its other bucket without the key. alt(i, fp) = (offset(fp) - i)
// mod m is an involution for every m, so m is whatever the capacity needs and
// not rounded up to a power of two (rounding wastes up to half the memory).
// Plain and semi-sorted tables take offset(fp) from fp times the golden
// ratio; for a range of a few hundred fingerprints those offsets form a
// near-arithmetic progression mod m, and the load a table reaches depends
// on m (0.936-0.955 for R = 256). Ranked tables take it from a mixed hash of
// fp (hashing.AltMixed), which reached 0.970-0.973 for every m tried. The
// older tables keep their alternate: their saved files depend on it.
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
// # Semi-sorted buckets
//
// The order of a bucket's fingerprints carries no information. A
// semi-sorted bucket (b=4, 5 <= f <= 16) is kept in ascending order, and the
// top 4 bits of its four fingerprints, a sorted multiset of four nibbles,
// are one of C(19, 4) = 3876 and are stored as a 12-bit code instead of 16
// bits: 4f-4 bits a bucket. The low f-4 bits of the fingerprints follow the
// code in order. A lookup does not decode: it matches the key's nibble
// against the four nibbles the code names (a table of 4096 four-byte
// entries, a nibble a byte, 16 KiB in the first-level cache) and its low bits against the stored low parts,
// each in SWAR lanes, and a slot matches when both do; two bucket reads, as
// before. A write decodes the bucket into plain lanes, changes one and
// encodes it again, which may reorder its slots; the path search reads each
// bucket of a path before it writes it, and writes it once, so the slot
// indexes it recorded still hold. Measured against a plain table of the same
// keys and 12-bit fingerprints (BenchmarkContainsPacking,
// BenchmarkInsertPacking): lookups take 1.4-1.55 times as long, inserts about
// twice; PackingPlain buys that speed back for a bit a key.
//
// # Ranked buckets
//
// A semi-sorted bucket codes the top 4 bits of its fingerprints, 16 values
// each, in 12 bits. Ranked buckets generalise it to fingerprints whose high
// part q = fp / 2^L takes Q values, Q not a power of two: the sorted
// multiset of a bucket's four q's is one of C(Q+3, 4), coded as its rank in
// the combinatorial number system in B = ceil(log2 C(Q+3, 4)) bits, and the
// four L-bit low parts follow: B + 4L bits a bucket. The Q used are those
// that fill B bits best, 19, 23, 28 and 33 for B = 13..16, so a
// fingerprint's range R = Q·2^L grows by steps of 1.2x, and the rate and
// the space with it, where a whole bit doubles them. Q = 33 spends 4 bits a
// fingerprint on 5.04 bits of range. A lookup reads both buckets as before,
// looks each code up in a table of four-byte entries (one q a byte; 256
// KiB for Q = 33, built on first use), matches the key's q in all four
// bytes at once and its low part in the low parts' lanes, and multiplies
// each word of matches by a constant that gathers slot j's bit of both to
// one place, where an AND keeps the slots that match in both. A batch of
// lookups reads every bucket first, then every code, then matches, so that
// no read waits behind another key's. Against a plain 4x12 table
// (BenchmarkContainsPacking, BenchmarkInsertPacking; Q = 33, L = 5) lookups
// run at 0.53-0.67 times its speed one key a call and 0.63-0.78 batched,
// at 10^5 and 10^6 keys, and inserts at 0.53-0.57: the code table is a
// second read that waits for the bucket's. Buckets of up to
// 57 bits (L <= 10) are matched in one word; wider ones, down to the lowest
// rates, are decoded slot by slot. The first insert that needed the victim
// slot came at a load of 0.970-0.973, and ranked tables are sized for 96%.
// semisort.go and rank.go hold the code both kinds share.
//
// # Choosing the layout
//
// New, given Capacity and FalsePositiveRate only, builds the smallest table
// whose expected rate, holding Capacity keys, meets the target, among plain
// buckets of 2, 4 and 8 slots and semi-sorted buckets of 4 and every
// fingerprint width, each in a table as full as its design load and the
// rate allow (when the rate falls just short of 2^-k·7.6, a width of k bits
// in a table less full can be smaller than k+1 bits at 95%), and ranked
// buckets of every Q with the least L that meets the rate, at their design
// load. From 3% down to about 4·10^-6 the choice is ranked buckets; the
// default ε = 1% gives Q = 28, L = 5 (R = 896, 35 bits a bucket, 9.1 bits a
// key). Packing asks for one kind of table.
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
// the margin and the fixed header. Ranked tables, whose ranges are 152 and
// more, are sized for 96% with the margin of b = 4.
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
// ones, each equal with probability 1/(R-1), so the rate is about
// 2b·load/R, whatever the packing. New chooses the table as above; with
// BucketSize set, f = ceil(log2(2b/ε)).
//
// # Invariants
//
//   - A slot holds 0 (empty) or a fingerprint in [1, R-1]; fingerprint 0
//     is never stored.
//   - alt(alt(i, fp), fp) == i, and every stored fingerprint sits in one of
//     its key's two buckets, or in the victim slot with one of them recorded.
//   - Len counts the stored fingerprints, the victim included.
//   - Each insert examines at most MaxKicks buckets.
//   - A refused insert (ErrFull) leaves every byte of the filter as it was.
//
// # Growing filters (Scalable)
//
// A Scalable is one table that grows a bucket at a time, by linear hashing,
// and never loses a kept key. Its lookups read two buckets however far it
// grew.
//
// Addresses. A key's hash h gives a fingerprint fp of F bits (never 0) and
// two virtual addresses, a = h and b = a ^ g(fp): the offset g depends on
// the fingerprint alone, so either address and the fingerprint give the
// other. With level L and split pointer p the table has 2^L + p buckets;
// address v lives in bucket v mod 2^L, or v mod 2^(L+1) when that is below
// p. Buckets below p and from 2^L on have level L+1, the rest level L.
// Growing splits bucket p into p and p + 2^L and advances p.
//
// Entries. A slot of w bits holds fp and a tail: the bits of the entry's
// address from its bucket's level on, as many as fit (at most w-F-1), above
// a stop bit that marks their length. An entry in a bucket of level l with
// a tail of t bits knows the low l+t bits of its address, its prefix. It
// matches key x when the fingerprints are equal and one of x's addresses
// has that prefix; such an entry is in one of x's two buckets, so a lookup
// reads those two and compares all their slots at once (SWAR: fingerprint
// bits, then the tail bits below each slot's stop bit).
//
// Moves keep the prefix: an entry moves to its other bucket by xoring g(fp)
// into the bits it knows, and re-splitting them at the other bucket's
// level; when that level is lower the tail gains a bit (its highest bit is
// dropped if the slot is full, which only shortens the prefix), and an entry whose
// other bucket is one level deeper than it knows stays where it is. A split
// moves each entry of the split bucket by its lowest tail bit, dropping it;
// an entry with no tail left is copied into both halves, since its key may
// be in either. So each doubling costs every entry one tail bit, and only
// entries older than w-F-1 doublings are ever copied.
//
// Invariant (no false negatives). Each copy of each key held (inserted and
// not deleted) can be assigned an entry of its own that matches it, or a
// stashed hash equal to its own. It holds after every operation:
//
//   - Insert stores an entry with the key's full prefix, or its hash in the
//     stash: assign it.
//   - A move or a split keeps an entry's prefix or shortens it, and a key
//     that agreed with it still does (a split's half is the key's own next
//     bit, and xoring g(fp) into two addresses that agree keeps them
//     agreeing); a copy made by a split matches in whichever half the key
//     lies.
//   - Delete of a held key y removes, among the entries matching y, one E
//     with the longest prefix (a stashed hash first: it is exact). If E was
//     assigned to another key x, then x and y have the same fingerprint and
//     addresses that agree on E's prefix; since g depends only on the
//     fingerprint, both of their addresses agree on it pairwise. y's own
//     entry E' knows a prefix no longer than E's and matches y, so it
//     matches x too: assign it to x. (Two keys with one hash cannot be told
//     apart and swap.)
//
// Hence a key inserted k times and deleted at most k times is found. As with
// any cuckoo filter, deleting a key that was never inserted may remove
// another key's entry. CheckMatching in the tests checks the invariant
// directly, as a bipartite matching between held copies and entries.
//
// False positives. An absent key matches an entry with a t-bit tail with
// probability 2^-t/(2^F-1), and a lookup compares 2b slots at load α. Each
// doubling makes a generation of entries one bit shorter than the next,
// with half the keys of the one after it, so every generation adds about
// 1.5·2b·α/2^w to the rate. w is the least width that keeps 15 generations
// below ε: the rate stays below ε up to 2^15 times the initial capacity and
// rises by about ε/15 per doubling beyond. At ε = 1% and b = 4: w = 14,
// F = 6 (which still reaches the 91% load; larger F costs copies), and the
// measured rate over a 1000x growth stays below 0.8%. α is the split load's
// most, which bounds the load at every point of a round.
//
// Space. The table splits whenever its load passes the split load, so it
// stays at that load. For b = 4 the split load follows the round of splits
// (linhash.SplitLoadAt): 91% where the round starts and ends, falling to
// 88.5% a third of the way in, where the search for a path is longest; it
// is 80% for b = 2 and 95% for b = 8 throughout. That is about w/0.9 bits
// a key, 15.6 at ε = 1%, plus the copies of old entries (1.7% of entries
// after a 1000x growth). The buckets live in segments of about 2·2^(L/2) buckets,
// so memory grows in small steps instead of doubling; a directory entry
// costs 8 bytes.
//
// The stash. When no path is found below the split load, the table splits
// up to 8 buckets and tries again, then keeps the key's hash in a stash of
// at most 64, checked by every lookup and drained as room appears.
//
// Inserts. The table never leaves its split load, so every insert meets a
// table about 90% full, and a full one where it matters: the buckets a
// round has not yet split carry twice the keys of the split ones and are
// nearly all full (over 99% mid-round). About two inserts in three find
// both of the key's buckets full and search for a path, breadth first,
// reading all the buckets a bucket's entries could move to before testing
// any, so that their loads overlap. How far a search goes depends on where
// the round is: at a flat 90% it examined 6.1 buckets a third of the way
// in and 1.2-1.8 at the ends, 3.2 an insert on average over a growth from
// 10^3 to 10^6 keys. The schedule above moves load from the middle of a
// round to its ends: 2.4 buckets an insert, at 15.96 bits a key on average
// against 15.85. An insert still costs several times a static filter's,
// which is mostly empty while it fills: growing to 10^6 keys, 2.5-2.7 times
// at ε = 1%, where a bucket is one 64-bit word, and 3.4-3.5 times at 0.1%,
// where it spans two (BenchmarkScalableVsStatic). A lower split load buys cheaper
// inserts with more space (at a flat 85%, 16.9 bits a key at 10^6 keys,
// ε = 1%); random walks after a short search and other choices between two
// free buckets were measured slower or no faster.
//
// # Format
//
// WriteTo and MarshalBinary write a fixed little-endian layout (see
// format.go): magic, version, parameters, packing, seed, counts, victim, the
// table and a CRC-32C of every byte. Plain filters keep version 1, which older
// readers read; semi-sorted ones are version 2, ranked ones version 3, which
// records Q in a byte that was reserved. Read and UnmarshalBinary check
// every field, every coded bucket's code and order, and the checksum; every
// failure wraps ErrCorrupt.
package filter
