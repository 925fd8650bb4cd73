package server_test

// The differential test against RedisBloom itself.
//
// TestRedisBloomDifferential starts a real RedisBloom, the anchor, and an
// in-process cuckoo serve whose new filters take RedisBloom's layout
// (cf-layout redisbloom) and whose replies its release's
// (redisbloom-compat): RedisBloom 8.6.2 in Redis 8.6.3 when it is built,
// else the RedisBloom 2.6.28 module in Debian's redis-server 7.0.15
// (CUCKOO_DIFF_ANCHOR=8.6 or 2.6 chooses; the run logs which). It sends the same seeded random
// commands to both and compares every reply exactly: the type and contents
// of each value (integers, booleans, strings, nil, arrays and RESP3 maps,
// compared structurally as go-redis parses them) and the text of every
// error. Both servers are deterministic, so any difference is one of
// behaviour.
//
// The commands work on eight keys, so that filters fill, grow, reach their
// limits and are deleted: every CF command with good and bad arguments
// (CF.RESERVE's options in any order, repeated, unknown or missing their
// value, extreme capacities; CF.INSERT's options abbreviated or malformed;
// integers spelled as Redis refuses them, "+1", "01", "-0"; wrong arities),
// DEL, EXISTS, TYPE, DUMP (the payload byte for byte), CF.SCANDUMP at any
// iterator and whole walks (every chunk byte for byte), CF.LOADCHUNK of
// RedisBloom's dump into a key on both servers (whole, shuffled, in part,
// with a changed header, at a wrong iterator) and of headers and chunks made
// here, with its bad forms, and RESTORE of a DUMP payload into both (fresh,
// REPLACE, onto a taken key, damaged), and, against Redis 8, CONFIG SET of
// the five cf-* settings (good values, bad ones, two at once). Redis 8's
// DUMP payloads end with its RDB version (13) and a CRC-64 of it, which
// this server's RESTORE does not take yet: against it DUMP payloads are
// compared without their 10-byte footer (the filter's bytes whole), and
// RESTORE gives each server its own payload. A CF.RESERVE is followed by CF.INFO,
// so that a filter made differently shows where it was made. Every 500
// commands all keys are compared whole: dumps, DUMP payloads and CF.INFO.
// The full run begins with a 24 MiB filter, which RedisBloom dumps in two
// chunks. Keys of another type are sent to only if cuckoo serve has SET
// (it holds filters alone today; the run logs so).
//
// The generator keeps to what RedisBloom survives: it reads the argument
// after a CF.RESERVE option even past the last one, and allocates whatever a
// capacity, an expansion or a header asks for, aborting when it cannot; so
// no option name ends an odd-length CF.RESERVE, a huge capacity is one it
// refuses (more than 2^56 buckets), large expansions go to a filter grown
// once, and headers describe at most 1 MiB.
//
// Running it: build the anchors once from their sources with
// scripts/build-redis-peers (Redis 8.6.3 and RedisBloom 8.6.2 into
// /tmp/redis8, the 2.6.28 module into /tmp/redisbloom-build), then
//
//	go test ./server -run TestRedisBloomDifferential -v
//	CUCKOO_DIFF_ANCHOR=2.6 go test ./server -run TestRedisBloomDifferential -v
//
// Redis 8 is looked for at $CUCKOO_REDIS8_SERVER and $CUCKOO_REDIS8_MODULE
// (by default /tmp/redis8/bin/redis-server and /tmp/redis8/redisbloom.so),
// the 2.6 module at $CUCKOO_REDISBLOOM_MODULE (by default
// /tmp/redisbloom-build/redisbloom.so) with redis-server on PATH; without
// the anchor chosen (as in CI, which cannot fetch them) the test skips and
// says why. The full run compares
// 120,000 commands, one in six over RESP3; -short compares 3,000.
// CUCKOO_DIFF_COMMANDS sets the count and CUCKOO_DIFF_SEED the seed (each
// run logs its own; the same seed and count reproduce a run), and
// CUCKOO_DIFF_MAX_DIFFS how many differences are reported before the run
// stops (20; at most 3 of a kind are reported, all are counted in the
// closing summary, which groups them by pattern with an example each).
// After a difference the key concerned is deleted on both servers, so that
// one difference does not cascade into many.

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/redistest"
	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/redis/go-redis/v9"
)

// The key space the random commands work on: few keys, so that filters
// fill, grow, reach their limits and are deleted; an item space a few times
// a typical filter's capacity, so that lookups find present and absent
// items and false positives happen.
const (
	diffKeys      = 8
	diffItemSpace = 4000
	diffCheckAll  = 500 // commands between two comparisons of every key
	diffPerKind   = 3   // differences of one kind reported in full
	diffPatterns  = 6   // patterns of difference of one kind summed up
	diffHeaderLen = 38  // RedisBloom's CFHeader: four uint64, three uint16, packed
)

func envInt(t *testing.T, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return v
}

// TestRedisBloomDifferential: see the top of this file.
func TestRedisBloomDifferential(t *testing.T) {
	total := uint64(120_000)
	if testing.Short() {
		total = 3_000
	}
	total = envInt(t, "CUCKOO_DIFF_COMMANDS", total)
	seed := envInt(t, "CUCKOO_DIFF_SEED", uint64(time.Now().UnixNano()))
	t.Logf("seed %d: CUCKOO_DIFF_SEED=%d CUCKOO_DIFF_COMMANDS=%d reproduce this run", seed, seed, total)

	anchor, rbAddr := startAnchor(t)
	cfg := rbConfig("")
	cfg.FilterDefaults.Compat = anchor
	_, csAddr := start(t, cfg)
	d := &differ{
		t:        t,
		anchor:   anchor,
		seed:     seed,
		ctx:      context.Background(),
		rng:      rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		maxDiffs: int(envInt(t, "CUCKOO_DIFF_MAX_DIFFS", 20)),
		stats:    map[string]*kindStats{},
		rbErrors: map[string]int{},
		want:     [4]int{2: int(total - total/6), 3: int(total / 6)},
	}
	for _, proto := range []int{2, 3} {
		opt := func(o *redis.Options) {
			o.Protocol = proto
			o.DisableIdentity = true // Redis 7.0 has no CLIENT SETINFO, cuckoo serve neither
			o.ReadTimeout = 30 * time.Second
		}
		d.rb[proto], d.cs[proto] = client(t, rbAddr, opt), client(t, csAddr, opt)
	}
	for i := range diffKeys {
		d.keys = append(d.keys, "k"+strconv.Itoa(i))
	}
	// cuckoo serve holds filters only: without SET there is no key of
	// another type to send CF commands to.
	err := d.cs[2].Set(d.ctx, "probe", "a string", 0).Err()
	d.hasSet = err == nil || !strings.HasPrefix(err.Error(), "ERR unknown command")
	if !d.hasSet {
		t.Logf("cuckoo serve has no SET (%v): keys of another type are not compared", err)
	}

	began := time.Now()
	if !testing.Short() {
		d.largeFilter(2)
	}
	d.run()
	t.Logf("compared %d commands over RESP2 and %d over RESP3 (%d random, %d in compound steps), %d differences, in %v",
		d.done[2], d.done[3], d.random, d.done[2]+d.done[3]-d.random, d.diffs, time.Since(began).Round(time.Millisecond))
	d.summary()
}

// startAnchor starts the RedisBloom the run compares against:
// $CUCKOO_DIFF_ANCHOR, 8.6 (Redis 8.6.3 with RedisBloom 8.6.2) or 2.6
// (Redis 7.0.15 with the RedisBloom 2.6.28 module); unset, Redis 8 when it
// is built (redistest.Redis8), else 2.6. It logs which, and skips the test,
// saying why, when the one chosen is missing.
func startAnchor(t *testing.T) (cf.Compat, string) {
	want := os.Getenv("CUCKOO_DIFF_ANCHOR")
	switch want {
	case "":
		if _, _, why := redistest.Redis8(); why != "" {
			if _, why26 := redistest.RedisBloomModule(); why26 != "" {
				t.Skipf("neither RedisBloom is here to compare with: %s; %s", why, why26)
			}
			t.Logf("anchor: RedisBloom 2.6.28 in Redis 7 (redisbloom-compat 2.6), as %s", why)
			return cf.Compat26, redistest.StartRedisBloom(t)
		}
		fallthrough
	case "8.6":
		addr := redistest.StartRedis8(t)
		t.Logf("anchor: RedisBloom 8.6.2 in Redis 8.6.3 (redisbloom-compat 8.6); CUCKOO_DIFF_ANCHOR=2.6 compares with 2.6.28")
		return cf.Compat86, addr
	case "2.6":
		addr := redistest.StartRedisBloom(t)
		t.Logf("anchor: RedisBloom 2.6.28 in Redis 7 (redisbloom-compat 2.6)")
		return cf.Compat26, addr
	}
	t.Fatalf("CUCKOO_DIFF_ANCHOR=%q: want 8.6 or 2.6", want)
	return 0, ""
}

// differ drives both servers and compares their replies.
type differ struct {
	t        *testing.T
	anchor   cf.Compat // the RedisBloom release compared with
	seed     uint64
	ctx      context.Context
	rng      *rand.Rand
	rb, cs   [4]*redis.Client // by protocol: [2] and [3]
	keys     []string
	maxDiffs int

	want, done [4]int   // commands to compare, and compared, by protocol
	random     int      // commands generated one by one (the rest are compound steps)
	index      int      // the next command's index, reported with a difference
	pending    []call   // the batch being built
	lastCS     []result // cuckoo serve's replies to the last batch
	fresh      int      // counter for key names used once
	lookup     bool     // item() is picking an item to look up
	lastCheck  int

	diffs, reported int
	stats           map[string]*kindStats
	stop            bool

	// What the run reached: RedisBloom's error replies, and lookups of
	// items no command adds.
	rbErrors                      map[string]int
	absentLookups, falsePositives int
	didNotFit, chunksOver         int
	hasSet                        bool // cuckoo serve has SET, and so keys of another type
}

// call is one command and the kind it is counted and reported under; after
// is the command it checks the effect of, reported with it.
type call struct {
	kind   string
	args   []any
	csArgs []any // what cuckoo serve is sent, if not args (each server's own DUMP payload)
	after  []any
}

// kindStats counts the commands of a kind and their differences, grouped
// by pattern: the two replies with their numbers left out.
type kindStats struct {
	sent, differ int
	patterns     map[string]*patternStats
}

type patternStats struct {
	n       int
	example string // the first difference of the pattern
}

// result is one server's reply: the value go-redis parsed, or an error.
type result struct {
	val any
	err error
}

// run sends commands until each protocol's count is reached or too many
// differences were reported.
func (d *differ) run() {
	for !d.stop && (d.done[2] < d.want[2] || d.done[3] < d.want[3]) {
		proto := 2
		if d.done[2] >= d.want[2] || (d.done[3] < d.want[3] && d.rng.IntN(6) == 0) {
			proto = 3
		}
		n := 1 + d.rng.IntN(64)
		for range n {
			d.step(proto)
			if d.stop {
				return
			}
		}
		d.flush(proto)
		if d.done[2]+d.done[3] >= d.lastCheck+diffCheckAll {
			d.lastCheck = d.done[2] + d.done[3]
			for _, k := range d.keys {
				d.compareKey(2, "check-all", k)
			}
		}
	}
}

// add queues random commands in the batch.
func (d *differ) add(calls ...call) {
	d.pending = append(d.pending, calls...)
	d.random += len(calls)
}

// flush sends the batch to both servers, pipelined, and compares each reply.
func (d *differ) flush(proto int) []result {
	calls := d.pending
	d.pending = nil
	if len(calls) == 0 {
		return nil
	}
	exec := func(c *redis.Client) []result {
		pipe := c.Pipeline()
		cmds := make([]*redis.Cmd, len(calls))
		for i, cl := range calls {
			args := cl.args
			if c == d.cs[proto] && cl.csArgs != nil {
				args = cl.csArgs
			}
			cmds[i] = pipe.Do(d.ctx, args...)
		}
		pipe.Exec(d.ctx) // each command keeps its own error
		out := make([]result, len(calls))
		for i, c := range cmds {
			out[i].val, out[i].err = c.Result()
		}
		return out
	}
	var rb, cs []result
	var wg sync.WaitGroup
	wg.Go(func() { rb = exec(d.rb[proto]) })
	cs = exec(d.cs[proto])
	wg.Wait()
	d.lastCS = cs

	tainted := map[string]bool{}
	for i, cl := range calls {
		index := d.index
		d.index++
		d.done[proto]++
		for side, r := range []result{rb[i], cs[i]} {
			if r.err != nil && !isReply(r.err) { // isReply: commands_sample_test.go
				d.t.Fatalf("seed %d, command %d %s over RESP%d: the connection to %s failed (did it crash?): %v",
					d.seed, index, show(cl.args), proto, []string{"RedisBloom", "cuckoo"}[side], r.err)
			}
		}
		d.observe(cl, rb[i])
		keys := keysOf(cl.args)
		st := d.kind(cl.kind)
		st.sent++
		if slices.ContainsFunc(keys, func(k string) bool { return tainted[k] }) {
			continue // a key of it differs already: not compared
		}
		if r, c := d.normal(cl, rb[i]), d.normal(cl, cs[i]); !sameResult(r, c) {
			d.difference(proto, index, cl, r, c)
			for _, k := range keys {
				tainted[k] = true
			}
		}
	}
	for k := range tainted {
		d.resync(k)
	}
	return rb
}

// observe counts RedisBloom's error replies, false positives, items
// CF.INSERT could not fit and chunks written over filters.
func (d *differ) observe(cl call, rb result) {
	if rb.err != nil && rb.err != redis.Nil {
		d.rbErrors[digits.ReplaceAllString(rb.err.Error(), "#")]++
	}
	if a, ok := rb.val.([]any); ok && strings.HasPrefix(cl.kind, "CF.INSERT") {
		for _, e := range a {
			if e == any(int64(-1)) || e == any(false) {
				d.didNotFit++
			}
		}
	}
	if cl.kind == "CF.LOADCHUNK chunk over a filter" && rb.err == nil {
		d.chunksOver++
	}
	if cl.kind == "CF.EXISTS" && rb.err == nil && strings.HasPrefix(cl.args[2].(string), "absent:") {
		d.absentLookups++
		if rb.val == int64(1) || rb.val == true {
			d.falsePositives++
		}
	}
}

// one sends a single command to both servers and compares the replies; it
// returns RedisBloom's reply, and whether the two were the same.
func (d *differ) one(proto int, kind string, args ...any) (result, bool) {
	d.flush(proto) // what is queued goes first
	before := d.diffs
	d.pending = []call{{kind: kind, args: args}}
	r := d.flush(proto)
	return r[0], d.diffs == before
}

// resync deletes key on both servers after a difference, so the run goes on
// from the same state.
func (d *differ) resync(key string) {
	for _, c := range []*redis.Client{d.rb[2], d.cs[2]} {
		if err := c.Del(d.ctx, key).Err(); err != nil {
			d.t.Fatalf("resync DEL %s: %v", key, err)
		}
	}
}

func (d *differ) kind(kind string) *kindStats {
	st := d.stats[kind]
	if st == nil {
		st = &kindStats{}
		d.stats[kind] = st
	}
	return st
}

// difference records and reports one difference.
func (d *differ) difference(proto, index int, cl call, rb, cs result) {
	d.diffs++
	st := d.kind(cl.kind)
	st.differ++
	msg := fmt.Sprintf("%s\n\tRedisBloom: %s\n\tcuckoo:     %s%s", show(cl.args), showResult(rb), showResult(cs), firstDiff(rb, cs))
	if cl.after != nil {
		msg = fmt.Sprintf("%s (after %s, answered alike)", msg, show(cl.after))
	}
	pat := pattern(rb) + " / " + pattern(cs)
	if st.patterns == nil {
		st.patterns = map[string]*patternStats{}
	}
	ps := st.patterns[pat]
	if ps == nil {
		ps = &patternStats{example: msg}
		st.patterns[pat] = ps
	}
	ps.n++
	if st.differ > diffPerKind {
		return
	}
	d.reported++
	d.t.Errorf("seed %d, command %d over RESP%d, %s: replies differ:\n\t%s", d.seed, index, proto, cl.kind, msg)
	if d.reported >= d.maxDiffs {
		d.t.Errorf("stopping after %d reported differences (CUCKOO_DIFF_MAX_DIFFS)", d.reported)
		d.stop = true
	}
}

// summary logs the kinds of command sent and RedisBloom's error replies
// (what the run reached), then reports each kind that differed: each
// pattern of difference, with its first example.
func (d *differ) summary() {
	kinds := make([]string, 0, len(d.stats))
	for k := range d.stats {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var b strings.Builder
	fmt.Fprintf(&b, "commands by kind (sent, differing):\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "\t%-40s %7d %5d\n", k, d.stats[k].sent, d.stats[k].differ)
	}
	fmt.Fprintf(&b, "RedisBloom's error replies:\n")
	errs := slices.Sorted(maps.Keys(d.rbErrors))
	for _, e := range errs {
		fmt.Fprintf(&b, "\t%7d %s\n", d.rbErrors[e], e)
	}
	fmt.Fprintf(&b, "false positives: CF.EXISTS found %d of %d items never added\n", d.falsePositives, d.absentLookups)
	fmt.Fprintf(&b, "CF.INSERT items that did not fit: %d; chunks of random bytes written over a filter: %d\n", d.didNotFit, d.chunksOver)
	d.t.Log(b.String())
	b.Reset()
	for _, k := range kinds {
		st := d.stats[k]
		if st.differ == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s: %d of %d differ\n", k, st.differ, st.sent)
		pats := slices.SortedFunc(maps.Keys(st.patterns), func(a, b string) int {
			return cmp.Or(st.patterns[b].n-st.patterns[a].n, strings.Compare(a, b))
		})
		for i, p := range pats {
			if i == diffPatterns {
				fmt.Fprintf(&b, "    and %d more patterns\n", len(pats)-i)
				break
			}
			fmt.Fprintf(&b, "    %d× %s, first:\n\t%s\n", st.patterns[p].n, p, st.patterns[p].example)
		}
	}
	if b.Len() > 0 {
		d.t.Errorf("summary of the differing kinds:%s", b.String())
	}
}

// dumpFooter is the end of a DUMP payload: the RDB version (2 bytes) and a
// CRC-64 of all before it (8 bytes).
const dumpFooter = 10

// normal is r as compared: a DUMP payload without its footer when the
// anchor is Redis 8, whose payloads carry its RDB version (13, this
// server's RESTORE takes up to 10 until it learns Redis 8's payloads) and
// so another CRC; the bodies, the filter's bytes, are compared whole.
func (d *differ) normal(cl call, r result) result {
	if s, ok := r.val.(string); ok && d.anchor == cf.Compat86 && len(s) >= dumpFooter &&
		strings.EqualFold(fmt.Sprint(cl.args[0]), "DUMP") {
		r.val = s[:len(s)-dumpFooter]
	}
	return r
}

func sameResult(a, b result) bool {
	if (a.err == nil) != (b.err == nil) {
		return false
	}
	if a.err != nil {
		return a.err.Error() == b.err.Error()
	}
	return reflect.DeepEqual(a.val, b.val)
}

// keysOf are the keys a command names: DEL's and EXISTS's arguments, the
// first of any other command.
func keysOf(args []any) []string {
	if len(args) < 2 || args[0] == "CONFIG" {
		return nil
	}
	n := 2
	if args[0] == "DEL" || args[0] == "EXISTS" {
		n = len(args)
	}
	var keys []string
	for _, a := range args[1:n] {
		if k, ok := a.(string); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// show renders a command or a value: strings quoted (long ones cut, with
// their length), integers bare, arrays in brackets, maps in braces.
func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "nil"
	case int, int64, bool:
		return fmt.Sprint(v)
	case string:
		if len(v) > 128 { // CF.DEBUG's line whole, a chunk's start
			return fmt.Sprintf("%q…(%d bytes)", v[:64], len(v))
		}
		return strconv.Quote(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = show(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case map[any]any:
		parts := make([]string, 0, len(v))
		for k, e := range v {
			parts = append(parts, show(k)+": "+show(e))
		}
		slices.Sort(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return fmt.Sprintf("%T(%v)", v, v)
	}
}

// pattern is a reply with its numbers and strings left out: an error's
// text with # for each number, or a value's type.
func pattern(r result) string {
	switch {
	case r.err == redis.Nil:
		return "nil"
	case r.err != nil:
		return strconv.Quote(digits.ReplaceAllString(r.err.Error(), "#"))
	}
	switch v := r.val.(type) {
	case []any:
		if len(v) > 0 {
			return fmt.Sprintf("array of %T", v[0])
		}
	}
	return fmt.Sprintf("%T", r.val)
}

var digits = regexp.MustCompile(`-?[0-9]+`)

func showResult(r result) string {
	switch {
	case r.err == redis.Nil:
		return "nil"
	case r.err != nil:
		return "(error) " + strconv.Quote(r.err.Error())
	}
	return show(r.val)
}

// firstDiff points at the first differing byte of two long strings (a
// chunk, a payload), or of the strings in two arrays.
func firstDiff(a, b result) string {
	if a.err != nil || b.err != nil {
		return ""
	}
	sa, sb := flat(a.val), flat(b.val)
	if sa == sb || len(sa) < 64 && len(sb) < 64 {
		return ""
	}
	for i := range min(len(sa), len(sb)) {
		if sa[i] != sb[i] {
			return fmt.Sprintf("\n\tfirst difference at byte %d of the strings: %#x, %#x", i, sa[i], sb[i])
		}
	}
	return fmt.Sprintf("\n\tthe strings are of %d and %d bytes", len(sa), len(sb))
}

func flat(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, e := range v {
			b.WriteString(flat(e))
		}
		return b.String()
	}
	return ""
}

// The generator. step queues one random command, or runs a compound step
// (a CF.SCANDUMP walk, a copy through CF.LOADCHUNK or RESTORE) at once.

// diffOps are the steps and their weights.
var diffOps = []struct {
	weight int
	f      func(d *differ, proto int)
}{
	{50, func(d *differ, _ int) { d.add(d.reserve()...) }},
	{200, func(d *differ, _ int) { d.add(call{kind: "CF.ADD", args: []any{d.name("CF.ADD"), d.key(), d.item()}}) }},
	{70, func(d *differ, _ int) {
		d.add(call{kind: "CF.ADDNX", args: []any{d.name("CF.ADDNX"), d.key(), d.item()}})
	}},
	{90, func(d *differ, _ int) { d.add(d.insert()) }},
	{120, func(d *differ, _ int) {
		d.add(call{kind: "CF.EXISTS", args: []any{d.name("CF.EXISTS"), d.key(), d.lookupItem()}})
	}},
	{50, func(d *differ, _ int) {
		d.add(call{kind: "CF.MEXISTS", args: append([]any{d.name("CF.MEXISTS"), d.key()}, d.items(1+d.rng.IntN(10))...)})
	}},
	{50, func(d *differ, _ int) {
		d.add(call{kind: "CF.COUNT", args: []any{d.name("CF.COUNT"), d.key(), d.lookupItem()}})
	}},
	{100, func(d *differ, _ int) {
		d.add(call{kind: "CF.DEL", args: []any{d.name("CF.DEL"), d.key(), d.lookupItem()}})
	}},
	{20, func(d *differ, _ int) { d.add(call{kind: "CF.INFO", args: []any{d.name("CF.INFO"), d.key()}}) }},
	{20, func(d *differ, _ int) { d.add(call{kind: "CF.DEBUG", args: []any{d.name("CF.DEBUG"), d.key()}}) }},
	{5, func(d *differ, _ int) { d.add(call{kind: "CF.COMPACT", args: []any{d.name("CF.COMPACT"), d.key()}}) }},
	{6, func(d *differ, _ int) { d.add(d.keyspace()) }},
	{1, func(d *differ, _ int) {
		if d.hasSet {
			d.add(call{kind: "SET (another type)", args: []any{"SET", d.key(), "a string"}})
		}
	}},
	{20, func(d *differ, _ int) { d.add(d.wrongArity()) }},
	{2, func(d *differ, _ int) {
		d.add(call{kind: "unknown command", args: []any{"CF." + []string{"NOSUCH", "ADDS", "RESERVED", "MADD"}[d.rng.IntN(4)], d.key()}})
	}},
	{10, func(d *differ, _ int) { d.add(d.scanDumpAt()) }},
	{10, func(d *differ, _ int) { d.add(call{kind: "DUMP", args: []any{"DUMP", d.key()}}) }},
	{15, func(d *differ, _ int) { d.add(d.badLoadChunk()...) }},
	{8, func(d *differ, proto int) { d.walk(proto, "CF.SCANDUMP walk", d.key()) }},
	{4, func(d *differ, proto int) { d.copyByChunks(proto) }},
	{3, func(d *differ, proto int) { d.syntheticLoad(proto) }},
	{4, func(d *differ, proto int) { d.restore(proto) }},
	{1, func(d *differ, proto int) { d.bigExpansion(proto) }},
	{6, func(d *differ, _ int) {
		if d.anchor == cf.Compat86 { // Redis 7 has no cf-* settings
			d.add(d.configSet()...)
		}
	}},
}

var diffWeights = func() int {
	n := 0
	for _, op := range diffOps {
		n += op.weight
	}
	return n
}()

func (d *differ) step(proto int) {
	w := d.rng.IntN(diffWeights)
	for _, op := range diffOps {
		if w < op.weight {
			op.f(d, proto)
			return
		}
		w -= op.weight
	}
}

func (d *differ) key() string { return d.keys[d.rng.IntN(len(d.keys))] }

// name is a command's name, now and then in lower or mixed case.
func (d *differ) name(n string) string {
	switch d.rng.IntN(20) {
	case 0:
		return strings.ToLower(n)
	case 1:
		b := []byte(n)
		for i, c := range b {
			if 'A' <= c && c <= 'Z' && d.rng.IntN(2) == 0 {
				b[i] = c + 'a' - 'A'
			}
		}
		return string(b)
	}
	return n
}

// item is mostly one of diffItemSpace names, sometimes one that is never
// added (for lookups), empty, binary or long.
func (d *differ) item() string {
	switch r := d.rng.IntN(100); {
	case r < 85:
		return "item:" + strconv.Itoa(d.rng.IntN(diffItemSpace))
	case r < 95:
		if d.lookup {
			return "absent:" + strconv.Itoa(d.rng.IntN(1<<20))
		}
		return "item:" + strconv.Itoa(d.rng.IntN(diffItemSpace))
	case r < 96:
		return ""
	case r < 98:
		return string(d.bytes(1 + d.rng.IntN(16)))
	default:
		return strings.Repeat("long item ", 10+d.rng.IntN(100)) + strconv.Itoa(d.rng.IntN(50))
	}
}

// lookupItem is an item for a lookup or a delete: now and then one that no
// command adds, so that CF.EXISTS shows false positives.
func (d *differ) lookupItem() string {
	d.lookup = true
	defer func() { d.lookup = false }()
	return d.item()
}

func (d *differ) items(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = d.item()
	}
	return out
}

func (d *differ) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(d.rng.UintN(256))
	}
	return b
}

// spell is an option keyword in upper, lower or mixed case.
func (d *differ) spell(kw string) string {
	switch d.rng.IntN(6) {
	case 0:
		return strings.ToLower(kw)
	case 1:
		return kw[:1] + strings.ToLower(kw[1:])
	}
	return kw
}

// capacity is log-uniform in [1, 5000], now and then up to 2^20.
func (d *differ) capacity() int64 {
	if d.rng.IntN(50) == 0 {
		return 5000 + d.rng.Int64N(1<<20-5000)
	}
	return int64(math.Exp(d.rng.Float64() * math.Log(5000)))
}

var reserveOptions = []string{"BUCKETSIZE", "MAXITERATIONS", "EXPANSION"}

// reserve is CF.RESERVE, half the time after DEL of its key (else it finds
// most keys taken), with any mix of options, good and bad values, repeated,
// unknown or value-less options and extreme capacities.
//
// RedisBloom looks each option up anywhere in the arguments and reads the
// argument after it, even past the last one: so no command whose last
// argument is an option name is sent with an odd count (the one count
// RedisBloom parses). A huge capacity is one RedisBloom refuses (more than
// 2^56 buckets), never one it would try to allocate.
func (d *differ) reserve() []call {
	key := d.key()
	var out []call
	if d.rng.IntN(2) == 0 {
		out = append(out, call{kind: "DEL", args: []any{"DEL", key}})
	}
	kind := "CF.RESERVE"
	huge := false
	var capArg any = d.capacity()
	if d.rng.IntN(12) == 0 {
		kind = "CF.RESERVE extreme capacity"
		switch d.rng.IntN(8) {
		case 0:
			capArg = 0
		case 1:
			capArg = -1 - d.rng.Int64N(1000)
		case 2:
			capArg = int64(1<<62) + d.rng.Int64N(1<<62)
			huge = true
		case 3:
			capArg = "99999999999999999999"
		case 4:
			capArg = []string{"ten", "", "1.5", "1e3", " 5", "0x10", "+100", "0100"}[d.rng.IntN(8)]
		case 5:
			capArg = 1 + d.rng.Int64N(3)
		case 6:
			capArg = int64(math.MaxInt64)
			huge = true
		default:
			capArg = "-0"
		}
	}
	args := []any{d.name("CF.RESERVE"), key, capArg}
	bad := d.rng.IntN(4) == 0
	for _, i := range d.rng.Perm(3)[:d.rng.IntN(4)] {
		opt := reserveOptions[i]
		args = append(args, d.spell(opt), d.optionValue(opt, bad, huge))
	}
	if bad {
		switch d.rng.IntN(4) {
		case 0:
			kind = "CF.RESERVE repeated option"
			opt := reserveOptions[d.rng.IntN(3)]
			for range 2 {
				at := 3 + 2*d.rng.IntN((len(args)-3)/2+1)
				args = slices.Insert(args, at, any(d.spell(opt)), d.optionValue(opt, d.rng.IntN(3) == 0, huge))
			}
		case 1:
			kind = "CF.RESERVE unknown option"
			at := 3 + 2*d.rng.IntN((len(args)-3)/2+1)
			name := []string{"FOO", "BUCKET", "EXPANSIONS", "CAPACITY", "ITEMS", "NONSCALING", "ERROR"}[d.rng.IntN(7)]
			args = slices.Insert(args, at, any(name), any(strconv.Itoa(d.rng.IntN(10))))
		case 2:
			kind = "CF.RESERVE option without value"
			for range 1 + d.rng.IntN(2) { // two keep the count odd
				at := 3 + 2*d.rng.IntN((len(args)-3)/2+1)
				args = slices.Insert(args, at, any(d.spell(reserveOptions[d.rng.IntN(3)])))
			}
		default:
			kind = "CF.RESERVE bad option value"
		}
	}
	if len(args)%2 == 1 && len(args) >= 5 {
		if last, ok := args[len(args)-1].(string); ok && slices.Contains(reserveOptions, strings.ToUpper(last)) {
			args = append(args[:len(args)-1], any("7")) // see above: never an option name last
		}
	}
	// A RESERVE both accept may still make different filters: the
	// figures right after it say so.
	return append(out, call{kind: kind, args: args}, call{kind: kind + ": CF.INFO", args: []any{"CF.INFO", key}, after: args})
}

// optionValue is a value for a CF.RESERVE option: in its range, or with bad
// a value out of range or not a number. With huge (capacity) the bucket
// size stays at most 64, so that RedisBloom refuses the capacity.
func (d *differ) optionValue(opt string, bad, huge bool) any {
	if bad && d.rng.IntN(2) == 0 {
		switch opt {
		case "BUCKETSIZE":
			return []any{0, 256, -1, 1000, "x", "", "2.0", "+3", "03"}[d.rng.IntN(9)]
		case "MAXITERATIONS":
			return []any{0, 65536, -5, "many", "1e2", "+7", "-0"}[d.rng.IntN(7)]
		default:
			return []any{-1, 32769, 100000, "z", " 1", "+2", "-0", "02"}[d.rng.IntN(8)]
		}
	}
	switch opt {
	case "BUCKETSIZE":
		switch {
		case d.rng.IntN(10) == 0 && !huge:
			return 1 + d.rng.IntN(255)
		case huge:
			return 1 + d.rng.IntN(64)
		}
		return 1 + d.rng.IntN(8)
	case "MAXITERATIONS":
		if d.rng.IntN(20) == 0 {
			return []int{1, 500, 65535}[d.rng.IntN(3)]
		}
		return 1 + d.rng.IntN(50)
	default:
		return d.rng.IntN(5) // 3 becomes 4, as RedisBloom rounds up
	}
}

// insert is CF.INSERT or CF.INSERTNX with CAPACITY, NOCREATE and ITEMS in
// any order, sometimes abbreviated or malformed.
func (d *differ) insert() call {
	name := "CF.INSERT"
	if d.rng.IntN(3) == 0 {
		name = "CF.INSERTNX"
	}
	kind := name
	args := []any{d.name(name), d.key()}
	capWord, noWord, itemsWord := "CAPACITY", "NOCREATE", "ITEMS"
	switch d.rng.IntN(12) {
	case 0:
		kind += " abbreviated option"
		capWord = []string{"C", "CAP", "capacit", "CAPACITYX", "cx"}[d.rng.IntN(5)]
		noWord = []string{"N", "NO", "NOCREAT", "nothing"}[d.rng.IntN(4)]
		itemsWord = []string{"I", "ITEM", "items2", "ix"}[d.rng.IntN(4)]
	case 1:
		kind += " bad form"
	}
	for _, i := range d.rng.Perm(2)[:d.rng.IntN(3)] {
		if i == 0 {
			var c any = d.capacity()
			if kind == name+" bad form" || d.rng.IntN(20) == 0 {
				c = []any{"x", -3, 0, 3, "", "99999999999999999999", "+100", "0100"}[d.rng.IntN(8)]
			}
			args = append(args, d.spell(capWord), c)
		} else {
			args = append(args, d.spell(noWord))
		}
	}
	n := 1 + d.rng.IntN(10)
	if kind == name+" bad form" {
		switch d.rng.IntN(5) {
		case 0: // ITEMS with no items
			n = 0
		case 1: // no ITEMS
			return call{kind: kind, args: append(args, d.items(1+d.rng.IntN(3))...)}
		case 2: // an unknown option
			args = append(args, []string{"FOO", "EXPANSION", "", "BUCKETSIZE"}[d.rng.IntN(4)])
		case 3: // CAPACITY last, without its value
			return call{kind: kind, args: append(args, d.spell("CAPACITY"))}
		}
	}
	args = append(args, d.spell(itemsWord))
	return call{kind: kind, args: append(args, d.items(n)...)}
}

// keyspace is DEL, EXISTS or TYPE of one or two keys.
func (d *differ) keyspace() call {
	switch d.rng.IntN(3) {
	case 0:
		args := []any{"DEL", d.key()}
		if d.rng.IntN(4) == 0 {
			args = append(args, d.key())
		}
		return call{kind: "DEL", args: args}
	case 1:
		return call{kind: "EXISTS", args: []any{"EXISTS", d.key(), d.key()}}
	}
	return call{kind: "TYPE", args: []any{"TYPE", d.key()}}
}

// wrongArity is a CF command with too few or too many arguments.
func (d *differ) wrongArity() call {
	k, it := d.key(), d.item()
	forms := map[string][][]any{
		"CF.RESERVE":   {{}, {k}, {k, 100, "BUCKETSIZE"}, {k, 100, "EXPANSION", 1, "BUCKETSIZE"}},
		"CF.ADD":       {{}, {k}, {k, it, it}},
		"CF.ADDNX":     {{}, {k}, {k, it, it}},
		"CF.INSERT":    {{}, {k}, {k, "ITEMS"}, {k, "NOCREATE", "ITEMS"}},
		"CF.INSERTNX":  {{}, {k}, {k, "ITEMS"}},
		"CF.EXISTS":    {{}, {k}, {k, it, it}},
		"CF.MEXISTS":   {{}, {k}},
		"CF.COUNT":     {{}, {k}, {k, it, it}},
		"CF.DEL":       {{}, {k}, {k, it, it}},
		"CF.INFO":      {{}, {k, it}},
		"CF.DEBUG":     {{}, {k, it}},
		"CF.COMPACT":   {{}, {k, it}},
		"CF.SCANDUMP":  {{}, {k}, {k, 0, 1}},
		"CF.LOADCHUNK": {{}, {k}, {k, 1}, {k, 1, "x", "y"}},
	}
	names := make([]string, 0, len(forms))
	for n := range forms {
		names = append(names, n)
	}
	slices.Sort(names)
	n := names[d.rng.IntN(len(names))]
	f := forms[n][d.rng.IntN(len(forms[n]))]
	return call{kind: "wrong arity " + n, args: append([]any{d.name(n)}, f...)}
}

// scanDumpAt is CF.SCANDUMP at any iterator: the start, inside or past
// the filter, negative, not a number.
func (d *differ) scanDumpAt() call {
	var it any
	switch d.rng.IntN(6) {
	case 0:
		it = 0
	case 1:
		it = 1 + d.rng.IntN(300)
	case 2:
		it = 1 + d.rng.IntN(100_000)
	case 3:
		it = -1 - d.rng.IntN(5)
	case 4:
		it = []string{"x", "", "1.0", "9223372036854775807", "-9223372036854775808", "+1", "01", "-0"}[d.rng.IntN(8)]
	default:
		it = 1<<20 + d.rng.IntN(1<<24)
	}
	return call{kind: "CF.SCANDUMP at any iterator", args: []any{d.name("CF.SCANDUMP"), d.key(), it}}
}

// header is RedisBloom's CF.SCANDUMP header with these fields.
func header(items, buckets, deletes, filters uint64, bucketSize, maxIter, expansion uint16) []byte {
	b := make([]byte, 0, diffHeaderLen)
	b = binary.LittleEndian.AppendUint64(b, items)
	b = binary.LittleEndian.AppendUint64(b, buckets)
	b = binary.LittleEndian.AppendUint64(b, deletes)
	b = binary.LittleEndian.AppendUint64(b, filters)
	b = binary.LittleEndian.AppendUint16(b, bucketSize)
	b = binary.LittleEndian.AppendUint16(b, maxIter)
	return binary.LittleEndian.AppendUint16(b, expansion)
}

// headerSafe tells whether RedisBloom may be given header: either it
// refuses it before allocating (its integrity check), or its sub-filters
// take at most 1 MiB. (RedisBloom allocates what a header it takes asks for,
// and aborts when it cannot.)
func headerSafe(h []byte) bool {
	buckets := binary.LittleEndian.Uint64(h[8:])
	filters := binary.LittleEndian.Uint64(h[24:]) & 0xffff // RedisBloom keeps 16 bits
	bs := binary.LittleEndian.Uint16(h[32:])
	maxIter := binary.LittleEndian.Uint16(h[34:])
	exp := binary.LittleEndian.Uint16(h[36:])
	if bs == 0 || bs > 255 || buckets == 0 || buckets >= 1<<56 || buckets&(buckets-1) != 0 ||
		filters == 0 || maxIter == 0 || exp == 0 && filters > 1 {
		return true // refused
	}
	total := 0.0
	for i := range filters {
		total += float64(buckets) * math.Pow(float64(exp), float64(i)) * float64(bs)
	}
	return total <= 1<<20
}

// invalidHeader is a header RedisBloom refuses: one field out of its range,
// or random bytes.
func (d *differ) invalidHeader() (string, []byte) {
	switch d.rng.IntN(9) {
	case 0:
		return "bucket size 0", header(1, 64, 0, 1, 0, 20, 1)
	case 1:
		return "bucket size 256", header(1, 64, 0, 1, 256, 20, 1)
	case 2:
		return "no buckets", header(1, 0, 0, 1, 2, 20, 1)
	case 3:
		return "buckets not a power of 2", header(1, 48, 0, 1, 2, 20, 1)
	case 4:
		return "too many buckets", header(1, 1<<57, 0, 1, 2, 20, 1)
	case 5:
		return "no filters", header(1, 64, 0, 0, 2, 20, 1)
	case 6:
		return "2^16 filters", header(1, 64, 0, 1<<16, 2, 20, 1)
	case 7:
		return "max iterations 0", header(1, 64, 0, 1, 2, 0, 1)
	}
	return "random bytes", d.bytes(diffHeaderLen)
}

// validHeader is a small header RedisBloom takes (at most 1 MiB of
// sub-filters), and the sizes of its sub-filters. Its expansion is taken as
// it is, not rounded to a power of 2, and its item count may be anything.
func (d *differ) validHeader() ([]byte, []int) {
	for {
		bs := 1 + d.rng.IntN(4)
		buckets := 1 << d.rng.IntN(9)
		exp := d.rng.IntN(5)
		filters := 1 + d.rng.IntN(4)
		if d.rng.IntN(8) == 0 {
			filters, exp, buckets = 28+d.rng.IntN(10), 1, 1<<d.rng.IntN(3)
		}
		if exp == 0 {
			filters = 1
		}
		var sizes []int
		total := 0
		for i := range filters {
			s := buckets * int(math.Pow(float64(exp), float64(i))) * bs
			sizes, total = append(sizes, s), total+s
		}
		if total > 1<<20 {
			continue
		}
		items := []uint64{0, 1, uint64(d.rng.IntN(1000)), 1<<63 + uint64(d.rng.IntN(1000)), math.MaxUint64}[d.rng.IntN(5)]
		deletes := []uint64{0, uint64(d.rng.IntN(100)), math.MaxUint64}[d.rng.IntN(3)]
		nf := uint64(filters)
		if d.rng.IntN(10) == 0 {
			nf |= 1 << 16 // RedisBloom keeps the low 16 bits
		}
		return header(items, uint64(buckets), deletes, nf, uint16(bs), uint16(1+d.rng.IntN(100)), uint16(exp)), sizes
	}
}

// badLoadChunk is CF.LOADCHUNK in a bad form: iterator 0, negative or not
// a number; a header of the wrong length, of garbage or out of range; a
// chunk beyond the filter, empty, or for a missing key; or a chunk of
// random bytes written over part of a filter.
func (d *differ) badLoadChunk() []call {
	k := d.key()
	missing := "missing:" + strconv.Itoa(d.fresh)
	d.fresh++
	lc := d.name("CF.LOADCHUNK")
	switch d.rng.IntN(10) {
	case 0:
		return []call{{kind: "CF.LOADCHUNK iterator 0", args: []any{lc, k, 0, string(d.bytes(10))}}}
	case 1:
		h, _ := d.validHeader()
		return []call{{kind: "CF.LOADCHUNK negative iterator", args: []any{lc, []string{k, missing}[d.rng.IntN(2)], -1 - d.rng.IntN(1000), string(h)}}}
	case 2:
		return []call{{kind: "CF.LOADCHUNK iterator not a number", args: []any{lc, k, []string{"x", "", "1.5", "99999999999999999999", "+1", "-0", "+5", "05"}[d.rng.IntN(8)], "data"}}}
	case 3:
		n := []int{0, 1, diffHeaderLen - 1, diffHeaderLen + 1, 100}[d.rng.IntN(5)]
		return []call{{kind: "CF.LOADCHUNK header of wrong length", args: []any{lc, missing, 1, string(d.bytes(n))}}}
	case 4:
		what, h := d.invalidHeader()
		return []call{{kind: "CF.LOADCHUNK invalid header: " + what, args: []any{lc, missing, 1, string(h)}}}
	case 5:
		h, _ := d.validHeader()
		return []call{{kind: "DEL", args: []any{"DEL", k}}, {kind: "CF.LOADCHUNK valid header", args: []any{lc, k, 1, string(h)}}}
	case 6:
		h, _ := d.validHeader()
		return []call{{kind: "CF.LOADCHUNK header onto a key", args: []any{lc, k, 1, string(h)}}}
	case 7:
		return []call{{kind: "CF.LOADCHUNK chunk beyond the filter", args: []any{lc, k, 1<<24 + d.rng.IntN(1<<30), string(d.bytes(1 + d.rng.IntN(64)))}}}
	case 8:
		if d.rng.IntN(2) == 0 {
			return []call{{kind: "CF.LOADCHUNK chunk on a missing key", args: []any{lc, missing, 2 + d.rng.IntN(1000), string(d.bytes(1 + d.rng.IntN(8)))}}}
		}
		return []call{{kind: "CF.LOADCHUNK empty chunk", args: []any{lc, k, 2 + d.rng.IntN(1000), ""}}}
	}
	// Random fingerprints over part of a filter: its end iterator anywhere
	// in the first few KiB, so that it often lands.
	n := 1 + d.rng.IntN(64)
	return []call{{kind: "CF.LOADCHUNK chunk over a filter", args: []any{lc, k, 1 + n + d.rng.IntN(4096), string(d.bytes(n))}}}
}

// walk compares a whole CF.SCANDUMP of key, chunk by chunk, and returns
// RedisBloom's chunks (the header first), or nil if the dumps differ.
func (d *differ) walk(proto int, kind, key string) []redis.ScanDump {
	var out []redis.ScanDump
	for it := int64(0); len(out) < 10_000; {
		r, same := d.one(proto, kind, d.name("CF.SCANDUMP"), key, it)
		if !same || r.err != nil {
			return nil
		}
		a, ok := r.val.([]any)
		if !ok || len(a) != 2 {
			d.t.Fatalf("CF.SCANDUMP %s %d: RedisBloom answered %s", key, it, show(r.val))
		}
		next, _ := a[0].(int64)
		data, _ := a[1].(string)
		if next == 0 {
			return out
		}
		out = append(out, redis.ScanDump{Iter: next, Data: data})
		it = next
	}
	d.t.Fatalf("CF.SCANDUMP %s never ends", key)
	return nil
}

// compareKey compares all of key: its dump, DUMP payload and CF.INFO.
func (d *differ) compareKey(proto int, kind, key string) {
	d.walk(proto, kind+": CF.SCANDUMP", key)
	d.one(proto, kind+": DUMP", "DUMP", key)
	d.one(proto, kind+": CF.INFO", "CF.INFO", key)
}

// copyByChunks takes one key's dump from RedisBloom and loads it into
// another key on both servers, whole, shuffled, in part, with a changed
// header, or with chunks at the wrong iterator; then compares the copy.
func (d *differ) copyByChunks(proto int) {
	src, dst := d.key(), d.key()
	chunks := d.walk(proto, "CF.LOADCHUNK copy: CF.SCANDUMP", src)
	if len(chunks) == 0 {
		return
	}
	d.one(proto, "DEL", "DEL", dst)
	variant := []string{"whole", "whole", "shuffled", "in part", "changed header", "wrong iterator", "header twice", "chunk first"}[d.rng.IntN(8)]
	kind := "CF.LOADCHUNK copy " + variant
	h := []byte(chunks[0].Data)
	rest := chunks[1:]
	if len(rest) == 0 {
		return
	}
	lc := d.name("CF.LOADCHUNK")
	switch variant {
	case "shuffled":
		d.rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	case "in part":
		rest = rest[:d.rng.IntN(len(rest)+1)]
	case "changed header":
		if len(h) != diffHeaderLen {
			break
		}
		orig := h
		h = slices.Clone(h)
		switch d.rng.IntN(6) {
		case 0: // items
			binary.LittleEndian.PutUint64(h[0:], []uint64{0, 1, uint64(d.rng.IntN(100))}[d.rng.IntN(3)])
		case 1: // deletes
			binary.LittleEndian.PutUint64(h[16:], uint64(d.rng.IntN(1000)))
		case 2: // buckets
			b := binary.LittleEndian.Uint64(h[8:])
			binary.LittleEndian.PutUint64(h[8:], []uint64{b * 2, max(b/2, 1), 3}[d.rng.IntN(3)])
		case 3: // filters
			f := binary.LittleEndian.Uint64(h[24:])
			binary.LittleEndian.PutUint64(h[24:], []uint64{f + 1, max(f-1, 1), f | 1<<16}[d.rng.IntN(3)])
		case 4: // bucket size
			bs := binary.LittleEndian.Uint16(h[32:])
			binary.LittleEndian.PutUint16(h[32:], []uint16{bs + 1, max(bs-1, 1)}[d.rng.IntN(2)])
		default: // max iterations, expansion
			binary.LittleEndian.PutUint16(h[34:], uint16(d.rng.IntN(30)))
			binary.LittleEndian.PutUint16(h[36:], uint16(d.rng.IntN(4)))
		}
		if !headerSafe(h) {
			h = orig
		}
	case "wrong iterator":
		i := d.rng.IntN(len(rest))
		rest[i].Iter += []int64{1, -1, 1 << 20}[d.rng.IntN(3)]
	case "chunk first": // a chunk for a key not there yet
		d.one(proto, kind, lc, dst, rest[0].Iter, rest[0].Data)
	}
	d.one(proto, kind, lc, dst, 1, string(h))
	if variant == "header twice" {
		d.one(proto, kind, lc, dst, 1, string(h))
	}
	for _, c := range rest {
		if _, same := d.one(proto, kind, lc, dst, c.Iter, c.Data); !same {
			return
		}
	}
	d.afterLoad(proto, kind, dst)
}

// afterLoad compares a loaded key, and what a few commands make of it.
func (d *differ) afterLoad(proto int, kind, key string) {
	d.compareKey(proto, kind, key)
	d.one(proto, kind+": CF.DEBUG", "CF.DEBUG", key)
	d.one(proto, kind+": CF.MEXISTS", append([]any{"CF.MEXISTS", key}, d.items(5)...)...)
	for range 3 {
		d.one(proto, kind+": CF.ADD", "CF.ADD", key, d.item())
		d.one(proto, kind+": CF.DEL", "CF.DEL", key, d.item())
	}
	d.compareKey(proto, kind+" then changed", key)
}

// syntheticLoad loads a header made here, then chunks of random
// fingerprints at each sub-filter's iterator.
func (d *differ) syntheticLoad(proto int) {
	key := d.key()
	d.one(proto, "DEL", "DEL", key)
	h, sizes := d.validHeader()
	const kind = "CF.LOADCHUNK synthetic"
	if _, same := d.one(proto, kind, d.name("CF.LOADCHUNK"), key, 1, string(h)); !same {
		return
	}
	if d.rng.IntN(3) == 0 { // the header alone
		d.compareKey(proto, kind+" header only", key)
	}
	if d.rng.IntN(4) == 0 { // some chunks only
		sizes = sizes[:d.rng.IntN(len(sizes)+1)]
	}
	it := 1
	for _, s := range sizes {
		it += s
		data := d.bytes(s)
		for i := range data {
			if d.rng.IntN(2) == 0 {
				data[i] = 0
			}
		}
		if _, same := d.one(proto, kind, "CF.LOADCHUNK", key, it, string(data)); !same {
			return
		}
	}
	d.afterLoad(proto, kind, key)
}

// restore takes one key's DUMP payload (once the two servers' are the
// same) and RESTOREs it into another key on both: fresh, replacing, onto a
// taken key, or damaged. Against Redis 8 each server is given its own
// payload, damaged alike (their bodies are the same, their footers not:
// see normal).
func (d *differ) restore(proto int) {
	src, dst := d.key(), d.key()
	rb, same := d.one(proto, "RESTORE: DUMP", "DUMP", src)
	if !same || rb.err != nil {
		return
	}
	payloads := []string{rb.val.(string), d.lastCS[0].val.(string)}
	variant := []string{"fresh", "fresh", "REPLACE", "onto a taken key", "damaged", "truncated"}[d.rng.IntN(6)]
	kind := "RESTORE payload " + variant
	switch variant {
	case "fresh":
		d.one(proto, "DEL", "DEL", dst)
	case "damaged":
		i, x := d.rng.IntN(len(payloads[0])), byte(1+d.rng.IntN(255))
		for j, p := range payloads {
			b := []byte(p)
			b[i] ^= x
			payloads[j] = string(b)
		}
		d.one(proto, "DEL", "DEL", dst)
	case "truncated":
		n := d.rng.IntN(len(payloads[0]))
		for j, p := range payloads {
			payloads[j] = p[:n]
		}
		d.one(proto, "DEL", "DEL", dst)
	}
	cl := call{kind: kind, args: []any{"RESTORE", dst, 0, payloads[0]}}
	if d.anchor == cf.Compat86 {
		cl.csArgs = []any{"RESTORE", dst, 0, payloads[1]}
	}
	if variant == "REPLACE" {
		cl.args = append(cl.args, "REPLACE")
		if cl.csArgs != nil {
			cl.csArgs = append(cl.csArgs, "REPLACE")
		}
	}
	d.flush(proto)
	before := d.diffs
	d.pending = []call{cl}
	d.flush(proto)
	if d.diffs == before {
		d.compareKey(proto, kind, dst)
	}
}

// cfSettings are RedisBloom 8's cf-* settings, with values the run sets
// them to: small ones, so that a filter created with them stays small.
var cfSettings = []struct {
	name   string
	lo, hi int
	def    string
}{
	{"cf-bucket-size", 1, 6, "2"},
	{"cf-initial-size", 4, 3000, "1024"},
	{"cf-max-iterations", 1, 50, "20"},
	{"cf-expansion-factor", 0, 4, "1"},
	{"cf-max-expansions", 1, 40, "32"},
}

// configSet is CONFIG SET of a cf-* setting (Redis 8 only): a value in the
// small range above, one out of RedisBloom's range or not an integer as
// Redis reads one, two settings at once (each bounds the other), or all
// back to their defaults.
func (d *differ) configSet() []call {
	x := cfSettings[d.rng.IntN(len(cfSettings))]
	var v any = x.lo + d.rng.IntN(x.hi-x.lo+1)
	switch d.rng.IntN(8) {
	case 0:
		v = []string{"0", "-1", "x", "", "+1", "01", "1.5", "-0", "99999999999999999999", "1073741825", "256", "65536", "65537", "32769", "3"}[d.rng.IntN(15)]
	case 1:
		y := cfSettings[d.rng.IntN(len(cfSettings))]
		return []call{{kind: "CONFIG SET two cf-* settings", args: []any{"CONFIG", "SET", x.name, v, y.name, y.lo + d.rng.IntN(y.hi-y.lo+1)}}}
	case 2:
		var out []call
		for _, y := range []int{1, 0, 2, 3, 4} { // cf-initial-size first: it bounds cf-bucket-size
			out = append(out, call{kind: "CONFIG SET cf-* default", args: []any{"CONFIG", "SET", cfSettings[y].name, cfSettings[y].def}})
		}
		return out
	}
	return []call{{kind: "CONFIG SET " + x.name, args: []any{"CONFIG", "SET", x.name, v}}}
}

// largeFilter compares a 24 MiB filter, whose dump RedisBloom cuts into
// chunks of 16 MiB and 8 MiB (the only filters here larger than a chunk):
// its walk, CF.SCANDUMP inside it, DUMP, and a copy through CF.LOADCHUNK.
func (d *differ) largeFilter(proto int) {
	const key, copied = "large", "large-copy"
	const kind = "large filter"
	d.one(proto, kind+": CF.RESERVE", "CF.RESERVE", key, 3<<23, "BUCKETSIZE", 3, "EXPANSION", 2)
	for i := range 200 {
		d.pending = append(d.pending, call{kind: kind + ": CF.ADD", args: []any{"CF.ADD", key, "item:" + strconv.Itoa(i)}})
	}
	d.flush(proto)
	for range 5 {
		d.one(proto, kind+": CF.SCANDUMP inside", "CF.SCANDUMP", key, 1+d.rng.IntN(3<<24))
	}
	chunks := d.walk(proto, kind+": CF.SCANDUMP", key)
	d.one(proto, kind+": DUMP", "DUMP", key)
	for _, c := range chunks { // the header's iterator is 1
		d.one(proto, kind+": CF.LOADCHUNK", "CF.LOADCHUNK", copied, c.Iter, c.Data)
	}
	if len(chunks) > 0 {
		d.compareKey(proto, kind+" copy", copied)
	}
	d.one(proto, "DEL", "DEL", key, copied)
}

// bigExpansion reserves a filter with a large expansion (up to RedisBloom's
// 32768) and so few buckets that its second sub-filter stays small, grows
// it once and compares it.
func (d *differ) bigExpansion(proto int) {
	const key = "big-expansion"
	const kind = "CF.RESERVE large EXPANSION"
	capacity := 2 + d.rng.IntN(3)
	d.one(proto, kind, "CF.RESERVE", key, capacity, "BUCKETSIZE", 1, "EXPANSION", 5+d.rng.IntN(32764))
	for i := range 3 * capacity {
		d.one(proto, kind+": CF.ADD", "CF.ADD", key, "item:"+strconv.Itoa(i))
	}
	d.compareKey(proto, kind, key)
	d.one(proto, kind+": CF.DEBUG", "CF.DEBUG", key)
	d.one(proto, "DEL", "DEL", key)
}
