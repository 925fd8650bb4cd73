package server

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/command"
)

// The server commands: COMMAND, SAVE, BGSAVE, LASTSAVE, INFO, TIME.

func init() {
	handle("command", cmdCommand)
	for _, sub := range []string{"count", "info", "docs", "list", "getkeys", "getkeysandflags", "help"} {
		handle("command|"+sub, cmdCommandSub)
	}
	handle("save", cmdSave)
	handle("bgsave", cmdBgsave)
	handle("lastsave", cmdLastsave)
	handle("info", cmdInfo)
}

// COMMAND and its subcommands answer from package command's table.
func cmdCommand(s *Server, cl *client, a [][]byte) { command.ReplyCommand(cl.wr) }

func cmdCommandSub(s *Server, cl *client, a [][]byte) {
	var msg string
	switch strings.ToLower(string(a[1])) {
	case "count":
		command.ReplyCount(cl.wr)
	case "info":
		command.ReplyInfo(cl.wr, a)
	case "docs":
		command.ReplyDocs(cl.wr, a)
	case "list":
		msg = command.ReplyList(cl.wr, a)
	case "getkeys":
		msg = command.ReplyGetKeys(cl.wr, a, false)
	case "getkeysandflags":
		msg = command.ReplyGetKeys(cl.wr, a, true)
	case "help":
		command.ReplyHelp(cl.wr)
	}
	if msg != "" {
		s.writeErr(cl, replyErr(msg))
	}
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
	section("Clients", "connected_clients", nclients, "maxclients", s.clientLimits().MaxClients)
	var ms runtime.MemStats
	if all || want["memory"] {
		runtime.ReadMemStats(&ms)
	}
	section("Memory", "used_memory", ms.HeapAlloc, "used_memory_filters", s.store.filterBytes(), "used_memory_dump_chunks", s.store.inflight.Load(),
		"used_memory_rss", residentBytes(ms.Sys), "maxmemory", s.store.maxmem.Load())
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
		section("Keyspace", "db0", st.keyspaceLine(n))
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

func cmdLastsave(s *Server, cl *client, a [][]byte) { cl.wr.WriteInt64(s.lastSave.Load()) }
