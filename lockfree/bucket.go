package lockfree

import "github.com/cuckoohash/cuckoo/internal/swar"

// minCounterBits is the narrowest migration counter New accepts: a bucket
// word must change 2^15 times during one lookup for the lookup to miss a
// migration (see doc.go).
const minCounterBits = 15

// layout describes a bucket word:
//
//	bits [0, b·f)    the b fingerprints, slot 0 lowest, 0 for an empty slot
//	bits [b·f, 63)   the migration counter, bumped by every change
//	bit 63           the K-CAS mark (package kcas): the other 63 bits then
//	                 name an operation's descriptor
type layout struct {
	slots    uint
	bits     uint
	fpMask   uint64
	fpsMask  uint64 // the fingerprint lanes
	ctrShift uint
	ctrMask  uint64 // the counter, unshifted
	lanes    swar.Lanes
	is4x12   bool // 4 slots of 12 bits: lookups use swar.Has2x4x12
}

func newLayout(slots, bits uint) layout {
	l := layout{slots: slots, bits: bits, fpMask: 1<<bits - 1, ctrShift: slots * bits}
	l.fpsMask = 1<<l.ctrShift - 1
	l.ctrMask = 1<<(63-l.ctrShift) - 1
	l.lanes = swar.New(slots, bits)
	l.is4x12 = slots == 4 && bits == 12
	return l
}

func (l *layout) fingerprints(v uint64) uint64 { return v & l.fpsMask }

// has2 reports whether bucket words v1 or v2 hold fp.
func (l *layout) has2(v1, v2 uint64, fp uint32) bool {
	if l.is4x12 {
		return swar.Has2x4x12(v1, v2, fp) // ignores the counter and mark above bit 48
	}
	return l.lanes.Has2(l.fingerprints(v1), l.fingerprints(v2), fp)
}
func (l *layout) counter(v uint64) uint64 { return v >> l.ctrShift & l.ctrMask }

// bump returns v with its counter advanced, wrapping within its bits.
func (l *layout) bump(v uint64) uint64 {
	return v&l.fpsMask | (l.counter(v)+1)&l.ctrMask<<l.ctrShift
}

func (l *layout) slot(v uint64, j uint) uint32 { return uint32(v >> (j * l.bits) & l.fpMask) }

func (l *layout) setSlot(v uint64, j uint, fp uint32) uint64 {
	shift := j * l.bits
	return v&^(l.fpMask<<shift) | uint64(fp)<<shift
}

// find returns the first slot of v holding fp (an empty slot for fp 0), or -1.
func (l *layout) find(v uint64, fp uint32) int { return l.lanes.First(l.fingerprints(v), fp) }

func (l *layout) count(v uint64, fp uint32) int { return l.lanes.Count(l.fingerprints(v), fp) }
