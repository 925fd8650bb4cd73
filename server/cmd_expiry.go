package server

import (
	"math"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// The expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with Redis
// 7's NX|XX|GT|LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, with
// Redis's replies and error texts. Deadlines are kept in Unix milliseconds
// (the key space's expire.go).

// expiryCommands binds this file's commands to their rows of Redis's table, by name.
func expiryCommands() (b []binding) {
	b = append(b, binding{name: "expire", run: cmdExpire})
	b = append(b, binding{name: "pexpire", run: cmdExpire})
	b = append(b, binding{name: "expireat", run: cmdExpire})
	b = append(b, binding{name: "pexpireat", run: cmdExpire})
	b = append(b, binding{name: "ttl", run: cmdTTL})
	b = append(b, binding{name: "pttl", run: cmdTTL})
	b = append(b, binding{name: "expiretime", run: cmdTTL})
	b = append(b, binding{name: "pexpiretime", run: cmdTTL})
	b = append(b, binding{name: "persist", run: cmdPersist})
	return b
}

var errNotInteger = replyErr("ERR value is not an integer or out of range")

// parseExpireFlags parses EXPIRE's options, with Redis's texts.
func parseExpireFlags(args [][]byte) (keyspace.ExpireCond, error) {
	var flags keyspace.ExpireCond
	for _, a := range args {
		switch strings.ToLower(string(a)) {
		case "nx":
			flags |= keyspace.ExpireNX
		case "xx":
			flags |= keyspace.ExpireXX
		case "gt":
			flags |= keyspace.ExpireGT
		case "lt":
			flags |= keyspace.ExpireLT
		default:
			return 0, replyErr("ERR Unsupported option " + string(a))
		}
	}
	if flags&keyspace.ExpireNX != 0 && flags&(keyspace.ExpireXX|keyspace.ExpireGT|keyspace.ExpireLT) != 0 {
		return 0, replyErr("ERR NX and XX, GT or LT options at the same time are not compatible")
	}
	if flags&keyspace.ExpireGT != 0 && flags&keyspace.ExpireLT != 0 {
		return 0, replyErr("ERR GT and LT options at the same time are not compatible")
	}
	return flags, nil
}

// EXPIRE key seconds [NX|XX|GT|LT], and PEXPIRE, EXPIREAT, PEXPIREAT.
// 1 if the deadline was set (or the key deleted, the deadline being past),
// 0 if the key is missing or a condition failed.
func cmdExpire(s *Server, cl *client, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	flags, err := parseExpireFlags(args[3:])
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	when, ok := integer.Parse(args[2])
	if !ok {
		s.writeErr(cl, errNotInteger)
		return
	}
	badTime := replyErr("ERR invalid expire time in '" + name + "' command")
	if name == "expire" || name == "expireat" {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			s.writeErr(cl, badTime)
			return
		}
		when *= 1000
	}
	if name == "expire" || name == "pexpire" {
		base := keyspace.NowMs()
		if when > math.MaxInt64-base {
			s.writeErr(cl, badTime)
			return
		}
		when += base
	}
	set, err := s.store.Expire(&cl.ks, args[1], when, flags)
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteInt(b2i(set))
}

// TTL key, PTTL, EXPIRETIME, PEXPIRETIME: -2 for a missing key, -1 for a
// key with no deadline. Lock-free, as a lookup.
func cmdTTL(s *Server, cl *client, args [][]byte) {
	c := s.lookup(args[1])
	if c == nil {
		cl.wr.WriteInt(-2)
		return
	}
	d := c.Deadline.Load()
	if d == 0 {
		cl.wr.WriteInt(-1)
		return
	}
	name := strings.ToLower(string(args[0]))
	v := d
	if name == "ttl" || name == "pttl" {
		v = max(d-keyspace.NowMs(), 0)
	}
	if name == "ttl" || name == "expiretime" {
		v = (v + 500) / 1000
	}
	cl.wr.WriteInt64(v)
}

// PERSIST key: 1 if a deadline was removed.
func cmdPersist(s *Server, cl *client, args [][]byte) {
	removed, err := s.store.Persist(&cl.ks, args[1])
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteInt(b2i(removed))
}
