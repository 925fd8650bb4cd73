package redisbloom_test

import (
	"fmt"
	"log"

	"github.com/cuckoohash/cuckoo/redisbloom"
)

// A filter made as CF.RESERVE k 1000 BUCKETSIZE 2 makes it, filled, and
// moved to another in CF.SCANDUMP's chunks, as CF.LOADCHUNK takes them.
func Example() {
	f, err := redisbloom.New(redisbloom.Params{Capacity: 1000, BucketSize: 2, MaxIterations: 20, Expansion: 1})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 1000 {
		if err := f.Add(fmt.Append(nil, "item:", i)); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(f.Contains([]byte("item:7")), f.Count([]byte("item:7")), f.Delete([]byte("item:7")))

	_, header := f.DumpChunk(0)
	g, err := redisbloom.Load(header, nil)
	if err != nil {
		log.Fatal(err)
	}
	for iter := int64(1); ; {
		next, chunk := f.DumpChunk(iter)
		if chunk == nil {
			break
		}
		if err := g.LoadChunk(next, chunk); err != nil {
			log.Fatal(err)
		}
		iter = next
	}
	info := g.Info()
	fmt.Println(info.Items, info.Filters, g.Contains([]byte("item:8")))
	// Output:
	// true 1 true
	// 999 2 true
}
