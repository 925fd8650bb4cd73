// Command replsoak runs a primary and a replica of `cuckoo serve` under a
// burst of writes and reads the replica throughout, as an operator would
// (issue 39): writers send CF.INSERT of new items into keys that grow, with
// several commands in flight a connection, and one more creates keys with
// CF.RESERVE; readers ask the replica, with CF.EXISTS, for items added
// before the burst, which it must never answer 0 for. Each second it
// samples INFO replication on both sides. At the end it waits for the
// replica to reach the primary's offset and compares every key's DUMP.
//
// It reports the items acknowledged, the replica's full copies after the
// first (fall-offs), its positions refused, the most bytes it lagged while
// the link was up, the wrong reads, and whether the DUMPs are identical;
// it exits 1 if the replica fell off, answered wrongly or differs.
//
//	go build -o /tmp/cuckoo ./cmd/cuckoo
//	cd bench && go run ./cmd/replsoak --cuckoo /tmp/cuckoo --duration 300s --writers 4
//	cd bench && go run ./cmd/replsoak --cuckoo /tmp/cuckoo --duration 300s --writers 8
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type options struct {
	bin                   string
	duration              time.Duration
	writers, inflight     int
	items, keysPerWriter  int
	readers, readRate     int
	preItems              int
	reserveRate           int
	serverArgs            string
	replicaArgs, keepDirs string
}

func main() {
	var o options
	flag.StringVar(&o.bin, "cuckoo", "", "the cuckoo binary (go build -o /tmp/cuckoo ./cmd/cuckoo)")
	flag.DurationVar(&o.duration, "duration", 60*time.Second, "how long the burst runs")
	flag.IntVar(&o.writers, "writers", 4, "connections sending CF.INSERT")
	flag.IntVar(&o.inflight, "inflight", 16, "commands in flight on each writer's connection")
	flag.IntVar(&o.items, "items", 100, "new items in each CF.INSERT")
	flag.IntVar(&o.keysPerWriter, "keys", 8, "keys each writer inserts into, created with CF.INSERT's defaults so that they grow")
	flag.IntVar(&o.readers, "readers", 2, "connections asking the replica for items added before the burst")
	flag.IntVar(&o.readRate, "read-rate", 100, "batches of 16 CF.EXISTS a second each reader sends")
	flag.IntVar(&o.preItems, "pre-items", 2000, "items added to each key before the burst")
	flag.IntVar(&o.reserveRate, "reserve-rate", 200, "CF.RESERVE of new keys a second, on one more connection (0: none)")
	flag.StringVar(&o.serverArgs, "args", "", "more arguments for both servers, space separated")
	flag.StringVar(&o.replicaArgs, "replica-args", "", "more arguments for the replica only")
	flag.StringVar(&o.keepDirs, "keep", "", "keep the data directories under this folder instead of removing them")
	flag.Parse()
	if o.bin == "" {
		log.Fatal("replsoak: --cuckoo is required")
	}
	if !run(o) {
		os.Exit(1)
	}
}

func run(o options) (ok bool) {
	base := o.keepDirs
	if base == "" {
		d, err := os.MkdirTemp("", "replsoak")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		base = d
	}
	primary := start(o.bin, base+"/primary", strings.Fields(o.serverArgs)...)
	defer primary.stop()
	admin := dial(primary.addr)

	// Before the burst: every key the writers will grow holds preItems
	// items the readers look for.
	keys := make([][]string, o.writers)
	var pre []([2]string)
	for w := range o.writers {
		for k := range o.keysPerWriter {
			key := fmt.Sprintf("w%d:k%d", w, k)
			keys[w] = append(keys[w], key)
			args := []string{"CF.INSERT", key, "ITEMS"}
			for i := range o.preItems {
				it := fmt.Sprintf("pre:%s:%d", key, i)
				args = append(args, it)
				pre = append(pre, [2]string{key, it})
			}
			admin.must(args...)
		}
	}
	replicaArgs := append(strings.Fields(o.serverArgs), strings.Fields(o.replicaArgs)...)
	host, port, _ := net.SplitHostPort(primary.addr)
	replica := start(o.bin, base+"/replica", append(replicaArgs, "--replicaof", host+" "+port)...)
	defer replica.stop()
	radmin := dial(replica.addr)
	waitCaughtUp(admin, radmin, 60*time.Second)
	fmt.Printf("before the burst: %d keys, %d items, replica caught up\n", o.writers*o.keysPerWriter, len(pre))

	var stop, stopReads atomic.Bool
	var acked, reads, wrong, reserved atomic.Int64
	var wg, rg sync.WaitGroup
	for w := range o.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(primary.addr)
			rng := rand.New(rand.NewPCG(uint64(w), 39))
			for n := 0; !stop.Load(); n++ {
				for range o.inflight {
					key := keys[w][rng.IntN(len(keys[w]))]
					args := []string{"CF.INSERT", key, "ITEMS"}
					for range o.items {
						args = append(args, strconv.FormatUint(rng.Uint64(), 36))
					}
					c.send(args...)
				}
				c.flush()
				for range o.inflight {
					if r := c.reply(); strings.HasPrefix(r, "-") {
						log.Fatalf("replsoak: CF.INSERT: %s", r)
					}
				}
				acked.Add(int64(o.inflight * o.items))
			}
		}()
	}
	if o.reserveRate > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(primary.addr)
			t := time.NewTicker(time.Second / time.Duration(o.reserveRate))
			defer t.Stop()
			for n := 0; !stop.Load(); n++ {
				<-t.C
				c.must("CF.RESERVE", fmt.Sprintf("r:%d", n), "100")
				reserved.Add(1)
			}
		}()
	}
	for r := range o.readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			c := dial(replica.addr)
			rng := rand.New(rand.NewPCG(uint64(r), 1039))
			batch := make([][2]string, 16)
			t := time.NewTicker(time.Second / time.Duration(max(o.readRate, 1)))
			defer t.Stop()
			for !stopReads.Load() {
				<-t.C
				for i := range batch {
					batch[i] = pre[rng.IntN(len(pre))]
					c.send("CF.EXISTS", batch[i][0], batch[i][1])
				}
				c.flush()
				for i := range batch {
					r := c.reply()
					reads.Add(1)
					if r != ":1" {
						if wrong.Add(1) <= 5 {
							log.Printf("replica answered %q to CF.EXISTS %s %s", r, batch[i][0], batch[i][1])
						}
					}
				}
			}
		}()
	}

	start := time.Now()
	var maxLag int64
	var samples []string
	for time.Since(start) < o.duration {
		time.Sleep(time.Second)
		p, r := info(admin, "replication"), info(radmin, "replication")
		lag := num(p, "master_repl_offset") - num(r, "slave_repl_offset")
		if r["master_link_status"] == "up" && r["master_sync_in_progress"] == "0" {
			maxLag = max(maxLag, lag)
		}
		s := fmt.Sprintf("%4.0fs acked %d lag %d B link %s syncing %s full_syncs %s refused %s",
			time.Since(start).Seconds(), acked.Load(), lag, r["master_link_status"],
			r["master_sync_in_progress"], r["master_full_syncs"], r["master_position_refused"])
		samples = append(samples, s)
		if len(samples)%5 == 0 {
			fmt.Println(s)
		}
	}
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	catchStart := time.Now()
	caught := waitCaughtUp(admin, radmin, 5*time.Minute)
	catchUp := time.Since(catchStart)
	stopReads.Store(true)
	rg.Wait()

	r := info(radmin, "replication")
	p := info(admin, "stats")
	fullSyncs := num(r, "master_full_syncs")
	same, differ := compareDumps(admin, radmin)
	fmt.Printf("burst %.0f s, %d writers x %d in flight x %d items: %d items acknowledged (%.0f/s), %d keys reserved\n",
		elapsed.Seconds(), o.writers, o.inflight, o.items, acked.Load(), float64(acked.Load())/elapsed.Seconds(), reserved.Load())
	fmt.Printf("replica: full copies %d (fall-offs %d), positions refused %s, stream errors %s, primary's sync_full %s; most lag with the link up %d B; caught up %v after the burst (%v)\n",
		fullSyncs, max(fullSyncs-1, 0), r["master_position_refused"], r["master_stream_errors"], p["sync_full"], maxLag, caught, catchUp.Round(time.Millisecond))
	fmt.Printf("reads on the replica of items added before the burst: %d, answered 0: %d\n", reads.Load(), wrong.Load())
	fmt.Printf("DUMPs: %d keys identical, %d differ or are missing\n", same, differ)
	return fullSyncs == 1 && wrong.Load() == 0 && caught && differ == 0
}

// compareDumps compares every key's DUMP on both servers.
func compareDumps(a, b *conn) (same, differ int) {
	ka, kb := a.strings("KEYS", "*"), b.strings("KEYS", "*")
	slices.Sort(ka)
	slices.Sort(kb)
	if !slices.Equal(ka, kb) {
		log.Printf("the key sets differ: %d keys on the primary, %d on the replica", len(ka), len(kb))
	}
	in := map[string]bool{}
	for _, k := range kb {
		in[k] = true
	}
	for _, k := range ka {
		if !in[k] {
			differ++
			continue
		}
		da, db := a.bulk("DUMP", k), b.bulk("DUMP", k)
		if bytes.Equal(da, db) {
			same++
		} else {
			differ++
			if differ <= 5 {
				log.Printf("DUMP %s differs: %d bytes on the primary, %d on the replica", k, len(da), len(db))
			}
		}
	}
	return same, differ + max(len(kb)-len(ka), 0)
}

// waitCaughtUp waits until the replica's link is up, no copy runs and its
// offset is the primary's.
func waitCaughtUp(p, r *conn, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		pi, ri := info(p, "replication"), info(r, "replication")
		if ri["master_link_status"] == "up" && ri["master_sync_in_progress"] == "0" &&
			num(ri, "slave_repl_offset") == num(pi, "master_repl_offset") {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

type server struct {
	cmd  *exec.Cmd
	addr string
}

func start(bin, dir string, args ...string) *server {
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--dir", dir}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		log.Fatal(err)
	}
	logf, err := os.Create(dir + ".log")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	ready := regexp.MustCompile(`ready to accept connections" addr=(\S+)`)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if logf != nil {
				fmt.Fprintln(logf, sc.Text())
			}
			if m := ready.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return &server{cmd, a}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		log.Fatalf("replsoak: %s did not start", dir)
	}
	return nil
}

func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
	}
}

type conn struct {
	r *bufio.Reader
	w *bufio.Writer
}

func dial(addr string) *conn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	return &conn{bufio.NewReaderSize(nc, 1<<16), bufio.NewWriterSize(nc, 1<<16)}
}

func (c *conn) send(args ...string) {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

func (c *conn) flush() {
	if err := c.w.Flush(); err != nil {
		log.Fatal(err)
	}
}

func (c *conn) line() string {
	s, err := c.r.ReadString('\n')
	if err != nil {
		log.Fatal(err)
	}
	return strings.TrimRight(s, "\r\n")
}

// reply reads one reply and returns its first line, skipping the rest of
// an array or bulk string.
func (c *conn) reply() string {
	l := c.line()
	switch l[0] {
	case '$':
		n, _ := strconv.Atoi(l[1:])
		if n >= 0 {
			if _, err := io.CopyN(io.Discard, c.r, int64(n+2)); err != nil {
				log.Fatal(err)
			}
		}
	case '*':
		n, _ := strconv.Atoi(l[1:])
		for range n {
			c.reply()
		}
	}
	return l
}

func (c *conn) must(args ...string) string {
	c.send(args...)
	c.flush()
	r := c.reply()
	if strings.HasPrefix(r, "-") {
		log.Fatalf("replsoak: %s: %s", args[0], r)
	}
	return r
}

func (c *conn) bulk(args ...string) []byte {
	c.send(args...)
	c.flush()
	l := c.line()
	if l[0] != '$' {
		log.Fatalf("replsoak: %s: %s", args[0], l)
	}
	n, _ := strconv.Atoi(l[1:])
	if n < 0 {
		return nil
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, b); err != nil {
		log.Fatal(err)
	}
	return b[:n]
}

func (c *conn) strings(args ...string) []string {
	c.send(args...)
	c.flush()
	l := c.line()
	if l[0] != '*' {
		log.Fatalf("replsoak: %s: %s", args[0], l)
	}
	n, _ := strconv.Atoi(l[1:])
	out := make([]string, 0, n)
	for range n {
		out = append(out, string(c.bulkBody()))
	}
	return out
}

func (c *conn) bulkBody() []byte {
	l := c.line()
	n, _ := strconv.Atoi(l[1:])
	b := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, b); err != nil {
		log.Fatal(err)
	}
	return b[:n]
}

// info returns an INFO section's fields.
func info(c *conn, section string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(string(c.bulk("INFO", section)), "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

func num(m map[string]string, k string) int64 {
	n, _ := strconv.ParseInt(m[k], 10, 64)
	return n
}
