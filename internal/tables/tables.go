// Package tables is the raw access to the tables of packages growing and
// lockfree that the server's persistence needs (snapshots, DUMP and RESTORE,
// CF.SCANDUMP and CF.LOADCHUNK): a table's buckets read and written one
// word at a time, the runs of blocks ever written (package internal/written)
// that a dump reads, and a growing table's geometry and stash. It is not
// part of those packages' API: a library user saves a filter through its
// own formats (lockfree's WriteTo, filter's binary encoding), while the
// server streams the live table in formats of its own, copying nothing.
//
// Go's internal rule lets the server (github.com/cuckoohash/cuckoo/server/...)
// import this package and nothing outside the repository. The tables' state
// is unexported in their packages, so each registers, in an init, a function
// that returns its raw view of a filter: a pointer conversion, which
// allocates nothing, and whose methods read the filter's fields directly, so
// a dump pays one interface call a bucket, as it did when these were
// exported methods.
package tables

// Table is one table's buckets as words. Reads are lock-free like lookups
// and see one moment of each word; a caller that needs one moment of the
// whole table holds its writers off.
type Table interface {
	// Buckets returns the table's buckets.
	Buckets() uint64
	// BucketBytes returns the bytes a bucket's word takes when packed:
	// ceil(b·f/8) for a lock-free filter's fingerprints, 8 for a growing
	// table's word.
	BucketBytes() int
	// BucketBits returns bucket i's word, 0 for an empty bucket: a
	// lock-free filter's fingerprints, slot j at bits [j·f, (j+1)·f),
	// without the migration counter; a growing table's 64-bit word.
	BucketBits(i uint64) uint64
	// SetBucketBits replaces bucket i's word by v (as BucketBits returns
	// it), keeping the counts and marking the block written. It fails,
	// changing nothing, for a bucket past the last or a word that is not
	// one of this table's. Lookups may run meanwhile and see the bucket
	// before or after; no other writer may.
	SetBucketBits(i, v uint64) error
	// NextWritten returns the buckets [lo, hi) of the first run in buckets
	// [from, end) whose words may be non-zero, clipped to them: the run's
	// blocks of 512 buckets are marked ever written (package
	// internal/written), and every bucket outside such runs is 0. With
	// none, lo = hi = end (end is taken as Buckets() if greater). The next
	// run may start at hi. A dump that reads only these runs touches none
	// of the pages a reserved, sparse table never wrote, which stay
	// unresident. It takes no lock: a block it reports unwritten held
	// nothing when it looked (written's Ordering).
	NextWritten(from, end uint64) (lo, hi uint64)
}

// Growing is a growing table (package growing): its words, and what a
// saved table holds besides them, its geometry, stash and key count.
type Growing interface {
	Table
	// Geometry returns the table's level and split pointer: 2^level +
	// split buckets.
	Geometry() (level uint, split uint64)
	// Stash returns the stashed keys' hashes.
	Stash() []uint64
	// WordEntries returns the entries in bucket word w, or an error if a
	// used slot is not an entry (no fingerprint or no stop bit) or w has
	// bits beyond its slots (5 slots of 12 bits leave the top 4 clear).
	// It depends on the table's bucket size alone.
	WordEntries(w uint64) (int, error)
	// Restore gives the filter, as New returned it, the geometry of a
	// saved table (its segments charged through Config.Reserve), its
	// stash and its key count; SetBucketBits then fills its buckets. It
	// keeps the segments New allocated. SetBucketBits is a writer: the
	// caller restoring a table does not publish it before it is filled,
	// or holds its own writer lock (a load in chunks, whose readers see
	// the buckets loaded so far).
	Restore(level uint, split uint64, stash []uint64, items uint64) error
}

var (
	growingOf  func(f any) Growing
	lockfreeOf func(f any) Table
)

// RegisterGrowing is called by package growing's init with the function
// that returns a *growing.Filter's raw view.
func RegisterGrowing(of func(f any) Growing) { growingOf = of }

// RegisterLockfree is called by package lockfree's init with the function
// that returns a *lockfree.Filter's raw view.
func RegisterLockfree(of func(f any) Table) { lockfreeOf = of }

// OfGrowing returns the raw view of f, a *growing.Filter; it panics for
// anything else.
func OfGrowing(f any) Growing { return growingOf(f) }

// OfLockfree returns the raw view of f, a *lockfree.Filter; it panics for
// anything else.
func OfLockfree(f any) Table { return lockfreeOf(f) }
