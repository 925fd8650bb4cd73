package server

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/command"
)

// handler runs one command; args[0] is its name as the client sent it.
type handler func(s *Server, cl *client, args [][]byte)

// handlers binds command.Spec names ("cf.add", "client|list") to their
// handlers; filled by the init functions of the cmd_*.go files. Every other
// fact about a command is in package command's table, the one source of
// truth for arity, flags, ACL categories, key positions and docs.
var handlers = map[string]handler{}

func handle(name string, h handler) {
	if command.Find(name) == nil || handlers[name] != nil {
		panic("server: handler for an unknown or bound command " + name)
	}
	handlers[name] = h
}

// bound is a command with its handler.
type bound struct {
	spec *command.Spec
	run  handler
}

// dispatch maps lower-case names to bound commands and subcommands
// ("client|list"), built once from the table and the handlers.
var dispatch = sync.OnceValue(func() map[string]*bound {
	m := map[string]*bound{}
	for _, c := range command.All() {
		for _, x := range append([]*command.Spec{c}, c.Subs...) {
			run := handlers[x.Name]
			if run == nil && x.Container() != nil {
				run = handlers[x.Container().Name]
			}
			if run != nil {
				m[x.Name] = &bound{spec: x, run: run}
				if x.Container() != nil && m[c.Name] == nil {
					// A container is served when a subcommand is; its
					// arity keeps a request without one out.
					m[c.Name] = &bound{spec: c}
				}
			}
		}
	}
	return m
})

// lookup returns the bound command args names, and for a container its
// subcommand, or the error to answer.
func lookup(args [][]byte) (*bound, string) {
	var lower [32]byte
	name := args[0]
	var b *bound
	if len(name) <= len(lower) {
		for i, ch := range name {
			if 'A' <= ch && ch <= 'Z' {
				ch += 'a' - 'A'
			}
			lower[i] = ch
		}
		b = dispatch()[string(lower[:len(name)])]
	}
	if b == nil {
		return nil, fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", printable(name, 64), argsPreview(args[1:]))
	}
	if !b.spec.ArityOK(len(args)) {
		return nil, fmt.Sprintf("ERR wrong number of arguments for '%s' command", b.spec.Name)
	}
	if len(b.spec.Subs) == 0 || len(args) == 1 {
		return b, ""
	}
	sub := b.spec.LookupSub(args[1])
	if sub == nil || dispatch()[sub.Name] == nil {
		return nil, fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", printable(args[1], 64), strings.ToUpper(b.spec.Name))
	}
	if !sub.ArityOK(len(args)) {
		return nil, fmt.Sprintf("ERR wrong number of arguments for '%s' command", sub.Name)
	}
	return dispatch()[sub.Name], ""
}

// exec runs one command and writes its reply to cl.wr. It never panics on
// client input: a panic would be a bug, and is answered as an error and
// logged rather than bringing the server down.
func (s *Server) exec(cl *client, args [][]byte) {
	s.stats.cmds.Add(1)
	if len(args) == 0 {
		return
	}
	cmd, msg := lookup(args)
	if cmd != nil && s.requirePass() != "" && !cl.authed && cmd.spec.Flags&command.NoAuth == 0 {
		msg = "NOAUTH Authentication required."
	}
	if msg == "" {
		for i, a := range args[1:] {
			if len(a) > s.limits.MaxItem && i+1 != cmd.spec.DataArg {
				msg = fmt.Sprintf("ERR argument of %d bytes exceeds the item size limit of %d bytes", len(a), s.limits.MaxItem)
				break
			}
		}
	}
	if msg == "" && cl.inMulti.Load() && !runsInMulti(cmd.spec) && cmd.spec.Flags&command.NoMulti != 0 {
		msg = "ERR Command not allowed inside a transaction"
	}
	if msg != "" {
		s.stats.errors.Add(1)
		cl.multiErr = cl.inMulti.Load() // EXEC will answer EXECABORT
		cl.wr.WriteError(msg)
		return
	}
	if cl.inMulti.Load() && !runsInMulti(cmd.spec) {
		cl.queue(args)
		cl.wr.WriteString("QUEUED")
		return
	}
	var start time.Time
	if s.metrics != nil {
		start = time.Now()
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in command", "command", cmd.spec.Name, "panic", r)
			cl.wr.WriteError(fmt.Sprintf("ERR internal error in %s", cmd.spec.Name))
		}
		if s.metrics != nil {
			s.metrics.observeCommand(cmd.spec.Name, time.Since(start))
		}
	}()
	cl.lastCmd.Store(&cmd.spec.Name)
	if s.mon.n.Load() > 0 {
		s.feedMonitors(cl, cmd.spec, args)
	}
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
