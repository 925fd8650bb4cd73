package lockfree_test

import (
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// TestBucketBitsRoundTrip copies a filter bucket by bucket into a new one
// built with the same Config: same Len, every key present, and Size
// predicts SizeInBytes.
func TestBucketBitsRoundTrip(t *testing.T) {
	for _, cfg := range []filter.Config{
		{Capacity: 5000, BucketSize: 4, FingerprintBits: 12, Seed: 7},
		{Capacity: 5000, BucketSize: 2, FingerprintBits: 24, Seed: 9},
		{Capacity: 5000, BucketSize: 8, FingerprintBits: 6, Seed: 11},
	} {
		t.Run(fmt.Sprintf("b=%d/f=%d", cfg.BucketSize, cfg.FingerprintBits), func(t *testing.T) {
			src, err := lockfree.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4000 {
				if err := src.InsertString(fmt.Sprint("key", i)); err != nil {
					t.Fatal(err)
				}
			}
			dst, err := lockfree.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := lockfree.Size(cfg); n != dst.SizeInBytes() {
				t.Errorf("Size %d, SizeInBytes %d", n, dst.SizeInBytes())
			}
			if got, want := dst.BucketBytes(), (cfg.BucketSize*cfg.FingerprintBits+7)/8; got != want {
				t.Errorf("BucketBytes %d, want %d", got, want)
			}
			for i := range src.Buckets() {
				if err := dst.SetBucketBits(i, src.BucketBits(i)); err != nil {
					t.Fatal(err)
				}
			}
			if dst.Len() != src.Len() {
				t.Errorf("Len %d, source %d", dst.Len(), src.Len())
			}
			for i := range 4000 {
				if !dst.ContainsString(fmt.Sprint("key", i)) {
					t.Fatalf("key%d missing after the copy", i)
				}
			}
			// Overwriting with zeros empties the filter.
			for i := range dst.Buckets() {
				dst.SetBucketBits(i, 0)
			}
			if dst.Len() != 0 {
				t.Errorf("Len %d after clearing every bucket", dst.Len())
			}
		})
	}
}

func TestSetBucketBitsErrors(t *testing.T) {
	f, err := lockfree.New(filter.Config{Capacity: 100, BucketSize: 4, FingerprintBits: 12})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetBucketBits(f.Buckets(), 1); err == nil {
		t.Error("bucket out of range accepted")
	}
	if err := f.SetBucketBits(0, 1<<48); err == nil {
		t.Error("bits beyond the fingerprints accepted")
	}
	if f.Len() != 0 || f.BucketBits(0) != 0 {
		t.Errorf("a refused SetBucketBits changed the filter: Len %d", f.Len())
	}
	for _, cfg := range []filter.Config{{}, {Capacity: 100, BucketSize: 4, FingerprintBits: 13}} {
		_, errSize := lockfree.Size(cfg)
		_, errNew := lockfree.New(cfg)
		if errSize == nil || errNew == nil || errSize.Error() != errNew.Error() {
			t.Errorf("%+v: Size error %v, New error %v", cfg, errSize, errNew)
		}
	}
}
