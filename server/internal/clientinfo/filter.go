package clientinfo

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// replyError is an error whose text is a reply, exactly as Redis spells it
// (capitals and full stops included).
type replyError string

func (e replyError) Error() string { return string(e) }

// The refusals of the CLIENT subcommands' arguments, in Redis's words.
var (
	ErrSyntax   error = replyError("ERR syntax error")
	ErrClientID error = replyError("ERR client-id should be greater than 0") // CLIENT KILL ID
	ErrListID   error = replyError("ERR Invalid client ID")                  // CLIENT LIST ID
	// ErrNoSuchClient answers CLIENT KILL ip:port when no client is
	// connected from there.
	ErrNoSuchClient error = replyError("ERR No such client")
	// ErrName refuses a client name (CLIENT SETNAME, HELLO SETNAME).
	ErrName error = replyError("ERR Client names cannot contain spaces, newlines or special characters.")
)

// types are the TYPE arguments CLIENT LIST and KILL take.
var types = []string{"normal", "master", "replica", "slave", "pubsub"}

// parseType reads a TYPE argument as Client.Type names it (replica is
// slave), or refuses it.
func parseType(arg []byte) (string, error) {
	t := strings.ToLower(string(arg))
	if !slices.Contains(types, t) {
		return "", replyError(fmt.Sprintf("ERR Unknown client type '%s'", quoted.Printable(arg, 32)))
	}
	if t == "replica" {
		return "slave", nil
	}
	return t, nil
}

// A Filter is the clients a CLIENT LIST or CLIENT KILL names: those that
// pass every one of its tests (all clients if none).
type Filter struct {
	tests []func(c *Client, now time.Time) bool
	// SkipMe spares the caller (CLIENT KILL's SKIPME, yes by default;
	// false for CLIENT LIST).
	SkipMe bool
}

// Match says whether c, as of now, passes every test of f.
func (f *Filter) Match(c *Client, now time.Time) bool {
	for _, t := range f.tests {
		if !t(c, now) {
			return false
		}
	}
	return true
}

func (f *Filter) add(t func(c *Client, now time.Time) bool) { f.tests = append(f.tests, t) }

// ParseList reads CLIENT LIST's options, args (after LIST): TYPE t and ID
// id..., which takes the remaining arguments, each a positive id.
func ParseList(args [][]byte) (*Filter, error) {
	f := &Filter{}
	for i := 0; i < len(args); i++ {
		switch strings.ToUpper(string(args[i])) {
		case "TYPE":
			if i+1 >= len(args) {
				return nil, ErrSyntax
			}
			t, err := parseType(args[i+1])
			if err != nil {
				return nil, err
			}
			f.add(func(c *Client, _ time.Time) bool { return c.Type() == t })
			i++
		case "ID":
			if i+1 >= len(args) {
				return nil, ErrSyntax
			}
			var ids []int64
			for i++; i < len(args); i++ {
				id, ok := integer.Parse(args[i])
				if !ok || id <= 0 {
					return nil, ErrListID
				}
				ids = append(ids, id)
			}
			f.add(func(c *Client, _ time.Time) bool { return slices.Contains(ids, c.ID) })
		default:
			return nil, ErrSyntax
		}
	}
	return f, nil
}

// ParseKill reads CLIENT KILL's filters, args (after KILL): pairs of a
// filter's name and its value, ID id, TYPE t, USER u, ADDR a, LADDR a,
// SKIPME yes|no and MAXAGE seconds (clients at least that old). The form
// CLIENT KILL ip:port is the server's.
func ParseKill(args [][]byte) (*Filter, error) {
	if len(args)%2 != 0 {
		return nil, ErrSyntax
	}
	f := &Filter{SkipMe: true}
	for i := 0; i < len(args); i += 2 {
		v := string(args[i+1])
		switch strings.ToUpper(string(args[i])) {
		case "ID":
			id, ok := integer.Parse(args[i+1])
			if !ok || id <= 0 {
				return nil, ErrClientID
			}
			f.add(func(c *Client, _ time.Time) bool { return c.ID == id })
		case "TYPE":
			t, err := parseType(args[i+1])
			if err != nil {
				return nil, err
			}
			f.add(func(c *Client, _ time.Time) bool { return c.Type() == t })
		case "USER":
			f.add(func(c *Client, _ time.Time) bool { return c.User == v })
		case "ADDR":
			f.add(func(c *Client, _ time.Time) bool { return c.Addr == v })
		case "LADDR":
			f.add(func(c *Client, _ time.Time) bool { return c.LAddr == v })
		case "SKIPME":
			switch strings.ToLower(v) {
			case "yes":
				f.SkipMe = true
			case "no":
				f.SkipMe = false
			default:
				return nil, ErrSyntax
			}
		case "MAXAGE":
			age, ok := integer.Parse(args[i+1])
			if !ok || age < 0 { // as Redis 7.0 answers both
				return nil, ErrSyntax
			}
			f.add(func(c *Client, now time.Time) bool { return now.Sub(c.Created) >= time.Duration(age)*time.Second })
		default:
			return nil, ErrSyntax
		}
	}
	return f, nil
}
