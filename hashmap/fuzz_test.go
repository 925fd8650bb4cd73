package hashmap_test

import (
	"testing"

	"github.com/cuckoohash/cuckoo/hashmap"
)

// FuzzMap decodes the input into a sequence of operations, applies them to
// a Map and to a builtin map, and compares every result. The first byte
// chooses the hasher (real, constant, 4-bit, tag-only: see hashers), so
// displacement chains, cycles, the stash and growth are all reached; the
// invariants are checked every 16 operations and at the end.
func FuzzMap(f *testing.F) {
	f.Add([]byte{0, 1, 5, 9, 1, 6, 9, 0, 5, 3, 5, 4, 5})
	f.Add([]byte{1, 1, 1, 1, 1, 2, 1, 1, 3, 1, 1, 4, 1, 6, 1, 7, 1, 8, 1})
	f.Add([]byte{2, 1, 10, 1, 11, 1, 12, 1, 13, 1, 14, 1, 15, 1, 16, 1, 17, 1, 18, 1, 19, 1, 20, 9, 0, 10, 0})
	f.Add([]byte{3, 2, 200, 2, 201, 3, 200, 7, 0, 8, 0, 6, 201})
	seq := []byte{2}
	for i := range 120 {
		seq = append(seq, 1, byte(i*37))
	}
	f.Add(seq)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		m := hashmap.New[int, int](hashers[int(data[0])%len(hashers)].opts...)
		model := map[int]int{}
		data = data[1:]
		for step := 0; len(data) >= 2; step++ {
			op, k := data[0], int(data[1])
			data = data[2:]
			v := step + 1000*k
			switch op % 11 {
			case 0: // Load
				got, ok := m.Load(k)
				want, wok := model[k]
				if got != want || ok != wok {
					t.Fatalf("step %d: Load(%d) = %d, %v; want %d, %v", step, k, got, ok, want, wok)
				}
			case 1: // Store
				m.Store(k, v)
				model[k] = v
			case 2: // LoadOrStore
				got, loaded := m.LoadOrStore(k, v)
				want, wok := model[k]
				if !wok {
					want = v
					model[k] = v
				}
				if got != want || loaded != wok {
					t.Fatalf("step %d: LoadOrStore(%d, %d) = %d, %v; want %d, %v", step, k, v, got, loaded, want, wok)
				}
			case 3: // LoadAndDelete
				got, loaded := m.LoadAndDelete(k)
				want, wok := model[k]
				delete(model, k)
				if got != want || loaded != wok {
					t.Fatalf("step %d: LoadAndDelete(%d) = %d, %v; want %d, %v", step, k, got, loaded, want, wok)
				}
			case 4: // Delete
				m.Delete(k)
				delete(model, k)
			case 5: // Swap
				got, loaded := m.Swap(k, v)
				want, wok := model[k]
				model[k] = v
				if got != want || loaded != wok {
					t.Fatalf("step %d: Swap(%d, %d) = %d, %v; want %d, %v", step, k, v, got, loaded, want, wok)
				}
			case 6, 7: // Compute: increment, delete or cancel, by the value's parity
				want, wok := model[k]
				calls := 0
				got, ok := m.Compute(k, func(old int, loaded bool) (int, hashmap.ComputeOp) {
					calls++
					if old != want || loaded != wok {
						t.Fatalf("step %d: Compute(%d) fn got %d, %v; want %d, %v", step, k, old, loaded, want, wok)
					}
					switch {
					case op%11 == 6:
						return old + 1, hashmap.UpdateOp
					case old%2 == 0:
						return 0, hashmap.DeleteOp
					}
					return 0, hashmap.CancelOp
				})
				switch {
				case op%11 == 6:
					want, wok = want+1, true
					model[k] = want
				case want%2 == 0:
					want, wok = 0, false
					delete(model, k)
				}
				if calls != 1 || got != want || ok != wok {
					t.Fatalf("step %d: Compute(%d) = %d, %v after %d calls; want %d, %v", step, k, got, ok, calls, want, wok)
				}
			case 8: // Len
				if m.Len() != len(model) {
					t.Fatalf("step %d: Len() = %d, want %d", step, m.Len(), len(model))
				}
			case 9: // Range
				seen := map[int]int{}
				m.Range(func(key, value int) bool {
					if _, dup := seen[key]; dup {
						t.Fatalf("step %d: Range visited %d twice", step, key)
					}
					seen[key] = value
					return true
				})
				if len(seen) != len(model) {
					t.Fatalf("step %d: Range visited %d keys, want %d", step, len(seen), len(model))
				}
				for key, value := range model {
					if seen[key] != value {
						t.Fatalf("step %d: Range gave %d: %d, want %d", step, key, seen[key], value)
					}
				}
			case 10: // Clear, rarely
				if k%8 == 0 {
					m.Clear()
					clear(model)
				}
			}
			if step%16 == 15 {
				check(t, m)
			}
		}
		check(t, m)
		for k, v := range model {
			if got, ok := m.Load(k); !ok || got != v {
				t.Fatalf("end: Load(%d) = %d, %v; want %d", k, got, ok, v)
			}
		}
	})
}
