package server

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/config"
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
	// OutputBuffer bounds the replies a client has not read yet, by class
	// of client (client-output-buffer-limit); its nil classes take Redis's
	// defaults, which set no limit for normal clients (clientmem.go).
	OutputBuffer OutputBufferLimits
	// MaxMemoryClients bounds the memory of all clients together
	// (maxmemory-clients): requests not yet run, replies not yet sent,
	// transactions queued, messages waiting for a subscriber. Past it the
	// clients holding the most are closed (evicted) until the rest are
	// under it; CLIENT NO-EVICT on exempts one, and replicas are never
	// evicted. 0 means no limit; see MemoryOrPercent for a percentage of
	// MaxMemory.
	MaxMemoryClients MemoryOrPercent
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
	l.OutputBuffer = l.OutputBuffer.withDefaults()
	return l
}

// OutputLimit is client-output-buffer-limit for one class of clients: a
// client whose replies not yet sent reach Hard bytes, or stay at Soft bytes
// or more for longer than SoftSeconds, is closed. A size of 0 is no such
// limit.
type OutputLimit struct {
	Hard, Soft  int64
	SoftSeconds int64
}

// OutputBufferLimits are client-output-buffer-limit's classes, as Redis's:
// Normal for ordinary clients, Replica for replicas' links to this primary,
// PubSub for clients with a subscription. A nil class takes Redis's
// default: normal 0 0 0 (no limit), replica 256mb 64mb 60, pubsub 32mb 8mb
// 60.
type OutputBufferLimits struct {
	Normal, Replica, PubSub *OutputLimit
}

// The client classes of client-output-buffer-limit, in Redis's order.
const (
	classNormal = iota
	classReplica
	classPubSub
	numClasses
)

// classNames are the classes as CONFIG GET names them ("slave", as Redis
// 7 still does); Set takes "replica" too, and the file is written with it.
var classNames = [numClasses]string{"normal", "slave", "pubsub"}

// defaultOutputLimits are Redis's.
var defaultOutputLimits = [numClasses]OutputLimit{
	{},
	{Hard: 256 << 20, Soft: 64 << 20, SoftSeconds: 60},
	{Hard: 32 << 20, Soft: 8 << 20, SoftSeconds: 60},
}

// Errors of client-output-buffer-limit's value, with Redis's texts (a
// capital and a full stop, which Go's errors do not have: a type of their
// own).
var (
	errOutputArgs  error = redisText("Wrong number of arguments in buffer limit configuration.")
	errOutputClass error = redisText("Invalid client class specified in buffer limit configuration.")
	errOutputValue error = redisText("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
)

// redisText is an error whose text is Redis's, word for word.
type redisText string

func (e redisText) Error() string { return string(e) }

func (l *OutputBufferLimits) class(i int) **OutputLimit {
	return [numClasses]**OutputLimit{&l.Normal, &l.Replica, &l.PubSub}[i]
}

// Set sets the classes that spec names, as redis.conf and CONFIG SET write
// client-output-buffer-limit: one or more "class hard soft soft-seconds",
// class normal, replica (or slave) or pubsub, sizes with redis.conf's units
// (32mb). The other classes are left as they are; so is every class if
// spec has an error. Set is flag.Value's, so the type can be a flag.
func (l *OutputBufferLimits) Set(spec string) error {
	f := strings.Fields(spec)
	if len(f)%4 != 0 {
		return errOutputArgs
	}
	var next [numClasses]*OutputLimit
	for i := 0; i < len(f); i += 4 {
		c := -1
		switch strings.ToLower(f[i]) {
		case "normal":
			c = classNormal
		case "replica", "slave":
			c = classReplica
		case "pubsub":
			c = classPubSub
		default:
			return fmt.Errorf("%w (%q: want normal, replica or pubsub)", errOutputClass, f[i])
		}
		hard, ok1 := config.ParseMemory(f[i+1])
		soft, ok2 := config.ParseMemory(f[i+2])
		secs, err := strconv.ParseInt(f[i+3], 10, 32)
		if !ok1 || !ok2 || err != nil || secs < 0 {
			return fmt.Errorf("%w (%q: want sizes such as 32mb and seconds, none negative)", errOutputValue, strings.Join(f[i:i+4], " "))
		}
		next[c] = &OutputLimit{Hard: hard, Soft: soft, SoftSeconds: secs}
	}
	for c, v := range next {
		if v != nil {
			*l.class(c) = v
		}
	}
	return nil
}

// String is the classes set, as redis.conf writes them: "normal 0 0 0
// pubsub 32mb 8mb 60"; "" if none is.
func (l OutputBufferLimits) String() string {
	var parts []string
	for c := range numClasses {
		if v := *l.class(c); v != nil {
			parts = append(parts, v.line(c))
		}
	}
	return strings.Join(parts, " ")
}

// line is class c's limit as redis.conf writes it.
func (o OutputLimit) line(c int) string {
	name := classNames[c]
	if c == classReplica {
		name = "replica"
	}
	return fmt.Sprintf("%s %s %s %d", name, config.FormatMemory(o.Hard), config.FormatMemory(o.Soft), o.SoftSeconds)
}

// withDefaults fills the nil classes with Redis's defaults (new values: a
// Config's copies share the classes set, never change them).
func (l OutputBufferLimits) withDefaults() OutputBufferLimits {
	for c := range numClasses {
		if p := l.class(c); *p == nil {
			v := defaultOutputLimits[c]
			*p = &v
		}
	}
	return l
}

// get returns class c's limit, Redis's default for a nil one.
func (l *OutputBufferLimits) get(c int) OutputLimit {
	if v := *l.class(c); v != nil {
		return *v
	}
	return defaultOutputLimits[c]
}

// configGet is CONFIG GET's form, every class, in bytes: "normal 0 0 0
// slave 268435456 67108864 60 pubsub 33554432 8388608 60".
func (l *OutputBufferLimits) configGet() string {
	parts := make([]string, numClasses)
	for c := range numClasses {
		v := l.get(c)
		parts[c] = fmt.Sprintf("%s %d %d %d", classNames[c], v.Hard, v.Soft, v.SoftSeconds)
	}
	return strings.Join(parts, " ")
}

// MemoryOrPercent is maxmemory-clients's value: bytes, or a negative -p
// for p percent of MaxMemory, written "p%" (Redis keeps it the same way).
// A percentage of no MaxMemory is no limit.
type MemoryOrPercent int64

// Errors of a MemoryOrPercent, with Redis's texts.
var (
	errMemoryOrPercent = errors.New("argument must be a memory or percent value")
	errPercent         = errors.New("percentage argument must be less or equal to 100")
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
		return errMemoryOrPercent
	case p > 100:
		return errPercent
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

// minClientEviction is the least maxmemory-clients in force, Redis's: a
// smaller one would leave no room to talk to the server at all.
const minClientEviction = 128 << 10

// bytes is the limit in force for a server of maxmemory bytes: 0 for none,
// at least minClientEviction otherwise.
func (m MemoryOrPercent) bytes(maxmemory int64) int64 {
	n := int64(m)
	if m < 0 {
		if maxmemory <= 0 {
			return 0
		}
		n = int64(math.Min(float64(maxmemory)*float64(-m)/100, math.MaxInt64))
	}
	if n == 0 {
		return 0
	}
	return max(n, minClientEviction)
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
