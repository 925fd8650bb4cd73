package hashmap_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cuckoohash/cuckoo/hashmap"
)

func Example() {
	m := hashmap.New[string, int]()
	m.Store("apple", 3)
	m.Store("pear", 5)
	if v, ok := m.Load("apple"); ok {
		fmt.Println("apple:", v)
	}
	actual, loaded := m.LoadOrStore("pear", 7)
	fmt.Println("pear:", actual, loaded)
	m.Delete("apple")
	fmt.Println("len:", m.Len())
	// Output:
	// apple: 3
	// pear: 5 true
	// len: 1
}

func ExampleMap_Compute() {
	m := hashmap.New[string, int]()
	for _, w := range strings.Fields("a b a c a b") {
		m.Compute(w, func(old int, _ bool) (int, hashmap.ComputeOp) { return old + 1, hashmap.UpdateOp })
	}
	// Delete the words seen once.
	for _, w := range []string{"a", "b", "c"} {
		m.Compute(w, func(old int, _ bool) (int, hashmap.ComputeOp) {
			if old == 1 {
				return 0, hashmap.DeleteOp
			}
			return old, hashmap.CancelOp
		})
	}
	var words []string
	for w, n := range m.All() {
		words = append(words, fmt.Sprintf("%s=%d", w, n))
	}
	slices.Sort(words)
	fmt.Println(words)
	// Output: [a=3 b=2]
}

func ExampleMap_Stats() {
	// A table at an exact load factor: size it, then fill a fraction of
	// its slots; WithMaxLoad(1) keeps it from growing on load.
	m := hashmap.New[int, int](hashmap.WithCapacity(6000), hashmap.WithMaxLoad(1))
	slots := m.Stats().Slots
	for i := range slots * 90 / 100 {
		m.Store(i, i)
	}
	st := m.Stats()
	fmt.Printf("%d buckets of %d slots, load %.2f\n", st.Buckets, st.SlotsPerBucket, st.Load)
	_, _, p := m.LoadProbe(-1)
	fmt.Println("a miss inspects at most 2 buckets:", p.Buckets <= 2)
	// Output:
	// 1024 buckets of 6 slots, load 0.90
	// a miss inspects at most 2 buckets: true
}
