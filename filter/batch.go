package filter

// batchSize is the number of keys ContainsBatch hashes before it probes: a
// group of probes with no dependence between them lets the processor keep
// that many cache misses in flight. 32 keys of state fit in a few cache
// lines of stack.
const batchSize = 32

// ContainsBatch sets out[i] = Contains(keys[i]) for every key. It hashes a
// group of keys first and then reads all their buckets, so that the memory
// reads of different keys overlap instead of waiting one after another; on a
// filter larger than the caches it is several times faster than a loop of
// Contains. It panics if out is shorter than keys.
func (f *Filter) ContainsBatch(keys [][]byte, out []bool) {
	if len(out) < len(keys) {
		panic("filter: ContainsBatch: out is shorter than keys")
	}
	var hashes [batchSize]uint64
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		for i, k := range keys[:n] {
			hashes[i] = hashKey(k, f.seed)
		}
		f.probe(hashes[:n], out[:n])
		keys, out = keys[n:], out[n:]
	}
}

// ContainsHashBatch is ContainsBatch for caller-computed hashes.
func (f *Filter) ContainsHashBatch(hashes []uint64, out []bool) {
	if len(out) < len(hashes) {
		panic("filter: ContainsHashBatch: out is shorter than hashes")
	}
	for len(hashes) > 0 {
		n := min(len(hashes), batchSize)
		f.probe(hashes[:n], out[:n])
		hashes, out = hashes[n:], out[n:]
	}
}

// probe looks up up to batchSize hashes. The first loop computes every
// bucket index; the second reads both buckets of every key unconditionally,
// so that no read waits for the result of another.
func (f *Filter) probe(hashes []uint64, out []bool) {
	var i1s, i2s [batchSize]uint64
	var fps [batchSize]uint32
	if f.t.ranked {
		for k, h := range hashes {
			i1, fp := f.locate(h)
			i1s[k], i2s[k], fps[k] = i1, f.t.altRanked(i1, fp), fp
		}
	} else {
		for k, h := range hashes {
			i1, fp := f.locate(h)
			i1s[k], i2s[k], fps[k] = i1, f.alt(i1, fp), fp
		}
	}
	out = out[:len(hashes)]
	if f.t.is4x12 {
		for k := range out {
			out[k] = f.t.has4x12(i1s[k], i2s[k], fps[k])
		}
	} else if f.t.coded && f.t.oneWord {
		// Three passes, each of independent reads: every bucket is
		// loaded, then every bucket's entry of the code table, so that no
		// read waits behind another key's.
		var s1s, s2s [batchSize]uint64
		for k := range out {
			s1s[k], s2s[k] = f.t.head(i1s[k]), f.t.head(i2s[k])
		}
		var e1s, e2s [batchSize]uint32
		for k := range out {
			e1s[k], e2s[k] = f.t.codeEntry(s1s[k]), f.t.codeEntry(s2s[k])
		}
		t := &f.t
		for k := range out {
			q, low := t.query(fps[k])
			out[k] = (t.slotMatches(e1s[k], s1s[k], q, low)|t.slotMatches(e2s[k], s2s[k], q, low))&t.gather.mask != 0
		}
	} else if f.t.coded {
		for k := range out {
			out[k] = f.t.hasWide(i1s[k], i2s[k], fps[k])
		}
	} else if f.t.oneWord {
		for k := range out {
			out[k] = f.t.lanes.Has2(f.t.word(i1s[k]), f.t.word(i2s[k]), fps[k])
		}
	} else {
		for k := range out {
			out[k] = f.t.contains(i1s[k], fps[k]) || f.t.contains(i2s[k], fps[k])
		}
	}
	if f.victim.used {
		for k := range out {
			out[k] = out[k] || f.victim.holds(i1s[k], i2s[k], fps[k])
		}
	}
}
