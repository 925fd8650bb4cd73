package eval

// The reference hash tables of the probe experiment. Each lookup returns
// whether it found the key, the key comparisons it made (the classic
// measure) and the slots it inspected (for the tables without tags, the
// same number plus the empty slot or list end that stops a miss).

// chaining is separate chaining: an array of list heads, new keys at the
// head of their list. Load factor = keys / heads.
type chaining struct {
	heads []int32 // index into nodes, -1 for an empty list
	nodes []chainNode
	seed  uint64
}

type chainNode struct {
	key  uint64
	next int32
}

func newChaining(heads int, seed uint64) *chaining {
	c := &chaining{heads: make([]int32, heads), seed: seed}
	for i := range c.heads {
		c.heads[i] = -1
	}
	return c
}

func (c *chaining) insert(k uint64) {
	h := reduce(mix(k^c.seed), len(c.heads))
	c.nodes = append(c.nodes, chainNode{key: k, next: c.heads[h]})
	c.heads[h] = int32(len(c.nodes) - 1)
}

func (c *chaining) lookup(k uint64) (found bool, compares, slots int) {
	for n := c.heads[reduce(mix(k^c.seed), len(c.heads))]; n >= 0; n = c.nodes[n].next {
		compares++
		if c.nodes[n].key == k {
			return true, compares, compares
		}
	}
	return false, compares, compares + 1 // and the nil at the list's end
}

// linearProbing is open addressing with linear probing over m slots.
// Load factor = keys / slots.
type linearProbing struct {
	keys []uint64
	used []bool
	seed uint64
}

func newLinearProbing(slots int, seed uint64) *linearProbing {
	return &linearProbing{keys: make([]uint64, slots), used: make([]bool, slots), seed: seed}
}

// insert requires a free slot.
func (t *linearProbing) insert(k uint64) {
	i := reduce(mix(k^t.seed), len(t.keys))
	for t.used[i] {
		i++
		if i == len(t.keys) {
			i = 0
		}
	}
	t.keys[i], t.used[i] = k, true
}

// lookup requires a free slot somewhere, or a miss would never end.
func (t *linearProbing) lookup(k uint64) (found bool, compares, slots int) {
	i := reduce(mix(k^t.seed), len(t.keys))
	for t.used[i] {
		compares++
		if t.keys[i] == k {
			return true, compares, compares
		}
		i++
		if i == len(t.keys) {
			i = 0
		}
	}
	return false, compares, compares + 1 // and the empty slot that ends it
}

// classicCuckoo is Pagh and Rodler's cuckoo hashing: two tables of one-slot
// buckets, a key in T1[h1(k)] or T2[h2(k)], inserts that kick the occupant
// to its other table. It cannot pass 50% load. Load factor = keys / (2m).
type classicCuckoo struct {
	t    [2][]uint64
	used [2][]bool
	seed [2]uint64
}

// maxLoop bounds an insert's kicks before it is declared failed (a
// rehash, in the original; here, the end of the experiment at this load).
const maxLoop = 500

func newClassicCuckoo(m int, seed uint64) *classicCuckoo {
	c := &classicCuckoo{seed: [2]uint64{mix(seed), mix(seed + 1)}}
	for j := range 2 {
		c.t[j], c.used[j] = make([]uint64, m), make([]bool, m)
	}
	return c
}

func (c *classicCuckoo) slot(j int, k uint64) int { return reduce(mix(k^c.seed[j]), len(c.t[j])) }

// insert reports whether k found a place within maxLoop kicks. On failure
// the key last kicked out is homeless and the table must be discarded.
func (c *classicCuckoo) insert(k uint64) bool {
	j := 0
	for range maxLoop {
		i := c.slot(j, k)
		if !c.used[j][i] {
			c.t[j][i], c.used[j][i] = k, true
			return true
		}
		k, c.t[j][i] = c.t[j][i], k
		j ^= 1
	}
	return false
}

func (c *classicCuckoo) lookup(k uint64) (found bool, compares, slots int) {
	for j := range 2 {
		i := c.slot(j, k)
		slots++
		if c.used[j][i] {
			compares++
			if c.t[j][i] == k {
				return true, compares, slots
			}
		}
	}
	return false, compares, slots
}
