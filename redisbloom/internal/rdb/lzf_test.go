package rdb_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

// lzfModel decodes an LZF stream the plain way, one byte at a time into a
// growing slice, and says whether it is valid: every instruction whole,
// every reference within what was written.
func lzfModel(src []byte) ([]byte, bool) {
	var out []byte
	for i := 0; i < len(src); {
		c := int(src[i])
		i++
		if c < 32 {
			if i+c+1 > len(src) {
				return nil, false
			}
			out = append(out, src[i:i+c+1]...)
			i += c + 1
			continue
		}
		n := c >> 5
		if n == 7 {
			if i >= len(src) {
				return nil, false
			}
			n += int(src[i])
			i++
		}
		if i >= len(src) {
			return nil, false
		}
		back := (c&31)<<8 + int(src[i]) + 1
		i++
		if back > len(out) {
			return nil, false
		}
		for range n + 2 {
			out = append(out, out[len(out)-back])
		}
	}
	return out, true
}

// lzfInputs are inputs of the shapes filter tables have, and LZF's edges.
func lzfInputs() map[string][]byte {
	rng := rand.New(rand.NewPCG(5, 6))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	sparse := make([]byte, 100000)
	for i := range sparse {
		if rng.IntN(100) == 0 {
			sparse[i] = byte(rng.Uint32())
		}
	}
	return map[string][]byte{
		"one":         {7},
		"two":         {7, 7},
		"three":       {7, 7, 7},
		"zeros=21":    make([]byte, 21),
		"zeros=100k":  make([]byte, 100000),
		"random=31":   random(31),
		"random=32":   random(32),
		"random=33":   random(33),
		"random=100k": random(100000),
		"sparse=100k": sparse,
		// A repeat just inside and just outside the 8192-byte window.
		"far=8192": append(append(random(3), make([]byte, 8189)...), 1, 2, 3),
		"far=8193": append(append(random(3), make([]byte, 8190)...), 1, 2, 3),
		"text":     bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog. "), 300),
	}
}

func TestLZFRoundTrip(t *testing.T) {
	for name, in := range lzfInputs() {
		t.Run("input="+name, func(t *testing.T) {
			comp, ok := rdb.AppendLZF([]byte("prefix"), in, 2*len(in)+16)
			if !ok || string(comp[:6]) != "prefix" {
				t.Fatalf("AppendLZF with room: ok=%v", ok)
			}
			comp = comp[6:]
			if model, valid := lzfModel(comp); !valid || !bytes.Equal(model, in) {
				t.Fatalf("the stream decodes, by the model, to %d bytes (valid=%v), want the %d in", len(model), valid, len(in))
			}
			out := make([]byte, len(in))
			if err := rdb.DecompressLZF(out, comp); err != nil || !bytes.Equal(out, in) {
				t.Fatalf("DecompressLZF: %v", err)
			}
			t.Logf("%d bytes to %d", len(in), len(comp))
			// A limit one byte under what it took always fails, and leaves
			// dst as it was.
			dst := []byte("keep")
			if got, ok := rdb.AppendLZF(dst, in, len(comp)-1); ok || string(got) != "keep" {
				t.Errorf("AppendLZF with limit %d: ok=%v, dst %q", len(comp)-1, ok, got)
			}
		})
	}
}

// TestLZFGolden: the streams Redis wrote for 21 and 100 'a's (the tails of
// string-a21 and string-a100), byte for byte.
func TestLZFGolden(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{21, "016161e00a00"},
		{100, "016161e05700016161"},
	} {
		comp, ok := rdb.AppendLZF(nil, bytes.Repeat([]byte("a"), tc.n), tc.n-4)
		if got := fmt.Sprintf("%x", comp); !ok || got != tc.want {
			t.Errorf("%d a's: %s (ok=%v), want %s", tc.n, got, ok, tc.want)
		}
	}
	for _, limit := range []int{0, -1} {
		if _, ok := rdb.AppendLZF(nil, []byte("aaaaaa"), limit); ok {
			t.Errorf("AppendLZF with limit %d succeeded", limit)
		}
	}
	if _, ok := rdb.AppendLZF(nil, nil, 100); ok {
		t.Error("AppendLZF of nothing succeeded")
	}
}

func TestDecompressLZFErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  []byte
		n    int
		text string
	}{
		{"literal cut", []byte{3, 'a', 'b'}, 4, "LZF stream ends inside an instruction"},
		{"long reference cut", []byte{0, 'a', 0xe0}, 20, "LZF stream ends inside an instruction"},
		{"reference without its offset", []byte{0, 'a', 0x20}, 4, "LZF stream ends inside an instruction"},
		{"reference first", []byte{0x20, 0}, 3, "LZF back-reference before the start of the output"},
		{"reference too far", []byte{1, 'a', 'b', 0x20, 2}, 5, "LZF back-reference before the start of the output"},
		{"literal past the end", []byte{3, 'a', 'b', 'c', 'd'}, 3, "LZF stream expands past its stated length"},
		{"reference past the end", []byte{0, 'a', 0xe0, 0xff, 0}, 100, "LZF stream expands past its stated length"},
		{"short", []byte{1, 'a', 'b'}, 3, "LZF stream expands to less than its stated length"},
		{"empty", nil, 1, "LZF stream expands to less than its stated length"},
		// A bomb: 3 bytes that expand to 264, repeated, against a small dst.
		{"bomb", append([]byte{0, 0}, bytes.Repeat([]byte{0xe0, 0xff, 0}, 1000)...), 1000, "LZF stream expands past its stated length"},
	} {
		dst := make([]byte, tc.n+8)
		err := rdb.DecompressLZF(dst[:tc.n], tc.src)
		if !errors.Is(err, rdb.ErrCorrupt) || err.Error() != "rdb: malformed payload: "+tc.text {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.text)
		}
		// Nothing is written past dst.
		if !bytes.Equal(dst[tc.n:], make([]byte, 8)) {
			t.Errorf("%s: wrote past dst: %x", tc.name, dst[tc.n:])
		}
	}
	// An overlapping reference repeats the bytes before it.
	out := make([]byte, 11)
	if err := rdb.DecompressLZF(out, []byte{2, 'a', 'b', 'c', 0xc0, 2}); err != nil || string(out) != "abcabcabcab" {
		t.Errorf("overlapping reference: %q, %v", out, err)
	}
}

// FuzzLZF: decompressing any bytes never panics and agrees with the model;
// compressing any bytes round-trips, and fails only when the limit is too
// small, or less than 4 bytes above what it takes.
func FuzzLZF(f *testing.F) {
	for _, in := range lzfInputs() {
		if len(in) < 10000 {
			f.Add(in, uint16(len(in)))
		}
	}
	f.Add([]byte{0, 'a', 0xe0, 0xff, 0}, uint16(266))
	f.Fuzz(func(t *testing.T, data []byte, n uint16) {
		// data as a stream, expanding to n bytes.
		out := make([]byte, n)
		err := rdb.DecompressLZF(out, data)
		model, valid := lzfModel(data)
		if wantOK := valid && len(model) == int(n); (err == nil) != wantOK {
			t.Fatalf("DecompressLZF(%x, %d) = %v; the model says valid=%v, %d bytes", data, n, err, valid, len(model))
		}
		if err == nil && !bytes.Equal(out, model) {
			t.Fatalf("DecompressLZF(%x) = %x, model %x", data, out, model)
		}
		if err != nil && !errors.Is(err, rdb.ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		// data as an input, compressed with n as the limit.
		comp, ok := rdb.AppendLZF(nil, data, int(n))
		if !ok {
			if len(comp) != 0 {
				t.Fatalf("a failed AppendLZF appended %d bytes", len(comp))
			}
			// liblzf's space checks are conservative by up to 3 bytes.
			if big, ok := rdb.AppendLZF(nil, data, 2*len(data)+8); len(data) > 0 && (!ok || len(big) < int(n)-3) {
				t.Fatalf("AppendLZF failed at limit %d, and at %d gave %d bytes (ok=%v)", n, 2*len(data)+8, len(big), ok)
			}
			return
		}
		if len(comp) > int(n) {
			t.Fatalf("AppendLZF gave %d bytes, limit %d", len(comp), n)
		}
		back := make([]byte, len(data))
		if err := rdb.DecompressLZF(back, comp); err != nil || !bytes.Equal(back, data) {
			t.Fatalf("round trip of %x: %x, %v", data, back, err)
		}
	})
}
