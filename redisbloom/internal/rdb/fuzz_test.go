package rdb_test

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

// allocated runs fn and returns the bytes it allocated on the heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The reads FuzzReader chooses from, one an op byte.
const (
	opType = iota
	opLen
	opString
	opModuleType
	opUnsigned
	opSigned
	opFloat
	opDouble
	opStringBuffer
	opModuleEOF
	numOps
)

// readerLimit is the string limit FuzzReader reads with, and errorSlack
// what an error's text may allocate besides.
const (
	readerLimit = 4096
	errorSlack  = 1024
)

// FuzzReader reads any bytes as any sequence of fields: no read panics,
// each error wraps one of the three sentinels, no read allocates more than
// its limit (plus an error's text), and each string read is written and
// read back the same.
func FuzzReader(f *testing.F) {
	for _, g := range goldens {
		body, _, err := rdb.SplitPayload(readGolden(f, g.name))
		if err != nil {
			f.Fatal(err)
		}
		if len(body) > readerLimit {
			continue
		}
		ops := []byte{opType, opString}
		if body[0] == rdb.TypeModule {
			ops = []byte{opModuleType, opUnsigned, opUnsigned, opUnsigned, opUnsigned, opUnsigned, opUnsigned, opUnsigned}
			for range 4 {
				ops = append(ops, opUnsigned, opStringBuffer)
			}
			ops = append(ops, opModuleEOF)
		}
		f.Add(ops, body)
	}
	// A bomb: an LZF string stating 2^40 bytes.
	f.Add([]byte{opString}, []byte{0xc3, 3, 0x81, 0, 0, 1, 0, 0, 0, 0, 0, 0, 'a', 0xe0})
	f.Fuzz(func(t *testing.T, ops, body []byte) {
		r := rdb.NewReader(body)
		for _, op := range ops {
			read := func(r *rdb.Reader) (s []byte, err error) {
				switch op % numOps {
				case opType:
					_, err = r.ReadType()
				case opLen:
					_, err = r.ReadLen()
				case opString:
					s, err = r.ReadString(readerLimit)
				case opModuleType:
					_, err = r.ReadModuleType()
				case opUnsigned:
					_, err = r.ReadUnsigned()
				case opSigned:
					_, err = r.ReadSigned()
				case opFloat:
					_, err = r.ReadFloat()
				case opDouble:
					_, err = r.ReadDouble()
				case opStringBuffer:
					s, err = r.ReadStringBuffer(readerLimit)
				case opModuleEOF:
					err = r.ReadModuleEOF()
				}
				return s, err
			}
			// The fuzzing engine allocates beside us now and then: a read
			// is measured, on a copy of the reader, up to three times, and
			// judged by its least.
			least := uint64(math.MaxUint64)
			for range 3 {
				c := *r
				least = min(least, allocated(func() { read(&c) }))
			}
			before := r.Offset()
			if least > readerLimit+errorSlack {
				t.Fatalf("op %d at byte %d allocated %d bytes (limit %d)", op%numOps, before, least, readerLimit)
			}
			s, err := read(r)
			if err != nil {
				if !errors.Is(err, rdb.ErrTruncated) && !errors.Is(err, rdb.ErrCorrupt) && !errors.Is(err, rdb.ErrTooLarge) {
					t.Fatalf("op %d: error %v wraps no sentinel", op%numOps, err)
				}
				return
			}
			if r.Offset() <= before || r.Len() < 0 {
				t.Fatalf("op %d succeeded from byte %d to %d (%d left)", op%numOps, before, r.Offset(), r.Len())
			}
			if s != nil {
				if len(s) > readerLimit {
					t.Fatalf("a string of %d bytes, limit %d", len(s), readerLimit)
				}
				back, err := rdb.NewReader(rdb.AppendString(nil, s)).ReadString(readerLimit)
				if err != nil || !bytes.Equal(back, s) {
					t.Fatalf("string %x written and read back: %x, %v", s, back, err)
				}
			}
		}
	})
}

// TestReadBombAllocations: strings that state huge lengths are refused
// having allocated nothing for them.
func TestReadBombAllocations(t *testing.T) {
	for _, in := range [][]byte{
		rdb.AppendLen(nil, 1<<40),
		rdb.AppendLen(rdb.AppendLen([]byte{0xc3}, 3), 1<<40),
		append(rdb.AppendLen(rdb.AppendLen([]byte{0xc3}, 3), 1<<20), 0, 'a', 0xe0),
	} {
		var err error
		n := allocated(func() { _, err = rdb.NewReader(in).ReadString(math.MaxInt) })
		if err == nil || n > errorSlack {
			t.Errorf("ReadString(%x): %v, %d bytes allocated", in, err, n)
		}
	}
	// The measure itself: a string read allocates its length.
	in := rdb.AppendString(nil, make([]byte, 100000))
	if n := allocated(func() { rdb.NewReader(in).ReadString(1 << 20) }); n < 100000 {
		t.Errorf("reading 100000 bytes allocated %d", n)
	}
}
