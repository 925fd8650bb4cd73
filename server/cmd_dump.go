package server

import (
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// DUMP and RESTORE, with Redis's syntax, replies and error texts; the
// payload is this server's own (internal/cf/payload.go).

// dumpCommands binds this file's commands to their rows of Redis's table, by name.
func dumpCommands() (b []binding) {
	b = append(b, binding{name: "dump", run: cmdDump})
	b = append(b, binding{name: "restore", run: cmdRestore})
	return b
}

// DUMP key: the payload, or a null for a missing key. The payload and its
// copy in the reply are charged to --maxmemory, at their largest, until the
// reply is sent, as CF.SCANDUMP's chunks are.
func cmdDump(s *Server, cl *client, args [][]byte) {
	c := s.lookup(args[1])
	if c == nil {
		cl.wr.WriteNull()
		return
	}
	c.Mu.Lock()
	if c.Loading() {
		c.Mu.Unlock()
		s.writeErr(cl, keyspace.ErrLoading)
		return
	}
	n := 2 * c.PayloadBound()
	if err := s.store.ChargeChunk(n); err != nil {
		c.Mu.Unlock()
		s.writeErr(cl, err)
		return
	}
	cl.inflight += n
	payload := c.DumpPayload()
	c.Mu.Unlock()
	cl.wr.WriteBulk(payload)
}

// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ
// frequency]. IDLETIME and FREQ are checked as Redis checks them and then
// have no effect: this server keeps no LRU or LFU policy (OBJECT IDLETIME
// counts from the restore).
func cmdRestore(s *Server, cl *client, args [][]byte) {
	var replace, absTTL, idle, freq bool
	for j := 4; j < len(args); j++ {
		more := len(args) - j - 1
		switch opt := strings.ToLower(string(args[j])); {
		case opt == "replace":
			replace = true
		case opt == "absttl":
			absTTL = true
		case opt == "idletime" && more >= 1 && !freq:
			v, ok := integer.Parse(args[j+1])
			if !ok {
				s.writeErr(cl, errNotInteger)
				return
			}
			if v < 0 {
				s.writeErr(cl, replyErr("ERR Invalid IDLETIME value, must be >= 0"))
				return
			}
			idle = true
			j++
		case opt == "freq" && more >= 1 && !idle:
			v, ok := integer.Parse(args[j+1])
			if !ok {
				s.writeErr(cl, errNotInteger)
				return
			}
			if v < 0 || v > 255 {
				s.writeErr(cl, replyErr("ERR Invalid FREQ value, must be >= 0 and <= 255"))
				return
			}
			freq = true
			j++
		default:
			s.writeErr(cl, replyErr("ERR syntax error"))
			return
		}
	}
	key, payload := args[1], args[3]
	if !replace && s.store.Get(key) != nil {
		s.writeErr(cl, keyspace.ErrBusyKey)
		return
	}
	ttl, ok := integer.Parse(args[2])
	switch {
	case !ok:
		s.writeErr(cl, errNotInteger)
		return
	case ttl < 0:
		s.writeErr(cl, replyErr("ERR Invalid TTL value, must be >= 0"))
		return
	case len(payload)+len(key)+32 > keyspace.MaxRecord:
		s.writeErr(cl, replyErr("ERR DUMP payload too large for one log record"))
		return
	}
	// The footer is checked once, by LoadPayload (Store.Restore), before
	// anything else: Redis's order.
	if s.filterDefaults().Compat == cf.Compat26 && cf.UncheckedPayload(payload) {
		// Redis 7.0 has no "checksum not computed" (Redis 8 has).
		s.writeErr(cl, cf.ErrPayloadFooter)
		return
	}
	if ttl != 0 && !absTTL {
		ttl += keyspace.NowMs()
	}
	if err := s.store.Restore(&cl.ks, key, payload, ttl, replace); err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}
