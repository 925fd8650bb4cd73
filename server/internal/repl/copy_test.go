package repl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// TestCopyRecords: a key record and the end record, framed, read back
// field for field; a record that fails its checksum, or claims more than
// a record may hold, is errBadStream; a truncated one a read error.
func TestCopyRecords(t *testing.T) {
	payload := []byte("a DUMP payload \x00\xff")
	rec := appendKeyRecord(nil, "key:1", 1_700_000_000_123, 4096, payload)
	rec = appendEndRecord(rec, 1)
	br := bufio.NewReader(bytes.NewReader(rec))
	p, err := readRecord(br, nil)
	if err != nil || len(p) == 0 || p[0] != copyKey {
		t.Fatalf("the key record: %q, %v", p, err)
	}
	kr, err := parseKeyRecord(p[1:])
	if err != nil || kr.key != "key:1" || kr.deadline != 1_700_000_000_123 || kr.pos != 4096 || !bytes.Equal(kr.payload, payload) {
		t.Fatalf("parseKeyRecord = %+v, %v", kr, err)
	}
	p, err = readRecord(br, nil)
	if err != nil || len(p) == 0 || p[0] != copyEnd {
		t.Fatalf("the end record: %q, %v", p, err)
	}
	if n, err := parseEndRecord(p[1:]); n != 1 || err != nil {
		t.Fatalf("parseEndRecord = %d, %v; want 1", n, err)
	}
	if _, err := parseKeyRecord(append(bytes.Clone(rec[keyspace.RecordHeader+1:len(rec)-keyspace.RecordHeader-2]), 0)); err == nil {
		t.Error("a key record with a byte too many parsed")
	}

	bad := bytes.Clone(rec)
	bad[keyspace.RecordHeader+2] ^= 1
	if _, err := readRecord(bufio.NewReader(bytes.NewReader(bad)), nil); !errors.Is(err, errBadStream) {
		t.Errorf("a record failing its checksum: %v; want errBadStream", err)
	}
	huge := bytes.Clone(rec)
	huge[3] = 0xff
	if _, err := readRecord(bufio.NewReader(bytes.NewReader(huge)), nil); !errors.Is(err, errBadStream) {
		t.Errorf("a record longer than MaxRecord: %v; want errBadStream", err)
	}
	if _, err := readRecord(bufio.NewReader(bytes.NewReader(rec[:10])), nil); err == nil || errors.Is(err, errBadStream) {
		t.Errorf("a truncated record: %v; want a read error", err)
	}
}

// TestCopyRoundTrip: a primary's full copy, written and read by a replica
// without sockets, leaves the replica with the primary's keys, payloads
// and deadlines, drops the keys only the replica held, and takes the
// copy's position.
func TestCopyRoundTrip(t *testing.T) {
	d := cf.Defaults{}.WithDefaults()
	add := func(st *keyspace.Store, key string, items ...string) {
		t.Helper()
		var b [][]byte
		for _, it := range items {
			b = append(b, []byte(it))
		}
		if _, err := st.Add(&keyspace.Writer{}, []byte(key), b, keyspace.AddOptions{Create: d.Create(1000, true)}); err != nil {
			t.Fatal(err)
		}
	}
	src := keyspace.NewStore(0, 1<<30)
	for i := range 20 {
		add(src, fmt.Sprintf("k%d", i), fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i))
	}
	primary := New(Config{Store: src})
	primary.active.Store(true)
	primary.Feed([]byte{keyspace.OpReplPing}) // the copy starts past 0

	dst := keyspace.NewStore(0, 1<<30)
	add(dst, "k3", "stale")   // replaced by the copy's k3
	add(dst, "gone", "stale") // not in the copy: dropped
	replica := New(Config{Store: dst})
	m := &primaryLink{stop: make(chan struct{}), done: make(chan struct{})}
	replica.primary = m

	link := &Link{}
	id, off := primary.beginCopy(link)
	var buf bytes.Buffer
	keys, n, err := primary.writeCopy(&buf, link)
	if err != nil || keys != 20 || n != int64(buf.Len()) {
		t.Fatalf("writeCopy = %d keys, %d bytes, %v; want 20 keys, %d bytes", keys, n, err, buf.Len())
	}
	if got, ok := primary.backlog.Pinned(link); !ok || got != off {
		t.Errorf("the copy's pin: %d, %v; want %d", got, ok, off)
	}
	if err := replica.readCopy(m, bufio.NewReader(&buf), nil, id, off); err != nil {
		t.Fatal(err)
	}
	want := map[string]*keyspace.Entry{}
	for k, c := range src.All() {
		want[k] = c
	}
	got := 0
	for k, c := range dst.All() {
		got++
		w, ok := want[k]
		if !ok {
			t.Errorf("key %q is on the replica, not the primary", k)
			continue
		}
		if !bytes.Equal(c.DumpPayload(), w.DumpPayload()) || c.Deadline.Load() != w.Deadline.Load() {
			t.Errorf("key %q differs from the primary's", k)
		}
	}
	if got != len(want) {
		t.Errorf("the replica holds %d keys; want %d", got, len(want))
	}
	if st := replica.Status(); st.ID != id || st.Offset != off || !st.BacklogActive || !replica.followed {
		t.Errorf("the replica's position: %s %d (active %v, followed %v); want %s %d", st.ID, st.Offset, st.BacklogActive, replica.followed, id, off)
	}

	// A copy whose end record counts other keys than it sent fails.
	link2 := &Link{}
	id, off = primary.beginCopy(link2)
	buf.Reset()
	if _, _, err := primary.writeCopy(&buf, link2); err != nil {
		t.Fatal(err)
	}
	short := append(bytes.Clone(buf.Bytes()[:buf.Len()-keyspace.RecordHeader-2]), appendEndRecord(nil, 21)...)
	if err := replica.readCopy(m, bufio.NewReader(bytes.NewReader(short)), nil, id, off); err == nil {
		t.Error("a copy with a wrong key count was taken")
	}

	// A link REPLICAOF replaced changes nothing.
	replica.primary = &primaryLink{}
	if err := replica.readCopy(m, bufio.NewReader(bytes.NewReader(buf.Bytes())), nil, id, off); !errors.Is(err, errStaleLink) {
		t.Errorf("a stale link's copy: %v; want errStaleLink", err)
	}
}
