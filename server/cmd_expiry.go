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
// (keyspace_expire.go).

func init() {
	handle("expire", cmdExpire)
	handle("pexpire", cmdExpire)
	handle("expireat", cmdExpire)
	handle("pexpireat", cmdExpire)
	handle("ttl", cmdTTL)
	handle("pttl", cmdTTL)
	handle("expiretime", cmdTTL)
	handle("pexpiretime", cmdTTL)
	handle("persist", cmdPersist)
}

// Expire conditions, as Redis's EXPIRE_NX... flags.
const (
	expireNX = 1 << iota
	expireXX
	expireGT
	expireLT
)

var errNotInteger = replyErr("ERR value is not an integer or out of range")

// parseExpireFlags parses EXPIRE's options, with Redis's texts.
func parseExpireFlags(args [][]byte) (int, error) {
	flags := 0
	for _, a := range args {
		switch strings.ToLower(string(a)) {
		case "nx":
			flags |= expireNX
		case "xx":
			flags |= expireXX
		case "gt":
			flags |= expireGT
		case "lt":
			flags |= expireLT
		default:
			return 0, replyErr("ERR Unsupported option " + string(a))
		}
	}
	if flags&expireNX != 0 && flags&(expireXX|expireGT|expireLT) != 0 {
		return 0, replyErr("ERR NX and XX, GT or LT options at the same time are not compatible")
	}
	if flags&expireGT != 0 && flags&expireLT != 0 {
		return 0, replyErr("ERR GT and LT options at the same time are not compatible")
	}
	return flags, nil
}

// expireAllowed reports whether the conditions in flags let deadline when
// replace current (0: none), as Redis decides: no deadline counts as
// infinite for GT and LT.
func expireAllowed(flags int, current, when int64) bool {
	switch {
	case flags&expireNX != 0 && current != 0,
		flags&expireXX != 0 && current == 0,
		flags&expireGT != 0 && (current == 0 || when <= current),
		flags&expireLT != 0 && current != 0 && when >= current:
		return false
	}
	return true
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
	set := false
	err = s.store.Write(&cl.ks, args[1], nil, func(c *keyspace.Entry, _ bool) error {
		if c == nil || !expireAllowed(flags, c.Deadline.Load(), when) {
			return nil
		}
		// A deadline at or before now deletes the key (setExpire); 0 would
		// read as "none", so it is one of those.
		s.store.SetExpire(&cl.ks, args[1], c, max(when, 1))
		set = true
		return nil
	})
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
	removed := false
	err := s.store.Write(&cl.ks, args[1], nil, func(c *keyspace.Entry, _ bool) error {
		if c != nil && c.Deadline.Load() != 0 {
			s.store.SetExpire(&cl.ks, args[1], c, 0)
			removed = true
		}
		return nil
	})
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteInt(b2i(removed))
}
