// Package kcas is a lock-free multi-word compare-and-swap (K-CAS) on
// atomic.Uint64 words: CAS changes up to MaxWords words from expected old
// values to new values, all or none, as one atomic step.
//
// # Protocol
//
// An operation is described by a descriptor in a fixed package-wide table,
// and a word taking part in it is marked: its top bit is set and the other
// 63 bits name the descriptor (its index and a sequence number that is new
// for every use of the descriptor, so a stale reference is recognised). Go's
// collector forbids tagged pointers, hence indexes.
//
//  1. The owner claims a descriptor, bumps its sequence number, writes the
//     words (sorted by address, so every operation marks its words in the
//     same global order), their old values, new values and restore values.
//  2. The owner marks the first word: CAS(old, mark). This publishes the
//     operation; until then no other goroutine can see it.
//  3. Anyone — the owner, or a goroutine that met a marked word — marks the
//     remaining words in order with CAS(old, mark). A word holding another
//     operation's mark is helped to completion first; since operations mark
//     in ascending address order and an operation only waits on words above
//     the ones it holds, helping never cycles. A word holding neither its
//     old value nor the mark decides the operation FAILED.
//  4. When the last word is marked the operation has succeeded: that CAS is
//     its linearization point. Whoever sees it records SUCCEEDED in the
//     descriptor's state (a CAS, so the decision is made once).
//  5. Finishing: every marked word is changed from the mark to its new value
//     (SUCCEEDED) or to its restore value (FAILED). A failed operation's
//     linearization point is the load that saw a word differ from its old
//     value.
//  6. The owner finishes too, and only then frees the descriptor.
//
// Load returns a word's logical value without waiting or writing: for a
// marked word, the new value if the operation has succeeded (its last word
// is marked, or its state says so), else the old value. An unmarked last
// word is ambiguous, not yet marked or already finished, so old is returned
// only if the word is still marked after that check: helpers finish words in
// ascending order, so the last word cannot have been finished before it.
// Otherwise Load reads the word again. The linearization point of a Load
// returning old is its read of the last word.
//
// # Why a stale helper cannot do harm
//
// A helper may read a mark, be delayed, and act after the operation has
// finished and its descriptor been reused. Its marking CASes expect old
// values; the package requires that a word never again holds a value it
// held before (callers keep a version counter in their words) and that new
// and restore values differ from the old ones. After an operation is
// decided, each of its words holds its new or restore value, or (words past
// the one that failed) was never marked and is never marked, so a stale
// marking CAS cannot succeed. Its finishing CASes expect the mark, whose
// sequence number is never reused. Descriptor fields are read under the
// sequence number and discarded if it changed. Hence once the owner has
// finished, no word holds or will hold its mark, and the descriptor can be
// reused.
//
// # Progress
//
// CAS and Load are lock-free: a goroutine that meets a marked word completes
// that operation itself instead of waiting for its owner. The one wait is in
// claiming a descriptor: with more than TableSize operations in flight at
// once, a claimer yields until one is freed.
package kcas

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

const (
	// MaxWords is the largest number of words one CAS may change.
	MaxWords = 4
	// Marked is the top bit of a word; values stored in words must leave it
	// clear.
	Marked = 1 << 63
	// indexBits names one of TableSize descriptors in a mark; the remaining
	// 53 bits hold the sequence number.
	indexBits = 10
	// TableSize is the number of descriptors, and so of operations that can
	// be in flight at once without waiting.
	TableSize = 1 << indexBits
	indexMask = TableSize - 1
	seqMask   = 1<<(63-indexBits) - 1
)

// Descriptor states, in the low two bits of descriptor.state.
const (
	free = iota
	active
	succeeded
	failed
)

// Entry is one word of a CAS: Word changes from Old to New, or to Restore if
// the CAS fails after marking it. New and Restore must differ from Old, and
// none may have the Marked bit set.
type Entry struct {
	Word    *atomic.Uint64
	Old     uint64
	New     uint64
	Restore uint64
}

// descriptor describes one operation. Every field is accessed atomically;
// fields other than state are written only by the owner between claiming
// and publishing, and are valid while state's sequence number is unchanged.
type descriptor struct {
	state   atomic.Uint64 // sequence number << 2 | status
	n       atomic.Uint32
	words   [MaxWords]atomic.Pointer[atomic.Uint64]
	old     [MaxWords]atomic.Uint64
	new     [MaxWords]atomic.Uint64
	restore [MaxWords]atomic.Uint64
	_       [24]byte // to 192 bytes: three cache lines, none shared
}

var table [TableSize]descriptor

// Test hooks: called after an owner publishes its operation, and before a
// helper records the outcome.
var testHookPublished, testHookBeforeDecide func()

// snapshot is a consistent copy of a descriptor's fields.
type snapshot struct {
	status  uint64
	n       int
	words   [MaxWords]*atomic.Uint64
	old     [MaxWords]uint64
	new     [MaxWords]uint64
	restore [MaxWords]uint64
}

func state(seq, status uint64) uint64 { return seq<<2 | status }

func mark(index, seq uint64) uint64 { return Marked | (seq&seqMask)<<indexBits | index }

func unmark(m uint64) (index, seq uint64) { return m & indexMask, (m &^ Marked) >> indexBits }

// IsMarked reports whether v, a word's raw value, is a mark.
func IsMarked(v uint64) bool { return v&Marked != 0 }

// read returns a snapshot of the descriptor named by mark m, or false if the
// descriptor has been reused since m was made (the operation is over).
func read(m uint64) (snapshot, bool) {
	index, seq := unmark(m)
	d := &table[index]
	var s snapshot
	st := d.state.Load()
	if st>>2&seqMask != seq {
		return s, false
	}
	s.n = int(d.n.Load())
	for j := range s.n {
		s.words[j] = d.words[j].Load()
		s.old[j] = d.old[j].Load()
		s.new[j] = d.new[j].Load()
		s.restore[j] = d.restore[j].Load()
	}
	st = d.state.Load()
	if st>>2&seqMask != seq {
		return s, false
	}
	s.status = st & 3
	return s, true
}

// CAS atomically changes every entry's word from Old to New and reports
// whether it did; if some word did not hold its Old value it changes no word
// logically (words it had marked take their Restore value) and returns false.
// The entries' words must be distinct. CAS panics if there are more than
// MaxWords entries or an entry breaks the rules of Entry.
func CAS(entries ...Entry) bool {
	if len(entries) == 0 {
		return true
	}
	if len(entries) > MaxWords {
		panic("kcas: too many words")
	}
	var sorted [MaxWords]Entry
	es := sorted[:len(entries)]
	copy(es, entries)
	// Insertion sort by address: at most MaxWords entries.
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && uintptr(unsafe.Pointer(es[j].Word)) < uintptr(unsafe.Pointer(es[j-1].Word)); j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
	for i, e := range es {
		if IsMarked(e.Old|e.New|e.Restore) || e.New == e.Old || e.Restore == e.Old {
			panic("kcas: entry values break the rules of Entry")
		}
		if i > 0 && e.Word == es[i-1].Word {
			panic("kcas: a word appears twice")
		}
	}
	index, seq, h := claim()
	d := &table[index]
	d.n.Store(uint32(len(es)))
	for j, e := range es {
		d.words[j].Store(e.Word)
		d.old[j].Store(e.Old)
		d.new[j].Store(e.New)
		d.restore[j].Store(e.Restore)
	}
	m := mark(index, seq)
	// Publish: mark the first word.
	for {
		cur := es[0].Word.Load()
		if cur == es[0].Old {
			if es[0].Word.CompareAndSwap(cur, m) {
				break
			}
			continue
		}
		if IsMarked(cur) {
			help(cur)
			continue
		}
		d.state.Store(state(seq, free)) // never published: nobody saw m
		hints.Put(h)
		return false
	}
	if testHookPublished != nil {
		testHookPublished()
	}
	help(m)
	ok := d.state.Load()&3 == succeeded
	d.state.Store(state(seq, free))
	hints.Put(h)
	return ok
}

// hints remembers, per P (sync.Pool keeps a private item per P), the
// descriptor the last operation there used. A claim tries it first: its
// cache lines are likely still in this core's cache, where a random
// descriptor's are not. A hint is only a starting point; losing one (a GC
// clears the pool) costs a random start.
var hints = sync.Pool{New: func() any {
	return &hint{index: rand.Uint64() & indexMask}
}}

// hint is padded to a cache line: two Ps' hints sharing a line (the
// allocator packs small objects) would make every claim a cache miss.
type hint struct {
	index uint64
	_     [56]byte
}

// claim takes a free descriptor, starting at this P's hint (see hints), and
// gives it a new sequence number. The caller returns the hint with
// hints.Put once the descriptor is free again.
func claim() (index, seq uint64, h *hint) {
	h = hints.Get().(*hint)
	start := h.index
	for tries := 0; ; tries++ {
		index = (start + uint64(tries)) & indexMask
		d := &table[index]
		st := d.state.Load()
		if st&3 == free {
			seq = (st>>2 + 1) & seqMask
			if d.state.CompareAndSwap(st, state(seq, active)) {
				h.index = index
				return index, seq, h
			}
		}
		if tries%TableSize == TableSize-1 {
			runtime.Gosched() // every descriptor is in use
		}
	}
}

// help completes the operation whose mark is m: it marks the words still
// unmarked, decides the outcome and finishes every word. It returns at once
// if the operation is already over.
func help(m uint64) {
	s, ok := read(m)
	if !ok {
		return
	}
	index, seq := unmark(m)
	d := &table[index]
	if s.status == active {
		outcome := uint64(succeeded)
	install:
		for j := 1; j < s.n; j++ {
			for {
				cur := s.words[j].Load()
				switch {
				case cur == m:
					continue install
				case cur == s.old[j]:
					if s.words[j].CompareAndSwap(cur, m) {
						continue install
					}
				case IsMarked(cur):
					help(cur) // an operation above ours in the order
				default:
					outcome = failed
					break install
				}
				if d.state.Load() != state(seq, active) {
					break install // decided meanwhile
				}
			}
		}
		if testHookBeforeDecide != nil {
			testHookBeforeDecide()
		}
		d.state.CompareAndSwap(state(seq, active), state(seq, outcome))
		st := d.state.Load()
		if st>>2&seqMask != seq {
			return
		}
		s.status = st & 3
	}
	if s.status != succeeded && s.status != failed {
		return // freed: finished by its owner
	}
	for j := range s.n {
		v := s.restore[j]
		if s.status == succeeded {
			v = s.new[j]
		}
		s.words[j].CompareAndSwap(m, v)
	}
}

// Load returns the logical value of w: its value, or if an operation has
// marked it, the value that operation gives it at this moment. It never
// waits and never writes.
func Load(w *atomic.Uint64) uint64 {
	if v := w.Load(); !IsMarked(v) {
		return v
	}
	return loadMarked(w)
}

func loadMarked(w *atomic.Uint64) uint64 {
	for {
		v := w.Load()
		if !IsMarked(v) {
			return v
		}
		s, ok := read(v)
		if !ok {
			continue // the operation is over: w has changed
		}
		j := 0
		for j < s.n && s.words[j] != w {
			j++
		}
		if j == s.n {
			continue // a stale snapshot cannot name w; reread
		}
		switch s.status {
		case succeeded:
			return s.new[j]
		case failed:
			return s.old[j]
		case active:
			if s.words[s.n-1].Load() == v {
				return s.new[j] // the last word is marked: succeeded
			}
			// The last word is not marked now (T2). Either the operation
			// has not reached it yet, and has not succeeded, or it
			// succeeded and its last word was already finished, which is
			// why old would be stale. Words are finished in ascending
			// order by every helper, so the last word is finished only
			// after every other; if w still holds the mark after T2,
			// the last word was never marked before T2: the operation had
			// not succeeded at T2, and w's logical value then was old.
			if w.Load() == v {
				return s.old[j]
			}
			// w has been finished (or w is the last word): read it again.
		}
		// free: finished; w no longer holds v
	}
}

// Settle returns the raw value of w after completing any operation that has
// marked it: an unmarked value that a single-word CompareAndSwap may use as
// its expected value.
func Settle(w *atomic.Uint64) uint64 {
	if v := w.Load(); !IsMarked(v) {
		return v
	}
	return settleMarked(w)
}

func settleMarked(w *atomic.Uint64) uint64 {
	for {
		v := w.Load()
		if !IsMarked(v) {
			return v
		}
		help(v)
	}
}
