package rdb_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

func TestModuleID(t *testing.T) {
	// Redis writes this id before every MBbloomCF value (see testdata).
	if cfID != 0x3016e5a289821404 {
		t.Errorf("NewModuleID(MBbloomCF, 4) = %#x, want 0x3016e5a289821404", uint64(cfID))
	}
	for _, tc := range []struct {
		name string
		ver  int
	}{
		{"MBbloomCF", 4}, {"MBbloom--", 4}, {"AAAAAAAAA", 0}, {"_________", 1023}, {"az09-_AZz", 512},
	} {
		id := rdb.NewModuleID(tc.name, tc.ver)
		if id.Name() != tc.name || id.EncodingVersion() != tc.ver || id.String() != fmt.Sprintf("%s/%d", tc.name, tc.ver) {
			t.Errorf("NewModuleID(%q, %d) = %#x, read back as %q", tc.name, tc.ver, uint64(id), id)
		}
	}
	// Every id names a type: 6 bits are always a character.
	if got := rdb.ModuleID(math.MaxUint64).String(); got != "_________/1023" {
		t.Errorf("ModuleID(MaxUint64) = %q", got)
	}
}

func TestNewModuleIDPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		ver  int
		text string
	}{
		{"MBbloomC", 4, `rdb: module type "MBbloomC" version 4: want 9 characters and a version of 0 to 1023`},
		{"MBbloomCFF", 4, `rdb: module type "MBbloomCFF" version 4: want 9 characters and a version of 0 to 1023`},
		{"MBbloomCF", 1024, `rdb: module type "MBbloomCF" version 1024: want 9 characters and a version of 0 to 1023`},
		{"MBbloomCF", -1, `rdb: module type "MBbloomCF" version -1: want 9 characters and a version of 0 to 1023`},
		{"MBbloom.F", 4, `rdb: module type "MBbloom.F": '.' is not in A-Z, a-z, 0-9, '-', '_'`},
	} {
		func() {
			defer func() {
				if r := recover(); fmt.Sprint(r) != tc.text {
					t.Errorf("NewModuleID(%q, %d) panicked with %v, want %q", tc.name, tc.ver, r, tc.text)
				}
			}()
			rdb.NewModuleID(tc.name, tc.ver)
		}()
	}
}

// TestModuleFields writes one field of each kind and reads them back.
func TestModuleFields(t *testing.T) {
	b := rdb.AppendModuleType(nil, cfID)
	b = rdb.AppendUnsigned(b, math.MaxUint64)
	b = rdb.AppendSigned(b, -5)
	b = rdb.AppendFloat(b, 1.5)
	b = rdb.AppendDouble(b, -math.Pi)
	b = rdb.AppendStringBuffer(b, []byte("table"))
	b = rdb.AppendModuleEOF(b)
	want := "07813016e5a289821404" + "0281ffffffffffffffff" + "0181fffffffffffffffb" +
		"030000c03f" + "04182d4454fb2109c0" + "05057461626c65" + "00"
	if got := fmt.Sprintf("%x", b); got != want {
		t.Fatalf("written %s\nwant    %s", got, want)
	}
	r := rdb.NewReader(b)
	id, err := r.ReadModuleType()
	check := func(what string, got, want any, err error) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", what, got, err, want)
		}
	}
	check("ReadModuleType", id, cfID, err)
	u, err := r.ReadUnsigned()
	check("ReadUnsigned", u, uint64(math.MaxUint64), err)
	s, err := r.ReadSigned()
	check("ReadSigned", s, int64(-5), err)
	f, err := r.ReadFloat()
	check("ReadFloat", f, float32(1.5), err)
	d, err := r.ReadDouble()
	check("ReadDouble", d, -math.Pi, err)
	str, err := r.ReadStringBuffer(5)
	check("ReadStringBuffer", string(str), "table", err)
	check("ReadModuleEOF", true, true, r.ReadModuleEOF())
	check("Len", r.Len(), 0, nil)
	check("Offset", r.Offset(), len(b), nil)
}

func TestModuleErrors(t *testing.T) {
	uint7 := rdb.AppendUnsigned(nil, 7)
	for _, tc := range []struct {
		name string
		in   []byte
		read func(*rdb.Reader) error
		is   error
		text string
	}{
		{"unsigned for a string", rdb.AppendStringBuffer(nil, []byte("x")), readUnsigned, rdb.ErrCorrupt,
			"rdb: malformed payload: module field is STRING, want UINT at byte 0"},
		{"signed for an unsigned", uint7, readSigned, rdb.ErrCorrupt,
			"rdb: malformed payload: module field is UINT, want SINT at byte 0"},
		{"float for an unsigned", uint7, readFloat, rdb.ErrCorrupt,
			"rdb: malformed payload: module field is UINT, want FLOAT at byte 0"},
		{"double for an unsigned", uint7, readDouble, rdb.ErrCorrupt,
			"rdb: malformed payload: module field is UINT, want DOUBLE at byte 0"},
		{"string for an unsigned", uint7, readStringBuffer, rdb.ErrCorrupt,
			"rdb: malformed payload: module field is UINT, want STRING at byte 0"},
		{"EOF for an unsigned", uint7, readEOF, rdb.ErrCorrupt,
			"rdb: malformed payload: module field is UINT, want EOF at byte 0"},
		{"unsigned at EOF", []byte{0}, readUnsigned, rdb.ErrCorrupt,
			"rdb: malformed payload: module field is EOF, want UINT at byte 0"},
		{"unknown opcode", []byte{9, 1}, readUnsigned, rdb.ErrCorrupt,
			"rdb: malformed payload: module field is opcode 9, want UINT at byte 0"},
		{"encoded opcode", []byte{0xc2, 1}, readUnsigned, rdb.ErrCorrupt,
			"rdb: malformed payload: string encoding 0xc2 where a length belongs at byte 0"},
		{"no opcode", nil, readUnsigned, rdb.ErrTruncated,
			"rdb: payload ends inside a field: length at byte 0"},
		{"unsigned cut", []byte{2}, readUnsigned, rdb.ErrTruncated,
			"rdb: payload ends inside a field: length at byte 1"},
		{"signed cut", []byte{1, 0x80, 1}, readSigned, rdb.ErrTruncated,
			"rdb: payload ends inside a field: 32-bit length at byte 1"},
		{"float cut", []byte{3, 0, 0, 0}, readFloat, rdb.ErrTruncated,
			"rdb: payload ends inside a field: float at byte 1"},
		{"double cut", []byte{4, 0, 0, 0, 0, 0, 0, 0}, readDouble, rdb.ErrTruncated,
			"rdb: payload ends inside a field: double at byte 1"},
		{"string over the limit", rdb.AppendStringBuffer(nil, []byte("too long")), readStringBuffer, rdb.ErrTooLarge,
			"rdb: string longer than the limit: 8 bytes, limit 5, at byte 1"},
		{"a string's type", []byte{rdb.TypeString, 1, 'x'}, readModuleType, rdb.ErrCorrupt,
			"rdb: malformed payload: object type 0, want a module value (7) at byte 0"},
		{"the pre-release module type", []byte{6, 0}, readModuleType, rdb.ErrCorrupt,
			"rdb: malformed payload: object type 6, want a module value (7) at byte 0"},
		{"no type", nil, readModuleType, rdb.ErrTruncated,
			"rdb: payload ends inside a field: object type at byte 0"},
		{"no id", []byte{rdb.TypeModule, 0x81, 1}, readModuleType, rdb.ErrTruncated,
			"rdb: payload ends inside a field: 64-bit length at byte 1"},
	} {
		err := tc.read(rdb.NewReader(tc.in))
		if !errors.Is(err, tc.is) || err.Error() != tc.text {
			t.Errorf("%s: %v\nwant %q", tc.name, err, tc.text)
		}
	}
}

func readUnsigned(r *rdb.Reader) error     { _, err := r.ReadUnsigned(); return err }
func readSigned(r *rdb.Reader) error       { _, err := r.ReadSigned(); return err }
func readFloat(r *rdb.Reader) error        { _, err := r.ReadFloat(); return err }
func readDouble(r *rdb.Reader) error       { _, err := r.ReadDouble(); return err }
func readStringBuffer(r *rdb.Reader) error { _, err := r.ReadStringBuffer(5); return err }
func readEOF(r *rdb.Reader) error          { return r.ReadModuleEOF() }
func readModuleType(r *rdb.Reader) error   { _, err := r.ReadModuleType(); return err }
