package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startNodes starts n "cuckoo serve --cluster-enabled" processes and
// returns their addresses.
func startNodes(t *testing.T, n int) []string {
	t.Helper()
	return addrsOf(startClusterNodes(t, cuckooBin(t), n))
}

// clusterLoad is four writers and four readers on a cluster, through
// go-redis ClusterClients: the writers add unique items to random keys and
// record each acknowledged one; the readers look up items acknowledged
// before the lookup began, and count every one found absent.
type clusterLoad struct {
	cc       *redis.ClusterClient
	keys     []string
	stop     atomic.Bool
	wg       sync.WaitGroup
	mu       sync.Mutex
	acked    map[string][]string
	lookups  atomic.Int64
	adds     atomic.Int64
	falseNeg atomic.Int64
	errs     chan error
}

func startLoad(cc *redis.ClusterClient, keys []string, acked map[string][]string) *clusterLoad {
	l := &clusterLoad{cc: cc, keys: keys, acked: acked, errs: make(chan error, 16)}
	ctx := context.Background()
	fail := func(err error) {
		select {
		case l.errs <- err:
		default:
		}
	}
	for w := range 4 {
		l.wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for n := 0; !l.stop.Load(); n++ {
				k, item := keys[r.IntN(len(keys))], fmt.Sprintf("w%d-%d", w, n)
				if err := cc.CFAdd(ctx, k, item).Err(); err != nil {
					fail(fmt.Errorf("CF.ADD %s %s: %w", k, item, err))
					return
				}
				l.mu.Lock()
				l.acked[k] = append(l.acked[k], item)
				l.mu.Unlock()
				l.adds.Add(1)
			}
		})
	}
	for rd := range 4 {
		l.wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(rd), 2))
			for !l.stop.Load() {
				k := keys[r.IntN(len(keys))]
				l.mu.Lock()
				items := l.acked[k]
				item := ""
				if len(items) > 0 {
					item = items[r.IntN(len(items))]
				}
				l.mu.Unlock()
				if item == "" {
					continue
				}
				ok, err := cc.CFExists(ctx, k, item).Result()
				if err != nil {
					fail(fmt.Errorf("CF.EXISTS %s %s: %w", k, item, err))
					return
				}
				l.lookups.Add(1)
				if !ok {
					l.falseNeg.Add(1)
					fail(fmt.Errorf("CF.EXISTS %s %s answered 0 for an item acknowledged before", k, item))
				}
			}
		})
	}
	return l
}

// end stops the load and returns its first error.
func (l *clusterLoad) end() error {
	l.stop.Store(true)
	l.wg.Wait()
	select {
	case err := <-l.errs:
		return err
	default:
		return nil
	}
}

// TestClusterMoveSlots: on three primaries with a replica each, holding
// 1,000 filters, move-slots moves a third of the slots (all the first
// primary's) to the second, then rebalance gives the first its share back,
// while four writers and four readers run. Afterwards every acknowledged
// item is present, no lookup of an item acknowledged before it answered 0,
// and each replica holds what its primary holds.
func TestClusterMoveSlots(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six server processes; skipped with -short")
	}
	addrs := startNodes(t, 6)
	if code, out, errOut := cuckoo(t, "", append([]string{"cluster", "create", "--replicas", "1"}, addrs...)...); code != 0 {
		t.Fatalf("cluster create: exit %d\n%s%s", code, out, errOut)
	}
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16})
	defer cc.Close()
	keys := make([]string, 1000)
	acked := map[string][]string{}
	for i := range keys {
		keys[i] = "urls:" + strconv.Itoa(i)
	}
	// Seed data: 20 items a filter, 2*10^4 in all.
	for _, batch := range slices.Collect(slices.Chunk(keys, 100)) {
		_, err := cc.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range batch {
				for j := range 20 {
					p.CFAdd(ctx, k, "seed"+strconv.Itoa(j))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range batch {
			for j := range 20 {
				acked[k] = append(acked[k], "seed"+strconv.Itoa(j))
			}
		}
	}
	spread := func(when string) []int64 {
		_, out, _ := cuckoo(t, "", "cluster", "info", addrs[0])
		t.Logf("cluster info %s:\n%s", when, out)
		var perPrimary []int64
		for _, a := range addrs[:3] {
			c := redis.NewClient(&redis.Options{Addr: a})
			perPrimary = append(perPrimary, c.DBSize(ctx).Val())
			c.Close()
		}
		return perPrimary
	}
	before := spread("after create")

	load := startLoad(cc, keys, acked)
	time.Sleep(300 * time.Millisecond) // the load is running before the move
	start := time.Now()
	code, out, errOut := cuckoo(t, "", "cluster", "move-slots", "--from", addrs[0], "--to", addrs[1], "--slots", "0-5461")
	moveTime := time.Since(start)
	if code != 0 {
		load.end()
		t.Fatalf("cluster move-slots: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("move-slots in %v: %s", moveTime.Round(time.Millisecond), strings.TrimSpace(out))
	addsMove, lookupsMove := load.adds.Load(), load.lookups.Load()
	if n := redis.NewClient(&redis.Options{Addr: addrs[0]}).DBSize(ctx).Val(); n != 0 {
		t.Errorf("the first primary still holds %d keys after moving all its slots", n)
	}
	start = time.Now()
	code, out, errOut = cuckoo(t, "", "cluster", "rebalance", addrs[2])
	if code != 0 {
		load.end()
		t.Fatalf("cluster rebalance: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("rebalance in %v:\n%s", time.Since(start).Round(time.Millisecond), out)
	time.Sleep(200 * time.Millisecond) // the load goes on against the new layout
	if err := load.end(); err != nil {
		t.Errorf("during the moves: %v", err)
	}
	t.Logf("during move-slots: %d adds and %d lookups; in all %d adds, %d lookups, %d answered 0",
		addsMove, lookupsMove, load.adds.Load(), load.lookups.Load(), load.falseNeg.Load())
	if load.adds.Load() == 0 || load.lookups.Load() == 0 {
		t.Errorf("the load made %d adds and %d lookups: it did not run", load.adds.Load(), load.lookups.Load())
	}

	// Every acknowledged item is present.
	total, missing := 0, 0
	for _, batch := range slices.Collect(slices.Chunk(keys, 50)) {
		cmds, err := cc.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range batch {
				items := make([]any, len(acked[k]))
				for i, it := range acked[k] {
					items[i] = it
				}
				p.CFMExists(ctx, k, items...)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, cmd := range cmds {
			for j, ok := range cmd.(*redis.BoolSliceCmd).Val() {
				total++
				if !ok {
					missing++
					if missing < 10 {
						t.Errorf("acknowledged %s %s is missing", batch[i], acked[batch[i]][j])
					}
				}
			}
		}
	}
	t.Logf("%d acknowledged items checked, %d missing", total, missing)
	after := spread("after rebalance")
	var sum int64
	for i, n := range after {
		sum += n
		// A third of 1,000 keys: binomial, sd 15; 250..420 is over 5 sd.
		if n < 250 || n > 420 {
			t.Errorf("primary %d holds %d keys after rebalance (before the moves: %v)", i, n, before)
		}
	}
	if sum != int64(len(keys)) {
		t.Errorf("the primaries hold %d keys in all, want %d", sum, len(keys))
	}
	// Each replica catches up with its primary's deletes and restores.
	for i := range 3 {
		p := redis.NewClient(&redis.Options{Addr: addrs[i]})
		r := redis.NewClient(&redis.Options{Addr: addrs[3+i]})
		waitUntil(t, "replica "+addrs[3+i]+" to hold its primary's keys", 20*time.Second, func() bool {
			return r.DBSize(ctx).Val() == p.DBSize(ctx).Val()
		})
		p.Close()
		r.Close()
	}
}

// TestClusterMoveSlotsRefusals: move-slots and rebalance refuse what they
// cannot do, with a clear error and nothing changed.
func TestClusterMoveSlotsRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs server processes; skipped with -short")
	}
	addrs := startNodes(t, 4) // three in a cluster, one not
	if code, out, errOut := cuckoo(t, "", "cluster", "create", addrs[0], addrs[1], addrs[2]); code != 0 {
		t.Fatalf("cluster create: exit %d\n%s%s", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"move-slots", "--to", addrs[1], "--slots", "0"}, "missing --from"},
		{[]string{"move-slots", "--from", addrs[0], "--slots", "0"}, "missing --to"},
		{[]string{"move-slots", "--from", addrs[0], "--to", addrs[1]}, "no slots given"},
		{[]string{"move-slots", "--from", addrs[0], "--to", addrs[1], "--slots", "9-3"}, "runs backwards"},
		{[]string{"move-slots", "--from", addrs[0], "--to", addrs[0], "--slots", "0"}, "the same node"},
		{[]string{"move-slots", "--from", addrs[0], "--to", addrs[1], "--slots", "16000"}, "slot 16000 is owned by"},
		{[]string{"move-slots", "--from", addrs[0], "--to", addrs[3], "--slots", "0"}, "no node of the cluster is at " + addrs[3]},
		{[]string{"move-slots", "--from", "abc", "--to", "def", "--slots", "0"}, "must be a HOST:PORT"},
		{[]string{"rebalance", "--threshold", "-1", addrs[0]}, "--threshold -1"},
		{[]string{"rebalance", "--threshold", "NaN", addrs[0]}, "--threshold NaN"},
		{[]string{"rebalance", "--threshold", "+Inf", addrs[0]}, "--threshold +Inf"},
		{[]string{"rebalance", addrs[3]}, "in no cluster yet"},
	} {
		code, out, errOut := cuckoo(t, "", append([]string{"cluster"}, c.args...)...)
		if code != exitError || !strings.Contains(errOut, c.want) {
			t.Errorf("cluster %v: exit %d, stderr %q, want 2 and %q (stdout %q)", c.args, code, errOut, c.want, out)
		}
	}
	code, out, _ := cuckoo(t, "", "cluster", "rebalance", addrs[0])
	if code != 0 || !strings.Contains(out, "the 3 primaries are balanced") {
		t.Errorf("rebalance of a balanced cluster: exit %d\n%s", code, out)
	}

	// One slot holding one key: counts of one are singular (issue 24: "1
	// keys").
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addrs[0]})
	defer c.Close()
	key, slot := "", int64(-1)
	for i := 0; slot < 0 || slot > 5461; i++ { // create gives addrs[0] slots 0-5461
		key = fmt.Sprintf("k%d", i)
		slot = c.ClusterKeySlot(ctx, key).Val()
	}
	if err := c.Do(ctx, "CF.ADD", key, "item").Err(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cuckoo(t, "", "cluster", "move-slots", "--from", addrs[0], "--to", addrs[1], "--slots", fmt.Sprint(slot))
	if want := fmt.Sprintf("moved 1 slot (%d) and 1 key from ", slot); code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("move-slots of one slot holding one key: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
}

// TestPlanRebalance: the plan gives every primary its share, moving the
// fewest slots, each from the end of a primary that owns too many.
func TestPlanRebalance(t *testing.T) {
	id := func(c byte) string { return strings.Repeat(string(c), 40) }
	topo := clusterTopology{Nodes: []clusterNode{
		{ID: id('a'), Role: rolePrimary, Slots: [][2]int{{0, 8191}}},
		{ID: id('b'), Role: rolePrimary, Slots: [][2]int{{8192, 16383}}},
		{ID: id('c'), Role: rolePrimary},
		{ID: id('d'), Role: roleReplica, Primary: id('a')},
	}}
	moves := planRebalance(&topo, 2)
	got := map[string]int{}
	for _, mv := range moves {
		got[mv.from] -= countSlots(mv.slots)
		got[mv.to] += countSlots(mv.slots)
	}
	// Shares: 5462, 5461, 5461.
	if want := map[string]int{id('a'): 5462 - 8192, id('b'): 5461 - 8192, id('c'): 5461}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("plan %v: changes %v, want %v", moves, got, want)
	}
	for _, mv := range moves {
		if mv.from == id('a') && mv.slots[len(mv.slots)-1][1] != 8191 {
			t.Errorf("a's slots do not come from its end: %v", mv.slots)
		}
	}
	if moves := planRebalance(&topo, 100); moves != nil {
		t.Errorf("within a threshold of 100%%: %v", moves)
	}
	if moves := planRebalance(&clusterTopology{}, 2); moves != nil {
		t.Errorf("no primaries: %v", moves)
	}
	if got := lastSlots([][2]int{{0, 9}, {20, 24}}, 7); fmt.Sprint(got) != "[[8 9] [20 24]]" {
		t.Errorf("lastSlots = %v", got)
	}
}
