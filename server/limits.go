package server

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// Limits bound what one client can make the server do. A request beyond a
// limit is refused before anything is allocated for it; none of them crashes
// or stalls the server. The names in parentheses are Redis's settings.
type Limits struct {
	// MaxClients is the most connections served at once; more are answered
	// "ERR max number of clients reached" and closed (maxclients). 0 means
	// 10000.
	MaxClients int
	// MaxBulk is the longest argument a request may carry, checked when its
	// length arrives (proto-max-bulk-len); a longer one is a protocol
	// error that closes the connection. 0 means 512 MiB.
	MaxBulk int
	// QueryBuffer is the most bytes of unconsumed requests one client may
	// have buffered (client-query-buffer-limit); past it the connection is
	// closed. 0 means 1 GiB.
	QueryBuffer int
	// MaxArgs is the most arguments of one request; more is a protocol
	// error. 0 means 1<<20.
	MaxArgs int
	// MaxItem is the longest item or key a command takes; a longer one is
	// answered with an error. Dump chunks (CF.LOADCHUNK's data) are bounded
	// by MaxBulk only. 0 means 64 KiB.
	MaxItem int
	// Timeout closes a connection that sent nothing for this long, idle or
	// in the middle of a request (timeout). 0 means never.
	Timeout time.Duration
}

// Defaults of Limits' zero fields.
const (
	defaultMaxClients  = 10000
	defaultMaxBulk     = 512 << 20
	defaultQueryBuffer = 1 << 30
	defaultMaxArgs     = 1 << 20
	defaultMaxItem     = 64 << 10
)

func (l Limits) withDefaults() Limits {
	if l.MaxClients <= 0 {
		l.MaxClients = defaultMaxClients
	}
	if l.MaxBulk <= 0 {
		l.MaxBulk = defaultMaxBulk
	}
	if l.QueryBuffer <= 0 {
		l.QueryBuffer = defaultQueryBuffer
	}
	if l.MaxArgs <= 0 {
		l.MaxArgs = defaultMaxArgs
	}
	if l.MaxItem <= 0 {
		l.MaxItem = defaultMaxItem
	}
	return l
}

func (l Limits) read() resp.Limits {
	return resp.Limits{MaxArgs: l.MaxArgs, MaxBulk: l.MaxBulk, QueryBuffer: l.QueryBuffer}
}

// maxFilterMemory returns Config.MaxFilterMemory, or the physical memory for
// 0 (read from /proc/meminfo; 64 GiB where that cannot be read).
func maxFilterMemory(configured int64) uint64 {
	if configured > 0 {
		return uint64(configured)
	}
	if n := physicalMemory(); n > 0 {
		return n
	}
	return 64 << 30
}

func physicalMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// MemTotal:       24573440 kB
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// residentBytes returns the process's resident memory, from /proc/self/statm
// (its second field, in pages), or fallback where that cannot be read: Go's
// Sys counts address space reserved and never touched (a reserved filter's
// table), so it is not what INFO's used_memory_rss means.
func residentBytes(fallback uint64) uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return fallback
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return fallback
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return fallback
	}
	return pages * uint64(os.Getpagesize())
}
