package keyspace

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// streamOps is a primary's stream under issue 39's load: keys created with
// CF.INSERT's defaults (so that they grow), then records of adds of
// perRecord new items each, to keys drawn at random.
func streamOps(keys, records, perRecord int, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 39))
	var ops [][]byte
	for k := range keys {
		p := cf.Params{Capacity: 1024, BucketSize: 2, MaxIter: 20, Expansion: 1, Seed: rng.Uint64()}
		ops = append(ops, (&Op{Kind: OpCreate, Key: fmt.Appendf(nil, "k%d", k), Params: p}).Encode())
	}
	for range records {
		o := Op{Kind: OpAdd, Key: fmt.Appendf(nil, "k%d", rng.IntN(keys))}
		for range perRecord {
			o.Items = append(o.Items, fmt.Appendf(nil, "%x", rng.Uint64()))
		}
		ops = append(ops, o.Encode())
	}
	return ops
}

// TestReplayStreamBarriers: records that are not one key's op (FLUSHALL, a
// RENAME, a transaction) split a batch, and everything around them lands
// as replayed one by one would leave it.
func TestReplayStreamBarriers(t *testing.T) {
	ops := streamOps(6, 200, 5, 1)
	rename := (&Op{Kind: OpRename, Key: []byte("k1"), To: []byte("moved")}).Encode()
	addMoved := (&Op{Kind: OpAdd, Key: []byte("moved"), Items: [][]byte{[]byte("after the rename")}}).Encode()
	multi := EncodeMulti([][]byte{
		(&Op{Kind: OpAdd, Key: []byte("k2"), Items: [][]byte{[]byte("in a transaction")}}).Encode(),
		(&Op{Kind: OpDrop, Key: []byte("k3")}).Encode(),
	})
	// k1 is created again after it moved, k3 after it was dropped.
	all := append(append([][]byte{}, ops[:100]...), rename, addMoved, ops[1], multi, ops[3], []byte{OpReplPing})
	all = append(all, ops[100:150]...)
	all = append(all, []byte{byte(OpFlush)})
	all = append(all, ops[:6]...) // the keys again, after the flush
	all = append(all, ops[150:]...)

	one := NewStore(0, 1<<30)
	for i, op := range all {
		if op[0] == OpReplPing {
			continue
		}
		if err := one.Replay(op, 0, nil); err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
	}
	for _, workers := range []int{1, 2, 7} {
		st := NewStore(0, 1<<30)
		if err := st.ReplayStream(all, 0, nil, 0, workers); err != nil {
			t.Fatalf("workers=%d: %v", workers, err)
		}
		sameStores(t, fmt.Sprintf("streamed on %d workers", workers), one, st)
	}
}

// TestReplayStreamFuzzyOffsets: a record before fzEnd is replayed with the
// copy's positions (skipped if the key's copy stands after it), one at or
// after fzEnd without; offsets count each record's header and payload.
func TestReplayStreamFuzzyOffsets(t *testing.T) {
	create := (&Op{Kind: OpCreate, Key: []byte("k"), Params: cf.Params{Capacity: 64, BucketSize: 2, MaxIter: 20, Expansion: 1}}).Encode()
	add := func(item string) []byte {
		return (&Op{Kind: OpAdd, Key: []byte("k"), Items: [][]byte{[]byte(item)}}).Encode()
	}
	recs := [][]byte{add("skipped"), add("kept"), add("after")}
	const at = 1000
	second := int64(at + RecordHeader + len(recs[0]))
	third := second + int64(RecordHeader+len(recs[1]))
	st := NewStore(0, 1<<30)
	if err := st.Replay(create, 0, nil); err != nil {
		t.Fatal(err)
	}
	// The key's copy stands at the second record: the first is in it.
	fz := &FuzzyLog{Positions: map[string]uint64{"k": uint64(second)}}
	if err := st.ReplayStream(recs, at, fz, third, 2); err != nil {
		t.Fatal(err)
	}
	c, _ := st.keys.Load("k")
	if c.Inserted() != 2 {
		t.Fatalf("%d items inserted; want 2 (the first record is in the copy)", c.Inserted())
	}
	for _, it := range []string{"kept", "after"} {
		if !c.Exists([]byte(it)) {
			t.Errorf("%q missing", it)
		}
	}
}

// TestReplayStreamError: a record that cannot be applied is reported,
// whichever worker met it, and a damaged record (no key to read) too.
func TestReplayStreamError(t *testing.T) {
	ops := streamOps(4, 64, 3, 2)
	missing := (&Op{Kind: OpAdd, Key: []byte("nobody"), Items: [][]byte{[]byte("x")}}).Encode()
	for _, c := range []struct {
		name string
		bad  []byte
		want string
	}{
		{"missing key", missing, `on missing key "nobody"`},
		{"unknown kind", []byte{200, 1, 'k'}, "unknown op 200"},
		{"cut short", []byte{byte(OpAdd), 9, 'k'}, "truncated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := append(append(append([][]byte{}, ops[:40]...), c.bad), ops[40:]...)
			err := NewStore(0, 1<<30).ReplayStream(recs, 0, nil, 0, 3)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v; want one saying %q", err, c.want)
			}
		})
	}
	if err := NewStore(0, 1<<30).ReplayStream(nil, 0, nil, 0, 4); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
	var errNil error
	if !errors.Is(NewStore(0, 1<<30).ReplayStream([][]byte{{OpReplPing}}, 0, nil, 0, 4), errNil) {
		t.Fatal("a batch of heartbeats failed")
	}
}

// BenchmarkReplayStream: a replica's apply of issue 39's stream (records of
// 100 new items into 32 keys that grow), by how many workers apply it;
// items/s is the rate a replica keeps up with, on GOMAXPROCS cores.
func BenchmarkReplayStream(b *testing.B) {
	const keys, perRecord, batch = 32, 100, 180 // a batch of about 256 KiB
	for _, workers := range []int{1, runtime.GOMAXPROCS(0), 4 * runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			ops := streamOps(keys, 4000, perRecord, 3)
			b.ResetTimer()
			items := 0
			for b.Loop() {
				b.StopTimer()
				st := NewStore(0, 1<<34)
				b.StartTimer()
				for i := 0; i < len(ops); i += batch {
					if err := st.ReplayStream(ops[i:min(i+batch, len(ops))], 0, nil, 0, workers); err != nil {
						b.Fatal(err)
					}
				}
				items += (len(ops) - keys) * perRecord
			}
			b.ReportMetric(float64(items)/b.Elapsed().Seconds(), "items/s")
		})
	}
}
