package filter_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/cuckoohash/cuckoo/filter"
)

func ExampleFilter() {
	f, err := filter.New(filter.Config{Capacity: 1000, FalsePositiveRate: 0.01})
	if err != nil {
		log.Fatal(err)
	}
	for _, fruit := range []string{"apple", "banana", "cherry"} {
		if err := f.InsertString(fruit); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(f.ContainsString("banana"), f.ContainsString("durian"))
	fmt.Println(f.DeleteString("banana"), f.ContainsString("banana"))
	fmt.Println(f.Len(), f.FingerprintBits(), "bits")
	// Output:
	// true false
	// true false
	// 2 10 bits
}

func ExampleLayout_ExpectedFalsePositiveRate() {
	l, err := filter.Config{Capacity: 1_000_000, FalsePositiveRate: 0.01}.Layout()
	if err != nil {
		log.Fatal(err)
	}
	full := float64(l.Capacity) / float64(l.Buckets*uint64(l.BucketSize))
	fmt.Printf("%v, R = %d: %.3f%% when full, %.3f%% half full\n",
		l.Packing, l.FingerprintRange, 100*l.ExpectedFalsePositiveRate(full), 100*l.ExpectedFalsePositiveRate(full/2))
	// Output:
	// ranked, R = 896: 0.854% when full, 0.428% half full
}

func ExampleScalable() {
	s, err := filter.NewScalable(filter.ScalableConfig{InitialCapacity: 100, FalsePositiveRate: 0.01})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 1000 {
		if err := s.InsertString(fmt.Sprint("user-", i)); err != nil {
			log.Fatal(err)
		}
	}
	// Deleting half the users never takes another user's entry.
	for i := 0; i < 1000; i += 2 {
		if !s.DeleteString(fmt.Sprint("user-", i)) {
			log.Fatal("a delete found nothing")
		}
	}
	missing := 0
	for i := 1; i < 1000; i += 2 {
		if !s.ContainsString(fmt.Sprint("user-", i)) {
			missing++
		}
	}
	fmt.Println("keys:", s.Len(), "doublings:", s.Stages()-1, "missing:", missing)
	fmt.Println("rate below 1%:", s.FalsePositiveRate() < 0.01)
	// Output:
	// keys: 500 doublings: 4 missing: 0
	// rate below 1%: true
}

func ExampleFilter_WriteTo() {
	f, err := filter.New(filter.Config{Capacity: 100, Seed: 42})
	if err != nil {
		log.Fatal(err)
	}
	if err := f.Insert([]byte("saved")); err != nil {
		log.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := f.WriteTo(&buf)
	if err != nil {
		log.Fatal(err)
	}
	g, err := filter.Read(&buf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n == f.EncodedSize(), g.Contains([]byte("saved")), g.Seed())
	// Output:
	// true true 42
}
