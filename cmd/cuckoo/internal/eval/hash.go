package eval

import "math/bits"

// mix is SplitMix64's finaliser: a bijection of uint64 whose output bits
// all depend on all input bits. The reference structures hash keys with it,
// under different seeds for independent functions.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// reduce maps h uniformly onto [0, n) (Lemire's multiply-shift).
func reduce(h uint64, n int) int {
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

// keys returns n distinct pseudo-random keys of stream s: keys of different
// streams never coincide, since mix is a bijection and the inputs differ.
func keys(n int, s uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = mix(s<<40 | uint64(i))
	}
	return out
}
