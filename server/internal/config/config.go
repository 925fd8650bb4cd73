// Package config reads and rewrites configuration files in redis.conf's
// syntax, knowing nothing of what the settings mean: the server's table of
// settings (package internal/conf) gives them their types and effects.
//
// # Syntax
//
// A file is a list of lines. Blank lines and lines whose first non-blank
// character is '#' are comments. Any other line is a directive: a name and
// its arguments, separated by blanks, split as Redis splits them
// (sdssplitargs, package quoted): an argument may be quoted with "..." (escapes \" \\ \n \r
// \t \a \b and \xHH) or '...' (escape \' only), and a closing quote must be
// followed by a blank or the end of the line. Names are case-insensitive.
// "include" is refused: a file is read alone, so that CONFIG REWRITE can
// write back every line it read.
//
// # Rewriting
//
// Rewrite keeps the file's comments, blank lines and order: the first line
// of each setting it is given is replaced by the setting's new line, later
// lines of the same setting are dropped, lines of other names are kept, and
// the settings that had no line are appended after a marker comment.
// WriteFile replaces the file atomically.
//
// It may import internal/quoted (the syntax of an argument) and nothing else
// of the server's; package server and the table of settings (internal/conf
// and its engine, internal/settings) import it.
package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// Directive is one setting line of a file.
type Directive struct {
	Name string // lower case
	Args []string
	Line int // 1-based
}

// Error is a file's line that cannot be read.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse reads data, the contents of the file named file, into its
// directives. Its errors are *Error.
func Parse(file string, data []byte) ([]Directive, error) {
	var out []Directive
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.Trim(line, " \t\r")
		if line == "" || line[0] == '#' {
			continue
		}
		words, err := quoted.Split([]byte(line))
		if err != nil {
			return nil, &Error{file, i + 1, err.Error()}
		}
		if len(words) == 0 {
			continue
		}
		args := make([]string, len(words))
		for j, w := range words {
			args[j] = string(w)
		}
		d := Directive{Name: strings.ToLower(args[0]), Args: args[1:], Line: i + 1}
		if d.Name == "include" {
			return nil, &Error{file, i + 1, "include is not supported: write every setting in this one file"}
		}
		out = append(out, d)
	}
	return out, nil
}

// memoryUnits are redis.conf's units, as Redis reads them (memtoull): k, m
// and g are powers of 1000, kb, mb and gb of 1024; any case.
var memoryUnits = []struct {
	suffix string
	mul    int64
}{
	{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30},
	{"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1},
}

// ParseMemory parses a size in bytes as redis.conf writes one: digits, and
// optionally a unit (100mb, 2gb, 64k). It reports false for anything else,
// a negative size and one that overflows int64.
func ParseMemory(s string) (int64, bool) {
	lower := strings.ToLower(s)
	mul := int64(1)
	for _, u := range memoryUnits {
		if digits, ok := strings.CutSuffix(lower, u.suffix); ok {
			lower, mul = digits, u.mul
			break
		}
	}
	if lower == "" || lower[0] < '0' || lower[0] > '9' {
		return 0, false // no sign, no blank: ParseInt would take "+1"
	}
	n, err := strconv.ParseInt(lower, 10, 64)
	if err != nil || n > (1<<63-1)/mul {
		return 0, false
	}
	return n * mul, true
}

// FormatMemory writes n bytes as CONFIG REWRITE does: in gb, mb or kb when
// it is a whole number of them, else in bytes.
func FormatMemory(n int64) string {
	switch {
	case n == 0:
		return "0"
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "gb"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "mb"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "kb"
	}
	return strconv.FormatInt(n, 10)
}
