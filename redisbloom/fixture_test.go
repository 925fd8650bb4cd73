package redisbloom_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

// The fixtures are captured from RedisBloom v2.6.28 (testdata/fixtures)
// and from Redis 8.6.3 with RedisBloom v8.6.2 (testdata/fixtures-redis8)
// by testdata/capture (its doc comment gives the schema and the command);
// testdata/README.md says how to regenerate them.

// fixtureVersion is the RedisBloom every fixture in testdata/fixtures must
// come from: the one this package reproduces.
const fixtureVersion = "v2.6.28"

// redis8Version is the RedisBloom of testdata/fixtures-redis8: Redis 8's,
// whose filters and formats are 2.6.28's, but for the RDB version in a
// DUMP payload's footer (13, Redis 8's).
const redis8Version = "v8.6.2"

type fixture struct {
	Name       string `json:"name"`
	RedisBloom string `json:"redisbloom"`
	Redis      string `json:"redis"`
	Key        string `json:"key"`
	Commands   []struct {
		Args  []string        `json:"args"`
		Reply json.RawMessage `json:"reply"`
	} `json:"commands"`
	Info      json.RawMessage `json:"info"`
	ScanDump  []dumpChunk     `json:"scandump"`
	Dump      []byte          `json:"dump"`
	DumpPlain []byte          `json:"dump_plain"`
	Probes    struct {
		Items  []string `json:"items"`
		Exists []int64  `json:"exists"`
		Count  []uint64 `json:"count"`
	} `json:"probes"`

	named map[string]bool // the items the commands name
}

// dumpChunk is one CF.SCANDUMP call: iter asked, next and data answered.
type dumpChunk struct {
	Iter int64  `json:"iter"`
	Next int64  `json:"next"`
	Data []byte `json:"data"`
}

// RedisBloom's defaults, for the filters CF.ADD and CF.INSERT create.
const (
	defaultCapacity      = 1024
	defaultBucketSize    = 2
	defaultMaxIterations = 20
	defaultExpansion     = 1
)

// loadFixtures reads the fixtures in testdata/dir, each of which must come
// from RedisBloom version.
func loadFixtures(t *testing.T, dir, version string) []*fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no fixtures in testdata/%s", dir)
	}
	var fixtures []*fixture
	for _, path := range paths {
		fx, err := readFixture(path, version)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		fixtures = append(fixtures, fx)
	}
	return fixtures
}

func readFixture(path, version string) (*fixture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	js, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	fx := new(fixture)
	if err := json.Unmarshal(js, fx); err != nil {
		return nil, err
	}
	if fx.RedisBloom != version {
		return nil, fmt.Errorf("captured from RedisBloom %q, want %s", fx.RedisBloom, version)
	}
	if len(fx.ScanDump) == 0 || len(fx.Probes.Exists) != len(fx.Probes.Items) || len(fx.Probes.Count) != len(fx.Probes.Items) {
		return nil, errors.New("malformed fixture: no CF.SCANDUMP chunks, or probe answers that do not match the probes")
	}
	fx.named = map[string]bool{}
	for _, c := range fx.Commands {
		if len(c.Args) < 2 {
			return nil, fmt.Errorf("malformed fixture: command %q has no key", c.Args)
		}
		for _, a := range c.Args[2:] {
			fx.named[a] = true
		}
	}
	return fx, nil
}

// TestFixtures replays each fixture's commands through the Go filter and
// requires RedisBloom's replies, CF.INFO, CF.SCANDUMP chunks and probe
// answers; then loads RedisBloom's chunks and DUMP payloads and requires
// the same answers from them.
func TestFixtures(t *testing.T) {
	runFixtures(t, loadFixtures(t, "fixtures", fixtureVersion))
}

// TestFixturesRedis8 is TestFixtures of Redis 8's fixtures: the same
// replies, chunks and probe answers, and DUMP payloads of RDB version 13
// that ParsePayload reads and that, but for the footer, are the bytes
// AppendPayload writes.
func TestFixturesRedis8(t *testing.T) {
	fixtures := loadFixtures(t, "fixtures-redis8", redis8Version)
	for _, fx := range fixtures {
		for _, p := range [][]byte{fx.Dump, fx.DumpPlain} {
			if _, v, err := rdb.SplitPayload(p); err != nil || v != 13 {
				t.Fatalf("%s: a DUMP payload of RDB version %d (%v), want Redis 8's 13", fx.Name, v, err)
			}
		}
	}
	runFixtures(t, fixtures)
}

func runFixtures(t *testing.T, fixtures []*fixture) {
	for _, fx := range fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			f := replay(t, fx)
			t.Run("info", func(t *testing.T) { checkInfo(t, f, fx) })
			t.Run("scandump", func(t *testing.T) { checkScanDump(t, f, fx) })
			t.Run("probes", func(t *testing.T) { checkProbes(t, f, fx) })
			t.Run("loadchunk", func(t *testing.T) {
				g := loadChunks(t, fx)
				if g == nil {
					return // no items: CF.SCANDUMP gave nothing to load
				}
				checkInfo(t, g, fx)
				checkScanDump(t, g, fx)
				checkProbes(t, g, fx)
			})
			for _, p := range []struct {
				name    string
				payload []byte
			}{{"dump", fx.Dump}, {"dump_plain", fx.DumpPlain}} {
				t.Run("parse-payload/"+p.name, func(t *testing.T) {
					g, err := redisbloom.ParsePayload(p.payload, nil)
					if err != nil {
						t.Fatalf("ParsePayload of RedisBloom's DUMP: %v", err)
					}
					checkInfo(t, g, fx)
					checkScanDump(t, g, fx)
					checkProbes(t, g, fx)
				})
			}
			t.Run("append-payload", func(t *testing.T) { checkAppendPayload(t, f, fx) })
		})
	}
}

// replay runs the fixture's commands through a Go filter, requiring each
// reply to equal RedisBloom's, and returns the filter.
func replay(t *testing.T, fx *fixture) *redisbloom.Filter {
	var f *redisbloom.Filter
	for i, c := range fx.Commands {
		if c.Args[1] != fx.Key {
			t.Fatalf("command %d %q: not on the fixture's key %q", i, c.Args, fx.Key)
		}
		got, err := apply(&f, c.Args)
		if err != nil {
			t.Fatalf("command %d %q: %v", i, c.Args, err)
		}
		if !sameJSON(t, got, c.Reply) {
			js, _ := json.Marshal(got)
			t.Fatalf("command %d %q: replied %s, RedisBloom %s", i, c.Args, js, c.Reply)
		}
	}
	if f == nil {
		t.Fatal("the commands created no filter")
	}
	return f
}

// apply runs one command on *f, creating the filter as RedisBloom would, and
// returns its reply in the fixture's JSON form. An error means the test
// cannot replay the command.
func apply(f **redisbloom.Filter, args []string) (any, error) {
	name, rest := strings.ToUpper(args[0]), args[2:]
	autoCreate := func(capacity uint64) error {
		if *f != nil {
			return nil
		}
		g, err := redisbloom.New(redisbloom.Params{
			Capacity:      capacity,
			BucketSize:    defaultBucketSize,
			MaxIterations: defaultMaxIterations,
			Expansion:     defaultExpansion,
		})
		*f = g
		return err
	}
	switch name {
	case "CF.RESERVE", "CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX":
	default:
		if *f == nil {
			return nil, errors.New("no filter yet") // RedisBloom answers a missing key; no fixture asks
		}
	}

	switch name {
	case "CF.RESERVE":
		if *f != nil {
			return nil, errors.New("the key exists")
		}
		p, err := reserveParams(rest)
		if err != nil {
			return nil, err
		}
		if *f, err = redisbloom.New(p); err != nil {
			return nil, fmt.Errorf("New(%+v): %v", p, err)
		}
		return "OK", nil

	case "CF.ADD", "CF.ADDNX":
		if len(rest) != 1 {
			return nil, errors.New("want one item")
		}
		if err := autoCreate(defaultCapacity); err != nil {
			return nil, err
		}
		r, err := add(*f, name == "CF.ADDNX", []byte(rest[0]))
		if errors.Is(err, redisbloom.ErrFull) {
			return map[string]any{"error": "Filter is full"}, nil
		}
		return r, err

	case "CF.INSERT", "CF.INSERTNX":
		capacity, nocreate, items, err := insertArgs(rest)
		if err != nil {
			return nil, err
		}
		if *f == nil && nocreate {
			return map[string]any{"error": "ERR not found"}, nil
		}
		if err := autoCreate(capacity); err != nil {
			return nil, err
		}
		replies := make([]any, len(items))
		for i, item := range items {
			r, err := add(*f, name == "CF.INSERTNX", []byte(item))
			if errors.Is(err, redisbloom.ErrFull) {
				r, err = int64(-1), nil
			}
			if err != nil {
				return nil, err
			}
			replies[i] = r
		}
		return replies, nil

	case "CF.EXISTS", "CF.COUNT", "CF.DEL":
		if len(rest) != 1 {
			return nil, errors.New("want one item")
		}
		item := []byte(rest[0])
		switch name {
		case "CF.EXISTS":
			return boolReply((*f).Contains(item)), nil
		case "CF.COUNT":
			return int64((*f).Count(item)), nil
		}
		return boolReply((*f).Delete(item)), nil

	case "CF.MEXISTS":
		replies := make([]any, len(rest))
		for i, item := range rest {
			replies[i] = boolReply((*f).Contains([]byte(item)))
		}
		return replies, nil

	case "CF.COMPACT":
		(*f).Compact()
		return "OK", nil

	case "CF.INFO":
		return infoReply((*f).Info()), nil
	}
	return nil, errors.New("the fixture test does not replay this command")
}

// add is CF.ADD's (unique false) or CF.ADDNX's (unique true) reply.
func add(f *redisbloom.Filter, unique bool, item []byte) (any, error) {
	if !unique {
		if err := f.Add(item); err != nil {
			return nil, err
		}
		return int64(1), nil
	}
	added, err := f.AddUnique(item)
	if err != nil {
		return nil, err
	}
	return boolReply(added), nil
}

func boolReply(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// reserveParams parses CF.RESERVE's arguments after the key:
// capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e].
func reserveParams(args []string) (redisbloom.Params, error) {
	p := redisbloom.Params{BucketSize: defaultBucketSize, MaxIterations: defaultMaxIterations, Expansion: defaultExpansion}
	if len(args)%2 != 1 {
		return p, errors.New("want capacity and option pairs")
	}
	var err error
	if p.Capacity, err = strconv.ParseUint(args[0], 10, 64); err != nil {
		return p, err
	}
	for i := 1; i < len(args); i += 2 {
		n, err := strconv.Atoi(args[i+1])
		if err != nil {
			return p, err
		}
		switch strings.ToUpper(args[i]) {
		case "BUCKETSIZE":
			p.BucketSize = n
		case "MAXITERATIONS":
			p.MaxIterations = n
		case "EXPANSION":
			p.Expansion = n
		default:
			return p, fmt.Errorf("unknown option %q", args[i])
		}
	}
	return p, nil
}

// insertArgs parses CF.INSERT's arguments after the key:
// [CAPACITY c] [NOCREATE] ITEMS item...
func insertArgs(args []string) (capacity uint64, nocreate bool, items []string, err error) {
	capacity = defaultCapacity
	for i := 0; i < len(args); i++ {
		switch strings.ToUpper(args[i]) {
		case "CAPACITY":
			if i+1 == len(args) {
				return 0, false, nil, errors.New("CAPACITY without a value")
			}
			i++
			if capacity, err = strconv.ParseUint(args[i], 10, 64); err != nil {
				return 0, false, nil, err
			}
		case "NOCREATE":
			nocreate = true
		case "ITEMS":
			if i+1 == len(args) {
				return 0, false, nil, errors.New("ITEMS without items")
			}
			return capacity, nocreate, args[i+1:], nil
		default:
			return 0, false, nil, fmt.Errorf("unknown argument %q", args[i])
		}
	}
	return 0, false, nil, errors.New("no ITEMS")
}

// infoReply is CF.INFO's flat reply in RedisBloom's order.
func infoReply(in redisbloom.Info) []any {
	return []any{
		"Size", int64(in.Size),
		"Number of buckets", int64(in.Buckets),
		"Number of filters", int64(in.Filters),
		"Number of items inserted", int64(in.Items),
		"Number of items deleted", int64(in.Deletes),
		"Bucket size", int64(in.BucketSize),
		"Expansion rate", int64(in.Expansion),
		"Max iterations", int64(in.MaxIterations),
	}
}

// sameJSON reports whether got, marshalled, is the same JSON value as want.
func sameJSON(t *testing.T, got any, want json.RawMessage) bool {
	t.Helper()
	js, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(decodeJSON(t, js), decodeJSON(t, want))
}

func decodeJSON(t *testing.T, js []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func checkInfo(t *testing.T, f *redisbloom.Filter, fx *fixture) {
	t.Helper()
	if got := infoReply(f.Info()); !sameJSON(t, got, fx.Info) {
		js, _ := json.Marshal(got)
		t.Errorf("CF.INFO: %s\nRedisBloom: %s", js, fx.Info)
	}
}

// checkScanDump walks f's DumpChunk with RedisBloom's iters and requires
// RedisBloom's next and data at each.
func checkScanDump(t *testing.T, f *redisbloom.Filter, fx *fixture) {
	t.Helper()
	for i, want := range fx.ScanDump {
		next, data := f.DumpChunk(want.Iter)
		if next != want.Next || !bytes.Equal(data, want.Data) || (data == nil) != (want.Data == nil) {
			t.Fatalf("CF.SCANDUMP call %d (iter %d): next %d, %s; RedisBloom: next %d, %s",
				i, want.Iter, next, describeChunk(data, want.Data), want.Next, describeChunk(want.Data, data))
		}
	}
}

// describeChunk describes a chunk for a failure message: its length, and
// where it first differs from other.
func describeChunk(b, other []byte) string {
	if b == nil {
		return "nil"
	}
	n := 0
	for n < len(b) && n < len(other) && b[n] == other[n] {
		n++
	}
	if n == len(b) && n == len(other) {
		return fmt.Sprintf("%d bytes", len(b))
	}
	end := min(n+8, len(b))
	return fmt.Sprintf("%d bytes, from byte %d: % x", len(b), n, b[n:end])
}

// loadChunks loads RedisBloom's CF.SCANDUMP chunks as CF.LOADCHUNK would:
// the header with iter 1, each data chunk with the next SCANDUMP gave with
// it. It returns nil for a filter with no items, whose SCANDUMP is empty.
func loadChunks(t *testing.T, fx *fixture) *redisbloom.Filter {
	t.Helper()
	header := fx.ScanDump[0]
	if header.Next == 0 {
		if header.Data != nil {
			t.Fatal("malformed fixture: CF.SCANDUMP's last chunk has data")
		}
		return nil
	}
	if header.Next != 1 || len(header.Data) != redisbloom.HeaderSize {
		t.Fatalf("malformed fixture: CF.SCANDUMP's header chunk is next %d, %d bytes", header.Next, len(header.Data))
	}
	f, err := redisbloom.Load(header.Data, nil)
	if err != nil {
		t.Fatalf("Load of RedisBloom's header % x: %v", header.Data, err)
	}
	for i, c := range fx.ScanDump[1:] {
		if c.Next == 0 {
			break
		}
		if err := f.LoadChunk(c.Next, c.Data); err != nil {
			t.Fatalf("LoadChunk of RedisBloom's chunk %d (iter %d, %d bytes): %v", i+1, c.Next, len(c.Data), err)
		}
	}
	return f
}

// checkProbes requires f's Contains and Count to answer every probe as
// RedisBloom did, false positives included.
func checkProbes(t *testing.T, f *redisbloom.Filter, fx *fixture) {
	t.Helper()
	var bad []string
	falsePositives, added := 0, 0
	for i, item := range fx.Probes.Items {
		exists, count := f.Contains([]byte(item)), f.Count([]byte(item))
		if exists != (fx.Probes.Exists[i] == 1) || count != fx.Probes.Count[i] {
			bad = append(bad, fmt.Sprintf("%s: Contains %v, Count %d; RedisBloom %d, %d",
				item, exists, count, fx.Probes.Exists[i], fx.Probes.Count[i]))
		}
		switch {
		case fx.Probes.Exists[i] == 0:
		case fx.named[item]:
			added++
		default:
			falsePositives++
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d probes differ, first: %s", len(bad), len(fx.Probes.Items), strings.Join(bad[:min(len(bad), 5)], "; "))
	}
	if testing.Verbose() {
		t.Logf("%d probes: %d found among the items the commands name, %d false positives among the others", len(fx.Probes.Items), added, falsePositives)
	}
}

// checkAppendPayload requires the replayed filter's DUMP payload to be one
// of the two RedisBloom's server wrote (with or without rdbcompression),
// with the footer Redis 7.0 writes (RDB version 10, and its CRC-64: see
// redis7Footer), appended to what the buffer held, and to parse back to
// the same filter.
func checkAppendPayload(t *testing.T, f *redisbloom.Filter, fx *fixture) {
	prefix := []byte("prefix")
	b := f.AppendPayload(bytes.Clone(prefix))
	if !bytes.HasPrefix(b, prefix) {
		t.Fatalf("AppendPayload did not keep the buffer's bytes: % x", b[:min(len(b), len(prefix))])
	}
	payload := b[len(prefix):]
	dump, dumpPlain := redis7Footer(t, fx.Dump), redis7Footer(t, fx.DumpPlain)
	if !bytes.Equal(payload, dump) && !bytes.Equal(payload, dumpPlain) {
		t.Errorf("AppendPayload: %s\nRedisBloom's DUMP (rdbcompression no): %s",
			describeChunk(payload, dumpPlain), describeChunk(dumpPlain, payload))
	}
	g, err := redisbloom.ParsePayload(payload, nil)
	if err != nil {
		t.Fatalf("ParsePayload of AppendPayload's payload: %v", err)
	}
	checkInfo(t, g, fx)
	checkScanDump(t, g, fx)
	checkProbes(t, g, fx)
}

// redis7Footer returns payload p with the footer Redis 7.0 writes: RDB
// version 10 and the CRC-64 of the body and version. A payload of Redis 7.0
// comes back unchanged; one of Redis 8 (version 13) differs from it in the
// footer only.
func redis7Footer(t *testing.T, p []byte) []byte {
	t.Helper()
	body, _, err := rdb.SplitPayload(p)
	if err != nil {
		t.Fatalf("RedisBloom's DUMP payload: %v", err)
	}
	return rdb.AppendFooter(bytes.Clone(body), 0)
}
