package server_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/redis/go-redis/v9"
)

// rawReplica is a replica's end of a link, by hand: it sends PSYNC ? -1
// and reads (or does not read) what the primary sends.
type rawReplica struct {
	c *resptest.Conn
}

func dialRawReplica(t *testing.T, addr string) *rawReplica {
	t.Helper()
	c := resptest.Dial(t, addr)
	c.Send("PSYNC", "?", "-1")
	return &rawReplica{c}
}

// record reads one record of the copy or the stream.
func (r *rawReplica) record() ([]byte, error) {
	var h [keyspace.RecordHeader]byte
	if _, err := io.ReadFull(r.c.Reader(), h[:]); err != nil {
		return nil, err
	}
	p := make([]byte, binary.LittleEndian.Uint32(h[:4]))
	if _, err := io.ReadFull(r.c.Reader(), p); err != nil {
		return nil, err
	}
	if keyspace.RecordCRC(h[:4], p) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, fmt.Errorf("a record fails its checksum")
	}
	return p, nil
}

// fullCopy reads +FULLRESYNC and the copy, and returns the offset the
// stream starts at.
func (r *rawReplica) fullCopy(t *testing.T) int64 {
	t.Helper()
	kind, v := r.c.ReadKind() // within 10 s, as the copy's records after it
	l, _ := v.(string)
	f := strings.Fields(l)
	if kind != '+' || len(f) != 3 || f[0] != "FULLRESYNC" {
		t.Fatalf("PSYNC: %q %#v", kind, v)
	}
	off, _ := strconv.ParseInt(f[2], 10, 64)
	for {
		p, err := r.record()
		if err != nil {
			t.Fatalf("the copy: %v", err)
		}
		if p[0] == 'E' {
			return off
		}
	}
}

// insertLoad sends n CF.INSERTs of 100 items of 100 bytes into key:
// about 10 KB of stream each.
func insertLoad(t *testing.T, c *redis.Client, key string, n int) {
	t.Helper()
	ctx := context.Background()
	pipe := c.Pipeline()
	// New items at each call: a filter holds only a few copies of one.
	item := fmt.Sprintf("%016x%s", rand.Uint64(), strings.Repeat("x", 74))
	for i := range n {
		args := []any{"CF.INSERT", key, "ITEMS"}
		for j := range 100 {
			args = append(args, fmt.Sprintf("%s%05d%05d", item, i, j))
		}
		pipe.Do(ctx, args...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// fillOutput writes, a megabyte at a time, until the backlog holds want
// bytes that a replica has not been sent, or until its one replica is cut:
// the kernel's socket buffers take the first megabytes.
func fillOutput(t *testing.T, c *redis.Client, want int64) {
	t.Helper()
	for range 64 {
		insertLoad(t, c, "k", 100)
		held := infoField(t, c, "master_repl_offset") - infoField(t, c, "repl_backlog_first_byte_offset")
		if held >= want || infoField(t, c, "connected_slaves") == 0 {
			return
		}
	}
	t.Fatalf("64 MB written and the backlog holds less than %d bytes", want)
}

// TestReplicaOutputPastTheBacklog: a replica that reads nothing for a
// while falls far behind a small backlog, yet keeps its link, since only
// client-output-buffer-limit replica bounds it; once it reads, it receives
// the whole stream, record by record, to the primary's offset.
func TestReplicaOutputPastTheBacklog(t *testing.T) {
	_, addr := start(t, server.Config{ReplBacklogSize: 16 << 10})
	c := client(t, addr)
	rr := dialRawReplica(t, addr)
	at := rr.fullCopy(t)
	// Until the backlog holds 4 MB the replica has not read, 250 times
	// its size: past what the kernel's socket buffers take.
	fillOutput(t, c, 4<<20)
	end := infoField(t, c, "master_repl_offset")
	rr.c.TCP().SetReadDeadline(time.Now().Add(10 * time.Second))
	records := 0
	for at < end {
		p, err := rr.record()
		if err != nil {
			t.Fatalf("at %d of %d, after %d records: %v", at, end, records, err)
		}
		at += int64(keyspace.RecordHeader + len(p))
		records++
	}
	if at != end {
		t.Fatalf("the stream reached %d, not the primary's offset %d", at, end)
	}
	if n := infoField(t, c, "connected_slaves"); n != 1 {
		t.Fatalf("connected_slaves %d after the replica read its stream; want 1", n)
	}
	if n := infoField(t, c, "sync_full"); n != 1 {
		t.Fatalf("sync_full %d; want the first copy only", n)
	}
	t.Logf("%d records, %d bytes, read after the primary wrote them, with a backlog of 16 KiB", records, end)
	if first := infoField(t, c, "repl_backlog_first_byte_offset"); end-first > 1<<20 {
		t.Errorf("the backlog still holds %d bytes once the replica read everything", end-first)
	}
}

// TestReplicaOutputLimits: a replica that reads nothing is cut once its
// output reaches the hard limit, or stays at or above the soft limit for
// longer than soft-seconds, with a warning that names the limit; INFO
// then lists no replica.
func TestReplicaOutputLimits(t *testing.T) {
	for _, c := range []struct {
		name, limit, why string
		writes           int
	}{
		{"hard", "replica 512kb 0 0", "hard limit, 524288 bytes", 1200},
		{"soft", "replica 0 256kb 1", "soft limit, 262144 bytes, for more than 1 s", 1200},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs logBuffer
			// A small backlog: what it holds past its size is the
			// replica's output.
			_, addr := start(t, server.Config{Logger: logs.logger(), ReplBacklogSize: 16 << 10})
			p := client(t, addr)
			if err := p.ConfigSet(context.Background(), "client-output-buffer-limit", c.limit).Err(); err != nil {
				t.Fatal(err)
			}
			rr := dialRawReplica(t, addr)
			rr.fullCopy(t)
			fillOutput(t, p, 1<<20)
			waitFor(t, "the replica's link cut", func() bool {
				return infoField(t, p, "connected_slaves") == 0
			})
			if !strings.Contains(logs.String(), c.why) || !strings.Contains(logs.String(), "client-output-buffer-limit replica") {
				t.Errorf("no warning naming %q:\n%s", c.why, logs.String())
			}
			// Its connection ends once what was sent is read.
			rr.c.TCP().SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.Copy(io.Discard, rr.c.Reader()); err != nil {
				t.Fatalf("the cut link: %v; want EOF", err)
			}
		})
	}
}

// TestReplicaOutputWithinLimits: the same replica, under the default
// limits, keeps its link through the same writes.
func TestReplicaOutputWithinLimits(t *testing.T) {
	_, addr := start(t, server.Config{ReplBacklogSize: 16 << 10})
	p := client(t, addr)
	rr := dialRawReplica(t, addr)
	rr.fullCopy(t)
	fillOutput(t, p, 4<<20)
	time.Sleep(1500 * time.Millisecond) // a soft-limit check or more
	if n := infoField(t, p, "connected_slaves"); n != 1 {
		t.Fatalf("connected_slaves %d under the default limits; want 1", n)
	}
}

// TestReplicaReadsDuringFullCopies: a replica read throughout repeated
// full copies, each forced by cutting its link while writes run past a
// small backlog, never answers 0 for an item it held before: its keys are
// replaced one by one, never emptied first. It ends with its primary's
// data, byte for byte.
func TestReplicaReadsDuringFullCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("several full copies, a second or more each")
	}
	ctx := context.Background()
	_, paddr := start(t, server.Config{ReplBacklogSize: 16 << 10})
	p := client(t, paddr)
	const keys, held = 16, 1500
	for k := range keys {
		args := []any{"CF.INSERT", fmt.Sprint("k", k), "ITEMS"}
		for i := range held {
			args = append(args, fmt.Sprint("held", i))
		}
		if err := p.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	_, raddr := start(t, server.Config{Dir: t.TempDir()})
	r := client(t, raddr)
	replicaOf(t, r, paddr)
	if n, err := p.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}

	var stop atomic.Bool
	var reads, wrong atomic.Int64
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			rc := client(t, raddr)
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for !stop.Load() {
				k, i := fmt.Sprint("k", rng.IntN(keys)), fmt.Sprint("held", rng.IntN(held))
				ok, err := rc.CFExists(ctx, k, i).Result()
				if err != nil {
					continue // the replica may be busy; never wrong
				}
				reads.Add(1)
				if !ok {
					wrong.Add(1)
				}
			}
		})
	}
	wg.Go(func() {
		w := client(t, paddr)
		for i := 0; !stop.Load(); i++ {
			args := []any{"CF.INSERT", fmt.Sprint("k", i%keys), "ITEMS"}
			for j := range 50 {
				args = append(args, fmt.Sprint("new", i, ".", j))
			}
			w.Do(ctx, args...)
		}
	})
	const copies = 4
	for range copies {
		before := infoField(t, r, "master_full_syncs")
		if err := p.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "a full copy", func() bool {
			f := infoFields(t, r, "replication")
			n, _ := strconv.ParseInt(f["master_full_syncs"], 10, 64)
			return n > before && f["master_link_status"] == "up"
		})
	}
	stop.Store(true)
	wg.Wait()
	if n, err := p.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	sameData(t, p, r)
	t.Logf("%d copies; %d reads of items held before, %d answered 0", infoField(t, r, "master_full_syncs"), reads.Load(), wrong.Load())
	if wrong.Load() != 0 {
		t.Fatalf("%d of %d reads answered 0 for an item the replica held", wrong.Load(), reads.Load())
	}
}
