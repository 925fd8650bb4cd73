package keyspace_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// The log's record format, byte for byte: a log written by this server
// must read the same in the next, so each op's encoding is pinned here as
// ops.go's table documents it (op byte, then uvarints, and strings as a
// uvarint length and the bytes).

var golden = []struct {
	name string
	op   keyspace.Op
	enc  []byte
	// optional: the encoding ends with fields older records leave out,
	// so a shorter prefix may decode too.
	optional bool
}{
	{"create", keyspace.Op{Kind: keyspace.OpCreate, Key: []byte("k"),
		Params: cf.Params{Capacity: 64, BucketSize: 4, MaxIter: 20, Expansion: 1, Seed: 5, Slots: 4}},
		[]byte{1, 1, 'k', 64, 4, 20, 1, 5}, true},
	{"create redisbloom", keyspace.Op{Kind: keyspace.OpCreate, Key: []byte("k"),
		Params: cf.Params{Capacity: 300, BucketSize: 2, MaxIter: 20, Expansion: 2, Layout: cf.LayoutRedisBloom}},
		[]byte{1, 1, 'k', 0xac, 0x02, 2, 20, 2, 0, 1}, true},
	{"create 5 slots", keyspace.Op{Kind: keyspace.OpCreate, Key: []byte("k"),
		Params: cf.Params{Capacity: 64, BucketSize: 8, MaxIter: 20, Expansion: 1, Seed: 5, Slots: 5}},
		[]byte{1, 1, 'k', 64, 8, 20, 1, 5, 0, 5}, true},
	{"add", keyspace.Op{Kind: keyspace.OpAdd, Key: []byte("k"), Items: [][]byte{[]byte("a"), []byte("bc")}},
		[]byte{2, 1, 'k', 2, 1, 'a', 2, 'b', 'c'}, false},
	{"del", keyspace.Op{Kind: keyspace.OpDel, Key: []byte("k"), Items: [][]byte{[]byte("a")}},
		[]byte{3, 1, 'k', 1, 'a'}, false},
	{"drop", keyspace.Op{Kind: keyspace.OpDrop, Key: []byte("k")}, []byte{4, 1, 'k'}, false},
	{"flush", keyspace.Op{Kind: keyspace.OpFlush}, []byte{5}, false},
	{"compact", keyspace.Op{Kind: keyspace.OpCompact, Key: []byte("k")}, []byte{6, 1, 'k'}, false},
	{"chunk", keyspace.Op{Kind: keyspace.OpChunk, Key: []byte("k"), Iter: 3, Items: [][]byte{[]byte("xy")}},
		[]byte{7, 1, 'k', 3, 2, 'x', 'y'}, false},
	{"expire", keyspace.Op{Kind: keyspace.OpExpire, Key: []byte("k"), Deadline: 300},
		[]byte{8, 1, 'k', 0xac, 0x02}, false},
	{"persist", keyspace.Op{Kind: keyspace.OpPersist, Key: []byte("k")}, []byte{9, 1, 'k'}, false},
	{"rename", keyspace.Op{Kind: keyspace.OpRename, Key: []byte("k"), To: []byte("n")},
		[]byte{10, 1, 'k', 1, 'n'}, false},
	{"restore", keyspace.Op{Kind: keyspace.OpRestore, Key: []byte("k"), Deadline: 1, Items: [][]byte{[]byte("p")}},
		[]byte{11, 1, 'k', 1, 1, 'p'}, false},
}

func TestOpEncoding(t *testing.T) {
	for _, g := range golden {
		t.Run(g.name, func(t *testing.T) {
			if enc := g.op.Encode(); !bytes.Equal(enc, g.enc) {
				t.Fatalf("encoded % x, want % x", enc, g.enc)
			}
			if enc := g.op.AppendEncoded([]byte("prefix")); !bytes.Equal(enc[6:], g.enc) || string(enc[:6]) != "prefix" {
				t.Fatalf("AppendEncoded gave % x", enc)
			}
			o, err := keyspace.DecodeOp(g.enc)
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if o.Kind == keyspace.OpFlush {
				o.Key = nil
			}
			if !reflect.DeepEqual(o, g.op) {
				t.Fatalf("decoded %+v, want %+v", o, g.op)
			}
			if g.optional {
				return
			}
			// Every record cut short, or with a byte more, is refused.
			for n := range len(g.enc) {
				if _, err := keyspace.DecodeOp(g.enc[:n]); err == nil {
					t.Errorf("the first %d bytes decode", n)
				}
			}
			if _, err := keyspace.DecodeOp(append(g.enc[:len(g.enc):len(g.enc)], 0)); err == nil {
				t.Error("a trailing byte decodes")
			}
		})
	}
}

// TestOpDecodeRefuses: damage the format can see is an error, never a
// panic or a half-read op.
func TestOpDecodeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"unknown kind", []byte{200, 1, 'k'}},
		{"kind 0", []byte{0, 1, 'k'}},
		{"a transaction is not an op", []byte{keyspace.OpMulti, 0}},
		{"expire with no deadline", []byte{8, 1, 'k', 0}},
		{"more items than bytes", []byte{2, 1, 'k', 200, 1, 'a'}},
		{"key longer than the record", []byte{4, 9, 'k'}},
		{"bucket size beyond cf's", []byte{1, 1, 'k', 64, 0xff, 0x03, 20, 1, 5}},
		{"layout beyond redisbloom", []byte{1, 1, 'k', 64, 4, 20, 1, 5, 2}},
		{"create after its slots", []byte{1, 1, 'k', 64, 8, 20, 1, 5, 0, 5, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if o, err := keyspace.DecodeOp(tc.b); err == nil {
				t.Fatalf("decoded %+v", o)
			}
		})
	}
}

// TestOpKindNames: errors and logs name the kinds as the table does.
func TestOpKindNames(t *testing.T) {
	for k, name := range map[keyspace.OpKind]string{
		keyspace.OpCreate: "create", keyspace.OpAdd: "add", keyspace.OpDel: "del", keyspace.OpDrop: "drop",
		keyspace.OpFlush: "flush", keyspace.OpCompact: "compact", keyspace.OpChunk: "chunk",
		keyspace.OpExpire: "expire", keyspace.OpPersist: "persist", keyspace.OpRename: "rename",
		keyspace.OpRestore: "restore", 0: "op(0)", 99: "op(99)", keyspace.OpKind(keyspace.OpMulti): "op(64)",
	} {
		if got := k.String(); got != name {
			t.Errorf("OpKind(%d) is %q, want %q", byte(k), got, name)
		}
	}
}

// TestRecordFraming: a record is its payload's length, a CRC-32C of the
// length and payload, then the payload; ScanLog hands the payloads back
// and tells a torn tail from damage.
func TestRecordFraming(t *testing.T) {
	rec := keyspace.AppendRecord(nil, []byte("abc"))
	want := []byte{3, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 'c'}
	crc := keyspace.RecordCRC(want[:4], want[8:])
	want[4], want[5], want[6], want[7] = byte(crc), byte(crc>>8), byte(crc>>16), byte(crc>>24)
	if !bytes.Equal(rec, want) {
		t.Fatalf("record % x, want % x", rec, want)
	}
	// The checksum covers the length: the same payload under another
	// length field does not pass.
	if keyspace.RecordCRC([]byte{4, 0, 0, 0}, []byte("abc")) == crc {
		t.Fatal("the checksum does not cover the length field")
	}
	data := keyspace.AppendRecord(keyspace.AppendRecord(rec, nil), []byte("de"))
	var got []string
	good, torn, err := keyspace.ScanLog("log", data, func(b []byte) error { got = append(got, string(b)); return nil })
	if err != nil || torn || good != int64(len(data)) || len(got) != 3 || got[0] != "abc" || got[1] != "" || got[2] != "de" {
		t.Fatalf("ScanLog: %q, good %d of %d, torn %v, %v", got, good, len(data), torn, err)
	}
	for cut := len(data) - 1; cut > len(data)-keyspace.RecordHeader-2; cut-- {
		good, torn, err := keyspace.ScanLog("log", data[:cut], func([]byte) error { return nil })
		if !torn || good != int64(len(data)-keyspace.RecordHeader-2) || err == nil {
			t.Errorf("cut at %d: good %d, torn %v, %v; want a torn tail after the second record", cut, good, torn, err)
		}
	}
	damaged := bytes.Clone(data)
	damaged[9] ^= 1 // in the first payload
	good, torn, err = keyspace.ScanLog("log", damaged, func([]byte) error { return nil })
	if torn || good != 0 || err == nil {
		t.Errorf("a flipped payload byte: good %d, torn %v, %v; want damage at 0", good, torn, err)
	}
}

func TestParseFsync(t *testing.T) {
	for in, want := range map[string]keyspace.FsyncMode{"": keyspace.FsyncEverysec, "everysec": keyspace.FsyncEverysec,
		"always": keyspace.FsyncAlways, "no": keyspace.FsyncNo} {
		m, err := keyspace.ParseFsync(in)
		if err != nil || m != want {
			t.Errorf("ParseFsync(%q) = %v, %v; want %v", in, m, err, want)
		}
		if in != "" && m.String() != in {
			t.Errorf("%v prints as %q, want %q", m, m.String(), in)
		}
	}
	if _, err := keyspace.ParseFsync("sometimes"); err == nil {
		t.Error("ParseFsync took an unknown mode")
	}
	if err := keyspace.FsyncMode(7).Check(); err == nil {
		t.Error("FsyncMode(7) passes Check")
	}
	if err := keyspace.FsyncNo.Check(); err != nil {
		t.Errorf("FsyncNo fails Check: %v", err)
	}
}

// TestAccessClock: lookups and writes stamp a key with the store's coarse
// clock (OBJECT IDLETIME); Peek does not.
func TestAccessClock(t *testing.T) {
	st, _ := recorded()
	w := &keyspace.Writer{}
	st.Clock.Store(1000)
	mustAdd(t, st, w, "k", growing, items("x", 1))
	c := st.Peek("k")
	if c.Access.Load() != 1000 {
		t.Fatalf("a new key's access time %d, want 1000", c.Access.Load())
	}
	st.Clock.Store(1005)
	st.Peek("k")
	if c.Access.Load() != 1000 {
		t.Error("Peek touched the key")
	}
	st.Get([]byte("k"))
	if c.Access.Load() != 1005 {
		t.Errorf("access time %d after a lookup, want 1005", c.Access.Load())
	}
	st.Clock.Store(1010)
	if _, err := st.Expire(w, []byte("k"), hour, 0); err != nil {
		t.Fatal(err)
	}
	if c.Access.Load() != 1010 {
		t.Errorf("access time %d after a write, want 1010", c.Access.Load())
	}
}
