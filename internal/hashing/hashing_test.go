package hashing_test

import (
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/hashing"
)

func TestAltIsAnInvolutionInRange(t *testing.T) {
	for _, alt := range []struct {
		name string
		fn   func(i uint64, fp uint32, m uint64) uint64
	}{{"Alt", hashing.Alt}, {"AltMixed", hashing.AltMixed}} {
		t.Run(alt.name, func(t *testing.T) { testInvolution(t, alt.fn) })
	}
}

func testInvolution(t *testing.T, alt func(i uint64, fp uint32, m uint64) uint64) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []uint64{1, 2, 3, 7, 64, 1000, 263158, 1<<32 - 1, 1 << 32}
	for range 50 {
		sizes = append(sizes, 1+r.Uint64N(hashing.MaxBuckets))
	}
	for _, m := range sizes {
		for range 2000 {
			i := r.Uint64N(m)
			fp := uint32(1 + r.Uint64N(1<<32-1))
			j := alt(i, fp, m)
			if j >= m {
				t.Fatalf("m=%d: Alt(%d, %#x) = %d out of range", m, i, fp, j)
			}
			if back := alt(j, fp, m); back != i {
				t.Fatalf("m=%d: Alt(Alt(%d, %#x)) = %d", m, i, fp, back)
			}
		}
	}
}

func TestIndexAndFingerprintRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		h := r.Uint64()
		m := 1 + r.Uint64N(hashing.MaxBuckets)
		if i := hashing.Index(h, m); i >= m {
			t.Fatalf("Index(%#x, %d) = %d", h, m, i)
		}
		bits := uint(1 + r.IntN(32))
		fp := hashing.Fingerprint(h, bits)
		if fp == 0 || uint64(fp) > 1<<bits-1 {
			t.Fatalf("Fingerprint(%#x, %d) = %#x", h, bits, fp)
		}
	}
	// The extremes of the low half map to the ends of the range.
	if hashing.Fingerprint(0, 12) != 1 || hashing.Fingerprint(1<<32-1, 12) != 1<<12-1 {
		t.Fatal("fingerprint range ends")
	}
	if hashing.Index(^uint64(0), 10) != 9 || hashing.Index(0, 10) != 0 {
		t.Fatal("index range ends")
	}
}

// TestKeyIsStable pins the key hash: filters are saved and loaded across
// processes and machines, so its values must never change.
func TestKeyIsStable(t *testing.T) {
	for _, c := range []struct {
		key  string
		seed uint64
		want uint64
	}{
		{"", 0, hashing.Key(nil, 0)},
	} {
		if got := hashing.String(c.key, c.seed); got != c.want {
			t.Fatalf("String(%q, %d) = %#x, Key gives %#x", c.key, c.seed, got, c.want)
		}
	}
	got := []uint64{hashing.Key([]byte("cuckoo"), 0), hashing.Key([]byte("cuckoo"), 42), hashing.Key(make([]byte, 100), 7)}
	want := []uint64{0x6b9c4af711372734, 0x89643d27a61ef88d, 0xf59483464e9fcdf2}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("hash %d = %#x, want %#x: the key hash changed, which breaks every saved filter", i, got[i], want[i])
		}
	}
}
