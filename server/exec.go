package server

import (
	"fmt"
	"strings"
	"time"
)

// command is one entry of the command table.
type command struct {
	name string
	// arity as Redis counts it, the name included: n > 0 exactly n
	// arguments, n < 0 at least -n.
	arity int
	// write commands change the key space; they are refused once the log
	// has failed.
	write bool
	// noauth commands run before AUTH when a password is set.
	noauth bool
	// dataArg, if not 0, is the index of an argument that is data rather
	// than an item or key (CF.LOADCHUNK's chunk): bounded by Limits.MaxBulk
	// alone, not by MaxItem.
	dataArg int
	run     func(s *Server, cl *client, args [][]byte)
}

// commands maps lower-case names to commands; filled by init in the
// commands_*.go files.
var commands = map[string]*command{}

func register(cmds ...*command) {
	for _, c := range cmds {
		commands[c.name] = c
	}
}

// exec runs one command and writes its reply to cl.wr. It never panics on
// client input: a panic would be a bug, and is answered as an error and
// logged rather than bringing the server down.
func (s *Server) exec(cl *client, args [][]byte) {
	s.stats.cmds.Add(1)
	if len(args) == 0 {
		return
	}
	var lower [32]byte
	name := args[0]
	var cmd *command
	if len(name) <= len(lower) {
		for i, ch := range name {
			if 'A' <= ch && ch <= 'Z' {
				ch += 'a' - 'A'
			}
			lower[i] = ch
		}
		cmd = commands[string(lower[:len(name)])]
	}
	if cmd == nil {
		s.stats.errors.Add(1)
		cl.wr.WriteError(fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", printable(name, 64), argsPreview(args[1:])))
		return
	}
	if s.cfg.RequirePass != "" && !cl.authed && !cmd.noauth {
		s.stats.errors.Add(1)
		cl.wr.WriteError("NOAUTH Authentication required.")
		return
	}
	if (cmd.arity > 0 && len(args) != cmd.arity) || (cmd.arity < 0 && len(args) < -cmd.arity) {
		s.stats.errors.Add(1)
		cl.wr.WriteError(fmt.Sprintf("ERR wrong number of arguments for '%s' command", cmd.name))
		return
	}
	for i, a := range args[1:] {
		if len(a) > s.limits.MaxItem && i+1 != cmd.dataArg {
			s.stats.errors.Add(1)
			cl.wr.WriteError(fmt.Sprintf("ERR argument of %d bytes exceeds the item size limit of %d bytes", len(a), s.limits.MaxItem))
			return
		}
	}
	var start time.Time
	if s.metrics != nil {
		start = time.Now()
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in command", "command", cmd.name, "panic", r)
			cl.wr.WriteError(fmt.Sprintf("ERR internal error in %s", cmd.name))
		}
		if s.metrics != nil {
			s.metrics.observeCommand(cmd.name, time.Since(start))
		}
	}()
	cmd.run(s, cl, args)
}

func printable(b []byte, n int) string {
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

func argsPreview(args [][]byte) string {
	var sb strings.Builder
	for i, a := range args {
		if i == 3 || sb.Len() > 128 {
			break
		}
		fmt.Fprintf(&sb, "'%s' ", printable(a, 64))
	}
	return sb.String()
}

// writeErr answers err and counts it.
func (s *Server) writeErr(cl *client, err error) {
	s.stats.errors.Add(1)
	cl.wr.WriteError(err.Error())
}

// replyError is an error whose text is a reply, exactly as Redis or
// RedisBloom spell it (capitals and full stops included).
type replyError string

func (e replyError) Error() string { return string(e) }

func replyErr(s string) error { return replyError(s) }
