package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// The tests of client memory (clientmem.go): client-output-buffer-limit,
// maxmemory-clients, and --maxmemory counting what clients hold. The
// clients that misbehave are raw connections that stop reading, or stop
// half-way through a request.

// clientFields returns CLIENT LIST's fields of each client, by id.
func clientFields(t testing.TB, c *redis.Client) map[int64]map[string]string {
	t.Helper()
	list, err := c.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		id, _ := strconv.ParseInt(f["id"], 10, 64)
		out[id] = f
	}
	return out
}

// totMem is a client's tot-mem in CLIENT LIST, -1 if it is not listed.
func totMem(t testing.TB, c *redis.Client, id int64) int64 {
	t.Helper()
	f, ok := clientFields(t, c)[id]
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(f["tot-mem"], 10, 64)
	if err != nil {
		t.Fatalf("client %d: tot-mem %q", id, f["tot-mem"])
	}
	return n
}

// stuckClient is a raw connection that sends and stops reading: what the
// server writes past the sockets' buffers (a few MB on loopback) stays in
// its own.
type stuckClient struct {
	nc net.Conn
	id int64
}

// dialStuck connects, authenticates with pass (if any), runs setup
// commands (reading their replies), and learns its CLIENT ID.
func dialStuck(t *testing.T, addr, pass string, setup ...[]string) *stuckClient {
	t.Helper()
	raw := resptest.Dial(t, addr)
	if pass != "" {
		if got := raw.Do("AUTH", pass); got != "OK" {
			t.Fatalf("AUTH: %v", got)
		}
	}
	for _, cmd := range setup {
		if got := raw.Do(resptest.Args(cmd...)...); got != "OK" {
			t.Fatalf("%v: %v", cmd, got)
		}
	}
	return &stuckClient{nc: raw.TCP(), id: raw.Do("CLIENT", "ID").(int64)}
}

// send writes args as one request, or, with announce > 0, as a request
// whose last argument announces announce bytes of which only the bytes
// given are sent: a request left half-sent.
func (c *stuckClient) send(t *testing.T, announce int, args ...string) {
	t.Helper()
	if _, err := c.nc.Write(request(announce, args...)); err != nil {
		t.Fatal(err)
	}
}

// request is send's request: args encoded whole, then, with announce > 0,
// the last one's header and end replaced by the announced length alone.
func request(announce int, args ...string) []byte {
	b := resptest.Request(resptest.Args(args...)...)
	if announce > 0 {
		last := args[len(args)-1]
		b = b[:len(b)-len(resptest.Request(last))+len("*1\r\n")] // the last argument's bulk cut
		b = fmt.Appendf(b, "$%d\r\n%s", announce, last)
	}
	return b
}

// closed reports whether the server closed the connection: reading
// discards what was sent before and ends with EOF or a reset.
func (c *stuckClient) closed() bool {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c.nc)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// TestScanDumpNeverRead is issue 24's scenario: a client sends CF.SCANDUMP
// and never reads the replies. Its chunks stay charged
// (used_memory_dump_chunks) and another client's CF.RESERVE answers
// "Insufficient memory", until a limit closes it: maxmemory-clients evicts
// it, client-output-buffer-limit set while it is stuck closes it (the cron),
// and one set before closes it as its replies pass the limit, unsent. Each
// time the chunks are released and the CF.RESERVE succeeds.
func TestScanDumpNeverRead(t *testing.T) {
	ctx := context.Background()
	var logs logBuffer
	_, addr := start(t, server.Config{Logger: logs.logger()})
	c := client(t, addr)
	// A filter of 555,556 buckets, with 20,000 items in nearly every block
	// of them: its one data chunk is charged about 11 MB (the chunk and its
	// copy in the reply, at their most, for the blocks ever written).
	if err := c.Do(ctx, "CF.RESERVE", "k", 2_000_000, "BUCKETSIZE", 4).Err(); err != nil {
		t.Fatal(err)
	}
	insertBatches(t, c, "k", 20)
	c.Do(ctx, "CLIENT", "NO-EVICT", "on")
	// Four dumps of the chunk and 300 COMMANDs, in one write, so that they
	// are read at once and answered in one flush: some 40 MB charged, and
	// 8 MB of replies, more than the sockets hold.
	dumps := func(st *stuckClient) {
		b := bytes.Repeat(request(0, "CF.SCANDUMP", "k", "1"), 4)
		b = append(b, bytes.Repeat(request(0, "COMMAND"), 300)...)
		if _, err := st.nc.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	var pinned int64
	stuck := func() *stuckClient {
		st := dialStuck(t, addr, "")
		dumps(st)
		waitFor(t, "the replies to be stuck", func() bool {
			pinned = infoField(t, c, "used_memory_dump_chunks")
			return pinned > 0 && infoField(t, c, "mem_clients_normal") > 4<<20
		})
		if pinned < 32<<20 {
			t.Fatalf("used_memory_dump_chunks %d, want the four chunks' 40 MB", pinned)
		}
		return st
	}
	set := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, append([]any{"CONFIG", "SET"}, args...)...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	reserve := func() error { return c.Do(ctx, "CF.RESERVE", "other", 1_000_000, "BUCKETSIZE", 4).Err() }
	// The chunks are released when the connection's goroutine ends, after
	// it closed the connection. (Reading the client's side to its end
	// would wait for megabytes the server's socket still holds.)
	released := func(st *stuckClient) {
		t.Helper()
		waitFor(t, "the chunks to be released", func() bool { return infoField(t, c, "used_memory_dump_chunks") == 0 })
		if _, ok := clientFields(t, c)[st.id]; ok {
			t.Errorf("client %d is still in CLIENT LIST", st.id)
		}
		if err := reserve(); err != nil {
			t.Errorf("CF.RESERVE after the client was closed: %v", err)
		}
		c.Del(ctx, "other")
		set("maxmemory", "0")
	}

	// The problem: the stuck client pins its chunks, and with maxmemory
	// set to what is in use and 2 MB more, a 2.2 MB reservation fails.
	st := stuck()
	set("maxmemory", infoField(t, c, "used_memory_filters")+pinned+2<<20)
	if err := reserve(); err == nil || !strings.HasPrefix(err.Error(), "ERR Insufficient memory") {
		t.Fatalf("CF.RESERVE with the chunks pinned: %v", err)
	}
	// maxmemory-clients: the stuck client holds the most, and is evicted.
	set("maxmemory-clients", "4mb")
	released(st)
	if got := infoField(t, c, "evicted_clients"); got != 1 {
		t.Errorf("evicted_clients %d, want 1", got)
	}
	set("maxmemory-clients", "0")

	// client-output-buffer-limit normal, set while it is stuck: the cron
	// closes it.
	st = stuck()
	set("maxmemory", infoField(t, c, "used_memory_filters")+pinned+2<<20)
	set("client-output-buffer-limit", "normal 4mb 0 0")
	released(st)
	if got := infoField(t, c, "client_output_buffer_limit_disconnections"); got != 1 {
		t.Errorf("client_output_buffer_limit_disconnections %d, want 1", got)
	}

	// Set before: the replies pass 4 MB as they are built and the client
	// is closed there, with nothing sent.
	st = dialStuck(t, addr, "")
	dumps(st)
	if !st.closed() {
		t.Fatal("a client past its hard limit is still connected")
	}
	waitFor(t, "the chunks to be released", func() bool { return infoField(t, c, "used_memory_dump_chunks") == 0 })
	if got := infoField(t, c, "client_output_buffer_limit_disconnections"); got != 2 {
		t.Errorf("client_output_buffer_limit_disconnections %d, want 2", got)
	}
	if got := infoField(t, c, "evicted_clients"); got != 1 {
		t.Errorf("evicted_clients %d, want still 1", got)
	}
	for _, want := range []string{"client closed for overcoming of output buffer limits", "evicting client (maxmemory-clients)"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q", want)
		}
	}
	// A reader of the same replies, within the limit, gets them all.
	p := c.Pipeline()
	for range 100 {
		p.Do(ctx, "COMMAND")
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Errorf("100 COMMANDs, 2.5 MB of replies, under a 4 MB limit: %v", err)
	}
	if d, err := c.CFScanDump(ctx, "k", 1).Result(); err != nil || d.Iter <= 1 {
		t.Errorf("CF.SCANDUMP by a reader: %v, %v", d, err)
	}
}

// TestEvictClients: authenticated clients holding half-sent requests count
// in mem_clients_normal; maxmemory-clients lowered under their total evicts
// the largest until the rest fit, never the one with CLIENT NO-EVICT on
// (the largest of all), and counts them in evicted_clients; with the limit
// in force, a client whose request grows past it is evicted as it grows.
func TestEvictClients(t *testing.T) {
	ctx := context.Background()
	_, addr := start(t, server.Config{RequirePass: "pw"})
	c := client(t, addr, func(o *redis.Options) { o.Password = "pw" })
	if err := c.Do(ctx, "CLIENT", "NO-EVICT", "on").Err(); err != nil {
		t.Fatal(err)
	}
	half := func(st *stuckClient, n int) {
		t.Helper()
		st.send(t, 64<<20, "CF.ADD", "k", strings.Repeat("x", n))
		waitFor(t, fmt.Sprintf("client %d to hold %d bytes", st.id, n), func() bool { return totMem(t, c, st.id) >= int64(n) })
	}
	keep := dialStuck(t, addr, "pw", []string{"CLIENT", "NO-EVICT", "on"})
	small := dialStuck(t, addr, "pw")
	mid := dialStuck(t, addr, "pw")
	big := dialStuck(t, addr, "pw")
	// Buffers grow by doubling: about 16, 2, 4 and 8 MB.
	half(keep, 12<<20)
	half(small, 1<<20)
	half(mid, 3<<20)
	half(big, 6<<20)
	total := infoField(t, c, "mem_clients_normal")
	midMem, bigMem := totMem(t, c, mid.id), totMem(t, c, big.id)
	if sum := totMem(t, c, keep.id) + totMem(t, c, small.id) + midMem + bigMem; total < sum || sum < 22<<20 {
		t.Fatalf("mem_clients_normal %d, the four clients' tot-mem %d", total, sum)
	}
	if err := c.Do(ctx, "CONFIG", "SET", "maxmemory-clients", total-bigMem-midMem/2).Err(); err != nil {
		t.Fatal(err)
	}
	if !big.closed() || !mid.closed() {
		t.Fatal("the two largest evictable clients are still connected")
	}
	waitFor(t, "their memory to be released", func() bool { return infoField(t, c, "mem_clients_normal") <= total-bigMem-midMem })
	clients := clientFields(t, c)
	for _, st := range []*stuckClient{keep, small} {
		if _, ok := clients[st.id]; !ok {
			t.Errorf("client %d was evicted", st.id)
		}
	}
	if got := infoField(t, c, "evicted_clients"); got != 2 {
		t.Errorf("evicted_clients %d, want 2", got)
	}

	// In force: a client whose half-sent request grows past it is evicted.
	room := infoField(t, c, "mem_clients_normal") + 8<<20
	if err := c.Do(ctx, "CONFIG", "SET", "maxmemory-clients", room).Err(); err != nil {
		t.Fatal(err)
	}
	grower := dialStuck(t, addr, "pw")
	// The write may fail: the server closes the connection part way.
	grower.nc.Write(request(64<<20, "CF.ADD", "k", strings.Repeat("x", 16<<20)))
	if !grower.closed() {
		t.Fatal("a client past maxmemory-clients is still connected")
	}
	if _, ok := clientFields(t, c)[keep.id]; !ok {
		t.Error("the no-evict client was evicted")
	}
	if got := infoField(t, c, "evicted_clients"); got != 3 {
		t.Errorf("evicted_clients %d, want 3", got)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("the server after evictions: %v", err)
	}
}

// TestMaxMemoryCountsClients: what clients hold counts against --maxmemory,
// as Redis's used_memory counts it: a half-sent request of 8 MB leaves no
// room under 10 MB for a reservation of 2.6 MB that fits without it, and its
// end gives the room back.
func TestMaxMemoryCountsClients(t *testing.T) {
	ctx := context.Background()
	_, addr := start(t, server.Config{MaxMemory: 10 << 20})
	c := client(t, addr)
	if err := c.Do(ctx, "CF.RESERVE", "a", 1_500_000).Err(); err != nil {
		t.Fatal(err)
	}
	c.Del(ctx, "a")
	st := dialStuck(t, addr, "")
	st.send(t, 64<<20, "CF.ADD", "k", strings.Repeat("x", 8<<20))
	waitFor(t, "the half-sent request to arrive", func() bool { return totMem(t, c, st.id) >= 8<<20 })
	if err := c.Do(ctx, "CF.RESERVE", "a", 1_500_000).Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR Insufficient memory") {
		t.Errorf("CF.RESERVE of 2.6 MB with 8 MB held by a client under maxmemory 10mb: %v", err)
	}
	st.nc.Close()
	waitFor(t, "the client's memory to be released", func() bool { return infoField(t, c, "mem_clients_normal") < 1<<20 })
	if err := c.Do(ctx, "CF.RESERVE", "a", 1_500_000).Err(); err != nil {
		t.Errorf("CF.RESERVE once the client left: %v", err)
	}
}

// TestOutputBufferLimits: the hard limit closes a client as its replies
// reach it, pipelined or in one reply, before anything is sent; replies
// under the limits are sent; a client that does not read replies past the
// soft limit is closed once it has stayed past it for soft-seconds.
func TestOutputBufferLimits(t *testing.T) {
	ctx := context.Background()
	// Items and keys of up to 64 MB: ECHO's argument is its reply.
	_, addr := start(t, server.Config{Limits: server.Limits{MaxItem: 64 << 20}})
	c := client(t, addr)
	set := func(v string) {
		t.Helper()
		if err := c.ConfigSet(ctx, "client-output-buffer-limit", v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	disconnections := func() int64 { return infoField(t, c, "client_output_buffer_limit_disconnections") }
	set("normal 1mb 0 0")
	// One reply of 2 MB.
	st := dialStuck(t, addr, "")
	st.send(t, 0, "ECHO", strings.Repeat("e", 2<<20))
	if !st.closed() {
		t.Error("a client whose reply passed the hard limit is still connected")
	}
	// Smaller ones in one pipeline: 60 COMMANDs, of 25 KB each, sent in
	// one write of 1 KB, so that they are read at once.
	st = dialStuck(t, addr, "")
	st.nc.Write([]byte(strings.Repeat("*1\r\n$7\r\nCOMMAND\r\n", 60)))
	if !st.closed() {
		t.Error("a client whose pipelined replies passed the hard limit is still connected")
	}
	if got := disconnections(); got != 2 {
		t.Errorf("client_output_buffer_limit_disconnections %d, want 2", got)
	}
	// Under the limit: answered.
	if got, err := c.Echo(ctx, strings.Repeat("u", 512<<10)).Result(); err != nil || len(got) != 512<<10 {
		t.Errorf("ECHO of 512 KiB under a 1 MB limit: %d bytes, %v", len(got), err)
	}
	if got := disconnections(); got != 2 {
		t.Errorf("client_output_buffer_limit_disconnections %d after a reply under the limit", got)
	}

	// Soft: 8 MB for 1 s, no hard limit. Replies of 4 MB are read in
	// full; 12 MB that nobody reads stay past the soft limit, and the
	// client is closed.
	set("normal 0 8mb 1")
	for range 3 {
		if got, err := c.Echo(ctx, strings.Repeat("s", 4<<20)).Result(); err != nil || len(got) != 4<<20 {
			t.Fatalf("ECHO of 4 MiB under the soft limit: %d bytes, %v", len(got), err)
		}
	}
	st = dialStuck(t, addr, "")
	st.send(t, 0, "ECHO", strings.Repeat("s", 12<<20))
	waitFor(t, "the client past the soft limit to be closed", func() bool { return disconnections() == 3 })
	if !st.closed() {
		t.Error("the client past the soft limit is still connected")
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("the server after: %v", err)
	}
}
