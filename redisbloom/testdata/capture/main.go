// Command capture records golden fixtures of RedisBloom's cuckoo filter from
// a real RedisBloom, for package redisbloom's fixture test.
//
// The fixtures in redisbloom/testdata/fixtures were made against RedisBloom
// v2.6.28 (built by /work/shared/tools/redisbloom/build-module) loaded into
// Debian's redis-server 7.0.15, by running, from the repository's root:
//
//	go run ./redisbloom/testdata/capture -module /tmp/redisbloom-build/redisbloom.so -out redisbloom/testdata/fixtures
//
// Those in redisbloom/testdata/fixtures-redis8 were made against Redis
// 8.6.3 with RedisBloom v8.6.2, built from their sources, by:
//
//	go run ./redisbloom/testdata/capture -cases payloads -server /tmp/redis8/bin/redis-server -module /tmp/redis8/redisbloom.so -out redisbloom/testdata/fixtures-redis8
//
// -cases chooses the scripts: "all" (cases.go's cases(), the default) or
// "payloads" (payloadCases(): the shapes of DUMP payloads and CF.SCANDUMP
// chunks, to check that Redis 8 writes them as Redis 7 does).
//
// It starts redis-server with the module on a free 127.0.0.1 port, saving
// nothing, runs each case's commands (cases.go) on one key, then reads that
// key's CF.INFO, its CF.SCANDUMP chunks, its DUMP payload (with and without
// rdbcompression) and the CF.EXISTS and CF.COUNT answers for a probe set,
// writes one gzip-compressed JSON file per case, <out>/<name>.json.gz,
// removes other *.json.gz files from <out>, writes <out>/commands.txt (the
// servers, this command line, and each case's commands, runs of the same
// command on consecutive items written as one line), and stops the server
// by its process id. It refuses a module that is not RedisBloom, and a case whose
// commands answer an error other than "Filter is full": the fixture test
// replays only what the Go filter itself decides.
//
// # Fixture schema
//
//	{
//	  "name":       case name,
//	  "redisbloom": module version as MODULE LIST reports it, "v2.6.28",
//	  "redis":      redis_version of the server, "7.0.15",
//	  "key":        the one key every command names,
//	  "commands":   [{"args": ["CF.ADD", key, "item:0"], "reply": reply}, ...],
//	  "info":       CF.INFO's flat reply after the commands: ["Size", 1080, "Number of buckets", 512, ...],
//	  "scandump":   [{"iter": N, "next": M, "data": base64 or null}, ...],
//	  "dump":       base64 of DUMP key's payload (rdbcompression yes, Redis's default),
//	  "dump_plain": base64 of DUMP key's payload with rdbcompression no,
//	  "probes":     {"items": ["item:0", ...], "exists": [0 or 1, ...], "count": [n, ...]}
//	}
//
// A reply is a JSON string (simple or bulk string), integer, null, array of
// replies, or {"error": "text"} for an error reply.
//
// "scandump" lists every CF.SCANDUMP key iter call in order, starting at
// iter 0: "next" and "data" are its reply, and the next call's iter is this
// call's next. The last entry answers next 0 and data null; a filter
// holding no items answers that at once. The first entry's data is the
// header, loaded with CF.LOADCHUNK key 1 header; each later chunk is loaded
// with CF.LOADCHUNK key next data.
//
// The probes are item:0 up to the highest item the commands name, and 4000
// items after it that no command names, so the answers include false
// positives.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

type fixture struct {
	Name       string    `json:"name"`
	RedisBloom string    `json:"redisbloom"`
	Redis      string    `json:"redis"`
	Key        string    `json:"key"`
	Commands   []command `json:"commands"`
	Info       any       `json:"info"`
	ScanDump   []chunk   `json:"scandump"`
	Dump       []byte    `json:"dump"`
	DumpPlain  []byte    `json:"dump_plain"`
	Probes     probes    `json:"probes"`
}

type command struct {
	Args  []string `json:"args"`
	Reply any      `json:"reply"`
}

type chunk struct {
	Iter int64  `json:"iter"`
	Next int64  `json:"next"`
	Data []byte `json:"data"`
}

type probes struct {
	Items  []string `json:"items"`
	Exists []int64  `json:"exists"`
	Count  []int64  `json:"count"`
}

// mexistsBatch is how many probes one CF.MEXISTS asks about.
const mexistsBatch = 500

func main() {
	module := flag.String("module", "", "path of RedisBloom's redisbloom.so")
	out := flag.String("out", "", "directory to write <case>.json.gz into")
	binary := flag.String("server", "redis-server", "redis-server binary")
	set := flag.String("cases", "all", `the scripts: "all" (cases()) or "payloads" (payloadCases())`)
	flag.Parse()
	scripts := map[string]func() []*script{"all": cases, "payloads": payloadCases}[*set]
	if *module == "" || *out == "" || flag.NArg() != 0 || scripts == nil {
		fmt.Fprintln(os.Stderr, "usage: capture -module redisbloom.so -out dir [-server redis-server] [-cases all|payloads]")
		os.Exit(2)
	}
	if err := run(*binary, *module, *out, scripts()); err != nil {
		fmt.Fprintln(os.Stderr, "capture:", err)
		os.Exit(1)
	}
}

func run(binary, module, out string, scripts []*script) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	srv, err := startServer(binary, module)
	if err != nil {
		return err
	}
	defer srv.stop()
	c, err := dial(srv.addr)
	if err != nil {
		return err
	}
	defer c.Close()

	rbVersion, redisVersion, err := versions(c)
	if err != nil {
		return err
	}
	written := map[string]bool{}
	var total int
	for _, s := range scripts {
		fx, err := capture(c, s)
		if err != nil {
			return fmt.Errorf("case %s: %w", s.name, err)
		}
		fx.RedisBloom, fx.Redis = rbVersion, redisVersion
		file := s.name + ".json.gz"
		n, err := writeFixture(filepath.Join(out, file), fx)
		if err != nil {
			return err
		}
		written[file] = true
		total += n
		fmt.Printf("%-32s %5d commands %5d probes %6d bytes  %v\n", s.name, len(fx.Commands), len(fx.Probes.Items), n, fx.Info)
	}
	fmt.Printf("%d fixtures, %d bytes, RedisBloom %s, Redis %s\n", len(written), total, rbVersion, redisVersion)
	if err := writeCommands(filepath.Join(out, "commands.txt"), rbVersion, redisVersion, scripts); err != nil {
		return err
	}
	return removeStale(out, written)
}

// versions returns RedisBloom's version as MODULE LIST reports it and the
// server's redis_version.
func versions(c *client) (redisbloom, redis string, err error) {
	reply, err := c.do("MODULE", "LIST")
	if err != nil {
		return "", "", err
	}
	mods, _ := reply.([]any)
	for _, m := range mods {
		fields, _ := m.([]any)
		var name string
		var ver int64 = -1
		for i := 0; i+1 < len(fields); i += 2 {
			switch k, _ := fields[i].([]byte); string(k) {
			case "name":
				v, _ := fields[i+1].([]byte)
				name = string(v)
			case "ver":
				ver, _ = fields[i+1].(int64)
			}
		}
		if name == "bf" && ver >= 0 {
			redisbloom = fmt.Sprintf("v%d.%d.%d", ver/10000, ver/100%100, ver%100)
		}
	}
	if redisbloom == "" {
		return "", "", fmt.Errorf("MODULE LIST names no RedisBloom (module bf): %v", reply)
	}
	reply, err = c.do("INFO", "server")
	if err != nil {
		return "", "", err
	}
	info, _ := reply.([]byte)
	for line := range strings.Lines(string(info)) {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			redis = strings.TrimSpace(v)
		}
	}
	if redis == "" {
		return "", "", errors.New("INFO server has no redis_version")
	}
	return redisbloom, redis, nil
}

func capture(c *client, s *script) (*fixture, error) {
	if _, err := c.do("FLUSHALL"); err != nil {
		return nil, err
	}
	fx := &fixture{Name: s.name, Key: s.key}

	replies, err := c.pipeline(s.cmds)
	if err != nil {
		return nil, err
	}
	for i, r := range replies {
		if e, ok := r.(replyError); ok && e != "Filter is full" {
			return nil, fmt.Errorf("command %d %q answered %q", i, s.cmds[i], string(e))
		}
		v, err := toJSON(r)
		if err != nil {
			return nil, fmt.Errorf("command %d %q: %w", i, s.cmds[i], err)
		}
		fx.Commands = append(fx.Commands, command{Args: s.cmds[i], Reply: v})
	}

	info, err := c.do("CF.INFO", s.key)
	if err != nil {
		return nil, err
	}
	if fx.Info, err = toJSON(info); err != nil {
		return nil, err
	}
	if _, ok := fx.Info.([]any); !ok {
		return nil, fmt.Errorf("CF.INFO answered %v", fx.Info)
	}

	if fx.ScanDump, err = scanDump(c, s.key); err != nil {
		return nil, err
	}
	if fx.Dump, err = dumpWith(c, s.key, "yes"); err != nil {
		return nil, err
	}
	if fx.DumpPlain, err = dumpWith(c, s.key, "no"); err != nil {
		return nil, err
	}

	fx.Probes, err = probe(c, s.key, s.probes())
	return fx, err
}

// scanDump walks CF.SCANDUMP from iter 0 until it answers next 0.
func scanDump(c *client, key string) ([]chunk, error) {
	var chunks []chunk
	for iter := int64(0); ; {
		reply, err := c.do("CF.SCANDUMP", key, fmt.Sprint(iter))
		if err != nil {
			return nil, err
		}
		pair, ok := reply.([]any)
		if !ok || len(pair) != 2 {
			return nil, fmt.Errorf("CF.SCANDUMP %d answered %v", iter, reply)
		}
		next, ok := pair[0].(int64)
		data, isBytes := pair[1].([]byte)
		if !ok || (!isBytes && pair[1] != nil) {
			return nil, fmt.Errorf("CF.SCANDUMP %d answered %v", iter, reply)
		}
		chunks = append(chunks, chunk{Iter: iter, Next: next, Data: data})
		if next == 0 {
			return chunks, nil
		}
		iter = next
	}
}

// dumpWith returns DUMP key's payload written with rdbcompression set to
// compression ("yes", Redis's default, or "no"), and leaves it at "yes".
func dumpWith(c *client, key, compression string) ([]byte, error) {
	replies, err := c.pipeline([][]string{
		{"CONFIG", "SET", "rdbcompression", compression},
		{"DUMP", key},
		{"CONFIG", "SET", "rdbcompression", "yes"},
	})
	if err != nil {
		return nil, err
	}
	if replies[0] != "OK" || replies[2] != "OK" {
		return nil, fmt.Errorf("CONFIG SET rdbcompression answered %v, %v", replies[0], replies[2])
	}
	b, ok := replies[1].([]byte)
	if !ok {
		return nil, fmt.Errorf("DUMP answered %v", replies[1])
	}
	return b, nil
}

// probe asks CF.MEXISTS (in batches) and CF.COUNT (one at a time) about
// every item.
func probe(c *client, key string, items []string) (probes, error) {
	var cmds [][]string
	for start := 0; start < len(items); start += mexistsBatch {
		end := min(start+mexistsBatch, len(items))
		cmds = append(cmds, append([]string{"CF.MEXISTS", key}, items[start:end]...))
	}
	nExists := len(cmds)
	for _, it := range items {
		cmds = append(cmds, []string{"CF.COUNT", key, it})
	}
	replies, err := c.pipeline(cmds)
	if err != nil {
		return probes{}, err
	}
	p := probes{Items: items}
	for _, r := range replies[:nExists] {
		arr, ok := r.([]any)
		if !ok {
			return probes{}, fmt.Errorf("CF.MEXISTS answered %v", r)
		}
		for _, v := range arr {
			n, ok := v.(int64)
			if !ok {
				return probes{}, fmt.Errorf("CF.MEXISTS answered %v", r)
			}
			p.Exists = append(p.Exists, n)
		}
	}
	for _, r := range replies[nExists:] {
		n, ok := r.(int64)
		if !ok {
			return probes{}, fmt.Errorf("CF.COUNT answered %v", r)
		}
		p.Count = append(p.Count, n)
	}
	if len(p.Exists) != len(items) || len(p.Count) != len(items) {
		return probes{}, errors.New("probe answers do not match the probes")
	}
	return p, nil
}

// toJSON turns a reply into the fixture's JSON form.
func toJSON(r any) (any, error) {
	switch v := r.(type) {
	case nil, string, int64:
		return v, nil
	case replyError:
		return map[string]string{"error": string(v)}, nil
	case []byte:
		if !utf8.Valid(v) {
			return nil, fmt.Errorf("binary bulk reply %q has no JSON string form", v)
		}
		return string(v), nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			var err error
			if out[i], err = toJSON(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %T", r)
}

// writeFixture writes fx as gzip-compressed JSON and returns the file's
// size. The output depends only on fx, so an unchanged capture rewrites the
// same bytes.
func writeFixture(path string, fx *fixture) (int, error) {
	js, err := json.Marshal(fx)
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return 0, err
	}
	zw.Write(js)
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return buf.Len(), os.WriteFile(path, buf.Bytes(), 0o644)
}

// removeStale deletes fixtures in dir that this run did not write, so a
// renamed or dropped case leaves nothing behind.
func removeStale(dir string, written map[string]bool) error {
	old, err := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	if err != nil {
		return err
	}
	for _, path := range old {
		if !written[filepath.Base(path)] {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeCommands writes, for a reader without Go, what made the fixtures:
// the servers, the command line, and each case's commands.
func writeCommands(path, rbVersion, redisVersion string, scripts []*script) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Captured from Redis %s with RedisBloom %s by:\n#\n#   go run ./redisbloom/testdata/capture %s\n#\n",
		redisVersion, rbVersion, strings.Join(os.Args[1:], " "))
	b.WriteString("# which starts redis-server --bind 127.0.0.1 --port <free port> --loadmodule <module> --save '' --appendonly no,\n")
	b.WriteString("# and for each case below runs FLUSHALL, the case's commands on its key, then CF.INFO, CF.SCANDUMP from\n")
	b.WriteString("# iter 0 until it answers 0, DUMP (with CONFIG SET rdbcompression yes, then no), and CF.MEXISTS and\n")
	b.WriteString("# CF.COUNT of the probes. \"A item:0 .. item:N\" stands for one command A item:i for each i.\n")
	for _, s := range scripts {
		fmt.Fprintf(&b, "\n[%s]\n", s.name)
		for _, line := range compactCommands(s.cmds) {
			b.WriteString(line + "\n")
		}
		fmt.Fprintf(&b, "probes: item:0 .. item:%d\n", s.next+absentProbes-1)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// compactCommands writes commands one a line, a run of the same command
// on item:i, item:i+1, ... as one line.
func compactCommands(cmds [][]string) []string {
	var lines []string
	for i := 0; i < len(cmds); {
		first, ok := itemOf(cmds[i])
		j := i + 1
		for ok && j < len(cmds) {
			n, ok2 := itemOf(cmds[j])
			if !ok2 || n != first+(j-i) || cmds[j][0] != cmds[i][0] || cmds[j][1] != cmds[i][1] {
				break
			}
			j++
		}
		if j-i > 2 {
			lines = append(lines, fmt.Sprintf("%s %s item:%d .. item:%d", cmds[i][0], cmds[i][1], first, first+j-i-1))
		} else {
			for _, c := range cmds[i:j] {
				lines = append(lines, strings.Join(c, " "))
			}
		}
		i = j
	}
	return lines
}

// itemOf returns N of a command "CMD key item:N".
func itemOf(cmd []string) (int, bool) {
	if len(cmd) != 3 {
		return 0, false
	}
	s, ok := strings.CutPrefix(cmd[2], "item:")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && strconv.Itoa(n) == s
}
