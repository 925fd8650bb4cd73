package server

import (
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// OBJECT and MEMORY: what a key's filter is and what it takes.
//
// OBJECT ENCODING names the filter's shape:
//
//	growing  one growing table (EXPANSION >= 1, the default): it splits a
//	         bucket at a time, lookups read two buckets however far it grew
//	fixed    one fixed lock-free stage (EXPANSION 0): "Filter is full" past
//	         its capacity
//	chain    a list of stages, as format 2 dumps and snapshots hold them
//	         (filters from before growing tables), each stage read by a lookup
//
// OBJECT FREQ, IDLETIME and REFCOUNT answer as Redis does with no LFU or LRU
// eviction policy, which this server never has: FREQ is refused, IDLETIME
// is the seconds since the key was last read or written (a clock ticked with
// the sweeper, every 100 ms), REFCOUNT is 1.
//
// MEMORY USAGE is the filter's bytes (CF.INFO's Size: its tables, as
// --maxmemory counts them) plus the key's own: its name, the filter's
// header (the cuckoo struct and, for a growing table, its directory) and the
// key space's entry for it. SAMPLES is accepted and has no effect: the
// figure is exact. A RedisBloom-layout key answers what Redis with
// RedisBloom answers for it (CF.INFO's Size, the key's name as Redis
// allocates it, its dict entry), so that tools comparing the two servers
// agree; --maxmemory counts this server's own bytes all the same.

// objectCommands binds this file's commands to their rows of Redis's table, by name.
func objectCommands() (b []binding) {
	for _, sub := range []string{"encoding", "freq", "idletime", "refcount", "help"} {
		b = append(b, binding{name: "object|" + sub, run: cmdObject})
	}
	b = append(b, binding{name: "memory|usage", run: cmdMemoryUsage})
	b = append(b, binding{name: "memory|help", run: cmdMemoryHelp})
	return b
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    The shape of the key's filter: growing, fixed or chain.",
	"FREQ <key>",
	"    The key's access frequency; refused, as no LFU eviction policy is kept.",
	"IDLETIME <key>",
	"    Seconds since the key was last read or written.",
	"REFCOUNT <key>",
	"    References to the key's value: always 1.",
	"HELP",
	"    Print this help.",
}

var memoryHelp = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"USAGE <key> [SAMPLES <count>]",
	"    Bytes the key and its filter take (SAMPLES is accepted; the figure is exact).",
	"HELP",
	"    Print this help.",
}

func cmdObject(s *Server, cl *client, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	if sub == "help" {
		cl.wr.WriteHelp(objectHelp)
		return
	}
	// Redis looks the key up without touching its access time.
	c := s.store.Peek(string(args[2]))
	if c == nil || c.Expired(keyspace.NowMs()) {
		cl.wr.WriteNull()
		return
	}
	switch sub {
	case "encoding":
		cl.wr.WriteBulkString(c.Encoding())
	case "freq":
		s.writeErr(cl, replyErr("ERR An LFU maxmemory policy is not selected, access frequency not tracked. "+
			"Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."))
	case "idletime":
		cl.wr.WriteInt64(max(s.store.Clock.Load()-c.Access.Load(), 0))
	case "refcount":
		cl.wr.WriteInt(1)
	}
}

// MEMORY USAGE key [SAMPLES count]: bytes, or a null for a missing key.
func cmdMemoryUsage(s *Server, cl *client, args [][]byte) {
	for j := 3; j < len(args); j++ {
		if !strings.EqualFold(string(args[j]), "samples") || j+1 >= len(args) {
			s.writeErr(cl, replyErr("ERR syntax error"))
			return
		}
		v, ok := integer.Parse(args[j+1])
		if !ok {
			s.writeErr(cl, errNotInteger)
			return
		}
		if v < 0 {
			s.writeErr(cl, replyErr("ERR syntax error"))
			return
		}
		j++
	}
	k := string(args[2])
	c := s.store.Peek(k)
	if c == nil || c.Expired(keyspace.NowMs()) {
		cl.wr.WriteNull()
		return
	}
	cl.wr.WriteInt64(int64(c.MemoryUsage(k)))
}

func cmdMemoryHelp(s *Server, cl *client, args [][]byte) { cl.wr.WriteHelp(memoryHelp) }
