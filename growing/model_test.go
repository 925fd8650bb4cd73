package growing_test

import (
	"testing"

	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/internal/modeltest"
)

// FuzzModel runs operations on a tiny filter, so that it grows early and
// often, against a multiset of the keys it accepted, checking the table's
// invariants after each mutation and, after each delete, that every held
// copy has an entry of its own.
func FuzzModel(f *testing.F) {
	f.Add([]byte{0x00, 1, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 3, 1, 3, 5})
	f.Add(modeltest.FillAndDrain([4]byte{1, 0, 0, 7}, 200))
	f.Add(modeltest.FillAndDrain([4]byte{0, 3, 0, 1}, 250))
	f.Fuzz(func(t *testing.T, data []byte) {
		var h [4]byte
		copy(h[:], data)
		cfg := growing.Config{
			BucketSize:      [4]int{2, 4, 5, 4}[h[0]&1|h[0]>>1&2],
			InitialCapacity: 1 + uint64(h[1])%8,
			Seed:            uint64(h[3]),
		}
		if h[0]&2 != 0 {
			cfg.MaxKicks = 1 + int(h[2])%4
		}
		g, err := growing.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := modeltest.New(t, g, func() any { return g.Words() }, g.CheckInvariants)
		m.FullAllowed = func(key []byte) bool { return g.Count(key) >= 2*cfg.BucketSize || g.Stashed() >= growing.MaxStash }
		m.ContainsBeyondCount = true
		ops := data[min(len(data), 4):]
		const maxCopies = 4 // more copies of one key only meet ErrFull
		for n := 0; len(ops) >= 2 && n < modeltest.MaxFuzzOps; ops, n = ops[2:], n+1 {
			op, key := int(ops[0])%modeltest.NumOps, []byte{ops[1]}
			if (op == modeltest.OpInsert || op == modeltest.OpInsertUnique) && m.Counts[string(key)] >= maxCopies {
				op = modeltest.OpCount
			}
			m.Apply(op, key)
			// Only a delete can take another key's entry: check the
			// matching after each (it is the costly check).
			if op == modeltest.OpDelete {
				if err := g.CheckMatching(m.Counts); err != nil {
					t.Fatalf("after deleting %q: %v", key, err)
				}
			}
		}
		if err := g.CheckMatching(m.Counts); err != nil {
			t.Fatal(err)
		}
	})
}
