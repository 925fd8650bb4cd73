package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// newRunID is a random 40-hex-digit identifier of this process's run, as
// Redis's run_id.
func newRunID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// infoWriter builds INFO's text: sections of "name:value" lines.
type infoWriter struct {
	sb   strings.Builder
	want map[string]bool
	all  bool
}

func (w *infoWriter) wants(section string) bool {
	return w.all || w.want[strings.ToLower(section)]
}

func (w *infoWriter) section(name string, kv ...any) {
	if !w.wants(name) {
		return
	}
	if w.sb.Len() > 0 {
		w.sb.WriteString("\r\n")
	}
	fmt.Fprintf(&w.sb, "# %s\r\n", name)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&w.sb, "%s:%v\r\n", kv[i], kv[i+1])
	}
}

func cmdInfo(s *Server, cl *client, a [][]byte) {
	w := &infoWriter{want: map[string]bool{}}
	for _, x := range a[1:] {
		w.want[strings.ToLower(string(x))] = true
	}
	w.all = len(w.want) == 0 || w.want["all"] || w.want["everything"] || w.want["default"]
	s.serverInfo(w)
	if w.wants("clients") {
		s.clientsInfo(w)
	}
	if w.wants("memory") {
		s.memoryInfo(w)
	}
	s.persistenceInfo(w)
	s.statsInfo(w)
	if w.wants("replication") {
		w.section("Replication", s.repl.Status().Info()...)
	}
	if w.wants("cpu") {
		cpuInfo(w)
	}
	w.section("Cluster", "cluster_enabled", b2i(s.cluster != nil))
	if w.want["filters"] || w.want["everything"] {
		// Not a default section: it scans the key space, O(n) for n keys
		// (Sentinel reads INFO every 10 s). cuckoo cluster info reads it.
		keys, items := s.store.ItemCount()
		w.section("Filters", "filters", keys, "filter_items", items, "filter_bytes", s.store.FilterBytes())
	}
	if n := s.store.Len(); n > 0 {
		w.section("Keyspace", "db0", s.store.KeyspaceLine(n))
	} else {
		w.section("Keyspace")
	}
	cl.wr.WriteVerbatim(w.sb.String())
}

// serverInfo writes INFO's Server section.
func (s *Server) serverInfo(w *infoWriter) {
	now := time.Now()
	up := now.Sub(s.start)
	exe, _ := os.Executable()
	mode := "standalone"
	if s.cluster != nil {
		mode = "cluster"
	}
	w.section("Server", "redis_version", "7.2.0", "cuckoo_version", Version, "redis_mode", mode,
		"os", runtime.GOOS+" "+runtime.GOARCH, "arch_bits", strconv.IntSize, "go_version", runtime.Version(),
		"process_id", pid, "run_id", s.runID, "tcp_port", s.tcpPort(false), "tls_port", s.tcpPort(true), "server_time_usec", now.UnixMicro(),
		"uptime_in_seconds", int(up.Seconds()), "uptime_in_days", int(up.Hours()/24),
		"executable", exe, "config_file", s.cfg.ConfigFile)
}

// clientsInfo writes INFO's Clients section.
func (s *Server) clientsInfo(w *infoWriter) {
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
	w.section("Clients", "connected_clients", len(clients), "maxclients", s.clientLimits().MaxClients,
		"blocked_clients", 0, "tracking_clients", 0, "pubsub_clients", subscribers, "watching_clients", watching)
}

// memoryInfo writes INFO's Memory section.
func (s *Server) memoryInfo(w *infoWriter) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss := residentBytes(ms.Sys)
	maxmem := s.store.Maxmem.Load()
	w.section("Memory", "used_memory", ms.HeapAlloc, "used_memory_human", humanBytes(int64(ms.HeapAlloc)),
		"used_memory_rss", rss, "used_memory_rss_human", humanBytes(int64(rss)),
		"used_memory_filters", s.store.FilterBytes(), "used_memory_dump_chunks", s.store.Inflight.Load(),
		"maxmemory", maxmem, "maxmemory_human", humanBytes(maxmem), "maxmemory_policy", "noeviction",
		"mem_fragmentation_ratio", fmt.Sprintf("%.2f", float64(rss)/float64(max(ms.HeapAlloc, 1))),
		"mem_clients_slaves", s.cmem.Replicas(), "mem_clients_normal", s.cmem.Normal(),
		"mem_allocator", "go")
}

// persistenceInfo writes INFO's Persistence section.
func (s *Server) persistenceInfo(w *infoWriter) {
	st := s.store
	if st.AOF == nil {
		w.section("Persistence", "loading", 0, "async_loading", 0, "rdb_changes_since_last_save", st.Dirty.Load(),
			"rdb_bgsave_in_progress", 0, "rdb_last_save_time", s.lastSave.Load(), "aof_enabled", 0)
		return
	}
	saveStatus := "ok"
	if s.lastSaveFailed.Load() {
		saveStatus = "err"
	}
	w.section("Persistence", "loading", 0, "async_loading", 0, "rdb_changes_since_last_save", st.Dirty.Load(),
		"rdb_bgsave_in_progress", b2i(s.snapping.Load()), "rdb_last_save_time", s.lastSave.Load(),
		"rdb_last_bgsave_status", saveStatus, "aof_enabled", 1, "aof_rewrite_in_progress", b2i(s.snapping.Load()),
		"appendfsync", st.AOF.Mode, "aof_current_size", st.AOF.Size.Load(), "aof_generation", st.AOF.Generation(),
		"aof_last_write_status", status(st.AOF.Err()))
}

// statsInfo writes INFO's Stats section.
func (s *Server) statsInfo(w *infoWriter) {
	psChannels, psPatterns, psShard := s.ps.Counts()
	syncFull, syncPartialOK, syncPartialErr := s.repl.Syncs()
	w.section("Stats", "total_connections_received", s.stats.conns.Load(), "total_commands_processed", s.stats.cmds.Load(),
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

// cpuInfo writes INFO's CPU section.
func cpuInfo(w *infoWriter) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	secs := func(t syscall.Timeval) string {
		return fmt.Sprintf("%d.%06d", t.Sec, t.Usec)
	}
	w.section("CPU", "used_cpu_sys", secs(ru.Stime), "used_cpu_user", secs(ru.Utime))
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

// humanBytes writes n as Redis's *_human fields do: 1.50K, 20.00M, 2.00G.
func humanBytes(n int64) string {
	const unit = 1024.0
	f := float64(n)
	for _, suffix := range []string{"B", "K", "M", "G", "T", "P"} {
		if f < unit || suffix == "P" {
			if suffix == "B" {
				return fmt.Sprintf("%dB", n)
			}
			return fmt.Sprintf("%.2f%s", f, suffix)
		}
		f /= unit
	}
	return ""
}

// countingConn counts the bytes a connection reads and writes, for INFO's
// total_net_input_bytes and total_net_output_bytes.
type countingConn struct {
	net.Conn
	s *Server
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.s.stats.netIn.Add(int64(n))
	return n, err
}

func (c countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.s.stats.netOut.Add(int64(n))
	return n, err
}
