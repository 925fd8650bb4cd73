// Command clusterbench measures `cuckoo serve` as a Redis Cluster (issue
// 18): the throughput of one node against three, where the CPU goes, and
// what a redirect costs a client.
//
// Throughput. Layout A is one `serve --cluster-emulated` process, which owns
// all 16384 slots; layout B is three `serve --cluster-enabled` processes
// joined by `cuckoo cluster create`. Every node is started afresh for each
// round, with its own --dir and --appendfsync everysec (the default), and
// --keys filters are reserved with --capacity each. Then --goroutines
// goroutines send pipelines of --pipeline commands through one go-redis
// ClusterClient (the same client, and so the same client-side hashing, in
// both layouts; in B it splits each pipeline by node and sends the parts
// concurrently): CF.ADD of random items to random keys for --duration, and
// then CF.EXISTS of random items (nearly all absent) for --duration, each
// after --warmup of the same load that is not counted. The layouts take
// turns (A, B, A, B, ...) for --rounds rounds, so that load from other
// processes on this shared machine falls on both; the ratio B÷A is printed
// for each round, with its median.
//
// Where the CPU goes. Around each measured phase the program reads every
// server's CPU time (utime+stime and minor page faults of /proc/PID/stat,
// in clock ticks of `getconf CLK_TCK`, 100 if that fails), its own
// (getrusage), the whole machine's busy time (/proc/stat) and each node's
// total_commands_processed (INFO stats). It prints CPU-seconds per 10^6 ops
// (which is CPU-µs per op) of the servers, summed, and of the client; the
// cores busy on the machine, of which the servers', the client's and the
// rest (other processes: this machine is shared); each node's share of the
// commands; the servers' page faults per op; and the snapshots they wrote.
//
// Two things drive the per-op cost. In B every node receives only its part
// of each pipeline, about a third of --pipeline commands, so the costs of
// a round trip (a read and a write system call, waking a goroutine) are
// spread over a third as many commands, and the client sends three
// requests where A's sent one; that holds on separate machines too. And a
// filter reserved at 10^6 is 2.2 MB that the kernel maps only when it is
// first written: CF.ADD into freshly reserved filters mostly pays for page
// faults (zeroing the page and, in a process running on both cores,
// flushing the other core's TLB), shown as faults/op. --capacity 0 lets
// CF.ADD create small filters that grow as items come, which leaves the
// server's own work.
//
// The model for "one machine per node". Here all the servers and the client
// share the machine's cores, so three nodes can use no more CPU than one. To
// estimate a cluster whose nodes each have a machine of --cores cores, take
// each node's CPU-seconds for its part of a phase's ops and assume that
// with C cores of its own it would run them C times as fast: the cluster is
// bounded by its busiest node,
//
//	estimate = ops × C ÷ max over nodes of (node CPU-seconds)
//
// and the single node's bound is the same formula with its one node. Only
// the servers' CPU counts: the client and the network are assumed never to
// be the bottleneck (in a real deployment they are other machines), a
// node's CPU per op is assumed to stay what it was here and to scale with
// cores, and loopback round trips are much cheaper than a real network's,
// so real clients would need more pipelines in flight to reach the
// estimate. The per-op costs are measured while four processes compete for
// two cores, and some of them (the TLB flushes above) depend on how the
// scheduler placed the threads: an estimated B÷A above 3 says that the
// per-op costs differed between the layouts, not that a cluster scales
// better than linearly.
//
// The cost of a redirect, on a fresh layout B, in --redirect-rounds rounds
// so that load from other processes falls on every kind alike: 50
// sequential CF.EXISTS through a plain redis.Client on the node that owns
// the key, and 50 on a node that does not (each answered -MOVED), the
// nodes taking both parts in turn; a fresh ClusterClient seeded with that
// other node, timed on its first command and on its 51st to 100th (its
// steady state: the few after the first are slower still, while it warms
// up); and a fresh plain client's first command. Each command is timed
// alone and the medians are printed. The first command of the
// ClusterClient dials its seed (HELLO, CLIENT SETINFO), loads CLUSTER
// SLOTS, dials the owner, asks it for COMMAND (go-redis's table of where
// each command's keys are) and then sends the command; the fresh plain
// client's (one dial and the handshake) shows how much of that is
// connecting.
//
// It builds the cuckoo binary from this repository (or takes --cuckoo),
// kills every server it started on exit, an error or Ctrl-C, and removes
// its temporary directories. With the defaults it takes about 90 s:
//
//	cd bench && go run ./cmd/clusterbench --rounds 3
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
)

// config is the command line.
type config struct {
	bin            string
	duration       time.Duration
	warmup         time.Duration
	goroutines     int
	pipeline       int
	rounds         int
	keys           int
	capacity       int64
	cores          int
	redirectRounds int
}

func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "cuckoo", "", "the cuckoo binary (default: build ./cmd/cuckoo of this repository into the temporary directory)")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "how long each measured phase (CF.ADD, CF.EXISTS) runs")
	flag.DurationVar(&cfg.warmup, "warmup", time.Second, "load before each phase that is not counted")
	flag.IntVar(&cfg.goroutines, "goroutines", 8, "goroutines sending pipelines through the one ClusterClient")
	flag.IntVar(&cfg.pipeline, "pipeline", 16, "commands per pipeline")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds, each measuring layout A and then layout B")
	flag.IntVar(&cfg.keys, "keys", 1000, "filters the load spreads over")
	flag.Int64Var(&cfg.capacity, "capacity", 1_000_000, "CF.RESERVE capacity of each filter (0: let CF.ADD create them)")
	flag.IntVar(&cfg.cores, "cores", 2, "cores per machine in the one-machine-per-node estimate")
	flag.IntVar(&cfg.redirectRounds, "redirect-rounds", 100, "rounds of the redirect measurement, each with 50 commands on the owner, 50 answered -MOVED, a fresh ClusterClient and a fresh plain client")
	flag.Parse()
	if cfg.duration <= 0 || cfg.goroutines < 1 || cfg.pipeline < 1 || cfg.rounds < 1 ||
		cfg.keys < 1 || cfg.cores < 1 || cfg.redirectRounds < 1 {
		fmt.Fprintln(os.Stderr, "clusterbench: --duration, --goroutines, --pipeline, --rounds, --keys, --cores and --redirect-rounds must be positive")
		os.Exit(2)
	}
	if cfg.warmup < 0 || cfg.capacity < 0 {
		fmt.Fprintln(os.Stderr, "clusterbench: --warmup and --capacity must not be negative")
		os.Exit(2)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "clusterbench: %v: stopping the servers\n", s)
		cleanup()
		os.Exit(1)
	}()
	err := run(cfg)
	cleanup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "clusterbench:", err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	root, err := os.MkdirTemp("", "clusterbench")
	if err != nil {
		return err
	}
	if err := track(root); err != nil {
		os.RemoveAll(root)
		return err
	}
	if cfg.bin == "" {
		if cfg.bin, err = build(root); err != nil {
			return err
		}
	}
	tick := clockTicks()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	filters := fmt.Sprintf("%d keys reserved at %d", cfg.keys, cfg.capacity)
	if cfg.capacity == 0 {
		filters = fmt.Sprintf("%d keys created by CF.ADD", cfg.keys)
	}
	fmt.Fprintf(out, "clusterbench: %d CPUs (GOMAXPROCS %d); %d goroutines × pipelines of %d through one go-redis ClusterClient; "+
		"%s; %v per phase after %v of warm-up; --appendfsync everysec; CPU time in ticks of 1/%d s\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cfg.goroutines, cfg.pipeline, filters,
		cfg.duration, cfg.warmup, tick.perSecond)
	if tick.assumed {
		fmt.Fprintln(out, "(getconf CLK_TCK failed: 100 ticks a second assumed)")
	}
	out.Flush()

	keys := make([]string, cfg.keys)
	for i := range keys {
		keys[i] = "cb:" + strconv.Itoa(i)
	}
	kinds := []layoutKind{single, three}
	// results[kind][round][command]
	results := make([][][]phase, len(kinds))
	for r := range cfg.rounds {
		for k, kind := range kinds {
			l, err := startLayout(cfg.bin, root, kind)
			if err != nil {
				return err
			}
			var ps []phase
			err = l.reserve(keys, cfg.capacity)
			for c, command := range commands {
				if err != nil {
					break
				}
				seed := uint64(r)<<8 | uint64(k)<<4 | uint64(c)
				if _, _, err = l.load(command, keys, cfg, cfg.warmup, seed|1<<32); err != nil {
					break
				}
				var p phase
				if p, err = l.measure(command, keys, cfg, tick, seed); err == nil {
					ps = append(ps, p)
					fmt.Fprintf(os.Stderr, "round %d, %s, %s: %.0f ops/s\n", r+1, kind, command, p.rate())
				}
			}
			l.stop()
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, kind, err)
			}
			results[k] = append(results[k], ps)
		}
	}
	report(out, cfg, kinds, results)
	out.Flush()

	l, err := startLayout(cfg.bin, root, three)
	if err != nil {
		return err
	}
	defer l.stop()
	rd, err := l.redirects(cfg)
	if err != nil {
		return fmt.Errorf("redirects: %w", err)
	}
	rd.report(out)
	return nil
}

// commands are the measured phases, in order.
var commands = []string{"CF.ADD", "CF.EXISTS"}

// build compiles ./cmd/cuckoo of the repository this module replaces
// github.com/cuckoohash/cuckoo with into dir.
func build(dir string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cuckoohash/cuckoo").Output()
	if err != nil {
		return "", fmt.Errorf("finding the repository with go list -m (run this in bench/, or give --cuckoo): %w", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "cmd", "cuckoo")
	bin := filepath.Join(dir, "cuckoo")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build in %s: %w\n%s", src, err, out)
	}
	return bin, nil
}

// The processes and the directory this program started and made, so that
// every exit (an error, a signal) can kill and remove them.
var started struct {
	sync.Mutex
	closed bool
	nodes  []*node
	root   string
}

// track registers the temporary root to remove at exit.
func track(root string) error {
	started.Lock()
	defer started.Unlock()
	if started.closed {
		return errors.New("stopping")
	}
	started.root = root
	return nil
}

// cleanup kills every server still running and removes the temporary
// directory. It may be called more than once.
func cleanup() {
	started.Lock()
	nodes := started.nodes
	started.nodes = nil
	started.closed = true
	root := started.root
	started.root = ""
	started.Unlock()
	for _, n := range nodes {
		n.kill()
	}
	if root != "" {
		os.RemoveAll(root)
	}
}

// node is one `cuckoo serve` process.
type node struct {
	cmd     *exec.Cmd
	addr    string
	dir     string
	logDone chan struct{} // closed when its stderr ends

	mu        sync.Mutex
	tail      []string // its last log lines, for errors
	snapshots int      // "snapshot written" lines so far
}

var (
	readyLine    = regexp.MustCompile(`msg="ready to accept connections" addr=(\S+)`)
	snapshotLine = regexp.MustCompile(`msg="snapshot written"`)
)

// startNode starts `bin serve` on a free port of 127.0.0.1 with its data in
// dir, and returns once it logs that it is ready.
func startNode(bin, dir, mode string) (*node, error) {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--dir", dir, "--appendfsync", "everysec", mode)
	// If this program is killed outright (kill -9), the kernel kills the
	// servers: Pdeathsig fires when the thread that started them exits,
	// which a Go program's threads do only when the program does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	n := &node{cmd: cmd, dir: dir, logDone: make(chan struct{})}
	started.Lock()
	if started.closed {
		started.Unlock()
		return nil, errors.New("stopping")
	}
	if err := cmd.Start(); err != nil {
		started.Unlock()
		return nil, err
	}
	started.nodes = append(started.nodes, n)
	started.Unlock()

	addr := make(chan string, 1)
	go func() {
		defer close(n.logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if m := readyLine.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
			n.mu.Lock()
			if snapshotLine.MatchString(line) {
				n.snapshots++
			}
			if len(n.tail) == 20 {
				n.tail = n.tail[1:]
			}
			n.tail = append(n.tail, line)
			n.mu.Unlock()
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case n.addr = <-addr:
		return n, nil
	case <-n.logDone:
		return nil, fmt.Errorf("%s serve exited before it was ready:\n%s", bin, n.log())
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("%s serve not ready after 30 s:\n%s", bin, n.log())
	}
}

// log returns the node's last log lines.
func (n *node) log() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.tail, "\n")
}

// stop kills the node (by its pid) if cleanup has not, and removes its
// directory.
func (n *node) stop() {
	started.Lock()
	i := slices.Index(started.nodes, n)
	if i >= 0 {
		started.nodes = slices.Delete(started.nodes, i, i+1)
	}
	started.Unlock()
	if i >= 0 {
		n.kill()
	}
	os.RemoveAll(n.dir)
}

// kill sends SIGKILL to the process and reaps it. Only one of stop and
// cleanup calls it for a node.
func (n *node) kill() {
	n.cmd.Process.Kill()
	select {
	case <-n.logDone:
	case <-time.After(5 * time.Second):
	}
	n.cmd.Wait()
}

// cpuTicks returns the node's utime+stime and its minor page faults from
// /proc/PID/stat.
func (n *node) cpuTicks() (cpu, faults int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, minflt 10, utime 14, stime 15.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", n.cmd.Process.Pid, len(f))
	}
	minflt, err1 := strconv.ParseInt(f[7], 10, 64)
	utime, err2 := strconv.ParseInt(f[11], 10, 64)
	stime, err3 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return 0, 0, err
	}
	return utime + stime, minflt, nil
}

// ticks is the unit of /proc/PID/stat's CPU times.
type ticks struct {
	perSecond int64
	assumed   bool // getconf failed; 100 is assumed
}

func clockTicks() ticks {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return ticks{perSecond: n}
		}
	}
	return ticks{perSecond: 100, assumed: true}
}

// layoutKind is A or B.
type layoutKind int

const (
	single layoutKind = iota // A: one --cluster-emulated node
	three                    // B: three --cluster-enabled nodes
)

func (k layoutKind) String() string {
	if k == single {
		return "A 1 node"
	}
	return "B 3 nodes"
}

// layout is a running A or B with its clients.
type layout struct {
	nodes []*node
	cc    *redis.ClusterClient
	admin []*redis.Client // one per node, for INFO
}

// startLayout starts the nodes of kind, each in a new directory under
// root, and for B joins them with `bin cluster create`.
func startLayout(bin, root string, kind layoutKind) (_ *layout, err error) {
	l := &layout{}
	defer func() {
		if err != nil {
			l.stop()
		}
	}()
	mode, count := "--cluster-emulated", 1
	if kind == three {
		mode, count = "--cluster-enabled", 3
	}
	var addrs []string
	for range count {
		dir, err := os.MkdirTemp(root, "node")
		if err != nil {
			return nil, err
		}
		n, err := startNode(bin, dir, mode)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		l.nodes = append(l.nodes, n)
		addrs = append(addrs, n.addr)
		l.admin = append(l.admin, redis.NewClient(&redis.Options{Addr: n.addr}))
	}
	if kind == three {
		out, err := exec.Command(bin, append([]string{"cluster", "create"}, addrs...)...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("%s cluster create: %w\n%s", bin, err, out)
		}
	}
	ctx := context.Background()
	for i, a := range l.admin {
		deadline := time.Now().Add(10 * time.Second)
		for {
			info, err := a.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("node %s: cluster_state not ok after 10 s (%v):\n%s\n%s", addrs[i], err, info, l.nodes[i].log())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	l.cc = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	return l, nil
}

// stop closes the clients and kills the nodes.
func (l *layout) stop() {
	if l.cc != nil {
		l.cc.Close()
	}
	for _, a := range l.admin {
		a.Close()
	}
	for _, n := range l.nodes {
		n.stop()
	}
}

// reserve creates the filters, capacity each, through the cluster client.
func (l *layout) reserve(keys []string, capacity int64) error {
	if capacity == 0 {
		return nil
	}
	ctx := context.Background()
	for chunk := range slices.Chunk(keys, 100) {
		_, err := l.cc.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range chunk {
				p.CFReserve(ctx, k, capacity)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("CF.RESERVE: %w", err)
		}
	}
	return nil
}

// load runs cfg.goroutines goroutines sending pipelines of command on
// random keys and random items for d, and returns the commands answered
// and the time from the start to the last answer.
func (l *layout) load(command string, keys []string, cfg config, d time.Duration, seed uint64) (int64, time.Duration, error) {
	if d == 0 {
		return 0, 0, nil
	}
	ctx := context.Background()
	var stop atomic.Bool
	var ops atomic.Int64
	errc := make(chan error, cfg.goroutines)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range cfg.goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for !stop.Load() {
				_, err := l.cc.Pipelined(ctx, func(p redis.Pipeliner) error {
					for range cfg.pipeline {
						key := keys[rng.IntN(len(keys))]
						item := strconv.FormatUint(rng.Uint64(), 36)
						if command == "CF.ADD" {
							p.CFAdd(ctx, key, item)
						} else {
							p.CFExists(ctx, key, item)
						}
					}
					return nil
				})
				if err != nil {
					errc <- fmt.Errorf("%s: %w", command, err)
					return
				}
				ops.Add(int64(cfg.pipeline))
			}
		})
	}
	var err error
	select {
	case <-time.After(d):
	case err = <-errc:
	}
	stop.Store(true)
	wg.Wait()
	return ops.Load(), time.Since(start), err
}

// sample is the counters read around a phase.
type sample struct {
	serverTicks []int64 // per node
	faults      []int64 // per node: minor page faults
	commands    []int64 // per node: total_commands_processed
	snapshots   []int   // per node
	client      time.Duration
	machine     int64 // the machine's busy ticks
}

func (l *layout) sample() (sample, error) {
	var s sample
	ctx := context.Background()
	for i, n := range l.nodes {
		t, f, err := n.cpuTicks()
		if err != nil {
			return s, err
		}
		info, err := l.admin[i].Info(ctx, "stats").Result()
		if err != nil {
			return s, fmt.Errorf("INFO stats on %s: %w", n.addr, err)
		}
		c, err := infoInt(info, "total_commands_processed")
		if err != nil {
			return s, fmt.Errorf("%s: %w", n.addr, err)
		}
		n.mu.Lock()
		s.snapshots = append(s.snapshots, n.snapshots)
		n.mu.Unlock()
		s.serverTicks = append(s.serverTicks, t)
		s.faults = append(s.faults, f)
		s.commands = append(s.commands, c)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return s, err
	}
	s.client = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	var err error
	s.machine, err = machineBusy()
	return s, err
}

func infoInt(info, field string) (int64, error) {
	for l := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO has no %s", field)
}

// machineBusy returns the busy time of all the machine's CPUs (user, nice,
// system, irq and softirq) from /proc/stat's first line, in ticks.
func machineBusy() (busy int64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	// user nice system idle iowait irq softirq steal guest guest_nice:
	// steal is time the hypervisor gave to other machines, and guest time
	// is already counted in user and nice.
	for i, v := range f[1:8] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		if i != 3 && i != 4 {
			busy += n
		}
	}
	return busy, nil
}

// phase is one measured phase of one layout.
type phase struct {
	ops       int64
	secs      float64
	nodeCPU   []float64 // CPU-seconds per node
	nodeCmds  []int64   // commands per node (total_commands_processed)
	faults    int64     // minor page faults, all nodes
	snapshots int       // snapshots written, all nodes
	clientCPU float64   // CPU-seconds
	busy      float64   // the whole machine's CPU-seconds
}

func (p phase) rate() float64 { return float64(p.ops) / p.secs }

func (p phase) serverCPU() float64 {
	var s float64
	for _, c := range p.nodeCPU {
		s += c
	}
	return s
}

// estimate is the throughput if each node had cores cores of its own: the
// ops over the busiest node's CPU-seconds.
func (p phase) estimate(cores int) float64 {
	return float64(p.ops) * float64(cores) / slices.Max(p.nodeCPU)
}

// shares formats each node's share of the commands.
func (p phase) shares() string {
	var sum int64
	for _, c := range p.nodeCmds {
		sum += c
	}
	parts := make([]string, len(p.nodeCmds))
	for i, c := range p.nodeCmds {
		parts[i] = fmt.Sprintf("%.0f%%", 100*float64(c)/float64(sum))
	}
	return strings.Join(parts, "/")
}

// measure runs one phase of load between two samples.
func (l *layout) measure(command string, keys []string, cfg config, tick ticks, seed uint64) (phase, error) {
	before, err := l.sample()
	if err != nil {
		return phase{}, err
	}
	ops, elapsed, err := l.load(command, keys, cfg, cfg.duration, seed)
	if err != nil {
		return phase{}, err
	}
	after, err := l.sample()
	if err != nil {
		return phase{}, err
	}
	p := phase{
		ops:       ops,
		secs:      elapsed.Seconds(),
		clientCPU: (after.client - before.client).Seconds(),
		busy:      float64(after.machine-before.machine) / float64(tick.perSecond),
	}
	for i := range l.nodes {
		p.nodeCPU = append(p.nodeCPU, float64(after.serverTicks[i]-before.serverTicks[i])/float64(tick.perSecond))
		// The INFO that read the count before is counted in it.
		p.nodeCmds = append(p.nodeCmds, after.commands[i]-before.commands[i]-1)
		p.faults += after.faults[i] - before.faults[i]
		p.snapshots += after.snapshots[i] - before.snapshots[i]
	}
	return p, nil
}

// report prints the throughput table, the ratios and the estimate.
func report(out io.Writer, cfg config, kinds []layoutKind, results [][][]phase) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "\t\t\t\tCPU-s/1e6 ops\t\tcores busy\t\t\t\t\t\t\t")
	fmt.Fprintln(w, "round\tlayout\tcommand\tops/s\tservers\tclient\tmachine\tservers\tclient\tother\tnode shares\tfaults/op\tsnapshots\t")
	for r := range cfg.rounds {
		for k, kind := range kinds {
			for c, p := range results[k][r] {
				ops := float64(p.ops)
				fmt.Fprintf(w, "%d\t%s\t%s\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%.2f\t%d\t\n",
					r+1, kind, commands[c], p.rate(),
					p.serverCPU()/ops*1e6, p.clientCPU/ops*1e6,
					p.busy/p.secs, p.serverCPU()/p.secs, p.clientCPU/p.secs,
					(p.busy-p.serverCPU()-p.clientCPU)/p.secs,
					p.shares(), float64(p.faults)/ops, p.snapshots)
			}
		}
	}
	w.Flush()
	fmt.Fprintln(out, "(cores busy: the machine's, of which the servers', this program's and the rest (other processes); faults/op: the servers' minor page faults)")

	a, b := results[0], results[1]
	fmt.Fprintln(out, "\nB÷A, three nodes against one on this machine (ops/s):")
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	ratioTable(w, cfg.rounds, func(r, c int) float64 { return b[r][c].rate() / a[r][c].rate() })
	w.Flush()

	fmt.Fprintf(out, "\nOne machine per node of %d cores, estimated as ops × %d ÷ the busiest node's CPU-seconds (medians over rounds):\n", cfg.cores, cfg.cores)
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "command\tA est. ops/s\tB est. ops/s\tB÷A\tA server CPU-s/1e6 ops\tB server CPU-s/1e6 ops\tB busiest node's share of CPU\t")
	for c, command := range commands {
		var ea, eb, ratio, ca, cb, busiest []float64
		for r := range cfg.rounds {
			pa, pb := a[r][c], b[r][c]
			ea = append(ea, pa.estimate(cfg.cores))
			eb = append(eb, pb.estimate(cfg.cores))
			ratio = append(ratio, pb.estimate(cfg.cores)/pa.estimate(cfg.cores))
			ca = append(ca, pa.serverCPU()/float64(pa.ops)*1e6)
			cb = append(cb, pb.serverCPU()/float64(pb.ops)*1e6)
			busiest = append(busiest, slices.Max(pb.nodeCPU)/pb.serverCPU())
		}
		fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.0f%%\t\n", command,
			median(ea), median(eb), median(ratio), median(ca), median(cb), 100*median(busiest))
	}
	w.Flush()
	fmt.Fprintln(out, "\nB÷A of the estimate per round:")
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	ratioTable(w, cfg.rounds, func(r, c int) float64 { return b[r][c].estimate(cfg.cores) / a[r][c].estimate(cfg.cores) })
	w.Flush()
}

// ratioTable prints f(round, command) for each round and command, and the
// median over the rounds.
func ratioTable(w io.Writer, rounds int, f func(r, c int) float64) {
	fmt.Fprint(w, "command\t")
	for r := range rounds {
		fmt.Fprintf(w, "round %d\t", r+1)
	}
	fmt.Fprintln(w, "median\t")
	for c, command := range commands {
		fmt.Fprintf(w, "%s\t", command)
		var rs []float64
		for r := range rounds {
			rs = append(rs, f(r, c))
			fmt.Fprintf(w, "%.2f\t", rs[r])
		}
		fmt.Fprintf(w, "%.2f\t\n", median(rs))
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// redirectCosts is what the redirect measurement found: medians of single
// commands' times, in microseconds.
type redirectCosts struct {
	owner, moved  float64 // sequential CF.EXISTS through a plain client
	first, steady float64 // a fresh ClusterClient's first command, and its later ones
	plainFirst    float64 // a fresh plain client's first command
	rounds        int
}

// redirectBatch is how many sequential commands go to one node at a time in
// the redirect measurement: enough that each is a stream of commands to one
// server, as a client's would be (single commands alternating between two
// servers would measure their wake-ups too). A fresh ClusterClient sends
// twice as many after its first, and the second half are its steady state
// (those right after the first are slower still, while it warms up).
const redirectBatch = 50

// redirects measures, in each of cfg.redirectRounds rounds (so that load
// from other processes falls on all of them alike): a batch of CF.EXISTS
// through a plain client on a key's owner and one on another node (each
// answered -MOVED); a fresh ClusterClient seeded with that other node,
// timed on its first command and on its later ones; and a fresh plain
// client on the owner, timed on its first command. Round r takes a key of
// node r mod 3 and sends the redirected commands to node r+1 mod 3, so that
// every process plays both parts (where the scheduler put a process
// changes its round trips by several microseconds).
func (l *layout) redirects(cfg config) (redirectCosts, error) {
	rc := redirectCosts{rounds: cfg.redirectRounds}
	ctx := context.Background()
	// owned[i] is a key that node i owns; plain[i] a client of node i.
	owned := make([]string, len(l.nodes))
	plain := make([]*redis.Client, len(l.nodes))
	for i, n := range l.nodes {
		plain[i] = redis.NewClient(&redis.Options{Addr: n.addr})
		defer plain[i].Close()
	}
	for i, found := 0, 0; found < len(l.nodes); i++ {
		if i == 1000 {
			return rc, fmt.Errorf("no key of 1000 for each of the nodes %v", owned)
		}
		k := "redirect:" + strconv.Itoa(i)
		c, err := l.cc.MasterForKey(ctx, k)
		if err != nil {
			return rc, err
		}
		o := slices.IndexFunc(l.nodes, func(n *node) bool { return n.addr == c.Options().Addr })
		if o < 0 || owned[o] != "" {
			continue
		}
		if err := l.cc.CFReserve(ctx, k, 1000).Err(); err != nil {
			return rc, fmt.Errorf("CF.RESERVE: %w", err)
		}
		owned[o] = k
		found++
	}
	// exists times one CF.EXISTS of key on c, in microseconds; moved says
	// whether it must be answered -MOVED.
	exists := func(c redis.Cmdable, key string, item int, moved bool) (float64, error) {
		start := time.Now()
		err := c.CFExists(ctx, key, item).Err()
		us := float64(time.Since(start).Nanoseconds()) / 1e3
		if moved != (err != nil && strings.HasPrefix(err.Error(), "MOVED ")) {
			return 0, fmt.Errorf("CF.EXISTS %s: want MOVED %v, got %v", key, moved, err)
		}
		return us, nil
	}
	// batch times n commands on c, keeping the times if keep.
	batch := func(times *[]float64, c redis.Cmdable, key string, n int, moved, keep bool) error {
		for i := range n {
			us, err := exists(c, key, i, moved)
			if err != nil {
				return err
			}
			if keep {
				*times = append(*times, us)
			}
		}
		return nil
	}
	var owners, moveds, firsts, steadies, plainFirsts []float64
	for r := range len(l.nodes) + cfg.redirectRounds { // the first rounds warm the connections
		keep := r >= len(l.nodes)
		o, m := r%len(l.nodes), (r+1)%len(l.nodes)
		key := owned[o]
		// The owner first in even rounds, the other node in odd ones, so
		// that neither always follows the fresh clients below.
		for i := range 2 {
			var err error
			if (i+r)%2 == 0 {
				err = batch(&owners, plain[o], key, redirectBatch, false, keep)
			} else {
				err = batch(&moveds, plain[m], key, redirectBatch, true, keep)
			}
			if err != nil {
				return rc, err
			}
		}

		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{l.nodes[m].addr}})
		us, err := exists(cc, key, 0, false)
		if err == nil {
			err = batch(nil, cc, key, redirectBatch, false, false)
		}
		if err == nil {
			err = batch(&steadies, cc, key, redirectBatch, false, keep)
		}
		cc.Close()
		if err != nil {
			return rc, fmt.Errorf("fresh ClusterClient: %w", err)
		}
		if keep {
			firsts = append(firsts, us)
		}

		c := redis.NewClient(&redis.Options{Addr: l.nodes[o].addr})
		us, err = exists(c, key, 0, false)
		c.Close()
		if err != nil {
			return rc, fmt.Errorf("fresh client: %w", err)
		}
		if keep {
			plainFirsts = append(plainFirsts, us)
		}
	}
	rc.owner, rc.moved = median(owners), median(moveds)
	rc.first, rc.steady, rc.plainFirst = median(firsts), median(steadies), median(plainFirsts)
	return rc, nil
}

func (rc redirectCosts) report(out io.Writer) {
	fmt.Fprintf(out, "\nThe cost of a redirect, layout B, sequential CF.EXISTS (µs, medians over %d rounds: %d commands of each steady kind, %d fresh clients of each kind):\n",
		rc.rounds, rc.rounds*redirectBatch, rc.rounds)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "command\tµs\tdifference\t")
	fmt.Fprintf(w, "plain client on the owner\t%.1f\t\t\n", rc.owner)
	fmt.Fprintf(w, "plain client on another node: -MOVED\t%.1f\t%+.1f\t\n", rc.moved, rc.moved-rc.owner)
	fmt.Fprintf(w, "redirected: -MOVED, then the owner\t%.1f\t%+.1f\t\n", rc.moved+rc.owner, rc.moved)
	fmt.Fprintf(w, "ClusterClient, steady state\t%.1f\t\t\n", rc.steady)
	fmt.Fprintf(w, "fresh ClusterClient's first command\t%.1f\t%+.1f\t\n", rc.first, rc.first-rc.steady)
	fmt.Fprintf(w, "fresh plain client's first command\t%.1f\t%+.1f\t\n", rc.plainFirst, rc.plainFirst-rc.owner)
	w.Flush()
	fmt.Fprintln(out, "(differences: against the owner, the steady ClusterClient and the owner; a redirected command costs a whole extra round trip)")
}
