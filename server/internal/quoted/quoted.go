// Package quoted is Redis's syntax for arguments on one line, as its
// sdssplitargs reads them and its sdscatrepr writes them: the one splitter
// of inline requests (package resp) and configuration files (package
// config), which Redis also split with the one function.
//
// Arguments are separated by blanks. An argument may be quoted, in part or
// whole: "..." takes the escapes \" \\ \n \r \t \a \b and \xHH (any other
// escaped byte stands for itself), '...' only \'. A closing quote must be
// followed by a blank or the end of the line. Quote writes what Split reads
// back as the same bytes.
//
// It imports nothing of the server's; packages resp, config and server
// import it.
package quoted

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of Split; each caller answers them in its own words (Redis's
// "Protocol error: unbalanced quotes in request" for a request).
var (
	ErrUnbalanced   = errors.New("unbalanced quotes")
	ErrClosingQuote = errors.New("a closing quote must be followed by a blank")
)

// Split splits line into arguments. The arguments are copies; an empty
// quoted argument is empty, not nil.
func Split(line []byte) ([][]byte, error) {
	var out [][]byte
	i := 0
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i == len(line) {
			return out, nil
		}
		cur := []byte{}
		inq, insq := false, false
		for done := false; !done; {
			switch {
			case inq:
				switch {
				case i == len(line):
					return nil, ErrUnbalanced
				case line[i] == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, unhex(line[i+2])<<4|unhex(line[i+3]))
					i += 3
				case line[i] == '\\' && i+1 < len(line):
					i++
					cur = append(cur, unescape(line[i]))
				case line[i] == '"':
					if i+1 < len(line) && !isBlank(line[i+1]) {
						return nil, ErrClosingQuote
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			case insq:
				switch {
				case i == len(line):
					return nil, ErrUnbalanced
				case line[i] == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				case line[i] == '\'':
					if i+1 < len(line) && !isBlank(line[i+1]) {
						return nil, ErrClosingQuote
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			default:
				switch {
				case i == len(line) || isBlank(line[i]):
					done = true
				case line[i] == '"':
					inq = true
				case line[i] == '\'':
					insq = true
				default:
					cur = append(cur, line[i])
				}
			}
			if i < len(line) {
				i++
			}
		}
		out = append(out, cur)
	}
}

// unescape is the byte a backslash and c stand for inside double quotes.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// Quote returns s in double quotes, escaped so that Split reads it back as
// one argument equal to s (Redis's sdscatrepr).
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c < ' ' || c >= 0x7f {
				fmt.Fprintf(&b, `\x%02x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Printable is b as an error reply shows a client's argument: at most n
// bytes, each control character replaced by '?'.
func Printable(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, string(b))
}
