package server

import (
	"cmp"
	"crypto/subtle"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/match"
	"github.com/zeebo/xxh3"
)

// The key-space and connection commands that clients and tools send.

func init() {
	register(
		&command{name: "ping", arity: -1, noauth: false, run: cmdPing},
		&command{name: "echo", arity: 2, run: func(s *Server, cl *client, a [][]byte) { cl.wr.WriteBulk(a[1]) }},
		&command{name: "quit", arity: -1, noauth: true, run: func(s *Server, cl *client, a [][]byte) { cl.wr.WriteString("OK"); cl.quit = true }},
		&command{name: "select", arity: 2, run: cmdSelect},
		&command{name: "auth", arity: -2, noauth: true, run: cmdAuth},
		&command{name: "hello", arity: -1, noauth: true, run: cmdHello},
		&command{name: "client", arity: -2, run: cmdClient},
		&command{name: "command", arity: -1, run: cmdCommand},
		&command{name: "del", arity: -2, write: true, run: cmdDel},
		&command{name: "unlink", arity: -2, write: true, run: cmdDel},
		&command{name: "exists", arity: -2, run: cmdExists},
		&command{name: "type", arity: 2, run: cmdType},
		&command{name: "keys", arity: 2, run: cmdKeys},
		&command{name: "scan", arity: -2, run: cmdScan},
		&command{name: "dbsize", arity: 1, run: func(s *Server, cl *client, a [][]byte) { cl.wr.WriteInt(s.store.keys.Len()) }},
		&command{name: "flushall", arity: -1, write: true, run: cmdFlush},
		&command{name: "flushdb", arity: -1, write: true, run: cmdFlush},
		&command{name: "save", arity: 1, run: cmdSave},
		&command{name: "bgsave", arity: -1, run: cmdBgsave},
		&command{name: "lastsave", arity: 1, run: func(s *Server, cl *client, a [][]byte) { cl.wr.WriteInt64(s.lastSave.Load()) }},
		&command{name: "info", arity: -1, run: cmdInfo},
	)
}

// typeName is RedisBloom's module type name for cuckoo filters.
const typeName = "MBbloomCF"

func cmdPing(s *Server, cl *client, a [][]byte) {
	if len(a) > 2 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'ping' command"))
		return
	}
	if len(a) == 2 {
		cl.wr.WriteBulk(a[1])
		return
	}
	cl.wr.WriteString("PONG")
}

func cmdSelect(s *Server, cl *client, a [][]byte) {
	n, ok := parseInt(a[1])
	switch {
	case !ok:
		s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
	case n != 0:
		s.writeErr(cl, replyErr("ERR DB index is out of range"))
	default:
		cl.wr.WriteString("OK")
	}
}

func (s *Server) checkPass(pass []byte) bool {
	return subtle.ConstantTimeCompare(pass, []byte(s.cfg.RequirePass)) == 1
}

// AUTH [username] password; the only user is "default".
func cmdAuth(s *Server, cl *client, a [][]byte) {
	if len(a) > 3 {
		s.writeErr(cl, replyErr("ERR syntax error"))
		return
	}
	if s.cfg.RequirePass == "" {
		s.writeErr(cl, replyErr("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"))
		return
	}
	if (len(a) == 3 && string(a[1]) != "default") || !s.checkPass(a[len(a)-1]) {
		s.writeErr(cl, replyErr("WRONGPASS invalid username-password pair or user is disabled."))
		return
	}
	cl.authed = true
	cl.wr.WriteString("OK")
}

// HELLO [protover [AUTH user pass] [SETNAME name]]: RESP2 only. HELLO 3 is
// refused with NOPROTO, and clients (go-redis, redis-cli) fall back to RESP2.
func cmdHello(s *Server, cl *client, a [][]byte) {
	if len(a) >= 2 {
		v, ok := parseInt(a[1])
		if !ok {
			s.writeErr(cl, replyErr("ERR Protocol version is not an integer or out of range"))
			return
		}
		if v != 2 {
			s.writeErr(cl, replyErr("NOPROTO sorry, this protocol version is not supported"))
			return
		}
	}
	for i := 2; i < len(a); i++ {
		switch strings.ToUpper(string(a[i])) {
		case "AUTH":
			if i+2 >= len(a) {
				s.writeErr(cl, replyErr("ERR syntax error"))
				return
			}
			if s.cfg.RequirePass != "" && (string(a[i+1]) != "default" || !s.checkPass(a[i+2])) {
				s.writeErr(cl, replyErr("WRONGPASS invalid username-password pair or user is disabled."))
				return
			}
			cl.authed = true
			i += 2
		case "SETNAME":
			if i+1 >= len(a) {
				s.writeErr(cl, replyErr("ERR syntax error"))
				return
			}
			name := string(a[i+1])
			cl.name.Store(&name)
			i++
		default:
			s.writeErr(cl, replyErr("ERR syntax error"))
			return
		}
	}
	if s.cfg.RequirePass != "" && !cl.authed {
		s.writeErr(cl, replyErr("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"))
		return
	}
	cl.wr.WriteArray(14)
	for _, kv := range []any{"server", "cuckoo", "version", Version, "proto", 2, "id", int(cl.id), "mode", "standalone", "role", "master", "modules", nil} {
		switch v := kv.(type) {
		case string:
			cl.wr.WriteBulkString(v)
		case int:
			cl.wr.WriteInt(v)
		case nil:
			cl.wr.WriteArray(0)
		}
	}
}

// Version is the server version INFO and HELLO report.
const Version = "0.1.0"

func cmdClient(s *Server, cl *client, a [][]byte) {
	switch strings.ToUpper(string(a[1])) {
	case "SETNAME":
		if len(a) != 3 {
			s.writeErr(cl, replyErr("ERR wrong number of arguments for 'client|setname' command"))
			return
		}
		name := string(a[2])
		if strings.ContainsAny(name, " \n") {
			s.writeErr(cl, replyErr("ERR Client names cannot contain spaces, newlines or special characters."))
			return
		}
		cl.name.Store(&name)
		cl.wr.WriteString("OK")
	case "GETNAME":
		if p := cl.name.Load(); p != nil && *p != "" {
			cl.wr.WriteBulkString(*p)
		} else {
			cl.wr.WriteNull()
		}
	case "SETINFO":
		if len(a) != 4 {
			s.writeErr(cl, replyErr("ERR wrong number of arguments for 'client|setinfo' command"))
			return
		}
		cl.wr.WriteString("OK")
	case "ID":
		cl.wr.WriteInt64(cl.id)
	case "LIST":
		s.mu.Lock()
		var sb strings.Builder
		for c := range s.clients {
			name := ""
			if p := c.name.Load(); p != nil {
				name = *p
			}
			fmt.Fprintf(&sb, "id=%d addr=%s name=%s age=%d\n", c.id, c.nc.RemoteAddr(), name, int(time.Since(c.created).Seconds()))
		}
		s.mu.Unlock()
		cl.wr.WriteBulkString(sb.String())
	default:
		s.writeErr(cl, replyErr(fmt.Sprintf("ERR unknown subcommand '%s'. Try CLIENT HELP.", printable(a[1], 32))))
	}
}

// COMMAND: enough for redis-cli and clients that probe it: COUNT, and an
// empty list for everything else (DOCS, INFO), which makes them fall back
// to plain behaviour.
func cmdCommand(s *Server, cl *client, a [][]byte) {
	if len(a) >= 2 && strings.EqualFold(string(a[1]), "count") {
		cl.wr.WriteInt(len(commands))
		return
	}
	cl.wr.WriteArray(0)
}

func cmdDel(s *Server, cl *client, a [][]byte) {
	n := 0
	for _, k := range a[1:] {
		ok, err := s.store.drop(cl, k)
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
		if s.store.get(k) != nil {
			n++
		}
	}
	cl.wr.WriteInt(n)
}

func cmdType(s *Server, cl *client, a [][]byte) {
	if s.store.get(a[1]) != nil {
		cl.wr.WriteString(typeName)
	} else {
		cl.wr.WriteString("none")
	}
}

func cmdKeys(s *Server, cl *client, a [][]byte) {
	pat := string(a[1])
	var out []string
	for k := range s.store.keys.All() {
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
			v, ok := parseInt(a[i+1])
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
	page, next := scanPage(s.store.keys.All(), cur, count)
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
	if err := s.store.flushAll(cl); err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

func cmdSave(s *Server, cl *client, a [][]byte) {
	if err := s.snapshot(); err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

func cmdBgsave(s *Server, cl *client, a [][]byte) {
	if s.store.aof == nil {
		s.writeErr(cl, replyErr("ERR persistence is off (no --dir)"))
		return
	}
	if err := s.store.aof.err(); err != nil {
		// The snapshot would fail at its first step, the log's rotation:
		// say so now rather than "started".
		s.writeErr(cl, err)
		return
	}
	if !s.snapshotAsync() {
		s.writeErr(cl, replyErr("ERR Background save already in progress"))
		return
	}
	cl.wr.WriteString("Background saving started")
}

// INFO [section...]: server, clients, memory, persistence, stats, keyspace.
func cmdInfo(s *Server, cl *client, a [][]byte) {
	want := map[string]bool{}
	for _, x := range a[1:] {
		want[strings.ToLower(string(x))] = true
	}
	all := len(want) == 0 || want["all"] || want["everything"] || want["default"]
	var sb strings.Builder
	section := func(name string, kv ...any) {
		if !all && !want[strings.ToLower(name)] {
			return
		}
		if sb.Len() > 0 {
			sb.WriteString("\r\n")
		}
		fmt.Fprintf(&sb, "# %s\r\n", name)
		for i := 0; i+1 < len(kv); i += 2 {
			fmt.Fprintf(&sb, "%s:%v\r\n", kv[i], kv[i+1])
		}
	}
	up := time.Since(s.start)
	section("Server", "redis_version", "7.2.0", "cuckoo_version", Version, "redis_mode", "standalone",
		"os", runtime.GOOS+" "+runtime.GOARCH, "go_version", runtime.Version(), "process_id", pid,
		"uptime_in_seconds", int(up.Seconds()), "uptime_in_days", int(up.Hours()/24))
	s.mu.Lock()
	nclients := len(s.clients)
	s.mu.Unlock()
	section("Clients", "connected_clients", nclients, "maxclients", s.limits.MaxClients)
	var ms runtime.MemStats
	if all || want["memory"] {
		runtime.ReadMemStats(&ms)
	}
	section("Memory", "used_memory", ms.HeapAlloc, "used_memory_filters", s.store.filterBytes(), "used_memory_dump_chunks", s.store.inflight.Load(),
		"used_memory_rss", residentBytes(ms.Sys), "maxmemory", s.cfg.MaxMemory)
	st := s.store
	if st.aof != nil {
		section("Persistence", "loading", 0, "aof_enabled", 1, "appendfsync", st.aof.mode,
			"aof_current_size", st.aof.size.Load(), "aof_generation", st.aof.gen,
			"aof_last_write_status", status(st.aof.err()), "rdb_changes_since_last_save", st.dirty.Load(),
			"rdb_bgsave_in_progress", b2i(s.snapping.Load()), "rdb_last_save_time", s.lastSave.Load())
	} else {
		section("Persistence", "loading", 0, "aof_enabled", 0, "rdb_changes_since_last_save", st.dirty.Load())
	}
	section("Stats", "total_connections_received", s.stats.conns.Load(), "total_commands_processed", s.stats.cmds.Load(),
		"rejected_connections", s.stats.rejected.Load(), "total_error_replies", s.stats.errors.Load(),
		"keyspace_hits", s.stats.hits.Load(), "keyspace_misses", s.stats.misses.Load())
	if n := st.keys.Len(); n > 0 {
		section("Keyspace", "db0", fmt.Sprintf("keys=%d,expires=0,avg_ttl=0", n))
	} else {
		section("Keyspace")
	}
	cl.wr.WriteBulkString(sb.String())
}

func status(err error) string {
	if err != nil {
		return "err"
	}
	return "ok"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
