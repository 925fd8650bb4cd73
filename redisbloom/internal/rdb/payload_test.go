package rdb_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

func TestPayload(t *testing.T) {
	body := rdb.AppendString([]byte{rdb.TypeString}, []byte("0123456789"))
	// A footer covers the payload from start on, not what b held before.
	p := rdb.AppendFooter(append([]byte("prefix"), body...), 6)[6:]
	// Redis's DUMP of the same string (testdata/string-digits10.bin).
	if want := readGolden(t, "string-digits10"); !bytes.Equal(p, want) {
		t.Errorf("payload %x, want Redis's %x", p, want)
	}
	got, version, err := rdb.SplitPayload(p)
	if err != nil || version != rdb.Version || !bytes.Equal(got, body) {
		t.Errorf("SplitPayload = %x, %d, %v; want %x, 10", got, version, err, body)
	}
	// The smallest payload: a footer alone.
	if body, version, err := rdb.SplitPayload(rdb.AppendFooter(nil, 0)); len(body) != 0 || version != 10 || err != nil {
		t.Errorf("SplitPayload of a footer alone = %x, %d, %v", body, version, err)
	}
}

// withVersion is a payload of body at an RDB version, with a right CRC.
func withVersion(body []byte, version uint16) []byte {
	p := binary.LittleEndian.AppendUint16(append([]byte(nil), body...), version)
	return binary.LittleEndian.AppendUint64(p, rdb.CRC64(0, p))
}

func TestSplitPayloadVersions(t *testing.T) {
	body := []byte{rdb.TypeString, 1, 'x'}
	// Redis reads every version up to its own, 13 for Redis 8 (TestRedisFooter
	// checks it).
	for v := range uint16(rdb.MaxVersion + 1) {
		if got, version, err := rdb.SplitPayload(withVersion(body, v)); err != nil || version != v || !bytes.Equal(got, body) {
			t.Errorf("version %d: %x, %d, %v", v, got, version, err)
		}
	}
	for _, v := range []uint16{14, 15, 0x100, 0xffff} {
		_, version, err := rdb.SplitPayload(withVersion(body, v))
		if err != rdb.ErrVersion || version != v {
			t.Errorf("version %d: %d, %v; want ErrVersion", v, version, err)
		}
	}
}

func TestSplitPayloadErrors(t *testing.T) {
	good := readGolden(t, "cf-foo-bar")
	flip := func(i int, mask byte) []byte {
		p := append([]byte(nil), good...)
		p[i] ^= mask
		return p
	}
	for _, tc := range []struct {
		name string
		p    []byte
		want error
		text string
	}{
		{"empty", nil, rdb.ErrShortPayload, "DUMP payload version or checksum are wrong (payload shorter than its 10-byte footer)"},
		{"9 bytes", good[:9], rdb.ErrShortPayload, "DUMP payload version or checksum are wrong (payload shorter than its 10-byte footer)"},
		{"a body byte changed", flip(20, 0x10), rdb.ErrChecksum, "DUMP payload version or checksum are wrong (CRC-64 mismatch)"},
		{"a CRC byte changed", flip(len(good)-1, 0x10), rdb.ErrChecksum, "DUMP payload version or checksum are wrong (CRC-64 mismatch)"},
		{"the version raised to 266", flip(len(good)-9, 1), rdb.ErrVersion, "DUMP payload version or checksum are wrong (RDB version newer than 13)"},
		{"the version lowered to 8", flip(len(good)-10, 2), rdb.ErrChecksum, "DUMP payload version or checksum are wrong (CRC-64 mismatch)"},
		{"a byte short", good[:len(good)-1], rdb.ErrVersion, "DUMP payload version or checksum are wrong (RDB version newer than 13)"},
	} {
		body, _, err := rdb.SplitPayload(tc.p)
		if err != tc.want || err.Error() != tc.text || body != nil {
			t.Errorf("%s: %x, %v; want %q", tc.name, body, err, tc.text)
		}
		if !errors.Is(err, rdb.ErrBadPayload) {
			t.Errorf("%s: %v does not wrap ErrBadPayload", tc.name, err)
		}
	}
	// A cut anywhere is refused, never a panic.
	for n := range len(good) {
		if _, _, err := rdb.SplitPayload(good[:n]); !errors.Is(err, rdb.ErrBadPayload) {
			t.Errorf("cut at %d: %v", n, err)
		}
	}
}
