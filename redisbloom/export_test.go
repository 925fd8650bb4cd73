package redisbloom

import "fmt"

// SetNaive makes f's inserts and compactions visit every sub-filter, as
// RedisBloom does, instead of only those its open set holds: the model
// that placement tests compare against.
func SetNaive(f *Filter, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.naive = on
}

// CheckInvariants walks f and reports the first broken invariant: every
// sub-filter's fill is its slots holding a fingerprint, its bit in the open
// set says whether one is free, and the list's bytes are its sub-filters'.
func CheckInvariants(f *Filter) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.subs.Load()
	var bytes uint64
	for i, s := range l.subs {
		var fill uint64
		for j := range s.bytes {
			if s.get(j) != 0 {
				fill++
			}
		}
		switch {
		case s.fill != fill:
			return fmt.Errorf("sub-filter %d of %d: fill %d, %d slots hold a fingerprint", i, len(l.subs), s.fill, fill)
		case f.open.has(i) != (fill < s.bytes):
			return fmt.Errorf("sub-filter %d of %d: %d of %d slots filled, open bit %v", i, len(l.subs), fill, s.bytes, f.open.has(i))
		case s.at != i || s.open != &f.open:
			return fmt.Errorf("sub-filter %d of %d: knows itself as %d", i, len(l.subs), s.at)
		}
		bytes += s.bytes
	}
	if bytes != l.bytes {
		return fmt.Errorf("the list's bytes are %d, its %d sub-filters' %d", l.bytes, len(l.subs), bytes)
	}
	return nil
}

// AppendSlots appends the slots of f's sub-filters, oldest first, to b.
func AppendSlots(b []byte, f *Filter) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.list() {
		b = s.appendBytes(b, 0, s.bytes)
	}
	return b
}
