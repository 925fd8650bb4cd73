package rdb_test

import (
	"fmt"
	"os"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

// A module value written as Redis's DUMP writes it, and read back.
func Example() {
	id := rdb.NewModuleID("MBbloomCF", 4)
	table := make([]byte, 1024) // 512 buckets of 2 fingerprints, empty

	b := rdb.AppendModuleType(nil, id)
	for _, field := range []uint64{1, 512, 0, 0, 2, 20, 1} {
		b = rdb.AppendUnsigned(b, field)
	}
	b = rdb.AppendUnsigned(b, 512)
	b = rdb.AppendStringBuffer(b, table) // compressed: 1024 zeros
	b = rdb.AppendModuleEOF(b)
	payload := rdb.AppendFooter(b, 0)
	fmt.Printf("%d bytes: %x\n", len(payload), payload[:10])

	body, version, err := rdb.SplitPayload(payload)
	if err != nil {
		panic(err)
	}
	r := rdb.NewReader(body)
	got, _ := r.ReadModuleType()
	filters, _ := r.ReadUnsigned()
	fmt.Println("version", version, "type", got, "filters", filters)
	// Output:
	// 62 bytes: 07813016e5a289821404
	// version 10 type MBbloomCF/4 filters 1
}

// Reading Redis's own DUMP of a filter: the module value's fields, in the
// order RedisBloom saved them.
func ExampleReader() {
	payload, err := os.ReadFile("testdata/cf-foo-bar.bin")
	if err != nil {
		panic(err)
	}
	body, _, err := rdb.SplitPayload(payload)
	if err != nil {
		panic(err)
	}
	r := rdb.NewReader(body)
	id, _ := r.ReadModuleType()
	fmt.Println(id)
	for _, name := range []string{"filters", "buckets", "items", "deletes", "bucket size", "max iterations", "expansion", "filter 0's buckets"} {
		v, _ := r.ReadUnsigned()
		fmt.Println(name, v)
	}
	table, _ := r.ReadStringBuffer(1 << 20)
	fmt.Println("table of", len(table), "bytes")
	fmt.Println(r.ReadModuleEOF(), r.Len())
	// Output:
	// MBbloomCF/4
	// filters 1
	// buckets 512
	// items 2
	// deletes 0
	// bucket size 2
	// max iterations 20
	// expansion 1
	// filter 0's buckets 512
	// table of 1024 bytes
	// <nil> 0
}
