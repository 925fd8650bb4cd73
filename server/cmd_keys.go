package server

import (
	"cmp"
	"iter"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/tidwall/match"
	"github.com/zeebo/xxh3"
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
	var pick string
	n := 0
	for k := range s.store.LiveKeys() {
		n++
		if rand.IntN(n) == 0 {
			pick = k
		}
	}
	if n == 0 {
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
	pat := string(a[1])
	var out []string
	for k := range s.store.LiveKeys() {
		if pat == "*" || match.Match(k, pat) {
			out = append(out, k)
		}
	}
	cl.wr.WriteArray(len(out))
	for _, k := range out {
		cl.wr.WriteBulkString(k)
	}
}

// SCAN cursor [MATCH pattern] [COUNT n] [TYPE t]. The map has no iteration
// cursor, so keys are visited in the order of a fixed 64-bit hash of their
// names, and the cursor is the hash the next call starts at: each call
// returns the keys hashed in [cursor, next), the COUNT lowest (all keys that
// share the last hash, so a tie is never split). The ranges of a scan
// partition the hash space, so a key present for the whole scan is returned
// exactly once, whatever is added or deleted meanwhile, as Redis promises.
// Each call costs a pass over the key space.
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
	page, next := scanPage(s.store.LiveKeys(), cur, count)
	var out []string
	for _, k := range page {
		if (pat == "*" || match.Match(k, pat)) && (typ == "" || typ == typeName) {
			out = append(out, k)
		}
	}
	cl.wr.WriteArray(2)
	cl.wr.WriteBulkString(strconv.FormatUint(next, 10))
	cl.wr.WriteArray(len(out))
	for _, k := range out {
		cl.wr.WriteBulkString(k)
	}
}

// scanPage returns the count keys of seq with the lowest scan hashes at or
// above cur, plus every other key sharing the highest of those hashes, and
// the cursor after them: 0 when none are left.
func scanPage[V any](seq iter.Seq2[string, V], cur uint64, count int) ([]string, uint64) {
	type hashed struct {
		h uint64
		k string
	}
	var cands []hashed
	for k := range seq {
		if h := scanHash(k); h >= cur {
			cands = append(cands, hashed{h, k})
		}
	}
	if len(cands) <= count {
		keys := make([]string, len(cands))
		for i, c := range cands {
			keys[i] = c.k
		}
		return keys, 0
	}
	slices.SortFunc(cands, func(x, y hashed) int { return cmp.Compare(x.h, y.h) })
	last := cands[count-1].h
	var keys []string
	for _, c := range cands {
		if c.h > last {
			break
		}
		keys = append(keys, c.k)
	}
	// last+1 wraps to 0, the end, only when last is the highest hash.
	return keys, last + 1
}

// scanHash orders the key space for SCAN; fixed, so cursors outlive a call.
func scanHash(key string) uint64 { return xxh3.HashString(key) }

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
