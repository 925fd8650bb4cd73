package server

import (
	"errors"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// The CF.* commands, with RedisBloom's syntax, reply types and error texts.
//
// The family registers its rows of the command table here, each beside its
// handler, as a Redis module registers its commands: RedisBloom's names,
// arity, flags, ACL categories (@cuckoo, as RedisBloom registers them), key
// specs and arguments, documented with group "cf" and module "bf", as Redis
// serves RedisBloom's. A new CF command is a row and a handler here, and, if
// it has a new effect, a record kind in the key space (keyspace/ops.go).

var (
	cfKeyRW = []command.KeySpec{{Flags: []string{"RW"}, Begin: 1, Step: 1}}
	cfKeyRO = []command.KeySpec{{Flags: []string{"RO"}, Begin: 1, Step: 1}}
	// cfKeyLegacy is the key spec Redis derives for a module command that
	// gives only its first key (RedisBloom's CF.DEBUG).
	cfKeyLegacy = []command.KeySpec{{Flags: []string{"RW", "access", "update"}, Begin: 1, Step: 1}}
	cfKey       = command.Arg{Name: "key", Type: command.Key}
	cfItem      = command.Arg{Name: "item", Type: command.String}
	cfItems     = command.Arg{Name: "item", Type: command.String, Multiple: true}
	cfWrite     = command.Write | command.DenyOOM | command.Module
	cfRead      = command.ReadOnly | command.Fast | command.Module
)

// cfSpec is a CF command's row. complexity is this server's layout's;
// rbComplexity, if not "", RedisBloom's words for its own layout, which
// COMMAND DOCS gives under cf-layout redisbloom (moduleDocs).
func cfSpec(name string, arity int, flags command.Flag, acl string, keys []command.KeySpec, summary, complexity, rbComplexity string, args ...command.Arg) *command.Spec {
	return &command.Spec{Name: name, Arity: arity, Flags: flags, ACL: acl + " cuckoo", Keys: keys,
		Summary: summary, Since: "1.0.0", Group: "cf", Complexity: complexity, ModuleComplexity: rbComplexity,
		ModuleName: "bf", Args: args}
}

// moduleDocs is whether COMMAND DOCS gives the CF commands' complexity in
// RedisBloom's words: when new filters take RedisBloom's layout, whose
// sub-filters those words count.
func moduleDocs(d *FilterDefaults) bool { return d.Layout == cf.LayoutRedisBloom }

// cfCommands are the CF commands: each row beside its handler.
func cfCommands() (b []binding) {
	capacity := command.Arg{Name: "capacity", Type: command.Integer, Token: "CAPACITY", Optional: true}
	nocreate := command.Arg{Name: "nocreate", Type: command.PureToken, Token: "NOCREATE", Optional: true}
	items := command.Arg{Name: "items", Type: command.PureToken, Token: "ITEMS"}
	iterator := command.Arg{Name: "iterator", Type: command.Integer}
	const lookup = "O(1): two buckets, however far the filter grew"
	const insert = "O(1) amortized; a displacement search of at most max(MAXITERATIONS, 500) buckets"
	// RedisBloom's words, for its layout: each sub-filter is looked up.
	const (
		rbLookup  = "O(k), where k is the number of sub-filters"
		rbInsert  = "O(k + i), where k is the number of sub-filters and i is maxIterations"
		rbInsertN = "O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations"
		rbDump    = "O(n), where n is the capacity"
	)
	// Each variant has its own row and handler.
	b = append(b, binding{spec: cfSpec("cf.reserve", -3, cfWrite, "write fast", cfKeyRW,
		"Creates a cuckoo filter for a given capacity", "O(1)", "",
		cfKey, command.Arg{Name: "capacity", Type: command.Integer},
		command.Arg{Name: "bucketsize", Type: command.Integer, Token: "BUCKETSIZE", Optional: true},
		command.Arg{Name: "maxiterations", Type: command.Integer, Token: "MAXITERATIONS", Optional: true},
		command.Arg{Name: "expansion", Type: command.Integer, Token: "EXPANSION", Optional: true}), run: cfReserve})
	b = append(b, binding{spec: readAhead(cfSpec("cf.add", 3, cfWrite, "write", cfKeyRW,
		"Adds an item to a cuckoo filter, creating the filter if needed", insert, rbInsert, cfKey, cfItem)), run: cfAdd(false)})
	b = append(b, binding{spec: readAhead(cfSpec("cf.addnx", 3, cfWrite, "write", cfKeyRW,
		"Adds an item to a cuckoo filter unless it may be there already", insert, rbInsert, cfKey, cfItem)), run: cfAdd(true)})
	b = append(b, binding{spec: cfSpec("cf.insert", -4, cfWrite, "write", cfKeyRW,
		"Adds items to a cuckoo filter, creating it unless NOCREATE", "O(n) for n items, each as CF.ADD", rbInsertN,
		cfKey, capacity, nocreate, items, cfItems), run: cfInsert(false)})
	b = append(b, binding{spec: cfSpec("cf.insertnx", -4, cfWrite, "write", cfKeyRW,
		"Adds items that may not be there yet to a cuckoo filter, creating it unless NOCREATE", "O(n) for n items, each as CF.ADDNX", rbInsertN,
		cfKey, capacity, nocreate, items, cfItems), run: cfInsert(true)})
	b = append(b, binding{spec: readAhead(cfSpec("cf.exists", 3, cfRead, "read", cfKeyRO,
		"Tells whether an item may be in a cuckoo filter", lookup, rbLookup, cfKey, cfItem)), run: cfExists(false)})
	b = append(b, binding{spec: cfSpec("cf.mexists", -3, cfRead, "read", cfKeyRO,
		"Tells, for each item, whether it may be in a cuckoo filter", "O(n) for n items",
		"O(k * n), where k is the number of sub-filters and n is the number of items", cfKey, cfItems), run: cfExists(true)})
	b = append(b, binding{spec: readAhead(cfSpec("cf.count", 3, cfRead, "read", cfKeyRO,
		"Counts the entries that match an item in a cuckoo filter (an upper bound on its copies)", lookup, rbLookup, cfKey, cfItem)), run: cfCount})
	b = append(b, binding{spec: readAhead(cfSpec("cf.del", 3, command.Write|command.Fast|command.Module, "write", cfKeyRW,
		"Deletes one copy of an item from a cuckoo filter", lookup, rbLookup, cfKey, cfItem)), run: cfDel})
	// Write, where RedisBloom says readonly: it changes the filter and is
	// logged, so a replica and a read-only user must be refused it.
	b = append(b, binding{spec: cfSpec("cf.compact", 2, command.Write|command.Module, "write", cfKeyRW,
		"Drops the empty stages of a filter loaded from an old dump", "O(n) for n buckets", "", cfKey), run: cfCompact})
	b = append(b, binding{spec: cfSpec("cf.info", 2, cfRead, "read fast", cfKeyRO,
		"Returns a cuckoo filter's figures", "O(1)", "", cfKey), run: cfInfo})
	// CF.DEBUG and CF.SCANDUMP: as RedisBloom 8.6.2 describes them
	// (COMMAND INFO): CF.DEBUG of any arity, checked by its handler with
	// the same reply, and both with a read-write key (ACL key selectors
	// ask for %RW~, as Redis 8's do).
	b = append(b, binding{spec: cfSpec("cf.debug", -1, cfRead, "read", cfKeyLegacy,
		"Returns a cuckoo filter's figures in one line", "O(1)", "", cfKey), run: cfDebug})
	b = append(b, binding{spec: cfSpec("cf.scandump", 3, cfRead, "read", cfKeyRW,
		"Returns the next chunk of a cuckoo filter's dump", "O(n) for n bytes of the chunk", rbDump,
		cfKey, iterator), run: cfScanDump})
	load := cfSpec("cf.loadchunk", 4, cfWrite, "write", cfKeyRW,
		"Restores a cuckoo filter from its dump, one chunk at a time", "O(n) for n bytes of the chunk", rbDump,
		cfKey, iterator, command.Arg{Name: "data", Type: command.String})
	load.DataArg = 3
	b = append(b, binding{spec: load, run: cfLoadChunk})
	return b
}

// readAhead marks spec's command as one whose item's buckets are worth
// touching ahead of it (prefetch.go).
func readAhead(spec *command.Spec) *command.Spec {
	spec.ReadAhead = true
	return spec
}

// FilterDefaults are RedisBloom's cf-* settings (package internal/cf).
type FilterDefaults = cf.Defaults

// moduleACL is how the CF commands' ACL categories are derived under
// redisbloom-compat c: as Redis 8 does for RedisBloom 8.6, or as Redis 7
// does for the 2.6 module.
func moduleACL(c cf.Compat) command.ModuleACL {
	if c == cf.Compat26 {
		return command.ModuleACLImplied
	}
	return command.ModuleACLAsGiven
}

// CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS n] [EXPANSION e]
func cfReserve(s *Server, cl *client, args [][]byte) {
	if len(args)%2 == 0 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'cf.reserve' command"))
		return
	}
	p, err := cf.ParseReserve(args, s.filterDefaults())
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	if err := s.store.Reserve(&cl.ks, args[1], p); err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

// CF.ADD key item, CF.ADDNX key item (nx). RESP3: a boolean, as RedisBloom.
func cfAdd(nx bool) handler {
	return func(s *Server, cl *client, args [][]byte) { cfAddItem(s, cl, args, nx) }
}

func cfAddItem(s *Server, cl *client, args [][]byte, nx bool) {
	d := s.filterDefaults()
	res, err := s.store.Add(&cl.ks, args[1], args[2:3], keyspace.AddOptions{NX: nx, Create: d.Create(uint64(d.InitialSize), false), Limits: d})
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteBool(res[0].Status == keyspace.Added)
}

// CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item..., CF.INSERTNX (nx). An
// item that does not fit answers -1 (RESP3: false for CF.INSERT), as
// RedisBloom.
func cfInsert(nx bool) handler {
	return func(s *Server, cl *client, args [][]byte) { cfInsertItems(s, cl, args, nx) }
}

func cfInsertItems(s *Server, cl *client, args [][]byte, nx bool) {
	d := s.filterDefaults()
	wrongArity := replyErr("ERR wrong number of arguments for '" + strings.ToLower(string(args[0])) + "' command")
	create, items, err := cf.ParseInsert(args[2:], d, wrongArity)
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	res, err := s.store.Add(&cl.ks, args[1], items, keyspace.AddOptions{NX: nx, Create: create, Limits: d})
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	// RedisBloom answers CF.INSERTNX with integers in RESP3 too, and
	// CF.INSERT with booleans; an item that did not fit is -1 (false).
	bools := cl.wr.Protocol() == 3 && !nx
	cl.wr.WriteArray(len(res))
	for _, r := range res {
		switch {
		case r.Status == keyspace.Failed:
			s.writeErr(cl, r.Err)
		case bools:
			cl.wr.WriteBool(r.Status == keyspace.Added)
		case r.Status == keyspace.NoRoom:
			cl.wr.WriteInt(-1)
		default:
			cl.wr.WriteInt(b2i(r.Status == keyspace.Added))
		}
	}
}

// lookup returns key's filter for a read command, counting INFO's
// keyspace_hits or keyspace_misses as Redis does: a hit is a key found, not
// an item.
func (s *Server) lookup(key []byte) *keyspace.Entry {
	c := s.store.Get(key)
	if c != nil {
		s.stats.hits.Add(1)
	} else {
		s.stats.misses.Add(1)
	}
	return c
}

// CF.EXISTS key item, CF.MEXISTS key item... (multi: an array): lock-free.
// RESP3: booleans.
func cfExists(multi bool) handler {
	return func(s *Server, cl *client, args [][]byte) {
		c := s.lookup(args[1])
		if multi {
			cl.wr.WriteArray(len(args) - 2)
			if c != nil && len(args) > 3 {
				c.Touch(args[2:])
			}
		}
		for _, it := range args[2:] {
			cl.wr.WriteBool(c != nil && c.Exists(it))
		}
	}
}

// CF.COUNT key item: lock-free.
func cfCount(s *Server, cl *client, args [][]byte) {
	n := 0
	if c := s.lookup(args[1]); c != nil {
		n = c.Count(args[2])
	}
	cl.wr.WriteInt(n)
}

// CF.DEL key item. RESP3: a boolean.
func cfDel(s *Server, cl *client, args [][]byte) {
	deleted, err := s.store.DeleteItem(&cl.ks, args[1], args[2])
	if errors.Is(err, keyspace.ErrNotFound) {
		err = replyErr("Not found") // RedisBloom's words for CF.DEL's key
	}
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteBool(deleted)
}

// CF.INFO key: RedisBloom's fields, in its order; a map in RESP3.
func cfInfo(s *Server, cl *client, args [][]byte) {
	c := s.lookup(args[1])
	if c == nil {
		s.writeErr(cl, keyspace.ErrNotFound)
		return
	}
	info := c.Info()
	cl.wr.WriteMap(len(info))
	for _, f := range info {
		cl.wr.WriteString(f.Name)
		cl.wr.WriteInt64(f.Value)
	}
}

// CF.DEBUG key: RedisBloom's one line of figures.
func cfDebug(s *Server, cl *client, args [][]byte) {
	if len(args) != 2 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'cf.debug' command"))
		return
	}
	c := s.lookup(args[1])
	if c == nil {
		s.writeErr(cl, keyspace.ErrNotFound)
		return
	}
	cl.wr.WriteBulkString(c.Debug())
}

// CF.COMPACT key: drops empty stages.
func cfCompact(s *Server, cl *client, args [][]byte) {
	_, err := s.store.Compact(&cl.ks, args[1])
	if errors.Is(err, keyspace.ErrNotFound) {
		err = replyErr("Cuckoo filter was not found")
	}
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

// CF.SCANDUMP key iterator
func cfScanDump(s *Server, cl *client, args [][]byte) {
	iter, ok := integer.Parse(args[2])
	if !ok || iter < 0 {
		s.writeErr(cl, cf.ErrInvalidPosition)
		return
	}
	c := s.lookup(args[1])
	if c == nil {
		s.writeErr(cl, keyspace.ErrNotFound)
		return
	}
	c.Mu.Lock()
	if c.Inserted() == 0 && !c.Loading() {
		// Nothing to dump: RedisBloom answers [0, nil], and so a filter
		// with no items is not carried over by SCANDUMP/LOADCHUNK.
		c.Mu.Unlock()
		cl.wr.WriteArray(2)
		cl.wr.WriteInt(0)
		cl.wr.WriteNull()
		return
	}
	if iter > 0 {
		// The chunk, then its copy in the reply until it is sent: charged
		// before they are made, at their most.
		n := 2 * c.ChunkBound(iter)
		if err := s.store.ChargeChunk(n); err != nil {
			c.Mu.Unlock()
			s.writeErr(cl, err)
			return
		}
		cl.inflight += n
	}
	next, chunk := c.ScanDump(iter)
	c.Mu.Unlock()
	cl.wr.WriteArray(2)
	cl.wr.WriteInt64(next)
	if chunk == nil {
		cl.wr.WriteNull()
	} else {
		cl.wr.WriteBulk(chunk)
	}
}

// CF.LOADCHUNK key iterator data
func cfLoadChunk(s *Server, cl *client, args [][]byte) {
	iter, ok := integer.Parse(args[2])
	if !ok || iter == 0 {
		s.writeErr(cl, cf.ErrInvalidPosition)
		return
	}
	key, data := args[1], args[3]
	var err error
	_, bucketHi := s.filterDefaults().BucketRange()
	switch {
	case iter == 1 && s.filterDefaults().Layout == cf.LayoutRedisBloom && cf.InvalidHeaderRB(data):
		// RedisBloom's answer, after its check that the key is free.
		err = cf.ErrInvalidHeaderRB
		if s.store.Get(key) != nil {
			err = keyspace.ErrItemExists
		}
	case iter == 1 && cf.HeaderBucketRB(data) > bucketHi:
		// RedisBloom 8 checks a header's bucket size against
		// cf-bucket-size's range, which follows cf-initial-size.
		err = cf.ErrHeaderBucketRB
		if s.store.Get(key) != nil {
			err = keyspace.ErrItemExists
		}
	default:
		err = s.store.LoadChunk(&cl.ks, key, iter, data)
	}
	if err != nil {
		var le *cf.LoadError
		if errors.As(err, &le) {
			s.log.Warn("CF.LOADCHUNK refused", "client", cl.id, "key", quoted.Printable(key, 64), "iterator", iter, "reason", le.Detail)
		}
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}
