// Command soak runs `cuckoo serve` under a steady load of pipelined CF.ADD
// and CF.EXISTS for a while, with snapshots taken as the log grows, and
// reports the server's peak resident memory against the bytes of its
// filters (issue 12: 5.4x, driven by snapshots that copied every filter),
// the rates, and how long each snapshot took.
//
//	go build -o /tmp/cuckoo ./cmd/cuckoo
//	cd bench && go run ./cmd/soak --cuckoo /tmp/cuckoo --duration 120s
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	bin := flag.String("cuckoo", "", "the cuckoo binary (go build -o /tmp/cuckoo ./cmd/cuckoo)")
	duration := flag.Duration("duration", 60*time.Second, "how long the load runs")
	keys := flag.Int("keys", 16, "filters, each reserved with --capacity")
	capacity := flag.Int("capacity", 8_000_000, "capacity of each filter")
	writers := flag.Int("writers", 2, "connections sending CF.ADD")
	readers := flag.Int("readers", 2, "connections sending CF.EXISTS")
	pipeline := flag.Int("pipeline", 64, "commands per round trip")
	snapSize := flag.Int("snapshot-log-size", 64<<20, "the server's --snapshot-log-size")
	flag.Parse()
	if *bin == "" {
		log.Fatal("soak: --cuckoo is required")
	}
	dir, err := os.MkdirTemp("", "soak")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cmd := exec.Command(*bin, "serve", "--addr", "127.0.0.1:0", "--dir", dir,
		"--snapshot-log-size", strconv.Itoa(*snapSize))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer cmd.Process.Kill()
	addrCh := make(chan string, 1)
	var snaps []time.Duration
	var snapMu sync.Mutex
	ready := regexp.MustCompile(`ready to accept connections" addr=(\S+)`)
	took := regexp.MustCompile(`msg="snapshot written".* took=(\S+)`)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := ready.FindStringSubmatch(sc.Text()); m != nil {
				addrCh <- m[1]
			}
			if m := took.FindStringSubmatch(sc.Text()); m != nil {
				if d, err := time.ParseDuration(m[1]); err == nil {
					snapMu.Lock()
					snaps = append(snaps, d)
					snapMu.Unlock()
				}
			}
		}
	}()
	addr := <-addrCh
	admin := dial(addr)
	for k := range *keys {
		admin.do(fmt.Sprintf("CF.RESERVE soak%d %d", k, *capacity))
	}

	var stop atomic.Bool
	var adds, exists atomic.Int64
	var wg sync.WaitGroup
	run := func(cmdName string, counter *atomic.Int64, seed uint64) {
		defer wg.Done()
		c := dial(addr)
		rng := rand.New(rand.NewPCG(seed, 9))
		for !stop.Load() {
			for range *pipeline {
				fmt.Fprintf(c.w, "*3\r\n$%d\r\n%s\r\n", len(cmdName), cmdName)
				key := fmt.Sprint("soak", rng.IntN(*keys))
				item := strconv.FormatUint(rng.Uint64(), 36)
				fmt.Fprintf(c.w, "$%d\r\n%s\r\n$%d\r\n%s\r\n", len(key), key, len(item), item)
			}
			c.w.Flush()
			for range *pipeline {
				if line := c.line(); line[0] == '-' && !strings.Contains(line, "full") {
					log.Fatalf("soak: %s: %s", cmdName, line)
				}
			}
			counter.Add(int64(*pipeline))
		}
	}
	for i := range *writers {
		wg.Add(1)
		go run("CF.ADD", &adds, uint64(i))
	}
	for i := range *readers {
		wg.Add(1)
		go run("CF.EXISTS", &exists, uint64(100+i))
	}
	start := time.Now()
	var peakRatio float64
	var filters int64
	for time.Since(start) < *duration {
		time.Sleep(time.Second)
		rss := procKB(cmd.Process.Pid, "VmRSS") << 10
		filters = infoInt(admin, "used_memory_filters")
		if filters > 0 {
			peakRatio = max(peakRatio, float64(rss)/float64(filters))
		}
	}
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	hwm := procKB(cmd.Process.Pid, "VmHWM") << 10
	filters = infoInt(admin, "used_memory_filters")
	snapMu.Lock()
	defer snapMu.Unlock()
	fmt.Printf("duration %.0f s: CF.ADD %.0f/s, CF.EXISTS %.0f/s, %d items added\n",
		elapsed, float64(adds.Load())/elapsed, float64(exists.Load())/elapsed, adds.Load())
	fmt.Printf("filters %.1f MiB; peak RSS (VmHWM) %.1f MiB = %.2fx the filters; highest sampled RSS/filters %.2fx\n",
		float64(filters)/(1<<20), float64(hwm)/(1<<20), float64(hwm)/float64(filters), peakRatio)
	fmt.Printf("snapshots: %d, took %v\n", len(snaps), snaps)
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

func (c *conn) line() string {
	s, err := c.r.ReadString('\n')
	if err != nil {
		log.Fatal(err)
	}
	return strings.TrimRight(s, "\r\n")
}

// do sends an inline command and returns its reply's first line, or the
// whole of a bulk reply.
func (c *conn) do(cmd string) string {
	fmt.Fprintf(c.w, "%s\r\n", cmd)
	c.w.Flush()
	l := c.line()
	if l[0] == '-' {
		log.Fatalf("soak: %s: %s", cmd, l)
	}
	if l[0] != '$' {
		return l
	}
	n, _ := strconv.Atoi(l[1:])
	b := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, b); err != nil {
		log.Fatal(err)
	}
	return string(b[:n])
}

func infoInt(c *conn, field string) int64 {
	for _, l := range strings.Split(c.do("INFO memory"), "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// procKB returns a "kB" field of /proc/pid/status.
func procKB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
