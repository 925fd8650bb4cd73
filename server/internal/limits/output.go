package limits

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/config"
)

// OutputLimit is client-output-buffer-limit for one class of clients: a
// client whose replies not yet sent reach Hard bytes, or stay at Soft bytes
// or more for longer than SoftSeconds, is closed. A size of 0 is no such
// limit.
type OutputLimit struct {
	Hard, Soft  int64
	SoftSeconds int64
}

// OutputBuffer is client-output-buffer-limit's classes, as Redis's: Normal
// for ordinary clients, Replica for replicas' links to this primary, PubSub
// for clients with a subscription. A nil class takes Redis's default:
// normal 0 0 0 (no limit), replica 256mb 64mb 60, pubsub 32mb 8mb 60.
type OutputBuffer struct {
	Normal, Replica, PubSub *OutputLimit
}

// The client classes of client-output-buffer-limit, in Redis's order.
const (
	ClassNormal = iota
	ClassReplica
	ClassPubSub
	NumClasses
)

// ClassNames are the classes as CONFIG GET names them ("slave", as Redis 7
// still does); Set takes "replica" too, and Line writes it.
var ClassNames = [NumClasses]string{"normal", "slave", "pubsub"}

// defaultOutput are Redis's limits, by class.
var defaultOutput = [NumClasses]OutputLimit{
	{},
	{Hard: 256 << 20, Soft: 64 << 20, SoftSeconds: 60},
	{Hard: 32 << 20, Soft: 8 << 20, SoftSeconds: 60},
}

// Errors of client-output-buffer-limit's value, with Redis's texts (a
// capital and a full stop, which Go's errors do not have: a type of their
// own). Set wraps them with the words it could not read.
var (
	ErrOutputArgs  error = redisText("Wrong number of arguments in buffer limit configuration.")
	ErrOutputClass error = redisText("Invalid client class specified in buffer limit configuration.")
	ErrOutputValue error = redisText("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
)

// redisText is an error whose text is Redis's, word for word.
type redisText string

func (e redisText) Error() string { return string(e) }

// class returns the field of class c (one of the Class constants).
func (l *OutputBuffer) class(c int) **OutputLimit {
	return [NumClasses]**OutputLimit{&l.Normal, &l.Replica, &l.PubSub}[c]
}

// Set sets the classes that spec names, as redis.conf and CONFIG SET write
// client-output-buffer-limit: one or more "class hard soft soft-seconds",
// class normal, replica (or slave) or pubsub, sizes with redis.conf's units
// (32mb). The other classes are left as they are; so is every class if
// spec has an error. Set is flag.Value's, so the type can be a flag.
func (l *OutputBuffer) Set(spec string) error {
	f := strings.Fields(spec)
	if len(f)%4 != 0 {
		return ErrOutputArgs
	}
	var next [NumClasses]*OutputLimit
	for i := 0; i < len(f); i += 4 {
		c := -1
		switch strings.ToLower(f[i]) {
		case "normal":
			c = ClassNormal
		case "replica", "slave":
			c = ClassReplica
		case "pubsub":
			c = ClassPubSub
		default:
			return fmt.Errorf("%w (%q: want normal, replica or pubsub)", ErrOutputClass, f[i])
		}
		hard, ok1 := config.ParseMemory(f[i+1])
		soft, ok2 := config.ParseMemory(f[i+2])
		secs, err := strconv.ParseInt(f[i+3], 10, 32)
		if !ok1 || !ok2 || err != nil || secs < 0 {
			return fmt.Errorf("%w (%q: want sizes such as 32mb and seconds, none negative)", ErrOutputValue, strings.Join(f[i:i+4], " "))
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
func (l OutputBuffer) String() string {
	var parts []string
	for c := range NumClasses {
		if v := *l.class(c); v != nil {
			parts = append(parts, v.Line(c))
		}
	}
	return strings.Join(parts, " ")
}

// Line is the limit of class c as redis.conf writes it ("replica", not
// "slave"): "pubsub 32mb 8mb 60".
func (o OutputLimit) Line(c int) string {
	name := ClassNames[c]
	if c == ClassReplica {
		name = "replica"
	}
	return fmt.Sprintf("%s %s %s %d", name, config.FormatMemory(o.Hard), config.FormatMemory(o.Soft), o.SoftSeconds)
}

// Lines are every class's limit, as Line writes it, Redis's default for a
// nil class: the lines of a configuration file, one a class.
func (l OutputBuffer) Lines() []string {
	lines := make([]string, NumClasses)
	for c := range NumClasses {
		lines[c] = l.Get(c).Line(c)
	}
	return lines
}

// WithDefaults fills the nil classes with Redis's defaults (new values: a
// Config's copies share the classes set, never change them).
func (l OutputBuffer) WithDefaults() OutputBuffer {
	for c := range NumClasses {
		if p := l.class(c); *p == nil {
			v := defaultOutput[c]
			*p = &v
		}
	}
	return l
}

// Get returns class c's limit, Redis's default for a nil one.
func (l *OutputBuffer) Get(c int) OutputLimit {
	if v := *l.class(c); v != nil {
		return *v
	}
	return defaultOutput[c]
}

// ConfigGet is CONFIG GET's form, every class, in bytes: "normal 0 0 0
// slave 268435456 67108864 60 pubsub 33554432 8388608 60".
func (l *OutputBuffer) ConfigGet() string {
	parts := make([]string, NumClasses)
	for c := range NumClasses {
		v := l.Get(c)
		parts[c] = fmt.Sprintf("%s %d %d %d", ClassNames[c], v.Hard, v.Soft, v.SoftSeconds)
	}
	return strings.Join(parts, " ")
}
