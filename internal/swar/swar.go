// Package swar matches fingerprints packed side by side in one 64-bit word
// ("SIMD within a register"). A word holds n lanes of w bits each, lane 0 in
// the lowest bits; bits above the last lane must be zero.
package swar

import "math/bits"

// Lanes describes n lanes of w bits packed from bit 0 of a word, n*w <= 64.
type Lanes struct {
	ones  uint64 // the lowest bit of every lane
	highs uint64 // the highest bit of every lane
	lows  uint64 // every bit of every lane except the highest
	width uint
}

// New returns the description of n lanes of width bits. It panics unless
// 1 <= width, 1 <= n and n*width <= 64.
func New(n, width uint) Lanes {
	if width == 0 || n == 0 || n*width > 64 {
		panic("swar: lanes do not fit in a word")
	}
	var ones uint64
	for i := range n {
		ones |= 1 << (i * width)
	}
	highs := ones << (width - 1)
	all := ones*(1<<width-1) | highs // ones*(2^w-1) overflows no lane
	return Lanes{ones: ones, highs: highs, lows: all &^ highs, width: width}
}

// Broadcast returns v copied into every lane; v must fit in a lane.
func (l Lanes) Broadcast(v uint32) uint64 { return uint64(v) * l.ones }

// HasZero reports whether some lane of x is zero. It is exact: borrows of the
// subtraction only reach lanes above a zero lane, which are then already
// reported.
func (l Lanes) HasZero(x uint64) bool { return (x-l.ones)&^x&l.highs != 0 }

// Zeros returns a word with the highest bit of every zero lane of x set and
// every other bit clear. Unlike HasZero it is exact lane by lane: the sums
// (x & lows) + lows never carry out of a lane.
func (l Lanes) Zeros(x uint64) uint64 {
	t := (x&l.lows + l.lows) | x
	return ^t & l.highs
}

// Has reports whether some lane of x equals v.
func (l Lanes) Has(x uint64, v uint32) bool { return l.HasZero(x ^ l.Broadcast(v)) }

// Has2 reports whether some lane of x or of y equals v, with one branch.
func (l Lanes) Has2(x, y uint64, v uint32) bool {
	b := l.Broadcast(v)
	x, y = x^b, y^b
	return ((x-l.ones)&^x|(y-l.ones)&^y)&l.highs != 0
}

// Count returns how many lanes of x equal v.
func (l Lanes) Count(x uint64, v uint32) int {
	return bits.OnesCount64(l.Zeros(x ^ l.Broadcast(v)))
}

// First returns the index of the lowest lane of x equal to v, or -1.
func (l Lanes) First(x uint64, v uint32) int {
	z := l.Zeros(x ^ l.Broadcast(v))
	if z == 0 {
		return -1
	}
	return bits.TrailingZeros64(z) / int(l.width)
}

// Lane constants of 4 lanes of 12 bits, the default filter shape.
const (
	ones4x12  = 1 | 1<<12 | 1<<24 | 1<<36
	highs4x12 = ones4x12 << 11
)

// Has2x4x12 is Has2 for 4 lanes of 12 bits with the constants folded in: it
// reports whether some lane of x or of y equals v. Bits 48 and up of x and y
// are ignored, so callers need not clear them: the subtraction's borrows only
// run upward, and only the lanes' own high bits are tested.
func Has2x4x12(x, y uint64, v uint32) bool {
	b := uint64(v) * ones4x12
	x, y = x^b, y^b
	return ((x-ones4x12)&^x|(y-ones4x12)&^y)&highs4x12 != 0
}

// Lanes2 describes n lanes of w bits packed from bit 0 of a 128-bit value
// held as two words, lo + hi·2^64; one lane may straddle the two. Bits above
// the last lane are ignored.
type Lanes2 struct {
	lowsLo, lowsHi   uint64 // every bit of every lane except the highest
	highsLo, highsHi uint64 // the highest bit of every lane
	width            uint
}

// New2 returns the description of n lanes of width bits in two words. It
// panics unless 1 <= width <= 63, 1 <= n and n*width <= 128.
func New2(n, width uint) Lanes2 {
	if width == 0 || width > 63 || n == 0 || n*width > 128 {
		panic("swar: lanes do not fit in two words")
	}
	l := Lanes2{width: width}
	for i := range n {
		top := (i+1)*width - 1
		for b := i * width; b <= top; b++ {
			lo, hi := &l.lowsLo, &l.lowsHi
			if b == top {
				lo, hi = &l.highsLo, &l.highsHi
			}
			if b < 64 {
				*lo |= 1 << b
			} else {
				*hi |= 1 << (b - 64)
			}
		}
	}
	return l
}

// Zeros returns, in two words, the highest bit of every zero lane of lo +
// hi·2^64 set and every other bit clear. It is Lanes.Zeros over 128 bits:
// the sum (x & lows) + lows is one 128-bit addition, whose carry from the
// low word belongs to the lane that straddles the two, and no lane's sum
// carries out of the lane. Bits outside the lanes take no part: the sum
// masks them, and only the lanes' highest bits are kept.
func (l Lanes2) Zeros(lo, hi uint64) (zlo, zhi uint64) {
	sLo, carry := bits.Add64(lo&l.lowsLo, l.lowsLo, 0)
	sHi, _ := bits.Add64(hi&l.lowsHi, l.lowsHi, carry)
	return ^(sLo | lo) & l.highsLo, ^(sHi | hi) & l.highsHi
}

// First returns the index of the lowest lane marked in Zeros' result, or -1.
func (l Lanes2) First(zlo, zhi uint64) int {
	switch {
	case zlo != 0:
		return bits.TrailingZeros64(zlo) / int(l.width)
	case zhi != 0:
		return (64 + bits.TrailingZeros64(zhi)) / int(l.width)
	}
	return -1
}

// Count returns how many lanes are marked in Zeros' result.
func (l Lanes2) Count(zlo, zhi uint64) int {
	return bits.OnesCount64(zlo) + bits.OnesCount64(zhi)
}
