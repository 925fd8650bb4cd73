// Package growing is a cuckoo filter that grows as keys arrive while any
// number of goroutines look keys up with no lock. Writers (inserts, deletes
// and the growth they cause) take turns on an internal mutex, as the
// server's per-key writers already do; lookups never wait for them.
//
//	f, err := growing.New(growing.Config{InitialCapacity: 1000})
//	if err != nil {
//		return err
//	}
//	err = f.InsertString("apple")   // grows the table as needed
//	ok := f.ContainsString("apple") // true, with no lock, while others write
//	ok = f.DeleteString("apple")    // delete only keys known to be present
//
// Every method may be called from any number of goroutines. A kept key is
// never reported absent, however far the filter grew and whatever was
// deleted; an absent one is reported present at the rate given below,
// which Config.BucketSize trades for space. Insert fails (ErrFull) when a
// key's two buckets are already full of copies of its entry, or when no
// room is left and the table may not grow further: Config.Fixed,
// Config.Reserve's refusal (which Insert then returns), or the largest
// table, 2^41 buckets.
//
// The table is filter.Scalable's (filter/doc.go, "Growing filters"; the
// arithmetic is internal/linhash): linear hashing that splits one bucket at
// a time, quotiented entries whose tails give a bit to each split, deletes
// that take the longest match, so that no kept key is ever reported absent.
// Here each bucket is one atomic 64-bit word: 4 entries of 16 bits, or 2 of
// 32, so the false-positive rate is lower than filter.Scalable's at 1%: at
// most 0.25% for 4-slot buckets and about 10^-8 for 2-slot ones, while the
// filter grows up to 2^15 times its initial capacity. Or 5 entries of 12
// bits (6 of fingerprint, a tail of up to 5), the smallest: 13.9 bits a key
// at a rate of about 0.5% while it holds what it was sized for; as it grows
// its entries' short tails run out and are copied into both halves of a
// split, so the rate rises (3% grown 2000 times) and the bits a key with
// it (16.3), which the 4-slot shape keeps at 0.1% and 18.
//
// # Protocol
//
// A writer holds mu for a whole operation. It changes bucket words with
// atomic stores, the geometry (level and split pointer, one word) with an
// atomic store, and the segment directory by publishing a new one. A
// reader loads the move counter, the geometry and the directory, reads the
// key's two buckets, and answers "present" on any match. To answer
// "absent" it checks that neither the geometry nor the move counter changed
// while it read; otherwise it reads again. Each retry means a writer
// finished a step meanwhile, so lookups are lock-free: some goroutine
// always makes progress.
//
// Why a lookup never misses a key inserted before it began and not deleted:
//
//   - Insert into a free slot is one store: the linearization point.
//   - Moving an entry from bucket x to bucket y (making room for an insert)
//     stores it into y, increments the move counter, then clears it in x.
//     A reader that misses the entry read y before the store and x after
//     the clear, so the increment fell between its reads and it retries.
//   - Splitting bucket p at level L stores the entries that go to the new
//     bucket q = p+2^L (re-encoded for level L+1), then stores p's
//     remaining entries (re-encoded), then publishes the geometry with
//     split pointer p+1. Until that publish, a reader whose key maps to p
//     at level L reads p, then q, and matches p under both encodings: if
//     it read p before p's store, the old encoding holds every entry; if
//     after, q was stored earlier and its later read of q sees it. A reader
//     that loaded an older geometry sees the publish and retries.
//   - The directory of segments only grows: a segment is added, never
//     moved or merged (internal/linhash's Segments), before the geometry
//     that uses it is published, so a reader that sees the geometry sees
//     the segment, and growth never copies the table.
//   - Delete clears one slot, one store: its linearization point. A lookup
//     that overlaps it may answer either way, as it may for an insert.
//
// The stash, the keys that found no place even after splitting, is an
// immutable slice behind an atomic pointer, replaced on every change.
//
// # Ever-written marks
//
// Segments are allocated with make and never written until a key lands in
// them: the kernel supplies a page only when it is first touched, so a
// table reserved far beyond its keys takes almost no memory. To keep dumps
// and snapshots from touching it either (reading a page commits it too),
// each segment has a bit for each block of 512 buckets (4 KiB, a page:
// package internal/written) that says the block was ever written.
// Invariant: every non-zero bucket word lies in a marked block. The one
// store of a word (write.go's store) marks the block before it stores a
// non-zero word over a zero one; both are atomic, so a reader that finds a
// block unmarked missed nothing stored before it looked. The server's dumps
// read only the runs of marked blocks (raw.NextWritten, reached through
// package internal/tables). Marks are cleared only with the table (Reset);
// restoring a saved table (raw.Restore) keeps the segments New allocated,
// empty, rather than allocating them again.
package growing
