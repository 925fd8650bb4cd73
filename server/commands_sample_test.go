package server_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// commandSamples holds, for every command of the table (each subcommand, a
// container only when it has none), one or more invocations, each a list of
// requests sent in order on a fresh connection. They are what a client may
// try on a populated server (populate): the tests below run them where a
// command must not change data, on a replica and as a read-only user, and
// check that none did. {phost} and {pport} are the primary's address,
// {payload} a DUMP payload and {header} a CF.SCANDUMP header chunk.
//
// TestCommandSamplesComplete fails when a command has no sample, so a new
// command cannot miss these checks.
var commandSamples = map[string][][]string{
	"acl|cat":        {{"acl cat"}, {"acl cat read"}},
	"acl|deluser":    {{"acl deluser nobody"}},
	"acl|dryrun":     {{"acl dryrun default cf.add grow x"}},
	"acl|genpass":    {{"acl genpass"}},
	"acl|getuser":    {{"acl getuser default"}},
	"acl|list":       {{"acl list"}},
	"acl|load":       {{"acl load"}},
	"acl|log":        {{"acl log"}, {"acl log reset"}},
	"acl|save":       {{"acl save"}},
	"acl|setuser":    {{"acl setuser probe on >pw +@all ~*"}},
	"acl|users":      {{"acl users"}},
	"acl|whoami":     {{"acl whoami"}},
	"acl|help":       {{"acl help"}},
	"asking":         {{"asking", "cf.add grow x"}},
	"auth":           {{"auth wrong"}, {"auth default wrong"}},
	"bgsave":         {{"bgsave"}},
	"cf.add":         {{"cf.add grow x"}, {"cf.add newkey x"}},
	"cf.addnx":       {{"cf.addnx grow x"}, {"cf.addnx growing y"}},
	"cf.insert":      {{"cf.insert grow items a b"}, {"cf.insert newkey capacity 10 items a"}},
	"cf.insertnx":    {{"cf.insertnx grow items a b"}, {"cf.insertnx newkey nocreate items a"}},
	"cf.exists":      {{"cf.exists grow item1"}},
	"cf.mexists":     {{"cf.mexists grow item1 x"}},
	"cf.count":       {{"cf.count grow item1"}},
	"cf.del":         {{"cf.del grow item1"}, {"cf.del fixed f1"}},
	"cf.compact":     {{"cf.compact grow"}, {"cf.compact growing"}},
	"cf.info":        {{"cf.info grow"}},
	"cf.debug":       {{"cf.debug grow"}},
	"cf.scandump":    {{"cf.scandump grow 0"}, {"cf.scandump grow 1"}, {"cf.scandump growing 1"}},
	"cf.loadchunk":   {{"cf.loadchunk newkey 1 {header}"}, {"cf.loadchunk grow 1 {header}"}},
	"cf.reserve":     {{"cf.reserve newkey 100"}, {"cf.reserve grow 100"}},
	"client|setname": {{"client setname probe"}},
	"client|getname": {{"client getname"}},
	"client|setinfo": {{"client setinfo lib-name probe"}},
	"client|id":      {{"client id"}},
	"client|list":    {{"client list"}},
	"client|info":    {{"client info"}},
	// Killing a replica's link to its primary: it must continue from
	// where it was.
	"client|kill":              {{"client kill type master"}, {"client kill type replica"}},
	"client|help":              {{"client help"}},
	"client|no-evict":          {{"client no-evict on"}},
	"client|no-touch":          {{"client no-touch on", "cf.exists grow item1"}},
	"client|reply":             {{"client reply on"}},
	"cluster|slots":            {{"cluster slots"}},
	"cluster|shards":           {{"cluster shards"}},
	"cluster|nodes":            {{"cluster nodes"}},
	"cluster|myid":             {{"cluster myid"}},
	"cluster|info":             {{"cluster info"}},
	"cluster|keyslot":          {{"cluster keyslot grow"}},
	"cluster|countkeysinslot":  {{"cluster countkeysinslot 0"}},
	"cluster|getkeysinslot":    {{"cluster getkeysinslot 0 10"}},
	"cluster|help":             {{"cluster help"}},
	"command":                  {{"command"}},
	"command|count":            {{"command count"}},
	"command|info":             {{"command info cf.add"}},
	"command|docs":             {{"command docs cf.compact"}},
	"command|list":             {{"command list"}},
	"command|getkeys":          {{"command getkeys cf.add grow x"}},
	"command|getkeysandflags":  {{"command getkeysandflags cf.compact grow"}},
	"command|help":             {{"command help"}},
	"config|get":               {{"config get *"}},
	"config|set":               {{"config set timeout 0"}},
	"config|rewrite":           {{"config rewrite"}},
	"config|resetstat":         {{"config resetstat"}},
	"config|help":              {{"config help"}},
	"cuckoo.cluster|setconfig": {{"cuckoo.cluster setconfig {}"}},
	"cuckoo.cluster|getconfig": {{"cuckoo.cluster getconfig"}},
	"dbsize":                   {{"dbsize"}},
	"del":                      {{"del grow"}, {"del nothing"}},
	"discard":                  {{"multi", "cf.add grow x", "discard"}},
	"dump":                     {{"dump grow"}},
	"echo":                     {{"echo x"}},
	"exec":                     {{"multi", "cf.add grow x", "cf.compact grow", "exec"}, {"multi", "cf.exists grow x", "exec"}},
	"exists":                   {{"exists grow ttl"}},
	"expire":                   {{"expire grow 100"}},
	"expireat":                 {{"expireat grow 1"}},
	"expiretime":               {{"expiretime ttl"}},
	"flushall":                 {{"flushall"}},
	"flushdb":                  {{"flushdb"}},
	"hello":                    {{"hello 3"}, {"hello 2"}},
	"info":                     {{"info"}, {"info all"}},
	"keys":                     {{"keys *"}},
	"lastsave":                 {{"lastsave"}},
	"memory|usage":             {{"memory usage grow"}},
	"memory|help":              {{"memory help"}},
	"migrate":                  {{"migrate {phost} {pport} grow 0 1000"}, {"migrate {phost} {pport} grow 0 1000 copy replace"}},
	"monitor":                  {{"monitor"}},
	"multi":                    {{"multi"}},
	"object|encoding":          {{"object encoding grow"}},
	"object|freq":              {{"object freq grow"}},
	"object|idletime":          {{"object idletime grow"}},
	"object|refcount":          {{"object refcount grow"}},
	"object|help":              {{"object help"}},
	"persist":                  {{"persist ttl"}},
	"pexpire":                  {{"pexpire grow 100"}},
	"pexpireat":                {{"pexpireat grow 1"}},
	"pexpiretime":              {{"pexpiretime ttl"}},
	"ping":                     {{"ping"}},
	"psubscribe":               {{"psubscribe *"}},
	"psync":                    {{"psync ? -1"}},
	"pttl":                     {{"pttl ttl"}},
	"publish":                  {{"publish ch x"}},
	"pubsub|channels":          {{"pubsub channels"}},
	"pubsub|numsub":            {{"pubsub numsub ch"}},
	"pubsub|numpat":            {{"pubsub numpat"}},
	"pubsub|shardchannels":     {{"pubsub shardchannels"}},
	"pubsub|shardnumsub":       {{"pubsub shardnumsub ch"}},
	"pubsub|help":              {{"pubsub help"}},
	"punsubscribe":             {{"punsubscribe"}},
	"quit":                     {{"quit"}},
	"randomkey":                {{"randomkey"}},
	"readonly":                 {{"readonly", "cf.exists grow item1"}},
	"readwrite":                {{"readwrite"}},
	"rename":                   {{"rename grow other"}},
	"renamenx":                 {{"renamenx grow other"}},
	"replconf":                 {{"replconf listening-port 1"}},
	// The primary the replica already follows: a no-op. REPLICAOF NO ONE
	// ends replication by design and is not run.
	"replicaof":      {{"replicaof {phost} {pport}"}},
	"restore":        {{"restore newkey 0 {payload}"}, {"restore grow 0 {payload} replace"}},
	"restore-asking": {{"restore-asking newkey 0 {payload}"}},
	"role":           {{"role"}},
	"save":           {{"save"}},
	"debug":          {{"debug reload"}, {"debug help"}, {"debug nosuch"}},
	"scan":           {{"scan 0"}, {"scan 0 match g* count 100"}},
	"select":         {{"select 0"}},
	"slaveof":        {{"slaveof {phost} {pport}"}},
	"spublish":       {{"spublish ch x"}},
	"ssubscribe":     {{"ssubscribe ch"}},
	"subscribe":      {{"subscribe ch"}},
	"sunsubscribe":   {{"sunsubscribe"}},
	"time":           {{"time"}},
	"ttl":            {{"ttl ttl"}},
	"type":           {{"type grow"}},
	"unlink":         {{"unlink grow"}},
	"unsubscribe":    {{"unsubscribe"}},
	"unwatch":        {{"unwatch"}},
	"wait":           {{"wait 0 0"}},
	"watch":          {{"watch grow", "multi", "cf.exists grow x", "exec"}},
}

// unsampled are the commands the data checks cannot run, and why.
var unsampled = map[string]string{
	"shutdown": "ends the server (the replica test restarts it anyway)",
}

// sampledCommands returns the names of every command and subcommand that
// needs a sample: each subcommand, and each command that runs without one
// (COMMAND does: its arity is -1).
func sampledCommands() []string {
	var out []string
	for _, c := range server.CommandTable().All() {
		if len(c.Subs) == 0 || c.ArityOK(1) {
			out = append(out, c.Name)
		}
		for _, s := range c.Subs {
			out = append(out, s.Name)
		}
	}
	return out
}

// TestCommandSamplesComplete: every command has a sample (or a reason in
// unsampled), and every sample names a command of the table.
func TestCommandSamplesComplete(t *testing.T) {
	names := sampledCommands()
	for _, n := range names {
		if commandSamples[n] == nil && unsampled[n] == "" {
			t.Errorf("command %q has no sample in commandSamples: add what a client might send", n)
		}
	}
	for n := range maps.Keys(commandSamples) {
		if !slices.Contains(names, n) {
			t.Errorf("commandSamples names %q, which is not a command", n)
		}
	}
}

// populate fills a primary with every kind of key: "grow", a chain of
// stages (snapshot-v1) whose later stages were emptied by deletes, so that
// CF.COMPACT would change it; "small"; "growing", a growing table; "fixed",
// EXPANSION 0; "ttl", with a deadline. It returns the values the samples'
// placeholders stand for.
func populate(t *testing.T, p *redis.Client, paddr string) map[string]string {
	t.Helper()
	ctx := context.Background()
	for i := 2; i < 1000; i++ {
		p.CFDel(ctx, "grow", fmt.Sprint("item", i))
	}
	p.CFReserve(ctx, "growing", 100)
	for i := range 500 {
		p.CFAdd(ctx, "growing", fmt.Sprint("g", i))
	}
	p.CFReserveWithArgs(ctx, "fixed", &redis.CFReserveOptions{Capacity: 1000, Expansion: 0})
	for i := range 100 {
		p.CFAdd(ctx, "fixed", fmt.Sprint("f", i))
	}
	p.CFAdd(ctx, "ttl", "t")
	p.PExpire(ctx, "ttl", time.Hour)
	payload, err := p.Dump(ctx, "growing").Result()
	if err != nil {
		t.Fatal(err)
	}
	header, err := p.CFScanDump(ctx, "growing", 0).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The scenario's precondition: compacting "grow" would change it.
	p.Restore(ctx, "probe", 0, mustDump(t, p, "grow"))
	before := p.CFInfo(ctx, "probe").Val().NumFilters
	if err := p.Do(ctx, "CF.COMPACT", "probe").Err(); err != nil {
		t.Fatal(err)
	}
	if after := p.CFInfo(ctx, "probe").Val().NumFilters; after >= before {
		t.Fatalf("CF.COMPACT of grow's copy kept %d of %d stages: the test needs a key it changes", after, before)
	}
	p.Del(ctx, "probe")
	host, port, _ := net.SplitHostPort(paddr)
	return map[string]string{"{phost}": host, "{pport}": port, "{payload}": payload, "{header}": header.Data}
}

func mustDump(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	d, err := c.Dump(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("DUMP %s: %v", key, err)
	}
	return d
}

// primaryWithData starts a primary on a copy of testdata/snapshot-v1 and
// populates it.
func primaryWithData(t *testing.T, cfg server.Config) (*redis.Client, string, map[string]string) {
	t.Helper()
	cfg.Dir = t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "snapshot-v1", "snapshot.cks"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Dir, "snapshot.cks"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, addr := start(t, cfg)
	p := client(t, addr)
	return p, addr, populate(t, p, addr)
}

// dataState is every key's DUMP payload and absolute deadline.
func dataState(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, k := range c.Keys(ctx, "*").Val() {
		out[k] = fmt.Sprintf("%x deadline=%d", c.Dump(ctx, k).Val(), c.PExpireTime(ctx, k).Val())
	}
	return out
}

// runSample sends one sample's requests in order on a new connection made
// by opts, and returns the replies (for the failure message).
func runSample(t *testing.T, addr string, sample []string, vars map[string]string, opts func(*redis.Options)) []string {
	t.Helper()
	o := &redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1, ReadTimeout: 3 * time.Second, DisableIdentity: true}
	if opts != nil {
		opts(o)
	}
	c := redis.NewClient(o)
	defer c.Close()
	ctx := context.Background()
	conn := c.Conn()
	defer conn.Close()
	var replies []string
	for _, line := range sample {
		var args []any
		for _, f := range strings.Fields(line) {
			if v, ok := vars[f]; ok {
				f = v
			}
			args = append(args, f)
		}
		v, err := conn.Do(ctx, args...).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			replies = append(replies, fmt.Sprintf("%s -> %v", line, err))
			if !isReply(err) {
				break // the connection is gone (QUIT) or in a mode of its own
			}
			continue
		}
		replies = append(replies, fmt.Sprintf("%s -> %.60v", line, v))
	}
	return replies
}

// isReply reports whether err is the server's error reply, not a broken
// connection.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// replOffset is INFO's master_repl_offset.
func replOffset(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	var n int64
	fmt.Sscan(infoFields(t, c, "replication")["master_repl_offset"], &n)
	return n
}

// TestReadOnlyUserChangesNothing: every sample run as a user with only
// +@read ~* on a populated primary leaves every key's dump and deadline,
// rdb_changes_since_last_save and the replication offset as they were.
func TestReadOnlyUserChangesNothing(t *testing.T) {
	p, paddr, vars := primaryWithData(t, server.Config{})
	ctx := context.Background()
	if err := p.Do(ctx, "ACL", "SETUSER", "ro", "on", ">pw", "+@read", "~*").Err(); err != nil {
		t.Fatal(err)
	}
	ro := func(o *redis.Options) { o.Username, o.Password = "ro", "pw" }
	want := dataState(t, p)
	dirty := infoFields(t, p, "persistence")["rdb_changes_since_last_save"]
	off := replOffset(t, p)
	for _, name := range sampledCommands() {
		for _, sample := range commandSamples[name] {
			replies := runSample(t, paddr, sample, vars, ro)
			if got := dataState(t, p); !maps.Equal(got, want) {
				t.Fatalf("%s as a read-only user changed the data: %q", name, replies)
			}
			if d := infoFields(t, p, "persistence")["rdb_changes_since_last_save"]; d != dirty {
				t.Fatalf("%s as a read-only user: rdb_changes_since_last_save %s, was %s: %q", name, d, dirty, replies)
			}
			if o := replOffset(t, p); o != off {
				t.Fatalf("%s as a read-only user moved the replication offset from %d to %d: %q", name, off, o, replies)
			}
		}
	}
}
