package growing_test

import (
	"fmt"
	"log"
	"sync"

	"github.com/cuckoohash/cuckoo/growing"
)

// A filter sized for 1000 keys takes 100,000 from four goroutines, growing
// as they arrive, while a fifth looks keys up with no lock. Deleting half
// of them never takes another key's entry: every kept key is still found.
func Example() {
	f, err := growing.New(growing.Config{InitialCapacity: 1000, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < 100_000; i += 4 {
				if err := f.InsertString(fmt.Sprint("user-", i)); err != nil {
					log.Fatal(err)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 100_000 {
			f.ContainsString(fmt.Sprint("user-", i)) // may run with the inserts
		}
	})
	wg.Wait()
	for i := 0; i < 100_000; i += 2 {
		if !f.DeleteString(fmt.Sprint("user-", i)) {
			log.Fatal("a delete found nothing")
		}
	}
	missing := 0
	for i := 1; i < 100_000; i += 2 {
		if !f.ContainsString(fmt.Sprint("user-", i)) {
			missing++
		}
	}
	fmt.Println("keys:", f.Len(), "missing:", missing)
	fmt.Println("grew:", f.Capacity() > 100_000, "rate below 0.25%:", f.FalsePositiveRate() < 0.0025)
	// Output:
	// keys: 50000 missing: 0
	// grew: true rate below 0.25%: true
}
