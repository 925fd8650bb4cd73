package limits

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/config"
)

// MemoryOrPercent is maxmemory-clients's value: bytes, or a negative -p
// for p percent of maxmemory, written "p%" (Redis keeps it the same way).
// A percentage of no maxmemory is no limit.
type MemoryOrPercent int64

// Errors of a MemoryOrPercent, with Redis's texts.
var (
	ErrMemoryOrPercent = errors.New("argument must be a memory or percent value")
	ErrPercent         = errors.New("percentage argument must be less or equal to 100")
)

// Set parses a size with redis.conf's units (1gb) or a percentage (5%).
// Set is flag.Value's, so the type can be a flag.
func (m *MemoryOrPercent) Set(s string) error {
	if n, ok := config.ParseMemory(s); ok {
		*m = MemoryOrPercent(n)
		return nil
	}
	digits, ok := strings.CutSuffix(s, "%")
	p, err := strconv.ParseInt(digits, 10, 64)
	switch {
	case !ok || err != nil || p < 0 || digits == "" || digits[0] == '+':
		return ErrMemoryOrPercent
	case p > 100:
		return ErrPercent
	}
	*m = MemoryOrPercent(-p)
	return nil
}

// String is the value as CONFIG GET shows it: bytes, or "5%".
func (m MemoryOrPercent) String() string {
	if m < 0 {
		return strconv.FormatInt(-int64(m), 10) + "%"
	}
	return strconv.FormatInt(int64(m), 10)
}

// MinClientEviction is the least maxmemory-clients in force, Redis's: a
// smaller one would leave no room to talk to the server at all.
const MinClientEviction = 128 << 10

// Bytes is the limit in force for a server of maxmemory bytes: 0 for none,
// at least MinClientEviction otherwise.
func (m MemoryOrPercent) Bytes(maxmemory int64) int64 {
	n := int64(m)
	if m < 0 {
		if maxmemory <= 0 {
			return 0
		}
		// In integers: a float product rounds up to 2^63 near MaxInt64,
		// which does not convert back. p <= 100, so neither term overflows.
		p := -int64(m)
		n = maxmemory/100*p + maxmemory%100*p/100
	}
	if n == 0 {
		return 0
	}
	return max(n, MinClientEviction)
}

// MaxFilterMemory returns max-filter-memory in force for configured bytes:
// configured, or the physical memory for 0 (read from /proc/meminfo; 64
// GiB where that cannot be read).
func MaxFilterMemory(configured int64) uint64 {
	if configured > 0 {
		return uint64(configured)
	}
	if n := physicalMemory(meminfo); n > 0 {
		return n
	}
	return 64 << 30
}

// meminfo is where the machine's memory is read; a variable for tests.
var meminfo = "/proc/meminfo"

// physicalMemory reads MemTotal from the file at path, in /proc/meminfo's
// format; 0 if it cannot.
func physicalMemory(path string) uint64 {
	f, err := os.Open(path)
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

// ResidentBytes returns the process's resident memory, from
// /proc/self/statm (its second field, in pages), or fallback where that
// cannot be read: Go's Sys counts address space reserved and never touched
// (a reserved filter's table), so it is not what INFO's used_memory_rss
// means.
func ResidentBytes(fallback uint64) uint64 {
	return residentBytes("/proc/self/statm", fallback)
}

func residentBytes(statm string, fallback uint64) uint64 {
	b, err := os.ReadFile(statm)
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
