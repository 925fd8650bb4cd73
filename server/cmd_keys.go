package server

import (
	"strconv"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/integer"
)

// The key-space commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, DBSIZE,
// FLUSHALL, FLUSHDB, RENAME, RENAMENX, RANDOMKEY. Expired keys are skipped
// by all of them; DBSIZE counts them until they are dropped, as Redis's
// does.

// keysCommands binds this file's commands to their rows of Redis's table, by name.
func keysCommands() (b []binding) {
	b = append(b, binding{name: "del", run: cmdDel})
	b = append(b, binding{name: "unlink", run: cmdDel})
	b = append(b, binding{name: "exists", run: cmdExists})
	b = append(b, binding{name: "type", run: cmdType})
	b = append(b, binding{name: "keys", run: cmdKeys})
	b = append(b, binding{name: "scan", run: cmdScan})
	b = append(b, binding{name: "dbsize", run: cmdDbsize})
	b = append(b, binding{name: "flushall", run: cmdFlush})
	b = append(b, binding{name: "flushdb", run: cmdFlush})
	b = append(b, binding{name: "rename", run: cmdRename(false)})
	b = append(b, binding{name: "renamenx", run: cmdRename(true)})
	b = append(b, binding{name: "randomkey", run: cmdRandomKey})
	return b
}

// RENAME key newkey: OK; RENAMENX key newkey (nx): 1, or 0 if newkey
// exists.
func cmdRename(nx bool) handler {
	return func(s *Server, cl *client, a [][]byte) { renameKey(s, cl, a, nx) }
}

func renameKey(s *Server, cl *client, a [][]byte, nx bool) {
	moved, err := s.store.Rename(&cl.ks, a[1], a[2], nx)
	switch {
	case err != nil:
		s.writeErr(cl, err)
	case nx:
		cl.wr.WriteInt(b2i(moved))
	default:
		cl.wr.WriteString("OK")
	}
}

// RANDOMKEY: a key chosen uniformly (reservoir sampling over one pass of
// the map), or a null when there is none.
func cmdRandomKey(s *Server, cl *client, a [][]byte) {
	pick, ok := s.store.RandomKey()
	if !ok {
		cl.wr.WriteNull()
		return
	}
	cl.wr.WriteBulkString(pick)
}

// typeName is RedisBloom's module type name for cuckoo filters.
const typeName = "MBbloomCF"

func cmdDel(s *Server, cl *client, a [][]byte) {
	n := 0
	for _, k := range a[1:] {
		ok, err := s.store.Drop(&cl.ks, k)
		if err != nil {
			s.writeErr(cl, err)
			return
		}
		if ok {
			n++
		}
	}
	cl.wr.WriteInt(n)
}

func cmdExists(s *Server, cl *client, a [][]byte) {
	n := 0
	for _, k := range a[1:] {
		if s.lookup(k) != nil {
			n++
		}
	}
	cl.wr.WriteInt(n)
}

func cmdType(s *Server, cl *client, a [][]byte) {
	if s.lookup(a[1]) != nil {
		cl.wr.WriteString(typeName)
	} else {
		cl.wr.WriteString("none")
	}
}

func cmdKeys(s *Server, cl *client, a [][]byte) {
	out := s.store.Matching(string(a[1]))
	cl.wr.WriteArray(len(out))
	for _, k := range out {
		cl.wr.WriteBulkString(k)
	}
}

// SCAN cursor [MATCH pattern] [COUNT n] [TYPE t]: the key space's Scan says
// what a cursor is and what a scan promises.
func cmdScan(s *Server, cl *client, a [][]byte) {
	cur, err := strconv.ParseUint(string(a[1]), 10, 64)
	if err != nil {
		s.writeErr(cl, replyErr("ERR invalid cursor"))
		return
	}
	pat, count, typ := "*", 10, ""
	for i := 2; i < len(a); i += 2 {
		if i+1 >= len(a) {
			s.writeErr(cl, replyErr("ERR syntax error"))
			return
		}
		switch strings.ToUpper(string(a[i])) {
		case "MATCH":
			pat = string(a[i+1])
		case "COUNT":
			v, ok := integer.Parse(a[i+1])
			if !ok || v < 1 {
				s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
				return
			}
			count = int(min(v, 1<<20))
		case "TYPE":
			typ = string(a[i+1])
		default:
			s.writeErr(cl, replyErr("ERR syntax error"))
			return
		}
	}
	out, next := s.store.Scan(cur, count, pat)
	if typ != "" && typ != typeName {
		out = nil // every key is a filter
	}
	cl.wr.WriteArray(2)
	cl.wr.WriteBulkString(strconv.FormatUint(next, 10))
	cl.wr.WriteArray(len(out))
	for _, k := range out {
		cl.wr.WriteBulkString(k)
	}
}

func cmdFlush(s *Server, cl *client, a [][]byte) {
	if len(a) > 2 || (len(a) == 2 && !strings.EqualFold(string(a[1]), "sync") && !strings.EqualFold(string(a[1]), "async")) {
		s.writeErr(cl, replyErr("ERR syntax error"))
		return
	}
	if err := s.store.FlushAll(&cl.ks); err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

func cmdDbsize(s *Server, cl *client, a [][]byte) { cl.wr.WriteInt(s.store.Len()) }
