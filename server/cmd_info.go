package server

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/info"
)

// INFO [section...]: the sections and fields tools read, with Redis's names
// and meanings. Every figure is measured, never a constant standing in for
// one: where this server has no such thing (blocked clients, evictions,
// replicas) the field says so with its true value, 0.

// infoCommands binds this file's commands to their rows of Redis's table, by name.
func infoCommands() (b []binding) {
	b = append(b, binding{name: "info", run: cmdInfo})
	return b
}

func cmdInfo(s *Server, cl *client, a [][]byte) {
	w := info.NewWriter(a[1:])
	s.serverInfo(w)
	if w.Wants("clients") {
		s.clientsInfo(w)
	}
	if w.Wants("memory") {
		s.memoryInfo(w)
	}
	s.persistenceInfo(w)
	s.statsInfo(w)
	if w.Wants("replication") {
		w.Section("Replication", s.repl.Status().Info()...)
	}
	w.CPU()
	w.Section("Cluster", "cluster_enabled", s.cluster != nil)
	if w.Named("filters") {
		// Not a default section: it scans the key space, O(n) for n keys
		// (Sentinel reads INFO every 10 s). cuckoo cluster info reads it.
		keys, items := s.store.ItemCount()
		w.Section("Filters", "filters", keys, "filter_items", items, "filter_bytes", s.store.FilterBytes())
	}
	if n := s.store.Len(); n > 0 {
		w.Section("Keyspace", "db0", s.store.KeyspaceLine(n))
	} else {
		w.Section("Keyspace")
	}
	cl.wr.WriteVerbatim(w.String())
}

// serverInfo writes INFO's Server section.
func (s *Server) serverInfo(w *info.Writer) {
	now := time.Now()
	up := now.Sub(s.start)
	exe, _ := os.Executable()
	mode := "standalone"
	if s.cluster != nil {
		mode = "cluster"
	}
	w.Section("Server", "redis_version", "7.2.0", "cuckoo_version", Version, "redis_mode", mode,
		"os", runtime.GOOS+" "+runtime.GOARCH, "arch_bits", strconv.IntSize, "go_version", runtime.Version(),
		"process_id", pid, "run_id", s.runID, "tcp_port", s.tcpPort(false), "tls_port", s.tcpPort(true), "server_time_usec", now.UnixMicro(),
		"uptime_in_seconds", int(up.Seconds()), "uptime_in_days", int(up.Hours()/24),
		"executable", exe, "config_file", s.cfg.ConfigFile)
}

// clientsInfo writes INFO's Clients section.
func (s *Server) clientsInfo(w *info.Writer) {
	clients := s.clientList()
	watching, subscribers := 0, 0
	for _, c := range clients {
		if c.tx.watching.Load() > 0 {
			watching++
		}
		if c.sub.Any() {
			subscribers++
		}
	}
	w.Section("Clients", "connected_clients", len(clients), "maxclients", s.clientLimits().MaxClients,
		"blocked_clients", 0, "tracking_clients", 0, "pubsub_clients", subscribers, "watching_clients", watching)
}

// memoryInfo writes INFO's Memory section.
func (s *Server) memoryInfo(w *info.Writer) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss := residentBytes(ms.Sys)
	maxmem := s.store.Maxmem.Load()
	w.Section("Memory", "used_memory", ms.HeapAlloc, "used_memory_human", info.HumanBytes(int64(ms.HeapAlloc)),
		"used_memory_rss", rss, "used_memory_rss_human", info.HumanBytes(int64(rss)),
		"used_memory_filters", s.store.FilterBytes(), "used_memory_dump_chunks", s.store.Inflight.Load(),
		"maxmemory", maxmem, "maxmemory_human", info.HumanBytes(maxmem), "maxmemory_policy", "noeviction",
		"mem_fragmentation_ratio", fmt.Sprintf("%.2f", float64(rss)/float64(max(ms.HeapAlloc, 1))),
		"mem_clients_slaves", s.cmem.Replicas(), "mem_clients_normal", s.cmem.Normal(),
		"mem_allocator", "go")
}

// persistenceInfo writes INFO's Persistence section.
func (s *Server) persistenceInfo(w *info.Writer) {
	st := s.store
	if st.AOF == nil {
		w.Section("Persistence", "loading", 0, "async_loading", 0, "rdb_changes_since_last_save", st.Dirty.Load(),
			"rdb_bgsave_in_progress", 0, "rdb_last_save_time", s.lastSave.Load(), "aof_enabled", 0)
		return
	}
	saveStatus := "ok"
	if s.lastSaveFailed.Load() {
		saveStatus = "err"
	}
	w.Section("Persistence", "loading", 0, "async_loading", 0, "rdb_changes_since_last_save", st.Dirty.Load(),
		"rdb_bgsave_in_progress", s.snapping.Load(), "rdb_last_save_time", s.lastSave.Load(),
		"rdb_last_bgsave_status", saveStatus, "aof_enabled", 1, "aof_rewrite_in_progress", s.snapping.Load(),
		"appendfsync", st.AOF.Mode, "aof_current_size", st.AOF.Size.Load(), "aof_generation", st.AOF.Generation(),
		"aof_last_write_status", status(st.AOF.Err()))
}

// statsInfo writes INFO's Stats section.
func (s *Server) statsInfo(w *info.Writer) {
	psChannels, psPatterns, psShard := s.ps.Counts()
	syncFull, syncPartialOK, syncPartialErr := s.repl.Syncs()
	w.Section("Stats", "total_connections_received", s.stats.conns.Load(), "total_commands_processed", s.stats.cmds.Load(),
		"total_net_input_bytes", s.stats.netIn.Load(), "total_net_output_bytes", s.stats.netOut.Load(),
		"rejected_connections", s.stats.rejected.Load(),
		"sync_full", syncFull, "sync_partial_ok", syncPartialOK, "sync_partial_err", syncPartialErr, "expired_keys", s.store.ExpiredKeys.Load(), "evicted_keys", 0,
		"evicted_clients", s.cmem.Evicted.Load(),
		"keyspace_hits", s.stats.hits.Load(), "keyspace_misses", s.stats.misses.Load(),
		"pubsub_channels", psChannels, "pubsub_patterns", psPatterns, "pubsubshard_channels", psShard,
		"total_error_replies", s.stats.errors.Load(),
		"client_query_buffer_limit_disconnections", s.cmem.QueryClosed.Load(),
		"client_output_buffer_limit_disconnections", s.cmem.OutputClosed.Load())
}

// tcpPort is the port of the plain (or, if isTLS, TLS) listener the server
// serves on (the lowest, if several), or 0.
func (s *Server) tcpPort(isTLS bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	port := 0
	for ln, t := range s.lns {
		if a, ok := ln.Addr().(*net.TCPAddr); ok && t == isTLS && (port == 0 || a.Port < port) {
			port = a.Port
		}
	}
	return port
}
