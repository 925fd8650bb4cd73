package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// infoField returns an integer field of INFO.
func infoField(t testing.TB, c *redis.Client, field string) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "all").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s", field)
	return 0
}

// dump returns every chunk of key's CF.SCANDUMP.
func dump(t testing.TB, c *redis.Client, key string) []redis.ScanDump {
	t.Helper()
	var chunks []redis.ScanDump
	for iter := int64(0); ; {
		d, err := c.CFScanDump(context.Background(), key, iter).Result()
		if errors.Is(err, redis.Nil) || (err == nil && d.Iter == 0) {
			return chunks
		}
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, d)
		iter = d.Iter
	}
}

// TestMemoryAccountingCycles runs thousands of create, load and delete
// cycles: used_memory_filters is back at exactly 0 after each round, and
// equals the sum of the filters' CF.INFO sizes in between (issue 12: it
// drifted to -16.5 MB).
func TestMemoryAccountingCycles(t *testing.T) {
	_, addr := start(t, server.Config{MaxMemory: 8 << 20})
	c := client(t, addr)
	ctx := context.Background()
	if err := c.CFReserveWithArgs(ctx, "src", &redis.CFReserveOptions{Capacity: 500, Expansion: 2}).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		c.CFAdd(ctx, "src", i)
	}
	chunks := dump(t, c, "src")
	srcSize := c.CFInfo(ctx, "src").Val().Size
	if got := infoField(t, c, "used_memory_filters"); got != srcSize {
		t.Fatalf("used_memory_filters %d, CF.INFO Size %d", got, srcSize)
	}
	rounds := 1000
	if testing.Short() {
		rounds = 200
	}
	for round := range rounds {
		pipe := c.Pipeline()
		switch round % 4 {
		case 0: // a complete load
			for _, d := range chunks {
				pipe.CFLoadChunk(ctx, "copy", d.Iter, d.Data)
			}
		case 1: // a load abandoned after its header
			pipe.CFLoadChunk(ctx, "copy", chunks[0].Iter, chunks[0].Data)
		case 2: // a filter that grows
			pipe.CFReserveWithArgs(ctx, "copy", &redis.CFReserveOptions{Capacity: 100, Expansion: 2})
			for i := range 500 {
				pipe.CFAdd(ctx, "copy", i)
			}
		case 3: // a load refused for memory, then a compacted filter
			pipe.CFReserve(ctx, "huge", 10_000_000)
			pipe.CFAdd(ctx, "copy", "x")
			pipe.CFDel(ctx, "copy", "x")
			pipe.Do(ctx, "CF.COMPACT", "copy")
		}
		pipe.Exec(ctx) // the refused reservation is an expected error
		if got, want := infoField(t, c, "used_memory_filters"), srcSize+c.CFInfo(ctx, "copy").Val().Size; got != want {
			t.Fatalf("round %d: used_memory_filters %d, want %d (the filters' sizes)", round, got, want)
		}
		if err := c.Del(ctx, "copy", "huge").Err(); err != nil {
			t.Fatal(err)
		}
		if got := infoField(t, c, "used_memory_filters"); got != srcSize {
			t.Fatalf("round %d: used_memory_filters %d after DEL, want %d", round, got, srcSize)
		}
	}
	c.FlushAll(ctx)
	if got := infoField(t, c, "used_memory_filters"); got != 0 {
		t.Errorf("used_memory_filters %d after FLUSHALL", got)
	}
}

// TestLoadRefusesWrites: while a CF.LOADCHUNK sequence is in progress on a
// key, writes to it are refused (issue 12: a CF.ADD answered 1 and was then
// lost); lookups see the chunks loaded so far; after the last chunk writes
// work again.
func TestLoadRefusesWrites(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	c.CFReserve(ctx, "src", 10_000_000) // several chunks
	for i := range 2000 {
		c.CFAdd(ctx, "src", i)
	}
	chunks := dump(t, c, "src")
	if len(chunks) < 3 {
		t.Fatalf("%d chunks; the test needs a header and two data chunks", len(chunks))
	}
	if err := c.CFLoadChunk(ctx, "copy", chunks[0].Iter, chunks[0].Data).Err(); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{c.CFAdd(ctx, "copy", "new").Err(), c.CFDel(ctx, "copy", "1").Err()} {
		if err == nil || !strings.HasPrefix(err.Error(), "ERR the key is being restored by CF.LOADCHUNK") {
			t.Errorf("a write to a key being loaded: %v", err)
		}
	}
	if err := c.CFInsert(ctx, "copy", nil, "a").Err(); err == nil {
		t.Error("CF.INSERT into a key being loaded was accepted")
	}
	for _, d := range chunks[1:] {
		if err := c.CFLoadChunk(ctx, "copy", d.Iter, d.Data).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := c.CFAdd(ctx, "copy", "new").Result(); err != nil || !n {
		t.Errorf("CF.ADD after the load: %v %v", n, err)
	}
	if !c.CFExists(ctx, "copy", "new").Val() || !c.CFExists(ctx, "copy", "1999").Val() {
		t.Error("items missing after the load and the CF.ADD")
	}
	// DEL of a key being loaded abandons the load.
	c.CFLoadChunk(ctx, "other", chunks[0].Iter, chunks[0].Data)
	if n := c.Del(ctx, "other").Val(); n != 1 {
		t.Errorf("DEL of a key being loaded: %d", n)
	}
}

// TestSnapshotV1Compatible starts on a data directory whose snapshot was
// written by the previous format (testdata/snapshot-v1: "grow", reserved
// 100 EXPANSION 2 with item0..item999 added and item0 deleted, and "small",
// 1000 BUCKETSIZE 2 with s0..s199), then saves it in the current format and
// restarts.
func TestSnapshotV1Compatible(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "snapshot-v1", "snapshot.cks"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "snapshot.cks"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := func(c *redis.Client) {
		t.Helper()
		for i := 1; i < 1000; i++ {
			if !c.CFExists(ctx, "grow", fmt.Sprint("item", i)).Val() {
				t.Fatalf("item%d missing", i)
			}
		}
		for i := range 200 {
			if !c.CFExists(ctx, "small", fmt.Sprint("s", i)).Val() {
				t.Fatalf("s%d missing", i)
			}
		}
		info := c.CFInfo(ctx, "grow").Val()
		if info.NumItemsInserted != 999 || info.NumItemsDeleted != 1 || info.NumFilters != 4 {
			t.Errorf("CF.INFO grow: %+v", info)
		}
	}
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) {
		check(c)
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	})
	withServer(t, server.Config{Dir: dir}, func(c *redis.Client, _ *server.Server) { check(c) })
}

// forgedHeader returns a CF.LOADCHUNK header chunk (dump format 2, see
// dump.go) with a valid checksum for a filter of the given stages, each
// {capacity, fingerprint bits}, with bucket size 4 and no fingerprints.
func forgedHeader(stages [][2]uint64) []byte {
	b := []byte("CKCH")
	for _, v := range []uint64{2, 1000, 4, 20, 1, 7, 0, 0, uint64(len(stages))} {
		b = binary.AppendUvarint(b, v)
	}
	for _, st := range stages {
		b = binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(b, st[0]), st[1]), 0)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// forgedGrowing returns a checksummed header chunk (format 3) of a growing
// table of capacity 1000 (278 buckets of 4 to start with) at the given
// level and split pointer, holding entries entries.
func forgedGrowing(level, split, entries uint64) []byte {
	b := []byte("CKCH")
	for _, v := range []uint64{3, 1000, 4, 20, 1, 7, 0, 0, 0, level, split, entries, 0} {
		b = binary.AppendUvarint(b, v)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// TestForgedHeaders: a checksummed header that announces more than the
// machine or --maxmemory allows is refused and charges nothing; one that is
// accepted charges exactly its filter, and DEL gives it back (issue 12: a
// 30-byte header made INFO report 4.4 TB, and one of 120 MiB stayed counted
// after DEL).
func TestForgedHeaders(t *testing.T) {
	_, addr := start(t, server.Config{MaxFilterMemory: 1 << 30})
	c := client(t, addr)
	ctx := context.Background()
	huge := make([][2]uint64, 32)
	for i := range huge {
		huge[i] = [2]uint64{1 << 32, 12}
	}
	err := c.CFLoadChunk(ctx, "huge", 1, string(forgedHeader(huge))).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Insufficient memory") {
		t.Errorf("a header of 32 stages of 2^32: %v", err)
	}
	if got := infoField(t, c, "used_memory_filters"); got != 0 {
		t.Errorf("used_memory_filters %d after a refused header", got)
	}
	// About 120 MiB: accepted, counted exactly, released by DEL.
	if err := c.CFLoadChunk(ctx, "big", 1, string(forgedHeader([][2]uint64{{60_000_000, 12}}))).Err(); err != nil {
		t.Fatal(err)
	}
	size := c.CFInfo(ctx, "big").Val().Size
	if got := infoField(t, c, "used_memory_filters"); got != size || size < 100<<20 {
		t.Errorf("used_memory_filters %d, CF.INFO Size %d", got, size)
	}
	c.Del(ctx, "big")
	if got := infoField(t, c, "used_memory_filters"); got != 0 {
		t.Errorf("used_memory_filters %d after DEL of a loading key", got)
	}
	// Fields out of range, with a valid checksum: refused.
	for name, h := range map[string][]byte{
		"no stages":                        forgedHeader(nil),
		"zero capacity":                    forgedHeader([][2]uint64{{0, 12}}),
		"13-bit b=4 stage":                 forgedHeader([][2]uint64{{1000, 13}}),
		"capacity past max":                forgedHeader([][2]uint64{{1<<32 + 1, 12}}),
		"growing, below its first level":   forgedGrowing(5, 0, 0),
		"growing, below its first size":    forgedGrowing(8, 0, 0),
		"growing, past the last level":     forgedGrowing(41, 0, 0),
		"growing, split past its level":    forgedGrowing(9, 512, 0),
		"growing, more entries than slots": forgedGrowing(9, 0, 2049),
	} {
		if err := c.CFLoadChunk(ctx, "x", 1, string(h)).Err(); err == nil || !strings.Contains(err.Error(), "Couldn't create filter") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The same forge with a geometry the table can grow to is accepted.
	if err := c.CFLoadChunk(ctx, "grown", 1, string(forgedGrowing(9, 22, 2048))).Err(); err != nil {
		t.Errorf("a valid growing header: %v", err)
	}
}

// TestScanDumpCharged: a CF.SCANDUMP data chunk is charged to --maxmemory
// before it is built, refused when it does not fit, and released once sent.
// The charge is the chunk's bound from the blocks ever written: a filter
// holding one item dumps its chunk where a full one's is refused.
func TestScanDumpCharged(t *testing.T) {
	ctx := context.Background()
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	c.CFReserve(ctx, "k", 4_000_000)
	c.CFAdd(ctx, "k", "x") // an empty filter dumps nothing
	size := c.CFInfo(ctx, "k").Val().Size
	if len(dump(t, c, "k")) < 2 {
		t.Fatal("no data chunk")
	}
	if got := infoField(t, c, "used_memory_dump_chunks"); got != 0 {
		t.Errorf("used_memory_dump_chunks %d after the dump was sent", got)
	}
	if got := infoField(t, c, "used_memory_filters"); got != size {
		t.Errorf("used_memory_filters %d, CF.INFO Size %d", got, size)
	}

	// With room for the filter but not for a full chunk as well: the
	// first chunk (2^20 buckets) of the filter holding one item is charged
	// the one block of 512 buckets it was written in, and sent.
	_, addr = start(t, server.Config{MaxMemory: size + 1<<20})
	c = client(t, addr)
	c.CFReserve(ctx, "k", 4_000_000)
	c.CFAdd(ctx, "k", "x")
	if _, err := c.CFScanDump(ctx, "k", 0).Result(); err != nil {
		t.Fatalf("the header chunk: %v", err)
	}
	if err := c.CFScanDump(ctx, "k", 1).Err(); err != nil {
		t.Errorf("the chunk of a filter holding one item: %v", err)
	}
	// 40,000 items leave no block of the chunk unwritten (each of its
	// 2,048 blocks is missed with odds e^-18): its bound is 10 MB.
	insertBatches(t, c, "k", 40)
	if err := c.CFScanDump(ctx, "k", 1).Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR Insufficient memory") {
		t.Errorf("a chunk past --maxmemory: %v", err)
	}
	if got := infoField(t, c, "used_memory_dump_chunks"); got != 0 {
		t.Errorf("used_memory_dump_chunks %d after a refused chunk", got)
	}
}

// TestInfoRSS: used_memory_rss is the process's resident memory (issue 15:
// INFO showed 2.1 GB, Go's Sys, where ps showed 20 MB). The server runs in
// this process, so /proc/self/statm read here must agree with it.
func TestInfoRSS(t *testing.T) {
	statm := func() int64 {
		b, err := os.ReadFile("/proc/self/statm")
		if err != nil {
			t.Skip("no /proc/self/statm")
		}
		pages, _ := strconv.ParseInt(strings.Fields(string(b))[1], 10, 64)
		return pages * int64(os.Getpagesize())
	}
	statm()
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	if err := c.CFReserve(ctx, "big", 400_000_000).Err(); err != nil {
		t.Fatal(err)
	}
	before := statm()
	rss := infoField(t, c, "used_memory_rss")
	after := statm()
	t.Logf("used_memory_rss %d; /proc/self/statm %d before INFO, %d after", rss, before, after)
	const slack = 32 << 20 // what INFO and its client allocate meanwhile
	if rss < before-slack || rss > after+slack {
		t.Errorf("used_memory_rss %d, resident memory %d..%d", rss, before, after)
	}
}

// insertBatches adds n batches of 1000 items (item:BATCH:I) to key, in one
// pipeline of CF.INSERTs.
func insertBatches(t *testing.T, c *redis.Client, key string, n int) {
	t.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	for i := range n {
		args := []any{"CF.INSERT", key, "ITEMS"}
		for j := range 1000 {
			args = append(args, fmt.Sprintf("item:%d:%d", i, j))
		}
		p.Do(ctx, args...)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}
