package lockfree_test

import (
	"fmt"
	"log"
	"sync"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// Four goroutines insert at once into a filter built from the Config of
// the README's filter example. At a rate of 0.001 New takes buckets of 2
// slots (doc.go, "Bucket sizes").
func Example() {
	f, err := lockfree.New(filter.Config{Capacity: 1_000_000, FalsePositiveRate: 0.001})
	if err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < 1000; i += 4 {
				if err := f.InsertString(fmt.Sprint("https://example.com/", i)); err != nil {
					log.Fatal(err)
				}
			}
		})
	}
	wg.Wait()
	fmt.Println(f.ContainsString("https://example.com/7"), f.Len())
	fmt.Println(f.DeleteString("https://example.com/7"), f.ContainsString("https://example.com/7"))
	fmt.Println(f.BucketSize(), "slots of", f.FingerprintBits(), "bits")
	// Output:
	// true 1000
	// true false
	// 2 slots of 12 bits
}
