package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Moving slots between primaries, as redis-cli --cluster reshard does, with
// pushed topologies in place of CLUSTER SETSLOT:
//
//  1. open: a topology where the target imports the slots and the source
//     migrates them, pushed to the target first, then the source, then the
//     rest, so that no node sends a client to a target not yet importing;
//  2. move: every key of those slots, found by one SCAN of the source, goes
//     over with MIGRATE, a batch of keys at a time; the source answers each
//     key's commands until that key has moved and sends them to the target
//     (-ASK) after (go doc ./server, "Cluster"), so clients keep reading and
//     writing, and a key created meanwhile is created on the target;
//  3. close: a topology where the target owns the slots, pushed to the
//     target first (it then answers without ASKING), then the source (which
//     then sends -MOVED there), then the rest.
//
// A move stopped half-way (the tool killed, a node down) leaves the slots
// open; running the same move-slots again finishes it: open is idempotent,
// and a slot the target already owns is skipped.

func init() {
	clusterSubcommands = append(clusterSubcommands,
		clusterSubcommand{"move-slots", "--from HOST:PORT|ID --to HOST:PORT|ID --slots RANGES [--batch N] [--timeout D] [--user U] [--password P]",
			"move slots and their filters from one primary to another while clients read and write", runClusterMoveSlots},
		clusterSubcommand{"rebalance", "[--threshold PCT] [--dry-run] [--batch N] [--timeout D] [--user U] [--password P] HOST:PORT",
			"move slots so that every primary owns as many (a new primary gets its share)", runClusterRebalance},
	)
}

const clusterMoveDescribe = `
Move-slots moves the slots RANGES (such as 0-99,200) from the primary
--from to the primary --to, with the filters of those slots, while clients
go on reading and writing: each key moves atomically (MIGRATE), the source
answers a key's commands until it has moved and sends them to the target
(-ASK) after, so no acknowledged write is lost and no lookup finds a
present item absent. Nodes are named by HOST:PORT or by id (or a prefix of
it). A move that stopped half-way is finished by running it again.`

const clusterRebalanceDescribe = `
Rebalance moves slots between the primaries of the cluster HOST:PORT
belongs to until each owns as many (16384 divided among them; the first
ones get one more), taking slots from the end of the primaries that own
too many. A primary added with cuckoo cluster add-node gets its share.
Nothing moves if every primary is within --threshold percent of its share.`

// moveOptions are the flags move-slots and rebalance share.
type moveOptions struct {
	admin   *clusterAdmin
	batch   *rangedFlag // keys a MIGRATE
	timeout time.Duration
}

func moveFlags(e *env, describe string) (*moveOptions, *flag.FlagSet) {
	fs := e.flags(describe)
	o := &moveOptions{admin: adminFlags(fs)}
	o.batch = countVar(fs, "batch", 100, 1, 10000, "the keys moved by one MIGRATE")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "the bound of one MIGRATE's round trip to the target, and of every other command")
	return o, fs
}

func runClusterMoveSlots(e *env, args []string) error {
	o, fs := moveFlags(e, clusterMoveDescribe)
	from := fs.String("from", "", "the primary the slots move from: `HOST:PORT` or id")
	to := fs.String("to", "", "the primary the slots move to: `HOST:PORT` or id")
	slotsArg := fs.String("slots", "", "the slots to move: `RANGES` such as 0-5460,5462")
	if err := e.parse(fs, args, nil, 0); err != nil {
		return err
	}
	switch {
	case *from == "":
		return e.usageErrorf("missing --from")
	case *to == "":
		return e.usageErrorf("missing --to")
	}
	slots, err := parseSlotRanges(*slotsArg)
	if err != nil {
		return e.usageErrorf("--slots: %v", err)
	}
	o.admin.timeout = o.timeout
	defer o.admin.close()
	ctx := context.Background()
	seed := *from
	if !strings.Contains(seed, ":") {
		seed = *to // an id: one of the two must be an address to start from
	}
	if !strings.Contains(seed, ":") {
		return e.usageErrorf("--from or --to must be a HOST:PORT, to reach the cluster")
	}
	v, err := o.admin.fetchAll(ctx, seed)
	if err != nil {
		return fmt.Errorf("cluster move-slots: %w", err)
	}
	src, err := v.Topo.find(*from)
	if err != nil {
		return fmt.Errorf("cluster move-slots: --from: %w", err)
	}
	dst, err := v.Topo.find(*to)
	if err != nil {
		return fmt.Errorf("cluster move-slots: --to: %w", err)
	}
	m := &slotMove{o: o, out: e.stdout, topo: v.Topo, from: src.ID, to: dst.ID, slots: slots}
	if err := m.run(ctx); err != nil {
		return fmt.Errorf("cluster move-slots: %w", err)
	}
	return nil
}

// fetchAll is fetch, refusing a cluster some of whose nodes cannot be
// reached or disagree: a move pushes topologies to every node.
func (a *clusterAdmin) fetchAll(ctx context.Context, seed string) (*clusterView, error) {
	v, err := a.fetch(ctx, seed)
	if err != nil {
		return nil, err
	}
	if len(v.Warnings) > 0 {
		return nil, fmt.Errorf("the cluster is not in one piece: %s (nothing was changed; cuckoo cluster fix makes the nodes agree once they can be reached)", strings.Join(v.Warnings, "; "))
	}
	return v, nil
}

// slotMove is one move of slots from a primary to another.
type slotMove struct {
	o        *moveOptions
	out      io.Writer
	topo     clusterTopology // the topology in force; each push updates it
	from, to string          // ids
	slots    [][2]int

	keys int // keys moved
}

func (m *slotMove) run(ctx context.Context) error {
	src, dst := m.topo.node(m.from), m.topo.node(m.to)
	switch {
	case src.ID == dst.ID:
		return fmt.Errorf("--from and --to are the same node, %s", src.name())
	case src.Role != rolePrimary:
		return fmt.Errorf("%s is a replica: slots move between primaries", src.name())
	case dst.Role != rolePrimary:
		return fmt.Errorf("%s is a replica: slots move between primaries", dst.name())
	}
	// Each slot must be the source's, or already moved (a move run again).
	owners := m.topo.owners()
	move := make([]bool, clusterSlots)
	for _, r := range m.slots {
		for s := r[0]; s <= r[1]; s++ {
			switch owners[s] {
			case m.from:
				if t, ok := src.Migrating[s]; ok && t != m.to {
					return fmt.Errorf("slot %d is migrating to another node, %s: finish that move first", s, shortID(t))
				}
				move[s] = true
			case m.to:
			default:
				return fmt.Errorf("slot %d is owned by %s, not by %s", s, dash(shortID(owners[s])), src.name())
			}
		}
	}
	todo := slotRangesOf(func(s int) bool { return move[s] })
	if len(todo) == 0 {
		fmt.Fprintf(m.out, "slots %s: already on %s\n", formatSlotRanges(m.slots), dst.name())
		return nil
	}
	start := time.Now()
	if err := m.open(ctx, todo); err != nil {
		return err
	}
	if err := m.moveKeys(ctx, todo); err != nil {
		return fmt.Errorf("%w (the slots stay open: run the same move again to finish it)", err)
	}
	if err := m.close(ctx, todo); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "moved %s (%s) and %s from %s to %s in %v\n", count(countSlots(todo), "slot", "slots"),
		formatSlotRanges(todo), count(m.keys, "key", "keys"), src.name(), dst.name(), time.Since(start).Round(time.Millisecond))
	return nil
}

// push sets t on every node: the target first, then the source, then the
// rest.
func (m *slotMove) push(ctx context.Context, t clusterTopology) error {
	epoch, err := m.o.admin.push(ctx, t, t.pushOrder(nil, m.to, m.from))
	if err != nil {
		return err
	}
	t.Epoch = epoch
	m.topo = t
	return nil
}

// open marks slots importing on the target and migrating on the source.
func (m *slotMove) open(ctx context.Context, slots [][2]int) error {
	t := m.topo.clone()
	src, dst := t.node(m.from), t.node(m.to)
	for _, r := range slots {
		for s := r[0]; s <= r[1]; s++ {
			if src.Migrating == nil {
				src.Migrating = map[int]string{}
			}
			if dst.Importing == nil {
				dst.Importing = map[int]string{}
			}
			src.Migrating[s], dst.Importing[s] = m.to, m.from
		}
	}
	return m.push(ctx, t)
}

// close gives slots to the target and ends their migration.
func (m *slotMove) close(ctx context.Context, slots [][2]int) error {
	t := m.topo.clone()
	src, dst := t.node(m.from), t.node(m.to)
	for _, r := range slots {
		for s := r[0]; s <= r[1]; s++ {
			delete(src.Migrating, s)
			delete(dst.Importing, s)
		}
	}
	src.Slots, dst.Slots = removeSlots(src.Slots, slots), addSlots(dst.Slots, slots)
	return m.push(ctx, t)
}

// moveKeys moves every key of slots from the source to the target. The
// slots are open, so no key of theirs is created on the source any more:
// one SCAN, after open, finds all; a second finds none, or the keys a
// MIGRATE skipped (one being restored by CF.LOADCHUNK), which go again.
func (m *slotMove) moveKeys(ctx context.Context, slots [][2]int) error {
	src, dst := m.topo.node(m.from), m.topo.node(m.to)
	c := m.o.admin.client(src.addr())
	in := slotBits(slots)
	for round := 0; ; round++ {
		found := 0
		var batch []string
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			if err := m.migrate(ctx, c, dst, batch); err != nil {
				return err
			}
			m.keys += len(batch)
			batch = batch[:0]
			return nil
		}
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, "", 10000).Result()
			if err != nil {
				return nodeError(src.addr(), err)
			}
			mine, err := keysInSlots(ctx, c, keys, in)
			if err != nil {
				return nodeError(src.addr(), err)
			}
			for _, k := range mine {
				found++
				if batch = append(batch, k); len(batch) >= int(m.o.batch.n) {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		if err := flush(); err != nil {
			return err
		}
		if found == 0 {
			return nil
		}
		if round == 10 {
			return fmt.Errorf("%d keys of the slots are still on %s after %d rounds", found, src.name(), round+1)
		}
	}
}

// keysInSlots are the keys whose slot is in, by CLUSTER KEYSLOT (one
// pipeline): the node's own hash, not a copy of it.
func keysInSlots(ctx context.Context, c *redis.Client, keys []string, in []bool) ([]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.ClusterKeySlot(ctx, k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for i, cmd := range cmds {
		if s := cmd.(*redis.IntCmd).Val(); s >= 0 && s < clusterSlots && in[s] {
			out = append(out, keys[i])
		}
	}
	return out, nil
}

// migrate moves keys with one MIGRATE, authenticating to the target as the
// tool does to every node.
func (m *slotMove) migrate(ctx context.Context, c *redis.Client, dst *clusterNode, keys []string) error {
	args := []any{"MIGRATE", dst.Host, dst.Port, "", 0, m.o.timeout.Milliseconds()}
	switch a := m.o.admin; {
	case a.user != "":
		args = append(args, "AUTH2", a.user, a.secret())
	case a.secret() != "":
		args = append(args, "AUTH", a.secret())
	}
	args = append(args, "KEYS")
	for _, k := range keys {
		args = append(args, k)
	}
	err := c.Do(ctx, args...).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("MIGRATE of %d keys (%s, ...) to %s: %w", len(keys), keys[0], dst.name(), err)
	}
	return nil
}

func runClusterRebalance(e *env, args []string) error {
	o, fs := moveFlags(e, clusterRebalanceDescribe)
	threshold := fs.Float64("threshold", 2, "do nothing if every primary owns within `PCT` percent of its share")
	dry := fs.Bool("dry-run", false, "print the moves, make none")
	if err := e.parse(fs, args, []string{"HOST:PORT"}, 1); err != nil {
		return err
	}
	if !(*threshold >= 0) || math.IsInf(*threshold, 1) { // NaN too
		return e.usageErrorf("--threshold %v: want a percentage >= 0", *threshold)
	}
	o.admin.timeout = o.timeout
	defer o.admin.close()
	ctx := context.Background()
	v, err := o.admin.fetchAll(ctx, fs.Arg(0))
	if err != nil {
		return fmt.Errorf("cluster rebalance: %w", err)
	}
	for _, n := range v.Topo.primaries() {
		if len(n.Migrating) > 0 || len(n.Importing) > 0 {
			return fmt.Errorf("cluster rebalance: %s has slots open (a move stopped half-way): finish it with move-slots first", n.name())
		}
	}
	moves := planRebalance(&v.Topo, *threshold)
	if len(moves) == 0 {
		fmt.Fprintf(e.stdout, "the %s balanced (within %v%% of a share each): nothing to move\n",
			count(len(v.Topo.primaries()), "primary is", "primaries are"), *threshold)
		return nil
	}
	for _, mv := range moves {
		fmt.Fprintf(e.stdout, "move %s (%s) from %s to %s\n", count(countSlots(mv.slots), "slot", "slots"), formatSlotRanges(mv.slots),
			v.Topo.node(mv.from).name(), v.Topo.node(mv.to).name())
	}
	if *dry {
		return nil
	}
	topo := v.Topo
	for _, mv := range moves {
		m := &slotMove{o: o, out: e.stdout, topo: topo, from: mv.from, to: mv.to, slots: mv.slots}
		if err := m.run(ctx); err != nil {
			return fmt.Errorf("cluster rebalance: %w", err)
		}
		topo = m.topo
	}
	return nil
}

// plannedMove is one move of a rebalance.
type plannedMove struct {
	from, to string
	slots    [][2]int
}

// planRebalance gives each primary its share of the slots, 16384 divided
// among them, the first ones (in the topology's order) one more: the
// primaries above their share give their last slots to those below, in
// order. No moves if every primary is within threshold percent of its
// share.
func planRebalance(t *clusterTopology, threshold float64) []plannedMove {
	ps := t.primaries()
	if len(ps) == 0 {
		return nil
	}
	type acct struct {
		id    string
		slots [][2]int
		diff  int // slots owned minus the share: > 0 gives, < 0 takes
	}
	var accts []*acct
	balanced := true
	for i, p := range ps {
		share := clusterSlots / len(ps)
		if i < clusterSlots%len(ps) {
			share++
		}
		a := &acct{id: p.ID, slots: slices.Clone(p.Slots), diff: countSlots(p.Slots) - share}
		if float64(abs(a.diff)) > threshold/100*float64(share) {
			balanced = false
		}
		accts = append(accts, a)
	}
	if balanced {
		return nil
	}
	var moves []plannedMove
	for _, give := range accts {
		for _, take := range accts {
			if give.diff <= 0 {
				break
			}
			if take.diff >= 0 {
				continue
			}
			n := min(give.diff, -take.diff)
			slots := lastSlots(give.slots, n)
			give.slots = removeSlots(give.slots, slots)
			give.diff -= n
			take.diff += n
			moves = append(moves, plannedMove{from: give.id, to: take.id, slots: slots})
		}
	}
	return moves
}

// lastSlots are the last n slots of ranges rs (normal), as ranges.
func lastSlots(rs [][2]int, n int) [][2]int {
	var out [][2]int
	for i := len(rs) - 1; i >= 0 && n > 0; i-- {
		lo := max(rs[i][0], rs[i][1]-n+1)
		out = append([][2]int{{lo, rs[i][1]}}, out...)
		n -= rs[i][1] - lo + 1
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
