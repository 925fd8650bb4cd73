package rdb_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

func TestLen(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{
		{0, "00"},
		{63, "3f"},
		{64, "4040"},
		{512, "4200"},
		{1<<14 - 1, "7fff"},
		{1 << 14, "8000004000"},
		{math.MaxUint32, "80ffffffff"},
		{math.MaxUint32 + 1, "810000000100000000"},
		{0x3016e5a289821404, "813016e5a289821404"},
		{math.MaxUint64, "81ffffffffffffffff"},
	} {
		b := rdb.AppendLen([]byte{0xee}, tc.n)
		if got := fmt.Sprintf("%x", b[1:]); got != tc.want || b[0] != 0xee {
			t.Errorf("AppendLen(%d) = %x, want ee%s", tc.n, b, tc.want)
		}
		r := rdb.NewReader(b[1:])
		if got, err := r.ReadLen(); got != tc.n || err != nil || r.Len() != 0 {
			t.Errorf("ReadLen(%x) = %d, %v, %d left; want %d", b[1:], got, err, r.Len(), tc.n)
		}
	}
}

// TestLenLonger: Redis reads a length written in a longer form than it
// needs; so do we.
func TestLenLonger(t *testing.T) {
	for _, b := range [][]byte{
		{0x40, 0x05},
		{0x80, 0, 0, 0, 5},
		{0x81, 0, 0, 0, 0, 0, 0, 0, 5},
	} {
		if got, err := rdb.NewReader(b).ReadLen(); got != 5 || err != nil {
			t.Errorf("ReadLen(%x) = %d, %v; want 5", b, got, err)
		}
	}
}

func TestLenErrors(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		is   error
		text string
	}{
		{nil, rdb.ErrTruncated, "rdb: payload ends inside a field: length at byte 0"},
		{[]byte{0x41}, rdb.ErrTruncated, "rdb: payload ends inside a field: 14-bit length at byte 0"},
		{[]byte{0x80, 1, 2, 3}, rdb.ErrTruncated, "rdb: payload ends inside a field: 32-bit length at byte 0"},
		{[]byte{0x81, 1, 2, 3, 4, 5, 6, 7}, rdb.ErrTruncated, "rdb: payload ends inside a field: 64-bit length at byte 0"},
		{[]byte{0x82}, rdb.ErrCorrupt, "rdb: malformed payload: unknown length form 0x82 at byte 0"},
		{[]byte{0xbf}, rdb.ErrCorrupt, "rdb: malformed payload: unknown length form 0xbf at byte 0"},
		{[]byte{0xc3}, rdb.ErrCorrupt, "rdb: malformed payload: string encoding 0xc3 where a length belongs at byte 0"},
	} {
		_, err := rdb.NewReader(tc.in).ReadLen()
		if !errors.Is(err, tc.is) || err.Error() != tc.text {
			t.Errorf("ReadLen(%x) = %v, want %q", tc.in, err, tc.text)
		}
	}
}
