package fields_test

import (
	"bufio"
	"bytes"
	"errors"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/fields"
)

// FuzzRoundTrip: what Writer writes, Reader and Stream read back alike, and
// any prefix of it fails with ErrShort instead of a panic.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint64(0), []byte(nil), uint64(1<<63))
	f.Add(uint64(300), []byte("item"), uint64(7))
	f.Fuzz(func(t *testing.T, a uint64, s []byte, b uint64) {
		w := fields.Writer(nil).Uvarint(a).Str(s).Uvarint(b)
		r := &fields.Reader{B: w}
		if ga, gs, gb := r.Uvarint(), r.Str(), r.Uvarint(); ga != a || !bytes.Equal(gs, s) || gb != b || r.Failed() != nil || len(r.B) != 0 {
			t.Fatalf("Reader: %d %q %d, %v, %d left", ga, gs, gb, r.Failed(), len(r.B))
		}
		st := &fields.Stream{R: bufio.NewReader(bytes.NewReader(w))}
		if ga, gs, gb := st.Uvarint(), st.Str(uint64(len(s))), st.Uvarint(); ga != a || !bytes.Equal(gs, s) || gb != b || st.Failed() != nil {
			t.Fatalf("Stream: %d %q %d, %v", ga, gs, gb, st.Failed())
		}
		for n := range len(w) {
			r := &fields.Reader{B: w[:n]}
			r.Uvarint()
			r.Str()
			r.Uvarint()
			if !errors.Is(r.Failed(), fields.ErrShort) {
				t.Fatalf("a record cut at %d of %d: %v", n, len(w), r.Failed())
			}
		}
	})
}

// TestLimits: a field over its limit fails, and the first error sticks.
func TestLimits(t *testing.T) {
	w := fields.Writer(nil).Uvarint(256).Str([]byte("abc"))
	r := &fields.Reader{B: w}
	if r.Int(255); r.Failed() == nil {
		t.Fatal("256 read with a limit of 255")
	}
	if s := r.Str(); s != nil {
		t.Fatalf("a read after an error returned %q", s)
	}
	st := &fields.Stream{R: bufio.NewReader(bytes.NewReader(w))}
	st.Uvarint()
	if st.Str(2); st.Failed() == nil {
		t.Fatal("a 3-byte string read with a limit of 2")
	}
}
