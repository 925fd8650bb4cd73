package server

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// The CF.* commands, with RedisBloom's syntax, reply types and error texts.

func init() {
	register(
		&command{name: "cf.reserve", arity: -3, write: true, run: cfReserve},
		&command{name: "cf.add", arity: 3, write: true, run: cfAdd},
		&command{name: "cf.addnx", arity: 3, write: true, run: cfAdd},
		&command{name: "cf.insert", arity: -4, write: true, run: cfInsert},
		&command{name: "cf.insertnx", arity: -4, write: true, run: cfInsert},
		&command{name: "cf.exists", arity: 3, run: cfExists},
		&command{name: "cf.mexists", arity: -3, run: cfExists},
		&command{name: "cf.count", arity: 3, run: cfCount},
		&command{name: "cf.del", arity: 3, write: true, run: cfDel},
		&command{name: "cf.info", arity: 2, run: cfInfo},
		&command{name: "cf.compact", arity: 2, write: true, run: cfCompact},
		&command{name: "cf.scandump", arity: 3, run: cfScanDump},
		&command{name: "cf.loadchunk", arity: 4, write: true, dataArg: 3, run: cfLoadChunk},
	)
}

// parseInt parses a Redis integer argument.
func parseInt(b []byte) (int64, bool) {
	v, err := strconv.ParseInt(string(b), 10, 64)
	return v, err == nil
}

var defaultParams = params{Capacity: defaultCapacity, BucketSize: 2, MaxIter: defaultMaxIter, Expansion: defaultExpansion}

// CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS n] [EXPANSION e]
func cfReserve(s *Server, cl *client, args [][]byte) {
	if len(args)%2 == 0 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'cf.reserve' command"))
		return
	}
	capacity, ok := parseInt(args[2])
	if !ok || capacity <= 0 {
		s.writeErr(cl, replyErr("Bad capacity"))
		return
	}
	p := defaultParams
	p.Capacity = uint64(capacity)
	p.BucketSize = 0 // not given: see doc.go
	for i := 3; i < len(args); i += 2 {
		v, ok := parseInt(args[i+1])
		opt := strings.ToUpper(string(args[i]))
		if !ok {
			s.writeErr(cl, replyErr("Couldn't parse "+printable(args[i], 32)))
			return
		}
		switch opt {
		case "BUCKETSIZE":
			if v < 1 || v > maxBucketSize {
				s.writeErr(cl, replyErr("Bad bucket size"))
				return
			}
			p.BucketSize = int(v)
		case "MAXITERATIONS":
			if v < 1 || v > maxIterationsMax {
				s.writeErr(cl, replyErr("Bad maxIterations"))
				return
			}
			p.MaxIter = int(v)
		case "EXPANSION":
			if v < 0 || v > maxExpansion {
				s.writeErr(cl, replyErr("Bad expansion"))
				return
			}
			p.Expansion = int(v)
		default:
			s.writeErr(cl, replyErr("Unknown argument received"))
			return
		}
	}
	if p.BucketSize == 0 {
		// RedisBloom's default is 2; ours is 4, the shape whose 64-bit
		// bucket word holds four 12-bit fingerprints (see doc.go).
		p.BucketSize = 4
	}
	if err := p.validate(); err != nil {
		s.writeErr(cl, err)
		return
	}
	created := false
	err := s.store.write(cl, args[1], &p, func(c *cuckoo, isNew bool) error {
		created = isNew
		return nil
	})
	switch {
	case err != nil:
		s.writeErr(cl, err)
	case !created:
		s.writeErr(cl, errItemExists)
	default:
		cl.wr.WriteString("OK")
	}
}

// addDefault is the filter CF.ADD and CF.INSERT create on a missing key.
func addDefault(capacity uint64) *params {
	p := defaultParams
	p.Capacity = capacity
	p.BucketSize = 4
	return &p
}

// CF.ADD key item, CF.ADDNX key item
func cfAdd(s *Server, cl *client, args [][]byte) {
	nx := len(args[0]) == len("cf.addnx")
	var added bool
	err := s.store.write(cl, args[1], addDefault(defaultCapacity), func(c *cuckoo, _ bool) error {
		var err error
		added, err = c.add(args[2], nx, false, s.store.charge)
		if err == nil && added {
			s.store.logOp(cl, encodeAdd(args[1], args[2:3]))
		}
		return err
	})
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	if added {
		cl.wr.WriteInt(1)
	} else {
		cl.wr.WriteInt(0)
	}
}

// CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item..., CF.INSERTNX
func cfInsert(s *Server, cl *client, args [][]byte) {
	nx := len(args[0]) == len("cf.insertnx")
	create := addDefault(defaultCapacity)
	i := 2
	for ; i < len(args); i++ {
		switch strings.ToUpper(string(args[i])) {
		case "CAPACITY":
			i++
			if i == len(args) {
				s.writeErr(cl, replyErr("ERR wrong number of arguments for '"+strings.ToLower(string(args[0]))+"' command"))
				return
			}
			v, ok := parseInt(args[i])
			if !ok || v <= 0 {
				s.writeErr(cl, replyErr("Bad capacity"))
				return
			}
			if create != nil {
				create.Capacity = uint64(v)
			}
			continue
		case "NOCREATE":
			create = nil
			continue
		case "ITEMS":
		default:
			s.writeErr(cl, replyErr("Unknown argument received"))
			return
		}
		break
	}
	items := args[min(i+1, len(args)):]
	if i >= len(args) || len(items) == 0 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for '"+strings.ToLower(string(args[0]))+"' command"))
		return
	}
	if create != nil {
		if err := create.validate(); err != nil {
			s.writeErr(cl, err)
			return
		}
	}
	res := make([]any, len(items))
	err := s.store.write(cl, args[1], create, func(c *cuckoo, _ bool) error {
		if c == nil {
			return errNotFound
		}
		var ok [][]byte
		for j, it := range items {
			added, err := c.add(it, nx, false, s.store.charge)
			switch {
			case err == nil && added:
				res[j] = 1
				ok = append(ok, it)
			case err == nil:
				res[j] = 0
			case errors.Is(err, errFull) || errors.Is(err, errMaxExpansions):
				res[j] = -1
			default:
				res[j] = err
			}
		}
		if len(ok) > 0 {
			s.store.logOp(cl, encodeAdd(args[1], ok))
		}
		return nil
	})
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteArray(len(res))
	for _, r := range res {
		switch r := r.(type) {
		case int:
			cl.wr.WriteInt(r)
		case error:
			cl.wr.WriteError(r.Error())
		}
	}
}

// CF.EXISTS key item, CF.MEXISTS key item...: lock-free.
func cfExists(s *Server, cl *client, args [][]byte) {
	c := s.store.get(args[1])
	multi := len(args[0]) == len("cf.mexists")
	if multi {
		cl.wr.WriteArray(len(args) - 2)
	} else if len(args) != 3 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'cf.exists' command"))
		return
	}
	for _, it := range args[2:] {
		if c != nil && c.exists(it) {
			s.stats.hits.Add(1)
			cl.wr.WriteInt(1)
		} else {
			s.stats.misses.Add(1)
			cl.wr.WriteInt(0)
		}
	}
}

// CF.COUNT key item: lock-free.
func cfCount(s *Server, cl *client, args [][]byte) {
	n := 0
	if c := s.store.get(args[1]); c != nil {
		n = c.count(args[2])
	}
	cl.wr.WriteInt(n)
}

// CF.DEL key item
func cfDel(s *Server, cl *client, args [][]byte) {
	var deleted bool
	err := s.store.write(cl, args[1], nil, func(c *cuckoo, _ bool) error {
		if c == nil {
			return replyErr("Not found")
		}
		deleted = c.del(args[2])
		if deleted {
			s.store.logOp(cl, encodeDel(args[1], args[2]))
		}
		return nil
	})
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	if deleted {
		cl.wr.WriteInt(1)
	} else {
		cl.wr.WriteInt(0)
	}
}

// CF.INFO key: RedisBloom's fields, in its order. Size is the bytes of the
// stages; Bucket size is the size built (see doc.go).
func cfInfo(s *Server, cl *client, args [][]byte) {
	c := s.store.get(args[1])
	if c == nil {
		s.writeErr(cl, errNotFound)
		return
	}
	cl.wr.WriteArray(16)
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"Size", int64(c.sizeBytes())},
		{"Number of buckets", int64(c.buckets())},
		{"Number of filters", int64(c.filters())},
		{"Number of items inserted", c.inserted.Load()},
		{"Number of items deleted", c.deleted.Load()},
		{"Bucket size", int64(c.p.Bucket())},
		{"Expansion rate", int64(c.p.Expansion)},
		{"Max iterations", int64(c.p.MaxIter)},
	} {
		cl.wr.WriteString(f.name)
		cl.wr.WriteInt64(f.v)
	}
}

// CF.COMPACT key: drops empty stages.
func cfCompact(s *Server, cl *client, args [][]byte) {
	err := s.store.write(cl, args[1], nil, func(c *cuckoo, _ bool) error {
		if c == nil {
			return replyErr("Cuckoo filter was not found")
		}
		before := c.sizeBytes()
		if c.compact() {
			s.store.release(before - c.sizeBytes())
			s.store.logOp(cl, encodeKeyOp(opCompact, args[1]))
		}
		return nil
	})
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

// CF.SCANDUMP key iterator
func cfScanDump(s *Server, cl *client, args [][]byte) {
	iter, ok := parseInt(args[2])
	if !ok || iter < 0 {
		s.writeErr(cl, errInvalidPosition)
		return
	}
	c := s.store.get(args[1])
	if c == nil {
		s.writeErr(cl, errNotFound)
		return
	}
	c.mu.Lock()
	if iter > 0 {
		// The chunk, then its copy in the reply until it is sent: charged
		// before they are made, at their most.
		n := 2 * chunkBound(c, iter)
		if err := s.store.chargeChunk(n); err != nil {
			c.mu.Unlock()
			s.writeErr(cl, err)
			return
		}
		cl.inflight += n
	}
	next, chunk := scanDump(c, iter)
	c.mu.Unlock()
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
	iter, ok := parseInt(args[2])
	if !ok || iter <= 0 {
		s.writeErr(cl, errInvalidPosition)
		return
	}
	key, data := args[1], args[3]
	var err error
	if iter == 1 {
		var c *cuckoo
		c, err = beginLoad(data, s.store.charge, s.store.release)
		if err == nil {
			if err = s.store.install(cl, key, c, encodeChunk(key, 1, data)); err != nil {
				s.store.release(c.sizeBytes())
			}
		}
	} else {
		err = s.store.writeLoading(cl, key, func(c *cuckoo, _ bool) error {
			if c == nil {
				return errNotFound
			}
			if err := loadChunk(c, iter, data); err != nil {
				return err
			}
			s.store.logOp(cl, encodeChunk(key, uint64(iter), bytes.Clone(data)))
			return nil
		})
	}
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}
