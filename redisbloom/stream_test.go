package redisbloom_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
)

// TestStreamRoundTrip writes filters whole and reads them back: the same
// chunks, figures and answers; checking alone allocates nothing and
// accepts what loads; every truncation is an error.
func TestStreamRoundTrip(t *testing.T) {
	for _, p := range []redisbloom.Params{
		{Capacity: 1000, BucketSize: 2, MaxIterations: 20, Expansion: 1},
		{Capacity: 100, BucketSize: 3, MaxIterations: 20, Expansion: 2},
		{Capacity: 1 << 21, BucketSize: 1, MaxIterations: 20, Expansion: 0}, // two blocks
	} {
		t.Run(fmt.Sprintf("bucket=%d/expansion=%d", p.BucketSize, p.Expansion), func(t *testing.T) {
			f := filled(t, p, 700)
			var buf bytes.Buffer
			n, err := f.WriteTo(&buf)
			if err != nil || n != int64(buf.Len()) {
				t.Fatalf("WriteTo: %d, %v; %d bytes written", n, err, buf.Len())
			}
			if g, err := redisbloom.ReadFrom(bytes.NewReader(buf.Bytes()), nil, true); err != nil || g != nil {
				t.Fatalf("check: %v, %v", g, err)
			}
			g, err := redisbloom.ReadFrom(bytes.NewReader(buf.Bytes()), nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if f.Info() != g.Info() {
				t.Fatalf("figures %+v, read back %+v", f.Info(), g.Info())
			}
			_, a := dumpAll(t, f)
			_, b := dumpAll(t, g)
			for i := range a {
				if !bytes.Equal(a[i], b[i]) {
					t.Fatalf("chunk %d differs", i)
				}
			}
			for _, cut := range []int{0, 10, redisbloom.HeaderSize, redisbloom.HeaderSize + 4, buf.Len() - 1} {
				if _, err := redisbloom.ReadFrom(bytes.NewReader(buf.Bytes()[:cut]), nil, false); !errors.Is(err, redisbloom.ErrStream) {
					t.Errorf("cut at %d: %v", cut, err)
				}
			}
		})
	}
}

// TestStreamRefuses: headers of no filter, and sizes past the Reserve.
func TestStreamRefuses(t *testing.T) {
	for _, h := range [][]byte{
		header(1, 8, 0, 0, 2, 20, 1),
		header(1, 8, 0, 1<<16, 2, 20, 1),
		header(1, 8, 0, 1, 0, 20, 1),
		header(1, 0, 0, 1, 2, 20, 1),
		header(1, 8, 0, 1, 2, 0, 1),
	} {
		if _, err := redisbloom.ReadFrom(bytes.NewReader(h), nil, false); !errors.Is(err, redisbloom.ErrStream) {
			t.Errorf("header %x: %v", h, err)
		}
	}
	big := append(header(1, 8, 0, 1, 2, 20, 1), 0, 0, 0, 0, 0, 1, 0, 0) // 2^40 buckets
	if _, err := redisbloom.ReadFrom(bytes.NewReader(big), nil, false); err == nil {
		t.Error("a 2 TiB sub-filter was read")
	}
	if _, err := redisbloom.ReadFrom(bytes.NewReader(big), nil, true); err == nil {
		t.Error("a 2 TiB sub-filter with no bytes checked")
	}
}
