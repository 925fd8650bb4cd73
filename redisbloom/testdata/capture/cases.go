package main

import "strconv"

// absentProbes is how many never-added items each fixture probes. At
// RedisBloom's false-positive rates (about 2·BUCKETSIZE/255 a sub-filter)
// that gives tens to hundreds of false positives a fixture, and those must
// match too.
const absentProbes = 4000

// A script is one fixture's commands, all on one key. Items are "item:N";
// the script remembers the highest N so the probes cover every item it
// named and absentProbes items after them.
type script struct {
	name string
	key  string
	cmds [][]string
	next int // one past the highest item number named
}

func newScript(name string) *script { return &script{name: name, key: "cf:" + name} }

func (s *script) item(n int) string {
	s.next = max(s.next, n+1)
	return "item:" + strconv.Itoa(n)
}

// do appends a command; key is inserted after the command name.
func (s *script) do(cmd string, args ...string) {
	s.cmds = append(s.cmds, append([]string{cmd, s.key}, args...))
}

// each appends cmd key item:n for n in [from, to).
func (s *script) each(cmd string, from, to int) {
	for n := from; n < to; n++ {
		s.do(cmd, s.item(n))
	}
}

// eachOf appends cmd key item:n for each n.
func (s *script) eachOf(cmd string, ns []int) {
	for _, n := range ns {
		s.do(cmd, s.item(n))
	}
}

// multi appends one command naming items [from, to) after the given
// arguments (CF.INSERT key ... ITEMS, CF.MEXISTS key).
func (s *script) multi(cmd string, args []string, from, to int) {
	for n := from; n < to; n++ {
		args = append(args, s.item(n))
	}
	s.do(cmd, args...)
}

func (s *script) probes() []string {
	p := make([]string, 0, s.next+absentProbes)
	for n := range s.next + absentProbes {
		p = append(p, "item:"+strconv.Itoa(n))
	}
	return p
}

// strided returns n numbers from [0, limit) visited with the given stride
// (coprime with limit), so deletes hit items of every sub-filter in an
// order unrelated to insertion.
func strided(limit, stride, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i * stride % limit
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// cases returns every fixture's script. Comments give the shape RedisBloom
// reached, as CF.INFO reported it when the fixtures were captured.
func cases() []*script {
	var all []*script
	add := func(name string, build func(s *script)) {
		s := newScript(name)
		build(s)
		all = append(all, s)
	}

	// Bucket sizes. Capacity/BUCKETSIZE rounded up to a power of two is the
	// first sub-filter's bucket count; each adds past it, so each grows.
	add("bucketsize-1", func(s *script) {
		s.do("CF.RESERVE", "1000", "BUCKETSIZE", "1")
		s.each("CF.ADD", 0, 1500)
	})
	add("bucketsize-2", func(s *script) {
		s.do("CF.RESERVE", "1000", "BUCKETSIZE", "2")
		s.each("CF.ADD", 0, 1200)
	})
	add("bucketsize-4", func(s *script) {
		s.do("CF.RESERVE", "1000", "BUCKETSIZE", "4")
		s.each("CF.ADD", 0, 1200)
	})
	add("bucketsize-255", func(s *script) {
		s.do("CF.RESERVE", "2040", "BUCKETSIZE", "255")
		s.each("CF.ADD", 0, 2500)
	})

	// Expansion rates. 3 is rounded up to 4 by RedisBloom.
	add("expansion-0", func(s *script) {
		s.do("CF.RESERVE", "128", "EXPANSION", "0")
		s.each("CF.ADD", 0, 200) // the last ones answer "Filter is full"
		s.do("CF.ADDNX", s.item(0))
		s.do("CF.ADDNX", s.item(500))
		s.do("CF.INSERT", "ITEMS", s.item(0), s.item(600), s.item(601))
		s.do("CF.INSERTNX", "ITEMS", s.item(1), s.item(602), s.item(603))
		s.each("CF.DEL", 0, 10)
		s.each("CF.ADD", 700, 720)
	})
	for _, e := range []int{1, 2, 3, 4} {
		add("expansion-"+itoa(e), func(s *script) {
			s.do("CF.RESERVE", "64", "EXPANSION", itoa(e))
			s.each("CF.ADD", 0, 300*e)
		})
	}

	// Sub-filter counts.
	add("one-subfilter", func(s *script) {
		s.do("CF.RESERVE", "4096")
		s.each("CF.ADD", 0, 2000)
	})
	add("many-subfilters", func(s *script) {
		s.do("CF.RESERVE", "16", "EXPANSION", "1")
		s.each("CF.ADD", 0, 120)
	})
	add("many-subfilters-expansion-2", func(s *script) {
		s.do("CF.RESERVE", "32", "EXPANSION", "2")
		s.each("CF.ADD", 0, 800)
	})
	add("same-item-many-times", func(s *script) {
		s.do("CF.RESERVE", "64", "EXPANSION", "1")
		s.each("CF.ADD", 0, 50)
		for range 30 {
			s.do("CF.ADD", s.item(7))
		}
		s.do("CF.COUNT", s.item(7))
		s.each("CF.ADD", 50, 80)
	})

	// Deletes and compaction. Past numDeletes > 10% of numItems with more
	// than one sub-filter, CF.DEL compacts by itself.
	add("delete-autocompact", func(s *script) {
		s.do("CF.RESERVE", "64", "EXPANSION", "1")
		s.each("CF.ADD", 0, 400)
		s.do("CF.INFO")
		s.eachOf("CF.DEL", strided(400, 7, 200))
		s.do("CF.INFO")
		s.each("CF.DEL", 1000, 1020) // never added: 0, or 1 for a false positive
		s.each("CF.ADD", 400, 450)
		s.multi("CF.MEXISTS", nil, 0, 50)
	})
	add("delete-autocompact-expansion-2", func(s *script) {
		s.do("CF.RESERVE", "32", "EXPANSION", "2")
		s.each("CF.ADD", 0, 800)
		s.eachOf("CF.DEL", strided(800, 3, 400))
		s.do("CF.INFO")
		s.each("CF.ADD", 800, 900)
	})
	add("compact", func(s *script) {
		s.do("CF.RESERVE", "64", "EXPANSION", "1")
		s.each("CF.ADD", 0, 400)
		s.eachOf("CF.DEL", strided(400, 11, 30)) // under 10%: no automatic compaction
		s.do("CF.INFO")
		s.do("CF.COMPACT")
		s.do("CF.INFO")
		s.each("CF.ADD", 400, 450)
		s.do("CF.COMPACT")
	})
	add("compact-frees-subfilter", func(s *script) {
		s.do("CF.RESERVE", "64", "EXPANSION", "1")
		s.each("CF.ADD", 0, 54) // the second sub-filter holds the last few
		s.each("CF.DEL", 0, 4)  // not past 10%: no automatic compaction
		s.do("CF.INFO")
		s.do("CF.COMPACT") // moves them into the first and frees the second
		s.do("CF.INFO")
		s.each("CF.ADD", 54, 80)
	})
	add("compact-one-subfilter", func(s *script) {
		s.do("CF.RESERVE", "1000")
		s.each("CF.ADD", 0, 100)
		s.each("CF.DEL", 0, 50) // one sub-filter: never compacts by itself
		s.do("CF.INFO")
		s.do("CF.COMPACT")
	})
	add("empty", func(s *script) {
		s.do("CF.RESERVE", "1000", "BUCKETSIZE", "4")
	})
	add("emptied", func(s *script) {
		s.do("CF.RESERVE", "64")
		s.each("CF.ADD", 0, 100)
		s.each("CF.DEL", 0, 100) // SCANDUMP of zero items answers [0, nil] at once
	})

	// Reply shapes of the adding commands.
	add("addnx", func(s *script) {
		s.do("CF.RESERVE", "256")
		s.each("CF.ADDNX", 0, 200)
		s.each("CF.ADDNX", 0, 50)
		s.each("CF.ADDNX", 200, 400)
	})
	add("insert", func(s *script) {
		s.multi("CF.INSERT", []string{"CAPACITY", "100", "ITEMS"}, 0, 50) // creates the key
		s.multi("CF.INSERT", []string{"NOCREATE", "ITEMS"}, 50, 100)
		s.multi("CF.INSERTNX", []string{"ITEMS"}, 90, 110)
		s.multi("CF.INSERT", []string{"CAPACITY", "5000", "ITEMS"}, 110, 300) // the key exists: CAPACITY is ignored
		s.multi("CF.INSERTNX", []string{"NOCREATE", "ITEMS"}, 0, 300)
	})
	add("insert-full", func(s *script) {
		s.do("CF.RESERVE", "64", "EXPANSION", "0")
		s.multi("CF.INSERT", []string{"ITEMS"}, 0, 100) // -1 for each that does not fit
		s.multi("CF.INSERTNX", []string{"ITEMS"}, 0, 10)
		s.multi("CF.INSERTNX", []string{"ITEMS"}, 100, 110)
		s.do("CF.ADD", s.item(200))
		s.do("CF.ADDNX", s.item(0))
		s.do("CF.ADDNX", s.item(201))
	})
	add("autocreate-add", func(s *script) {
		s.each("CF.ADD", 0, 3000) // creates CAPACITY 1024, BUCKETSIZE 2, MAXITERATIONS 20, EXPANSION 1
	})
	add("autocreate-addnx", func(s *script) {
		s.each("CF.ADDNX", 0, 100)
		s.each("CF.ADDNX", 0, 10)
	})
	add("autocreate-insertnx", func(s *script) {
		s.multi("CF.INSERTNX", []string{"ITEMS"}, 0, 2000) // CAPACITY 1024 too
	})

	// Kick limits.
	add("maxiterations-1", func(s *script) {
		s.do("CF.RESERVE", "1000", "MAXITERATIONS", "1")
		s.each("CF.ADD", 0, 1500)
	})
	add("maxiterations-500-expansion-2", func(s *script) {
		s.do("CF.RESERVE", "1000", "MAXITERATIONS", "500", "EXPANSION", "2")
		s.each("CF.ADD", 0, 3000)
	})
	add("maxiterations-65535-full", func(s *script) {
		s.do("CF.RESERVE", "1000", "MAXITERATIONS", "65535", "EXPANSION", "0")
		s.each("CF.ADD", 0, 1100) // 1024 slots: fills nearly all before "Filter is full"
	})

	// A filter whose data is the text of an integer: Redis's DUMP (and RDB)
	// stores such a string of up to 11 bytes as an encoded integer. The two
	// items were found by trying pairs: their fingerprints, '-' and '8',
	// land in the two one-slot buckets.
	add("integer-encoded-data", func(s *script) {
		s.do("CF.RESERVE", "2", "BUCKETSIZE", "1", "EXPANSION", "0")
		s.do("CF.ADD", s.item(19))
		s.do("CF.ADD", s.item(32))
		s.do("CF.ADD", s.item(78)) // "Filter is full"
	})

	// Counting copies.
	add("count-duplicates", func(s *script) {
		s.do("CF.RESERVE", "100")
		for range 3 {
			s.do("CF.ADD", s.item(7))
		}
		s.do("CF.COUNT", s.item(7))
		s.do("CF.EXISTS", s.item(7))
		s.each("CF.ADD", 0, 50)
		s.do("CF.COUNT", s.item(7))
		s.do("CF.DEL", s.item(7))
		s.do("CF.COUNT", s.item(7))
		s.do("CF.ADDNX", s.item(7))
		s.do("CF.MEXISTS", s.item(7), s.item(8), s.item(60)) // item:60 was never added
		s.do("CF.EXISTS", s.item(61))
		s.do("CF.COUNT", s.item(61))
	})
	return all
}

// payloadCases returns the fixtures of Redis 8's payloads (-cases
// payloads): the shapes a filter's DUMP payload and CF.SCANDUMP chunks
// take, a few of cases() and a few of their own. Redis 8 changed the RDB
// version in a payload's footer; these check that nothing else changed.
func payloadCases() []*script {
	byName := map[string]*script{}
	for _, s := range cases() {
		byName[s.name] = s
	}
	var all []*script
	for _, name := range []string{
		"empty",           // no items: CF.SCANDUMP has nothing, DUMP is the only way
		"bucketsize-1",    // each of them grown to a second sub-filter
		"bucketsize-2",    //
		"bucketsize-4",    //
		"many-subfilters", // 8 sub-filters after expansion
		"many-subfilters-expansion-2",
		"delete-autocompact", // items deleted, some sub-filters compacted away
		"emptied",            // every item deleted
		"autocreate-add",     // RedisBloom's defaults, grown
	} {
		s, ok := byName[name]
		if !ok {
			panic("payloadCases: no case " + name)
		}
		all = append(all, s)
	}
	add := func(name string, build func(s *script)) {
		s := newScript(name)
		build(s)
		all = append(all, s)
	}
	add("empty-default", func(s *script) {
		s.do("CF.RESERVE", "1024")
	})
	add("small", func(s *script) {
		s.do("CF.RESERVE", "1000")
		s.each("CF.ADD", 0, 2)
	})
	// One sub-filter of 4096 buckets of 4 (16 KiB), 12000 items: slots
	// that LZF hardly compresses (16384 bytes to 15982 in the DUMP), and a
	// bigger fixture than the others.
	add("large", func(s *script) {
		s.do("CF.RESERVE", "16384", "BUCKETSIZE", "4")
		s.each("CF.ADD", 0, 12000)
	})
	return all
}
