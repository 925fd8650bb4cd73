package rdb

import (
	"math"
	"slices"
	"sync"
)

// The LZF format: a sequence of instructions, each led by a control byte c.
//
//	c < 32:   a literal run; the next c+1 bytes are copied to the output.
//	c >= 32:  a back-reference. n = c>>5 (1..7); if n == 7 the next byte is
//	          added to it. Then a byte lo, and the reference copies n+2 bytes
//	          starting (c&31)<<8 | lo, plus one, bytes back in the output,
//	          one byte at a time, so a reference may overlap its own output
//	          (distance 1 repeats the last byte).
const (
	lzfMaxLiteral = 32      // bytes of one literal run
	lzfMaxDist    = 1 << 13 // how far back a reference reaches
	lzfMinRef     = 3       // bytes one reference copies, at least
	lzfMaxRef     = 264     // and at most: 7+255+2
	// lzfMaxRatio bounds the expansion: a 3-byte reference yields at most
	// 264 bytes, and nothing yields more per byte. A stated length above
	// 88 times the stream's is refused before anything is allocated.
	lzfMaxRatio = lzfMaxRef / 3
)

// The compressor's hash table, as liblzf is built in Redis (HLOG 16): 2^16
// slots, each the last position whose next 3 bytes hashed there, 0 for
// none. Position 0 is never a match candidate, as in liblzf, since its
// slot value means "empty"; keeping that quirk keeps our output Redis's.
const lzfHashBits = 16

type lzfTable [1 << lzfHashBits]uint32

// lzfTables recycles hash tables: 256 KiB is too much to allocate for each
// short string, and too much to clear after it (see AppendLZF).
var lzfTables = sync.Pool{New: func() any { return new(lzfTable) }}

// lzfHash maps the 3 bytes held in the low 24 bits of v to a slot, as
// liblzf's default (VERY_FAST) build does, so that matches are found where
// Redis finds them.
func lzfHash(v uint32) uint32 {
	return ((v >> (24 - lzfHashBits)) - v*5) & (1<<lzfHashBits - 1)
}

// AppendLZF appends the LZF compression of src to dst if it takes at most
// limit bytes, and reports whether it did; otherwise it returns dst with
// its length and contents unchanged. The compressed stream is liblzf's (Redis's lzf_compress): a
// greedy parse with the same hash, the same match rules and the same
// conservative space checks (it may fail when the stream would have taken
// up to 3 bytes less than limit), so that AppendLZF(dst, src, len(src)-4)
// succeeds exactly when Redis stores src compressed, with the same bytes.
// An empty src never compresses; a src of more than 4 GiB is misuse (the
// format's positions are 32 bits in liblzf), and panics.
func AppendLZF(dst, src []byte, limit int) ([]byte, bool) {
	if len(src) == 0 || limit <= 0 {
		return dst, false
	}
	if uint64(len(src)) > math.MaxUint32 {
		panic("rdb: AppendLZF of more than 4 GiB")
	}
	start := len(dst)
	dst = slices.Grow(dst, limit)
	out := dst[start : start+limit]
	table := lzfTables.Get().(*lzfTable)
	n := lzfCompress(out, src, table)
	lzfClear(table, src)
	lzfTables.Put(table)
	if n == 0 {
		return dst[:start], false
	}
	return dst[:start+n], true
}

// lzfClear empties the slots that compressing src may have filled: for a
// short src, rehashing it costs less than clearing all 256 KiB.
func lzfClear(t *lzfTable, src []byte) {
	if len(src) >= len(t) {
		clear(t[:])
		return
	}
	for i := 0; i+2 < len(src); i++ {
		t[lzfHash(uint32(src[i])<<16|uint32(src[i+1])<<8|uint32(src[i+2]))] = 0
	}
}

// lzfCompress compresses in into out and returns the length written, or 0
// if out is too small. It fails as early as liblzf does, not only when the
// result would not fit: Redis's choice to store compressed depends on it.
// The table must be empty (all zero).
func lzfCompress(out, in []byte, table *lzfTable) int {
	var (
		ip, op int
		lit    int // bytes in the current literal run
		v      uint32
	)
	// out[op-lit-1] is the current run's control byte, written when the run
	// closes: the first run's is reserved here.
	op++
	if len(in) >= 2 {
		v = uint32(in[0])<<8 | uint32(in[1])
	}
	for ip+2 < len(in) {
		v = v<<8 | uint32(in[ip+2])
		slot := lzfHash(v)
		ref := int(table[slot])
		table[slot] = uint32(ip)
		if dist := ip - ref; ref > 0 && dist <= lzfMaxDist &&
			in[ref] == in[ip] && in[ref+1] == in[ip+1] && in[ref+2] == in[ip+2] {
			// Room for the longest reference and the next run's control
			// byte, counting the current run's control byte only if the run
			// holds a byte.
			if op+4 >= len(out) {
				if lit != 0 || op+3 >= len(out) {
					return 0
				}
			}
			if lit == 0 {
				op-- // an empty run: drop its reserved control byte
			} else {
				out[op-lit-1] = byte(lit - 1)
			}
			n := lzfMatchLen(in, ref, ip)
			d := dist - 1
			if n-2 < 7 {
				out[op] = byte(d>>8) | byte(n-2)<<5
				op++
			} else {
				out[op] = byte(d>>8) | 7<<5
				out[op+1] = byte(n - 2 - 7)
				op += 2
			}
			out[op] = byte(d)
			op++
			lit = 0
			op++ // the next run's control byte
			ip += n
			if ip+2 >= len(in) {
				break
			}
			// Hash the reference's last two positions, as liblzf does.
			v = uint32(in[ip-2])<<8 | uint32(in[ip-1])
			for _, p := range [2]int{ip - 2, ip - 1} {
				v = v<<8 | uint32(in[p+2])
				table[lzfHash(v)] = uint32(p)
			}
			continue
		}
		if op >= len(out) {
			return 0
		}
		out[op] = in[ip]
		op++
		ip++
		if lit++; lit == lzfMaxLiteral {
			out[op-lit-1] = lzfMaxLiteral - 1
			lit = 0
			op++
		}
	}
	// At most two bytes are left, and the last run's control byte.
	if op+3 > len(out) {
		return 0
	}
	for ; ip < len(in); ip++ {
		out[op] = in[ip]
		op++
		if lit++; lit == lzfMaxLiteral {
			out[op-lit-1] = lzfMaxLiteral - 1
			lit = 0
			op++
		}
	}
	if lit == 0 {
		op--
	} else {
		out[op-lit-1] = byte(lit - 1)
	}
	return op
}

// lzfMatchLen is the length of the match at ip of the 3 or more bytes at
// ref, measured as liblzf measures it: up to 264 bytes, and not into the
// last two bytes of the input, except that its first 16 comparisons are
// made without that bound, so a reference that starts 19 or 20 bytes from
// the end may reach it. The bytes compared are always within in.
func lzfMatchLen(in []byte, ref, ip int) int {
	maxN := min(len(in)-ip-2, lzfMaxRef)
	n := lzfMinRef - 1
	if maxN > 16 {
		for n < 18 {
			n++
			if in[ref+n] != in[ip+n] {
				return n
			}
		}
	}
	for {
		n++
		if n >= maxN || in[ref+n] != in[ip+n] {
			return n
		}
	}
}

// LZF decoding errors; each wraps ErrCorrupt.
var (
	errLZFTruncated = corruptLZF("stream ends inside an instruction")
	errLZFBackRef   = corruptLZF("back-reference before the start of the output")
	errLZFOverrun   = corruptLZF("stream expands past its stated length")
	errLZFShort     = corruptLZF("stream expands to less than its stated length")
)

func corruptLZF(what string) error { return &lzfError{what} }

type lzfError struct{ what string }

func (e *lzfError) Error() string { return ErrCorrupt.Error() + ": LZF " + e.what }
func (e *lzfError) Unwrap() error { return ErrCorrupt }

// DecompressLZF decompresses the LZF stream src into dst, whose length is
// the stated uncompressed length. It fails, with an error wrapping
// ErrCorrupt, unless src decodes to exactly len(dst) bytes: an instruction
// cut short, a back-reference before dst's start, a stream that would write
// past len(dst) or stops short of it. It writes only within dst.
func DecompressLZF(dst, src []byte) error {
	ip, op := 0, 0
	for ip < len(src) {
		c := int(src[ip])
		ip++
		if c < lzfMaxLiteral {
			n := c + 1
			if n > len(src)-ip {
				return errLZFTruncated
			}
			if n > len(dst)-op {
				return errLZFOverrun
			}
			copy(dst[op:], src[ip:ip+n])
			ip += n
			op += n
			continue
		}
		n := c >> 5
		if n == 7 {
			if ip >= len(src) {
				return errLZFTruncated
			}
			n += int(src[ip])
			ip++
		}
		if ip >= len(src) {
			return errLZFTruncated
		}
		dist := (c&31)<<8 | int(src[ip]) + 1
		ip++
		n += 2
		if dist > op {
			return errLZFBackRef
		}
		if n > len(dst)-op {
			return errLZFOverrun
		}
		// An overlapping copy repeats the dist bytes before op. Each copy
		// below moves whole periods, doubling what is available to copy.
		end := op + n
		for ref := op - dist; op < end; {
			op += copy(dst[op:end], dst[ref:op])
		}
	}
	if op != len(dst) {
		return errLZFShort
	}
	return nil
}
