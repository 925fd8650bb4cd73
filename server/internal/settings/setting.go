package settings

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/config"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// Kind is a setting's type: how its value is read and written.
type Kind uint8

const (
	Int           Kind = iota // a decimal integer in [Lo, Hi]
	Memory                    // bytes in [Lo, Hi], with redis.conf's units (100mb)
	Enum                      // one of Enum, any case
	String                    // any string
	Save                      // "" or pairs of seconds and changes
	Bind                      // one address
	Output                    // client-output-buffer-limit's classes (limits.OutputBuffer)
	MemoryPercent             // bytes or a percentage (limits.MemoryOrPercent)
)

// Value is a parsed setting: N for numbers (Int, Memory, MemoryPercent), S
// for the others.
type Value struct {
	N int64
	S string
}

// Setting is one row of a table: what the setting is, and how it binds to
// S, the settings of a server, and to L, the running server itself (for
// what only it knows, such as the port it listens on).
type Setting[L, S any] struct {
	Name string
	// Alias is the setting's other name, Redis's older one
	// (min-slaves-to-write for min-replicas-to-write): CONFIG GET lists the
	// setting under both names, CONFIG SET, a configuration file and a
	// command-line flag take either, and CONFIG REWRITE writes the line
	// under Name, in place of a line of either name. "" for none.
	Alias   string
	Kind    Kind
	Lo, Hi  int64
	Enum    []string
	Mutable bool // CONFIG SET may change it
	// Def is the value of a server started with no setting, as CONFIG GET
	// shows it: CONFIG REWRITE appends the setting to a file that lacks it
	// when its value differs, or CONFIG SET changed it.
	Def string
	// Doc is its line in docs/settings.md and cuckoo serve's -h; a word
	// in backquotes names the value, as package flag reads usage.
	Doc string
	// Note, if not "", is a paragraph docs/settings.md gives the setting
	// after the table, for what does not fit its line (Markdown).
	Note string
	// NoFlag keeps it off cuckoo serve's flags: the listener's settings,
	// which serve's --addr and --port give, and the fixed ones.
	NoFlag bool
	// Get returns the value in force, as CONFIG GET shows it.
	Get func(l L, st *S) string
	// Set applies a checked value to st; Check, if not nil, refuses a value
	// of the right type (the text after Redis's " - ").
	Set   func(st *S, v Value)
	Check func(v Value) string
	// SetParse, if not nil, reads a CONFIG SET value in place of Parse,
	// given the settings in force: for a setting whose range follows other
	// settings and whose refusals have texts of their own (RedisBloom 8's
	// cf-* settings, registered by a module). ok false leaves the value to
	// Parse. Flags and configuration files, read in any order, keep to
	// Parse's fixed range; the settings are checked together afterwards.
	SetParse func(st *S, v string) (val Value, why string, ok bool)
}

// Parse reads v as x's value; on failure it returns Redis's reason, the
// text CONFIG SET's error ends with.
func (x *Setting[L, S]) Parse(v string) (Value, string) {
	var out Value
	switch x.Kind {
	case Int, Memory:
		var ok bool
		if x.Kind == Int {
			n, err := strconv.ParseInt(v, 10, 64)
			out.N, ok = n, err == nil
		} else if out.N, ok = config.ParseMemory(v); !ok && v == "-1" && x.Lo < 0 {
			out.N, ok = -1, true // a size's "never" (snapshot-log-size)
		}
		switch {
		case !ok && x.Kind == Int:
			return out, "argument couldn't be parsed into an integer"
		case !ok:
			return out, "argument must be a memory value"
		case out.N < x.Lo || out.N > x.Hi:
			return out, fmt.Sprintf("argument must be between %d and %d inclusive", x.Lo, x.Hi)
		}
	case Enum:
		out.S = strings.ToLower(v)
		found := false
		for _, e := range x.Enum {
			found = found || e == out.S
		}
		if !found {
			return out, "argument(s) must be one of the following: " + strings.Join(x.Enum, ", ")
		}
	case Save:
		f := strings.Fields(v)
		if len(f)%2 != 0 {
			return out, "Invalid save parameters"
		}
		for _, n := range f {
			if _, err := strconv.ParseUint(n, 10, 31); err != nil {
				return out, "Invalid save parameters"
			}
		}
		out.S = strings.Join(f, " ")
	case Bind:
		if f := strings.Fields(v); len(f) != 1 {
			return out, "this server listens on one address"
		}
		out.S = strings.TrimSpace(v)
	case Output:
		var probe limits.OutputBuffer
		if err := probe.Set(v); err != nil {
			return out, err.Error()
		}
		out.S = v
	case MemoryPercent:
		var m limits.MemoryOrPercent
		if err := m.Set(v); err != nil {
			return out, err.Error()
		}
		out.N = int64(m)
	default:
		out.S = v
	}
	if x.Check != nil {
		if msg := x.Check(out); msg != "" {
			return out, msg
		}
	}
	return out, ""
}

// Line is x's line in a configuration file for the value v, as CONFIG GET
// shows it: sizes in units (64mb), strings quoted when they need it, one
// line a class for client-output-buffer-limit (as Redis writes them).
func (x *Setting[L, S]) Line(v string) string {
	switch x.Kind {
	case Memory, MemoryPercent:
		if n, ok := config.ParseMemory(v); ok {
			return x.Name + " " + config.FormatMemory(n)
		}
	case String:
		return x.Name + " " + quoted.Quote(v)
	case Save:
		if v == "" {
			return `save ""`
		}
	case Output:
		var l limits.OutputBuffer
		if l.Set(v) == nil {
			return x.Name + " " + strings.Join(l.Lines(), "\n"+x.Name+" ")
		}
	}
	return x.Name + " " + v
}

// Usage is x's flag usage and its line in the documentation: its doc, and
// its range.
func (x *Setting[L, S]) Usage() string {
	u := x.Doc
	if x.Kind == Int && x.Hi > x.Lo {
		u += fmt.Sprintf(" (%d..%d)", x.Lo, x.Hi)
	}
	return u
}

// IsBool reports whether x is a yes/no setting: its flag needs no value.
func (x *Setting[L, S]) IsBool() bool {
	return x.Kind == Enum && len(x.Enum) == 2 && x.Enum[0] == "yes" && x.Enum[1] == "no"
}

// args joins a configuration file line's arguments into x's value: the
// kinds whose values have blanks take all of them, the others exactly one.
func (x *Setting[L, S]) args(a []string) (string, bool) {
	switch {
	case x.Kind == Save || x.Kind == Bind || x.Kind == Output:
		return strings.Join(a, " "), true
	case len(a) != 1:
		return "", false
	}
	return a[0], true
}

// YesNo is a boolean as redis.conf writes one.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
