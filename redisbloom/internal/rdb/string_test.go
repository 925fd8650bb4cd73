package rdb_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

func TestAppendString(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want string // hex
	}{
		{"", "00"},
		{"0", "c000"},
		{"-1", "c0ff"},
		{"127", "c07f"},
		{"-128", "c080"},
		{"128", "c18000"},
		{"-32768", "c10080"},
		{"32768", "c200800000"},
		{"-2147483648", "c200000080"},
		{"2147483647", "c2ffffff7f"},
		// Decimal strings Redis keeps as bytes: beyond 32 bits, or not as
		// Redis would print them.
		{"2147483648", "0a32313437343833363438"},
		{"-0", "022d30"},
		{"007", "03303037"},
		{"+1", "022b31"},
		{" 1", "022031"},
		{"1 ", "023120"},
		{"0x1", "03307831"},
		// 20 bytes are never compressed; 21 are when LZF saves 4 bytes.
		{strings.Repeat("a", 20), "14" + strings.Repeat("61", 20)},
		{strings.Repeat("a", 21), "c30615016161e00a00"},
		{"abcdefghijklmnopqrstu", "15" + fmt.Sprintf("%x", "abcdefghijklmnopqrstu")},
	} {
		got := rdb.AppendString([]byte{0xee}, []byte(tc.s))
		if fmt.Sprintf("%x", got) != "ee"+tc.want {
			t.Errorf("AppendString(%q) = %x, want ee%s", tc.s, got, tc.want)
		}
		back, err := rdb.NewReader(got[1:]).ReadString(100)
		if err != nil || string(back) != tc.s {
			t.Errorf("ReadString(%x) = %q, %v; want %q", got[1:], back, err, tc.s)
		}
	}
}

// TestStringSizes writes and reads strings whose lengths and compressed
// lengths take each length form.
func TestStringSizes(t *testing.T) {
	for _, n := range []int{63, 64, 16383, 16384, 70000} {
		for _, fill := range []string{"zeros", "counting"} {
			s := make([]byte, n)
			if fill == "counting" {
				for i := range s {
					s[i] = byte(i*7 + i>>8) // no 3-byte repeat within the window
				}
			}
			b := rdb.AppendString(nil, s)
			r := rdb.NewReader(b)
			back, err := r.ReadString(n)
			if err != nil || !bytes.Equal(back, s) || r.Len() != 0 {
				t.Errorf("n=%d/fill=%s: %v, %d bytes left", n, fill, err, r.Len())
			}
			if _, err := rdb.NewReader(b).ReadString(n - 1); !errors.Is(err, rdb.ErrTooLarge) {
				t.Errorf("n=%d/fill=%s: ReadString with limit %d: %v, want ErrTooLarge", n, fill, n-1, err)
			}
		}
	}
}

// TestReadStringAliasing: the result is a copy, whatever the form.
func TestReadStringAliasing(t *testing.T) {
	b := rdb.AppendString(nil, []byte("hello"))
	s, _ := rdb.NewReader(b).ReadString(10)
	b[1] = 'j'
	if string(s) != "hello" {
		t.Errorf("the string changed with the input: %q", s)
	}
}

func TestReadStringErrors(t *testing.T) {
	bomb := rdb.AppendLen(rdb.AppendLen([]byte{0xc3}, 3), 1<<40)
	bomb = append(bomb, 0, 'a', 0xe0)
	for _, tc := range []struct {
		name  string
		in    []byte
		limit int
		is    error
		text  string
	}{
		{"raw over the limit", []byte{5, 'h', 'e', 'l', 'l', 'o'}, 4, rdb.ErrTooLarge,
			"rdb: string longer than the limit: 5 bytes, limit 4, at byte 0"},
		{"negative limit", []byte{1, 'h'}, -1, rdb.ErrTooLarge,
			"rdb: string longer than the limit: 1 bytes, limit 0, at byte 0"},
		{"raw cut", []byte{5, 'h', 'e'}, 10, rdb.ErrTruncated,
			"rdb: payload ends inside a field: string at byte 0"},
		{"huge raw", []byte{0x81, 0xff, 0, 0, 0, 0, 0, 0, 0}, 1 << 30, rdb.ErrTooLarge,
			"rdb: string longer than the limit: 18374686479671623680 bytes, limit 1073741824, at byte 0"},
		{"no length", nil, 10, rdb.ErrTruncated,
			"rdb: payload ends inside a field: length at byte 0"},
		{"int8 cut", []byte{0xc0}, 10, rdb.ErrTruncated,
			"rdb: payload ends inside a field: integer string at byte 0"},
		{"int16 cut", []byte{0xc1, 1}, 10, rdb.ErrTruncated,
			"rdb: payload ends inside a field: integer string at byte 0"},
		{"int32 cut", []byte{0xc2, 1, 2, 3}, 10, rdb.ErrTruncated,
			"rdb: payload ends inside a field: integer string at byte 0"},
		{"int over the limit", []byte{0xc2, 0, 0, 0, 0x80}, 10, rdb.ErrTooLarge,
			"rdb: string longer than the limit: 11 bytes, limit 10, at byte 0"},
		{"unknown encoding", []byte{0xc4}, 10, rdb.ErrCorrupt,
			"rdb: malformed payload: unknown string encoding 0xc4 at byte 0"},
		{"LZF without lengths", []byte{0xc3}, 10, rdb.ErrTruncated,
			"rdb: payload ends inside a field: length at byte 1"},
		{"LZF without its length", []byte{0xc3, 3}, 10, rdb.ErrTruncated,
			"rdb: payload ends inside a field: length at byte 2"},
		{"LZF with an encoded length", []byte{0xc3, 0xc0, 1}, 10, rdb.ErrCorrupt,
			"rdb: malformed payload: string encoding 0xc0 where a length belongs at byte 1"},
		{"LZF of nothing", []byte{0xc3, 0, 5}, 10, rdb.ErrCorrupt,
			"rdb: malformed payload: LZF string of compressed length 0, length 5 at byte 0"},
		{"LZF to nothing", []byte{0xc3, 2, 0, 0, 'a'}, 10, rdb.ErrCorrupt,
			"rdb: malformed payload: LZF string of compressed length 2, length 0 at byte 0"},
		{"LZF over the limit", []byte{0xc3, 3, 20, 0, 'a', 0xe0}, 10, rdb.ErrTooLarge,
			"rdb: string longer than the limit: 20 bytes, limit 10, at byte 0"},
		{"LZF bomb", bomb, 1 << 30, rdb.ErrTooLarge,
			"rdb: string longer than the limit: 1099511627776 bytes, limit 1073741824, at byte 0"},
		{"LZF bomb under the limit", bomb, math.MaxInt, rdb.ErrCorrupt,
			"rdb: malformed payload: LZF string of 3 bytes states a length of 1099511627776, more than LZF can expand to at byte 0"},
		{"LZF cut", []byte{0xc3, 3, 5, 0, 'a'}, 10, rdb.ErrTruncated,
			"rdb: payload ends inside a field: LZF string at byte 0"},
		{"LZF back-reference first", []byte{0xc3, 2, 3, 0x20, 0}, 10, rdb.ErrCorrupt,
			"rdb: malformed payload: LZF back-reference before the start of the output, in the string at byte 0"},
		{"LZF overrun", []byte{0xc3, 4, 2, 2, 'a', 'b', 'c'}, 10, rdb.ErrCorrupt,
			"rdb: malformed payload: LZF stream expands past its stated length, in the string at byte 0"},
		{"LZF short", []byte{0xc3, 4, 5, 2, 'a', 'b', 'c'}, 10, rdb.ErrCorrupt,
			"rdb: malformed payload: LZF stream expands to less than its stated length, in the string at byte 0"},
		{"LZF instruction cut", []byte{0xc3, 3, 5, 3, 'a', 'b'}, 10, rdb.ErrCorrupt,
			"rdb: malformed payload: LZF stream ends inside an instruction, in the string at byte 0"},
	} {
		_, err := rdb.NewReader(tc.in).ReadString(tc.limit)
		if !errors.Is(err, tc.is) || err.Error() != tc.text {
			t.Errorf("%s: %v\nwant %q", tc.name, err, tc.text)
		}
	}
}
