package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// logBuffer is a logger's output, safe to read while the server writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// startReplica serves a replica of paddr on dir, and waits until it holds
// everything the primary p has.
func startReplica(t *testing.T, dir, paddr string, p *redis.Client, log *logBuffer) (*server.Server, *redis.Client) {
	t.Helper()
	host, port, _ := net.SplitHostPort(paddr)
	srv, addr := start(t, server.Config{Dir: dir, ReplicaOf: host + " " + port, Logger: log.logger()})
	r := client(t, addr)
	caughtUp(t, p, r)
	return srv, r
}

// caughtUp waits until the replica r's link is up at its primary p's
// offset, then checks that the two hold the same keys, dumps and deadlines.
func caughtUp(t *testing.T, p, r *redis.Client) {
	t.Helper()
	waitFor(t, "the replica at its primary's offset", func() bool {
		ri := infoFields(t, r, "replication")
		return ri["master_link_status"] == "up" && ri["master_repl_offset"] == infoFields(t, p, "replication")["master_repl_offset"]
	})
	if a, b := dataState(t, p), dataState(t, r); !maps.Equal(a, b) {
		t.Fatalf("the replica's data differs from its primary's:\nprimary %.200v\nreplica %.200v", a, b)
	}
}

// TestReplicaRunsEveryCommand: every sample of every command is run on a
// replica of a populated primary; none may change the replica's data or move
// its offset past its primary's. Then the replica restarts and the primary
// takes writes of every kind: every one must reach it.
func TestReplicaRunsEveryCommand(t *testing.T) {
	p, paddr, vars := primaryWithData(t, server.Config{})
	var rlog logBuffer
	rdir := t.TempDir()
	rsrv, r := startReplica(t, rdir, paddr, p, &rlog)
	raddr := r.Options().Addr
	want := dataState(t, r)
	for _, name := range sampledCommands() {
		for _, sample := range commandSamples[name] {
			replies := runSample(t, raddr, sample, vars, nil)
			if got := dataState(t, r); !maps.Equal(got, want) {
				t.Fatalf("%s on a replica changed its data: %q", name, replies)
			}
			ro, po := replOffset(t, r), replOffset(t, p)
			if ro > po {
				t.Fatalf("%s on a replica moved its offset to %d, past its primary's %d: %q", name, ro, po, replies)
			}
		}
	}
	caughtUp(t, p, r)

	// Restart the replica on its data, then write on the primary.
	if err := rsrv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const n = 210
	for i := range n {
		switch i % 7 {
		case 0:
			p.CFAdd(ctx, "growing", fmt.Sprint("after", i))
		case 1:
			p.CFAdd(ctx, "fixed", fmt.Sprint("after", i))
		case 2:
			p.CFInsert(ctx, fmt.Sprint("new", i), nil, "a", "b")
		case 3:
			p.CFDel(ctx, "growing", fmt.Sprint("g", i))
		case 4:
			p.PExpire(ctx, "fixed", time.Duration(i)*time.Hour)
		case 5:
			p.TxPipelined(ctx, func(pp redis.Pipeliner) error {
				pp.CFAdd(ctx, "tx", fmt.Sprint("after", i))
				pp.CFAdd(ctx, "growing", fmt.Sprint("tx", i))
				return nil
			})
		case 6:
			p.Do(ctx, "CF.COMPACT", "grow")
			p.Rename(ctx, fmt.Sprint("new", i-4), fmt.Sprint("moved", i))
		}
	}
	_, r = startReplica(t, rdir, paddr, p, &rlog)
	for i := 0; i < n; i += 7 {
		if !r.CFExists(ctx, "growing", fmt.Sprint("after", i)).Val() {
			t.Fatalf("write %d did not reach the restarted replica", i)
		}
	}
	if strings.Contains(rlog.String(), "level=ERROR") {
		t.Errorf("the replica logged errors:\n%s", rlog.String())
	}
}

// TestReplicaPositionNeverThePrimarys: a replica whose logged position lies
// inside a record of its primary's stream (what a replica that applied a
// write of its own used to log) is refused a continue, says so in its log
// and INFO, and takes a full copy; every later write reaches it.
func TestReplicaPositionNeverThePrimarys(t *testing.T) {
	var plog, rlog logBuffer
	_, paddr := start(t, server.Config{Logger: plog.logger()})
	p := client(t, paddr)
	ctx := context.Background()
	for i := range 100 {
		p.CFAdd(ctx, "k", fmt.Sprint(i))
	}
	rdir := t.TempDir()
	rsrv, _ := startReplica(t, rdir, paddr, p, &rlog)
	if err := server.ShiftReplicationOffset(rsrv, 3); err != nil {
		t.Fatal(err)
	}
	if err := rsrv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 210 {
		p.CFAdd(ctx, "k", fmt.Sprint("after", i))
	}
	_, r := startReplica(t, rdir, paddr, p, &rlog)
	for i := range 210 {
		if !r.CFExists(ctx, "k", fmt.Sprint("after", i)).Val() {
			t.Fatalf("write %d did not reach the replica", i)
		}
	}
	ri := infoFields(t, r, "replication")
	if ri["master_position_refused"] != "1" || ri["master_full_syncs"] != "1" {
		t.Errorf("the replica's INFO: master_position_refused %s, master_full_syncs %s; want 1 and 1",
			ri["master_position_refused"], ri["master_full_syncs"])
	}
	if !strings.Contains(rlog.String(), "the primary cannot continue from this replica's position") {
		t.Errorf("the replica's log does not say it parted:\n%s", rlog.String())
	}
	if !strings.Contains(plog.String(), "inside a record of this primary's stream") {
		t.Errorf("the primary's log does not say why:\n%s", plog.String())
	}
}

// TestPsyncOffsets: the primary continues only from a record boundary of its
// backlog; an offset inside a record or past its end gets a full copy.
func TestPsyncOffsets(t *testing.T) {
	_, paddr := start(t, server.Config{})
	p := client(t, paddr)
	ctx := context.Background()
	_, raddr := start(t, server.Config{})
	r := client(t, raddr)
	replicaOf(t, r, paddr) // the backlog is kept from now on
	for i := range 50 {
		p.CFAdd(ctx, "k", fmt.Sprint(i))
	}
	caughtUp(t, p, r)
	pi := infoFields(t, p, "replication")
	id := pi["master_replid"]
	var off int64
	fmt.Sscan(pi["master_repl_offset"], &off)
	for _, tc := range []struct {
		offset int64
		want   string
	}{
		{off, "+CONTINUE"},
		{off - 1, "+FULLRESYNC"},
		{off + 1, "+FULLRESYNC"},
		{off + 1<<20, "+FULLRESYNC"},
	} {
		c := resptest.Dial(t, paddr)
		c.SendRaw(fmt.Appendf(nil, "PSYNC %s %d\r\n", id, tc.offset)) // inline
		c.TCP().SetReadDeadline(time.Now().Add(5 * time.Second))
		kind, v, err := c.Reader().ReadKind()
		c.TCP().Close()
		if s, _ := v.(string); err != nil || !strings.HasPrefix(string(kind)+s, tc.want) {
			t.Errorf("PSYNC at %+d from the end: %q %#v, %v; want %s", tc.offset-off, kind, v, err, tc.want)
		}
	}
}

// TestReplicaStreamMismatch: a stream record that fails its checksum makes a
// replica forget its position, say so, and ask for a full copy (PSYNC ? -1)
// on its next connection, instead of retrying the same position forever.
func TestReplicaStreamMismatch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	psyncs := make(chan string, 4)
	go func() {
		for conn := 0; ; conn++ {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go fakePrimary(nc, conn, psyncs)
		}
	}()
	var rlog logBuffer
	_, raddr := start(t, server.Config{Logger: rlog.logger()})
	r := client(t, raddr)
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if err := r.Do(context.Background(), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	first, second := <-psyncs, <-psyncs
	if strings.HasPrefix(first, "? ") {
		t.Fatalf("the first PSYNC asks for a copy already: %q", first)
	}
	if second != "? -1" {
		t.Errorf("after a corrupt record the replica sent PSYNC %q, want \"? -1\"", second)
	}
	waitFor(t, "master_stream_errors", func() bool {
		return infoFields(t, r, "replication")["master_stream_errors"] == "1"
	})
	if !strings.Contains(rlog.String(), "the replication stream does not match this replica's data") {
		t.Errorf("the replica's log does not say why:\n%s", rlog.String())
	}
}

// fakePrimary answers a replica's handshake; on the first connection it
// continues and sends a record with a bad checksum, on later ones it only
// records the PSYNC.
func fakePrimary(nc net.Conn, conn int, psyncs chan<- string) {
	defer nc.Close()
	r := resptest.NewReader(nc)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		switch strings.ToUpper(args[0]) {
		case "PING":
			io.WriteString(nc, "+PONG\r\n")
		case "PSYNC":
			psyncs <- args[1] + " " + args[2]
			if conn > 0 {
				return
			}
			io.WriteString(nc, "+CONTINUE\r\n")
			// A record of 4 bytes whose CRC field is wrong.
			nc.Write([]byte{4, 0, 0, 0, 1, 2, 3, 4, 65, 0, 0, 0})
			io.Copy(io.Discard, nc)
			return
		default:
			io.WriteString(nc, "+OK\r\n")
		}
	}
}

// readCommand reads one request, an array of bulk strings, as strings.
func readCommand(r *resptest.Reader) ([]string, error) {
	v, err := r.ReadReply()
	if err != nil {
		return nil, err
	}
	req, _ := v.([]any)
	args := make([]string, len(req))
	for i, a := range req {
		s, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("argument %d of %v is not a bulk string", i, v)
		}
		args[i] = s
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("request %v is not an array of bulk strings", v)
	}
	return args, nil
}
