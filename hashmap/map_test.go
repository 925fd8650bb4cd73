package hashmap_test

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/hashmap"
)

// hashers are the hashes every model test runs under: the real one, a
// constant (every key in the same two buckets, so everything past twelve
// keys goes to the stash) and one truncated to 4 bits (16 hash values,
// long displacement chains, cycles and stashing).
var hashers = []struct {
	name string
	opts []hashmap.Option
}{
	{"hash=real", nil},
	{"hash=const", []hashmap.Option{hashmap.WithHasher(func(int, uint64) uint64 { return 0x9e3779b97f4a7c15 })}},
	{"hash=4bit", []hashmap.Option{hashmap.WithHasher(func(k int, seed uint64) uint64 { return hashmap.Mix(uint64(k), seed) & 0xf })}},
	{"hash=8bit-tag-only", []hashmap.Option{hashmap.WithHasher(func(k int, seed uint64) uint64 { return hashmap.Mix(uint64(k), seed) & (0xff << 56) })}},
}

func check[K comparable, V any](t testing.TB, m *hashmap.Map[K, V]) {
	t.Helper()
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

func TestOperations(t *testing.T) {
	for _, hs := range hashers {
		t.Run(hs.name, func(t *testing.T) {
			n := 2000
			if testing.Short() {
				n = 500
			}
			m := hashmap.New[int, int](hs.opts...)
			for i := range n {
				m.Store(i, -i)
				if i%97 == 0 {
					check(t, m)
				}
			}
			check(t, m)
			if m.Len() != n {
				t.Fatalf("Len() = %d, want %d", m.Len(), n)
			}
			for i := range n {
				if v, ok := m.Load(i); !ok || v != -i {
					t.Fatalf("Load(%d) = %d, %v; want %d, true", i, v, ok, -i)
				}
			}
			if v, ok := m.Load(n); ok {
				t.Fatalf("Load(%d) = %d, true on an absent key", n, v)
			}
			for i := 0; i < n; i += 2 {
				if prev, loaded := m.Swap(i, i); !loaded || prev != -i {
					t.Fatalf("Swap(%d) = %d, %v; want %d, true", i, prev, loaded, -i)
				}
				if v, loaded := m.LoadOrStore(i, 7); !loaded || v != i {
					t.Fatalf("LoadOrStore(%d) on a present key = %d, %v", i, v, loaded)
				}
			}
			for i := 1; i < n; i += 2 {
				if v, loaded := m.LoadAndDelete(i); !loaded || v != -i {
					t.Fatalf("LoadAndDelete(%d) = %d, %v; want %d, true", i, v, loaded, -i)
				}
				if _, loaded := m.LoadAndDelete(i); loaded {
					t.Fatalf("LoadAndDelete(%d) twice reported loaded", i)
				}
			}
			check(t, m)
			if m.Len() != n/2 {
				t.Fatalf("Len() = %d after deleting the odd keys, want %d", m.Len(), n/2)
			}
			for i := 1; i < n; i += 2 {
				if v, loaded := m.LoadOrStore(i, 3*i); loaded || v != 3*i {
					t.Fatalf("LoadOrStore(%d) on an absent key = %d, %v", i, v, loaded)
				}
				m.Delete(i - 1)
			}
			check(t, m)
			for i := range n {
				v, ok := m.Load(i)
				if want := i%2 == 1; ok != want || ok && v != 3*i {
					t.Fatalf("Load(%d) = %d, %v at the end", i, v, ok)
				}
			}
			m.Clear()
			check(t, m)
			if m.Len() != 0 {
				t.Fatalf("Len() = %d after Clear", m.Len())
			}
			if _, ok := m.Load(1); ok {
				t.Fatal("Load(1) found a key after Clear")
			}
		})
	}
}

func TestCompute(t *testing.T) {
	for _, hs := range hashers {
		t.Run(hs.name, func(t *testing.T) {
			m := hashmap.New[int, int](hs.opts...)
			inc := func(old int, loaded bool) (int, hashmap.ComputeOp) { return old + 1, hashmap.UpdateOp }
			for round := range 3 {
				for k := range 100 {
					if v, ok := m.Compute(k, inc); !ok || v != round+1 {
						t.Fatalf("Compute(%d) round %d = %d, %v", k, round, v, ok)
					}
				}
			}
			check(t, m)
			calls := 0
			v, ok := m.Compute(5, func(old int, loaded bool) (int, hashmap.ComputeOp) {
				calls++
				if old != 3 || !loaded {
					t.Errorf("fn got %d, %v; want 3, true", old, loaded)
				}
				return 99, hashmap.CancelOp
			})
			if v != 3 || !ok || calls != 1 {
				t.Fatalf("Compute cancel on present key = %d, %v after %d calls", v, ok, calls)
			}
			v, ok = m.Compute(1000, func(old int, loaded bool) (int, hashmap.ComputeOp) {
				if old != 0 || loaded {
					t.Errorf("fn got %d, %v on an absent key", old, loaded)
				}
				return 1, hashmap.CancelOp
			})
			if v != 0 || ok {
				t.Fatalf("Compute cancel on absent key = %d, %v", v, ok)
			}
			if _, ok := m.Load(1000); ok {
				t.Fatal("a cancelled Compute inserted its key")
			}
			v, ok = m.Compute(5, func(int, bool) (int, hashmap.ComputeOp) { return 0, hashmap.DeleteOp })
			if v != 0 || ok {
				t.Fatalf("Compute delete = %d, %v", v, ok)
			}
			if _, ok := m.Load(5); ok || m.Len() != 99 {
				t.Fatalf("after Compute delete: key present %v, Len %d", ok, m.Len())
			}
			if _, ok := m.Compute(5, func(int, bool) (int, hashmap.ComputeOp) { return 0, hashmap.DeleteOp }); ok {
				t.Fatal("Compute delete on an absent key reported present")
			}
			check(t, m)
		})
	}
}

func TestComputePanicLeavesMapUsable(t *testing.T) {
	m := hashmap.New[string, int]()
	m.Store("a", 1)
	for _, key := range []string{"a", "b"} {
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Fatalf("recovered %v, want boom", r)
				}
			}()
			m.Compute(key, func(int, bool) (int, hashmap.ComputeOp) { panic("boom") })
		}()
	}
	// Every bucket must be unlocked: these would deadlock otherwise.
	for i := range 1000 {
		m.Store(strconv.Itoa(i), i)
	}
	m.Range(func(string, int) bool { return true })
	if v, _ := m.Load("a"); v != 0 {
		// "a" was overwritten by the loop's Store("a"...)? No: the loop
		// stores decimal strings, so "a" keeps 1.
		if v != 1 {
			t.Fatalf("Load(a) = %d after the panics, want 1", v)
		}
	}
	if _, ok := m.Load("b"); ok {
		t.Fatal("a panicking Compute inserted its key")
	}
	check(t, m)
}

func TestRangeAndAll(t *testing.T) {
	for _, hs := range hashers {
		t.Run(hs.name, func(t *testing.T) {
			m := hashmap.New[int, int](hs.opts...)
			const n = 300
			for i := range n {
				m.Store(i, 2*i)
			}
			seen := map[int]int{}
			m.Range(func(k, v int) bool {
				if v != 2*k {
					t.Fatalf("Range gave %d: %d", k, v)
				}
				seen[k]++
				return true
			})
			if len(seen) != n {
				t.Fatalf("Range visited %d keys, want %d", len(seen), n)
			}
			for k, c := range seen {
				if c != 1 {
					t.Fatalf("Range visited %d %d times", k, c)
				}
			}
			count := 0
			for k := range m.All() {
				// fn may use the map: Range holds no lock while it runs.
				m.Store(k+n, k)
				count++
				if count == 10 {
					break
				}
			}
			if count != 10 || m.Len() != n+10 {
				t.Fatalf("All stopped after %d, Len %d", count, m.Len())
			}
			check(t, m)
		})
	}
}

func TestGrowth(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	m := hashmap.New[int, int]()
	buckets := m.Stats().Buckets
	grows := 0
	for i := range n {
		m.Store(i, i)
		if b := m.Stats().Buckets; b != buckets {
			if b != 2*buckets {
				t.Fatalf("table grew from %d to %d buckets, not 2x", buckets, b)
			}
			buckets = b
			grows++
		}
	}
	check(t, m)
	st := m.Stats()
	t.Logf("%d keys: %d growths, %+v", n, grows, st)
	if st.Load > 0.93 || st.Stashed != 0 {
		t.Fatalf("stats after %d inserts: %+v", n, st)
	}
	for i := range n {
		if v, ok := m.Load(i); !ok || v != i {
			t.Fatalf("Load(%d) = %d, %v after growth", i, v, ok)
		}
	}
}

// TestReachableLoad measures the load at which a displacement search first
// fails, with growth on load turned off: cuckoo hashing with two 6-slot
// buckets should pass 95%.
func TestReachableLoad(t *testing.T) {
	for _, n := range []int{1 << 10, 1 << 14, 1 << 17} {
		if testing.Short() && n > 1<<14 {
			continue
		}
		t.Run(fmt.Sprintf("slots=%d", n), func(t *testing.T) {
			m := hashmap.New[int, int](hashmap.WithCapacity(n), hashmap.WithMaxLoad(1))
			st := m.Stats()
			load := 0.0
			for i := 0; ; i++ {
				m.Store(i, i)
				if now := m.Stats(); now.Buckets != st.Buckets {
					break
				}
				load = float64(i+1) / float64(st.Slots)
			}
			t.Logf("%d buckets of %d slots: first failed search at load %.4f", st.Buckets, st.SlotsPerBucket, load)
			if load < 0.95 {
				t.Errorf("load at the first failed search = %.4f, want >= 0.95", load)
			}
		})
	}
}

func TestKeyKinds(t *testing.T) {
	t.Run("string", func(t *testing.T) {
		m := hashmap.New[string, int]()
		for i := range 1000 {
			m.Store(strings.Repeat("x", i%7)+strconv.Itoa(i), i)
		}
		for i := range 1000 {
			if v, ok := m.Load(strings.Repeat("x", i%7) + strconv.Itoa(i)); !ok || v != i {
				t.Fatalf("Load(%d) = %d, %v", i, v, ok)
			}
		}
		check(t, m)
	})
	t.Run("int8", func(t *testing.T) {
		m := hashmap.New[int8, int]()
		for i := -128; i < 128; i++ {
			m.Store(int8(i), i)
		}
		if m.Len() != 256 {
			t.Fatalf("Len = %d", m.Len())
		}
		for i := -128; i < 128; i++ {
			if v, ok := m.Load(int8(i)); !ok || v != i {
				t.Fatalf("Load(%d) = %d, %v", i, v, ok)
			}
		}
		check(t, m)
	})
	t.Run("struct", func(t *testing.T) {
		type point struct {
			x, y int32
			s    string
		}
		m := hashmap.New[point, int]()
		for i := range 500 {
			m.Store(point{int32(i), int32(-i), strconv.Itoa(i)}, i)
		}
		for i := range 500 {
			if v, ok := m.Load(point{int32(i), int32(-i), strconv.Itoa(i)}); !ok || v != i {
				t.Fatalf("Load(%d) = %d, %v", i, v, ok)
			}
		}
		check(t, m)
	})
	t.Run("float", func(t *testing.T) {
		m := hashmap.New[float64, string]()
		m.Store(0.0, "zero")
		if v, ok := m.Load(math.Copysign(0, -1)); !ok || v != "zero" {
			t.Fatalf("Load(-0) = %q, %v; -0 == +0 must find it", v, ok)
		}
	})
	t.Run("named-int", func(t *testing.T) {
		type id uint32
		m := hashmap.New[id, int]()
		for i := range 1000 {
			m.Store(id(i), i)
		}
		for i := range 1000 {
			if v, ok := m.Load(id(i)); !ok || v != i {
				t.Fatalf("Load(%d) = %d, %v", i, v, ok)
			}
		}
		check(t, m)
	})
}

func TestOptionPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"negative capacity", func() { hashmap.New[int, int](hashmap.WithCapacity(-1)) },
			"hashmap: WithCapacity(-1): capacity is negative"},
		{"max load 0", func() { hashmap.New[int, int](hashmap.WithMaxLoad(0)) },
			"hashmap: WithMaxLoad(0): load is not in (0, 1]"},
		{"max load NaN", func() { hashmap.New[int, int](hashmap.WithMaxLoad(math.NaN())) },
			"hashmap: WithMaxLoad(NaN): load is not in (0, 1]"},
		{"hasher for another key type", func() {
			hashmap.New[int, int](hashmap.WithHasher(func(string, uint64) uint64 { return 0 }))
		}, "hashmap: WithHasher: hasher is a func(string, uint64) uint64, want func(int, uint64) uint64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tc.want {
					t.Fatalf("panic %v, want %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

func TestCapacity(t *testing.T) {
	for _, n := range []int{0, 1, 12, 1000, 100_000} {
		m := hashmap.New[int, int](hashmap.WithCapacity(n))
		st := m.Stats()
		if float64(st.Slots)*0.93 < float64(n) || st.Buckets > 2 && float64(st.Slots)/2*0.93 >= float64(n) {
			t.Errorf("WithCapacity(%d): %d slots", n, st.Slots)
		}
		for i := range n {
			m.Store(i, i)
		}
		if m.Stats().Buckets != st.Buckets {
			t.Errorf("WithCapacity(%d) grew from %d to %d buckets", n, st.Buckets, m.Stats().Buckets)
		}
	}
}

func TestLoadProbe(t *testing.T) {
	m := hashmap.New[int, int]()
	const n = 10000
	for i := range n {
		m.Store(i, i)
	}
	var hitKeys, hitBuckets int
	for i := range n {
		v, ok, p := m.LoadProbe(i)
		if !ok || v != i || p.Buckets < 1 || p.Buckets > 2 || p.Slots != p.Buckets*hashmap.SlotsPerBucket || p.Keys < 1 {
			t.Fatalf("LoadProbe(%d) = %d, %v, %+v", i, v, ok, p)
		}
		hitKeys += p.Keys
		hitBuckets += p.Buckets
	}
	var missKeys int
	for i := n; i < 2*n; i++ {
		_, ok, p := m.LoadProbe(i)
		if ok || p.Buckets < 1 || p.Slots != p.Buckets*hashmap.SlotsPerBucket {
			t.Fatalf("LoadProbe(%d) (absent) = %v, %+v", i, ok, p)
		}
		missKeys += p.Keys
	}
	t.Logf("load %.3f: hits inspect %.3f buckets and %.4f keys; misses %.4f keys",
		m.Stats().Load, float64(hitBuckets)/n, float64(hitKeys)/n, float64(missKeys)/n)
	// Tags are 8 bits: a miss compares a key with probability about
	// 12 slots * load / 255.
	if float64(missKeys)/n > 0.1 || float64(hitKeys)/n > 1.1 {
		t.Fatal("too many key comparisons per lookup")
	}
}

func TestLoadAllocatesNothing(t *testing.T) {
	mi := hashmap.New[int, int]()
	ms := hashmap.New[string, int]()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
		mi.Store(i, i)
		ms.Store(keys[i], i)
	}
	i := 0
	if a := testing.AllocsPerRun(1000, func() { mi.Load(i % 2000); i++ }); a != 0 {
		t.Errorf("Load with int keys: %v allocations", a)
	}
	if a := testing.AllocsPerRun(1000, func() { ms.Load(keys[i%1000]); ms.Load("absent"); i++ }); a != 0 {
		t.Errorf("Load with string keys: %v allocations", a)
	}
}

// TestOverflowCountsByClass: every key has first bucket 0 and tag k, so
// keys beyond six overflow into their second buckets, counted in bucket 0
// by tag class (tag & 3). A miss of a class with no overflowed key reads one
// bucket; a miss of a class with some reads two; a count that saturated
// stays, and every answer stays right.
func TestOverflowCountsByClass(t *testing.T) {
	m := hashmap.New[int, int](hashmap.WithCapacity(1000),
		hashmap.WithHasher(func(k int, _ uint64) uint64 { return uint64(k) << 56 }))
	buckets := func(k int) int {
		t.Helper()
		_, ok, p := m.LoadProbe(k)
		if ok {
			t.Fatalf("LoadProbe(%d): found an absent key", k)
		}
		return p.Buckets
	}
	for k := 4; k <= 32; k += 4 { // class 0: 6 in bucket 0, 2 overflowed
		m.Store(k, k)
	}
	check(t, m)
	if b := buckets(1); b != 1 {
		t.Errorf("miss of class 1, none overflowed: %d buckets, want 1", b)
	}
	if b := buckets(36); b != 2 {
		t.Errorf("miss of class 0, 2 overflowed: %d buckets, want 2", b)
	}
	for k := 36; k <= 80; k += 4 { // class 0's count saturates
		m.Store(k, k)
	}
	m.Store(5, 5) // class 1: bucket 0 is full, so it overflows
	check(t, m)
	if b := buckets(9); b != 2 {
		t.Errorf("miss of class 1, 1 overflowed: %d buckets, want 2", b)
	}
	if b := buckets(2); b != 1 {
		t.Errorf("miss of class 2, none overflowed: %d buckets, want 1", b)
	}
	for k := 4; k <= 80; k += 4 {
		if v, ok := m.LoadAndDelete(k); !ok || v != k {
			t.Fatalf("LoadAndDelete(%d) = %d, %v", k, v, ok)
		}
	}
	check(t, m)
	if v, ok := m.Load(5); !ok || v != 5 {
		t.Fatalf("Load(5) = %d, %v after the deletes", v, ok)
	}
	if b := buckets(84); b != 2 {
		t.Errorf("miss of class 0 after its count saturated: %d buckets, want 2 (a saturated count stays)", b)
	}
}

// TestMatchTag checks what lookups rely on in the cheap SWAR match, over
// tags words built to have runs of equal lanes (where borrows carry): every
// lane equal to the tag is marked, the lowest mark is such a lane, and
// nothing is marked if no lane matches. Marks above a true match may be
// false; the bytes above the six lanes never count.
func TestMatchTag(t *testing.T) {
	x := uint64(1)
	for range 200000 {
		x = x*6364136223846793005 + 1442695040888963407
		tag := uint8(x>>56) | 1
		var tags uint64
		for j := range 8 {
			r := uint8(x >> (8 * j))
			switch r % 4 {
			case 0:
				tags |= uint64(tag) << (8 * j)
			case 1:
				tags |= uint64(tag-1) << (8 * j)
			case 2:
				tags |= uint64(tag+1) << (8 * j)
			default:
				tags |= uint64(r) << (8 * j)
			}
		}
		m := hashmap.MatchTag(tags, tag)
		lowest := -1
		for j := range hashmap.SlotsPerBucket {
			if uint8(tags>>(8*j)) == tag {
				if lowest < 0 {
					lowest = j
				}
				if m>>(8*j)&0xff != 0x80 {
					t.Fatalf("MatchTag(%#x, %#x) = %#x: lane %d matches but is not marked", tags, tag, m, j)
				}
			}
		}
		switch {
		case m&^0x0000_8080_8080_8080 != 0:
			t.Fatalf("MatchTag(%#x, %#x) = %#x: marks outside the lanes' high bits", tags, tag, m)
		case lowest < 0 && m != 0:
			t.Fatalf("MatchTag(%#x, %#x) = %#x: no lane matches", tags, tag, m)
		case lowest >= 0 && bits.TrailingZeros64(m)>>3 != lowest:
			t.Fatalf("MatchTag(%#x, %#x) = %#x: lowest mark is not lane %d", tags, tag, m, lowest)
		}
	}
}

// TestBucketSize checks that a bucket's size does not depend on K and V
// and is the version and tags words and six pointer-sized slots (one cache
// line on 64-bit platforms), which Load's unchecked addressing relies on.
func TestBucketSize(t *testing.T) {
	for _, s := range hashmap.BucketSizes {
		if s != hashmap.BucketSize {
			t.Errorf("a bucket is %d bytes, want %d", s, hashmap.BucketSize)
		}
	}
	if hashmap.SlotSize != hashmap.PtrSize {
		t.Errorf("a slot is %d bytes, want %d", hashmap.SlotSize, hashmap.PtrSize)
	}
}
