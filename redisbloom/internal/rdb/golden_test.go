package rdb_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

// testdata/*.bin are DUMP payloads made by Redis 7.0.15 (Debian's
// redis-server) with RedisBloom v2.6.28's module loaded, each the exact
// bytes of one reply. They were made with these redis-cli commands, P the
// server's port, and `dump K` standing for
// `redis-cli -p P --raw DUMP K | head -c -1 > K.bin` (--raw prints the
// bytes and a newline, which head drops):
//
//	redis-cli -p P SET string-a100 "$(printf 'a%.0s' $(seq 100))"; dump string-a100
//	redis-cli -p P SET string-a21 aaaaaaaaaaaaaaaaaaaaa;          dump string-a21
//	redis-cli -p P SET string-a20 aaaaaaaaaaaaaaaaaaaa;           dump string-a20
//	redis-cli -p P SET string-digits10 0123456789;                dump string-digits10
//	redis-cli -p P SET string-int8 -1;                            dump string-int8
//	redis-cli -p P SET string-int16 12345;                        dump string-int16
//	redis-cli -p P SET string-int32 70000;                        dump string-int32
//	redis-cli -p P SET string-int64 12345678901;                  dump string-int64
//	head -c 16384 /dev/urandom > random16k
//	redis-cli -p P -x SET string-random16k < random16k;          dump string-random16k
//	redis-cli -p P CF.RESERVE cf-foo-bar 1000
//	redis-cli -p P CF.ADD cf-foo-bar foo
//	redis-cli -p P CF.ADD cf-foo-bar bar;                         dump cf-foo-bar
//	redis-cli -p P CF.RESERVE cf-grown 4 BUCKETSIZE 1 EXPANSION 2 MAXITERATIONS 5
//	for i in $(seq 0 29); do redis-cli -p P CF.ADD cf-grown item$i; done
//	redis-cli -p P CF.DEL cf-grown item3;                         dump cf-grown
//	redis-cli -p P CF.RESERVE src 2 BUCKETSIZE 1
//	redis-cli -p P CF.ADD src x
//	redis-cli -p P --raw CF.SCANDUMP src 0 | tail -c +3 | head -c -1 > header
//	redis-cli -p P -x CF.LOADCHUNK cf-digits 1 < header
//	printf 57 | redis-cli -p P -x CF.LOADCHUNK cf-digits 3;       dump cf-digits
//
// cf-digits is a filter whose 2-byte table reads "57": Redis saves that
// module string as the integer 57 (0xc0 0x39), as it saves any short
// decimal string. The tests need no Redis: they read these files.

// golden is what each file holds: for a string, its value; for a module
// value (a cuckoo filter as RedisBloom saves it), its fields.
type golden struct {
	name string
	want string // the value, as decodeValue renders it
}

var goldens = []golden{
	{name: "string-a100", want: "string " + strings.Repeat("a", 100)},
	{name: "string-a21", want: "string " + strings.Repeat("a", 21)},
	{name: "string-a20", want: "string " + strings.Repeat("a", 20)},
	{name: "string-digits10", want: "string 0123456789"},
	{name: "string-int8", want: "string -1"},
	{name: "string-int16", want: "string 12345"},
	{name: "string-int32", want: "string 70000"},
	{name: "string-int64", want: "string 12345678901"},
	{name: "string-random16k"}, // checked by length and re-encoding
	{name: "cf-foo-bar", want: "MBbloomCF/4 filters=1 buckets=512 items=2 deletes=0 bucketsize=2 maxiterations=20 expansion=1" +
		" [512 buckets, 1024 bytes, 2 non-zero]"},
	// 3+8+15+3 fingerprints: one for each of the 29 items.
	{name: "cf-grown", want: "MBbloomCF/4 filters=4 buckets=4 items=29 deletes=1 bucketsize=1 maxiterations=5 expansion=2" +
		" [4 buckets, 4 bytes, 3 non-zero] [8 buckets, 8 bytes, 8 non-zero] [16 buckets, 16 bytes, 15 non-zero] [32 buckets, 32 bytes, 3 non-zero]"},
	{name: "cf-digits", want: "MBbloomCF/4 filters=1 buckets=2 items=1 deletes=0 bucketsize=1 maxiterations=20 expansion=1" +
		" [2 buckets, 2 bytes, 2 non-zero]"},
}

func readGolden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cfID is RedisBloom's cuckoo filter type at the encoding version v2.6
// writes.
var cfID = rdb.NewModuleID("MBbloomCF", 4)

// cfValue is a module value laid out as RedisBloom saves a cuckoo filter:
// seven unsigned fields, then each sub-filter's bucket count and table.
type cfValue struct {
	id     rdb.ModuleID
	fields [7]uint64 // filters, buckets, items, deletes, bucket size, max iterations, expansion
	tables []cfTable
}

type cfTable struct {
	buckets uint64
	data    []byte
}

var cfFieldNames = [7]string{"filters", "buckets", "items", "deletes", "bucketsize", "maxiterations", "expansion"}

func (v *cfValue) String() string {
	var b strings.Builder
	b.WriteString(v.id.String())
	for i, f := range v.fields {
		fmt.Fprintf(&b, " %s=%d", cfFieldNames[i], f)
	}
	for _, tb := range v.tables {
		fmt.Fprintf(&b, " [%d buckets, %d bytes, %d non-zero]", tb.buckets, len(tb.data), len(tb.data)-bytes.Count(tb.data, []byte{0}))
	}
	return b.String()
}

func (v *cfValue) append(b []byte) []byte {
	b = rdb.AppendModuleType(b, v.id)
	for _, f := range v.fields {
		b = rdb.AppendUnsigned(b, f)
	}
	for _, tb := range v.tables {
		b = rdb.AppendStringBuffer(rdb.AppendUnsigned(b, tb.buckets), tb.data)
	}
	return rdb.AppendModuleEOF(b)
}

// readCF reads a cuckoo filter's module value, taking at most 64 sub-filters
// of at most limit bytes each.
func readCF(r *rdb.Reader, limit int) (*cfValue, error) {
	v := &cfValue{}
	var err error
	if v.id, err = r.ReadModuleType(); err != nil {
		return nil, err
	}
	for i := range v.fields {
		if v.fields[i], err = r.ReadUnsigned(); err != nil {
			return nil, err
		}
	}
	if v.fields[0] > 64 {
		return nil, fmt.Errorf("%d sub-filters", v.fields[0])
	}
	for range v.fields[0] {
		var tb cfTable
		if tb.buckets, err = r.ReadUnsigned(); err != nil {
			return nil, err
		}
		if tb.data, err = r.ReadStringBuffer(limit); err != nil {
			return nil, err
		}
		v.tables = append(v.tables, tb)
	}
	return v, r.ReadModuleEOF()
}

// decodeValue reads a body holding a string or a cuckoo filter, renders
// it, and encodes it again.
func decodeValue(body []byte) (rendered string, again []byte, err error) {
	r := rdb.NewReader(body)
	if len(body) > 0 && body[0] == rdb.TypeModule {
		v, err := readCF(r, 1<<20)
		if err != nil {
			return "", nil, err
		}
		rendered, again = v.String(), v.append(nil)
	} else {
		typ, err := r.ReadType()
		if err != nil {
			return "", nil, err
		}
		if typ != rdb.TypeString {
			return "", nil, fmt.Errorf("object type %d", typ)
		}
		s, err := r.ReadString(1 << 20)
		if err != nil {
			return "", nil, err
		}
		rendered, again = "string "+string(s), rdb.AppendString([]byte{rdb.TypeString}, s)
	}
	if r.Len() != 0 {
		return "", nil, fmt.Errorf("%d bytes after the value", r.Len())
	}
	return rendered, again, nil
}

// TestGolden reads each payload Redis made, checks its value, and writes it
// again: the bytes must be Redis's, footer included.
func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			payload := readGolden(t, g.name)
			body, version, err := rdb.SplitPayload(payload)
			if err != nil || version != rdb.Version {
				t.Fatalf("SplitPayload: version %d, %v", version, err)
			}
			got, again, err := decodeValue(body)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if g.want != "" && got != g.want {
				t.Errorf("value:\n got %.300s\nwant %.300s", got, g.want)
			}
			if g.name == "string-random16k" && len(got) != len("string ")+16384 {
				t.Errorf("value of %d bytes, want 16384", len(got)-len("string "))
			}
			if again = rdb.AppendFooter(again, 0); !bytes.Equal(again, payload) {
				t.Errorf("written again:\n got %x\nwant %x", again, payload)
			}
		})
	}
}

// TestGoldenTruncated cuts every golden body at every byte: each cut must
// fail with ErrTruncated, and never panic.
func TestGoldenTruncated(t *testing.T) {
	for _, g := range goldens {
		body, _, err := rdb.SplitPayload(readGolden(t, g.name))
		if err != nil {
			t.Fatal(err)
		}
		step := 1
		if testing.Short() && len(body) > 1000 {
			step = 97
		}
		for n := 0; n < len(body); n += step {
			_, _, err := decodeValue(body[:n])
			if !errors.Is(err, rdb.ErrTruncated) {
				t.Errorf("%s cut at %d of %d: %v, want ErrTruncated", g.name, n, len(body), err)
			}
		}
	}
}

// TestGoldenFields spells out the 69-byte payload of doc.go field by field.
func TestGoldenFields(t *testing.T) {
	payload := readGolden(t, "cf-foo-bar")
	if len(payload) != 69 {
		t.Fatalf("%d bytes, want 69", len(payload))
	}
	want := "07 81 3016e5a289821404 02 01 02 4200 02 02 02 00 02 02 02 14 02 01 02 4200" +
		" 05 c3 19 4400 " + fmt.Sprintf("%x", payload[33:58]) + " 00 0a00 23f5a0f2f1c6f427"
	if got := fmt.Sprintf("%x", payload); got != strings.ReplaceAll(want, " ", "") {
		t.Errorf("payload %s, want %s", got, want)
	}
	body, _, _ := rdb.SplitPayload(payload)
	r := rdb.NewReader(body)
	v, err := readCF(r, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 0 {
		t.Errorf("%d bytes left after the value", r.Len())
	}
	// The table holds two fingerprints and zeros.
	var nonZero []string
	for i, c := range v.tables[0].data {
		if c != 0 {
			nonZero = append(nonZero, fmt.Sprintf("%d:%#x", i, c))
		}
	}
	t.Logf("fingerprints at %v", nonZero)
	if len(nonZero) != 2 {
		t.Errorf("non-zero bytes %v, want 2", nonZero)
	}
}
