package server

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/acl"
	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// handler runs one command; args[0] is its name as the client sent it.
type handler func(s *Server, cl *client, args [][]byte)

// binding is one command's handler, and its row of the command table if
// its family keeps its rows beside its handlers (the CF commands, as a
// Redis module registers its own); a binding with no spec binds the row of
// Redis's command named name (package command's rows, one file a group).
// Each family's cmd_*.go file returns its bindings (families).
type binding struct {
	name string        // Redis's row: "config|get"; unused with spec
	spec *command.Spec // the family's own row
	run  handler
}

// families are the command families' bindings, one function a file.
func families() [][]binding {
	return [][]binding{
		aclCommands(), adminCommands(), cfCommands(), clientCommands(), clusterCommands(),
		clusterMigrateCommands(), configCommands(), connCommands(), debugCommands(), dumpCommands(),
		expiryCommands(), infoCommands(), keysCommands(), multiCommands(), objectCommands(),
		pubsubCommands(), replCommands(), serverCommands(),
	}
}

// bound is a command with its handler, and the spec's facts the dispatcher
// reads on every command, copied out of the table.
type bound struct {
	spec *command.Spec
	run  handler
	id   int32 // index in commandSet.names: CLIENT LIST's cmd field, the ACL's command id
	// noAuth: runs before authentication; inMulti: runs at once inside
	// MULTI (EXEC, DISCARD, ...) instead of being queued; noMulti: refused
	// inside MULTI.
	noAuth, inMulti, noMulti bool
	write                    bool // refused on a replica (READONLY)
	asking                   bool // in cluster mode, as if after ASKING (RESTORE-ASKING)
	soleKey                  int  // the index of the only key, if one by index (Spec.SoleKey)
	dataArg                  int
}

// commandSet is the server's commands: the table (every row) and the bound
// commands and subcommands by lower-case name ("client|list"), their names
// by id, and the commands by ACL category. New builds it once
// (newCommandSet); it is only read after.
type commandSet struct {
	table  *command.Table
	byName map[string]*bound
	names  []string
	// acl are the commands by ACL category, by ModuleACL: RedisBloom
	// 8.6's (module commands in the categories they name) and 2.6's (with
	// those their flags imply, as Redis 7 derives them).
	acl [2]*acl.Catalog
	// readAhead are the names of the rows flagged ReadAhead, for the
	// read-ahead's test of every request, which must cost less than a
	// lookup (prefetch.go).
	readAhead [][]byte
}

// readsAhead reports whether name is a command whose row is flagged
// ReadAhead, in any case.
func (cs *commandSet) readsAhead(name []byte) bool {
	for _, n := range cs.readAhead {
		if len(n) == len(name) && bytes.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// CommandTable returns a server's command table, Redis's rows and its
// families' own, as New builds it: for the tests of package command.
func CommandTable() *command.Table {
	cs, err := newCommandSet(families())
	if err != nil {
		panic(err)
	}
	return cs.table
}

// newCommandSet builds the table from Redis's rows and fams' own,
// binds every binding to its row, and errs on a binding to no row or to a
// row bound already, and on a row of Redis's with no handler: a command
// the server lists must run.
func newCommandSet(fams [][]binding) (*commandSet, error) {
	specs := command.Redis()
	for _, fam := range fams {
		for _, b := range fam {
			if b.spec != nil {
				specs = append(specs, b.spec)
			}
		}
	}
	table, err := command.NewTable(specs)
	if err != nil {
		return nil, err
	}
	run := map[string]handler{}
	var errs []error
	for _, fam := range fams {
		for _, b := range fam {
			name := b.name
			if b.spec != nil {
				name = b.spec.Name
			}
			switch {
			case table.Find(name) == nil:
				errs = append(errs, fmt.Errorf("server: a handler for %q, which is not in the command table", name))
			case run[name] != nil:
				errs = append(errs, fmt.Errorf("server: two handlers for %q", name))
			}
			run[name] = b.run
		}
	}
	cs := &commandSet{table: table, byName: map[string]*bound{}}
	bind := func(x *command.Spec, run handler) {
		cs.byName[x.Name] = &bound{spec: x, run: run, id: int32(len(cs.names)),
			noAuth: x.Flags&command.NoAuth != 0, inMulti: runsInMulti(x),
			noMulti: x.Flags&command.NoMulti != 0, write: x.Flags&command.Write != 0, dataArg: x.DataArg,
			asking: x.Flags&command.Asking != 0, soleKey: x.SoleKey()}
		cs.names = append(cs.names, x.Name)
	}
	for _, c := range table.All() {
		for _, x := range append([]*command.Spec{c}, c.Subs...) {
			h := run[x.Name]
			if h == nil && x.Container() != nil {
				h = run[x.Container().Name]
			}
			if h == nil {
				if x.Container() == nil && len(x.Subs) == 0 {
					errs = append(errs, fmt.Errorf("server: no handler for %q", x.Name))
				}
				continue
			}
			bind(x, h)
			if x.ReadAhead {
				cs.readAhead = append(cs.readAhead, []byte(x.Name))
			}
			if x.Container() != nil && cs.byName[c.Name] == nil {
				// A container is served when a subcommand is; its
				// arity keeps a request without one out.
				bind(c, nil)
			}
		}
	}
	for i := range cs.acl {
		cmds := make([]acl.Command, len(cs.names))
		for _, b := range cs.byName {
			cmds[b.id] = acl.Command{ID: int(b.id), Name: b.spec.Name, Categories: b.spec.Categories(command.ModuleACL(i))}
			for _, sub := range b.spec.Subs {
				if sb := cs.byName[sub.Name]; sb != nil {
					cmds[b.id].Subs = append(cmds[b.id].Subs, int(sb.id))
				}
			}
		}
		cs.acl[i] = acl.NewCatalog(cmds)
	}
	return cs, errors.Join(errs...)
}

// lookup returns the bound command args names, and for a container its
// subcommand, or the error to answer: an *arityError for a wrong number of
// arguments.
func (cs *commandSet) lookup(args [][]byte) (*bound, error) {
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
		b = cs.byName[string(lower[:len(name)])]
	}
	if b == nil {
		return nil, replyErr(fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", quoted.Printable(name, 64), argsPreview(args[1:])))
	}
	if !b.spec.ArityOK(len(args)) {
		return nil, &arityError{b.spec.Name}
	}
	if len(b.spec.Subs) == 0 || len(args) == 1 {
		return b, nil
	}
	sub := b.spec.LookupSub(args[1])
	if sub == nil || cs.byName[sub.Name] == nil {
		return nil, replyErr(fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", quoted.Printable(args[1], 64), strings.ToUpper(b.spec.Name)))
	}
	if !sub.ArityOK(len(args)) {
		return nil, &arityError{sub.Name}
	}
	return cs.byName[sub.Name], nil
}

// arityError is a command given the wrong number of arguments.
type arityError struct{ name string }

func (e *arityError) Error() string {
	return fmt.Sprintf("ERR wrong number of arguments for '%s' command", e.name)
}

// exec runs one command and writes its reply to cl.wr. It never panics on
// client input: a panic would be a bug, and is answered as an error and
// logged rather than bringing the server down.
func (s *Server) exec(cl *client, args [][]byte) {
	s.stats.cmds.Add(1)
	if len(args) == 0 {
		return
	}
	cmd, err := s.cmds.lookup(args)
	if cmd != nil && !cmd.noAuth {
		err = s.permitted(cl, cmd, args)
	}
	if err == nil && cl.sub.Delivery != nil {
		err = subscribedRefusal(cl, cmd) // RESP2's subscribed mode
	}
	if err == nil && s.cluster != nil {
		var slot int
		slot, err = s.clusterRedirect(cl, cmd, args) // -MOVED, -ASK, ... (cluster.go)
		if slot >= 0 {
			defer s.cluster.SlotLock(slot).RUnlock()
		}
	}
	if err == nil && cmd.write && s.store.Replica.Load() {
		err = keyspace.ErrReadonly
	}
	if err == nil && cmd.write && !cl.ks.InExec() && !s.enoughReplicas() {
		err = errNoReplicas // not inside EXEC: it checked its queue whole (internal/repl's minreplicas.go)
	}
	if err == nil {
		maxItem := s.clientLimits().MaxItem
		for i, a := range args[1:] {
			if len(a) > maxItem && i+1 != cmd.dataArg {
				err = replyErr(fmt.Sprintf("ERR argument of %d bytes exceeds the item size limit of %d bytes", len(a), maxItem))
				break
			}
		}
	}
	inMulti := cl.tx.inMulti.Load()
	if err == nil && inMulti && !cmd.inMulti && cmd.noMulti {
		err = replyErr("ERR Command not allowed inside a transaction")
	}
	if err != nil {
		cl.tx.multiErr = inMulti // EXEC will answer EXECABORT
		s.writeErr(cl, err)
		return
	}
	if inMulti && !cmd.inMulti {
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
			s.metrics.ObserveCommand(cmd.spec.Name, time.Since(start))
		}
	}()
	cl.lastCmd.Store(cmd.id)
	if s.mon.Len() > 0 {
		s.feedMonitors(cl, cmd.spec, args)
	}
	if cl.sub.Delivery != nil {
		s.runSubscribed(cl, cmd, args)
		return
	}
	cmd.run(s, cl, args)
}

func argsPreview(args [][]byte) string {
	var sb strings.Builder
	for i, a := range args {
		if i == 3 || sb.Len() > 128 {
			break
		}
		fmt.Fprintf(&sb, "'%s' ", quoted.Printable(a, 64))
	}
	return sb.String()
}

// writeErr answers err and counts it.
func (s *Server) writeErr(cl *client, err error) {
	s.stats.errors.Add(1)
	cl.wr.WriteError(replyText(err))
}

// keyspaceReplies are the key space's errors as clients read them, in
// Redis's and RedisBloom's words: the key space's errors say what
// happened, and the command layer says it to the client, here only.
var keyspaceReplies = [...]struct {
	err  error
	text string
}{
	{keyspace.ErrNotFound, "ERR not found"},
	{keyspace.ErrNoSuchKey, "ERR no such key"},
	{keyspace.ErrItemExists, "ERR item exists"},
	{keyspace.ErrBusyKey, "BUSYKEY Target key name already exists."},
	{keyspace.ErrOOM, "ERR Insufficient memory"},
	{keyspace.ErrLoading, "ERR the key is being restored by CF.LOADCHUNK: writes are refused until its last chunk arrives"},
	{keyspace.ErrReadonly, "READONLY You can't write against a read only replica."},
	{keyspace.ErrMisconf, "MISCONF Errors writing to the append-only log"},
}

// replyText is the reply to err. A key space error that err wraps and
// begins with is answered in its reply's words, followed by the detail err
// adds (a failed log's cause, a filter's bound); any other error, a
// replyError or a RedisBloom text of package cf's, is its own reply.
func replyText(err error) string {
	msg := err.Error()
	for _, r := range keyspaceReplies {
		if head := r.err.Error(); strings.HasPrefix(msg, head) && errors.Is(err, r.err) {
			return r.text + msg[len(head):]
		}
	}
	return msg
}

// replyError is an error whose text is a reply, exactly as Redis or
// RedisBloom spell it (capitals and full stops included).
type replyError string

func (e replyError) Error() string { return string(e) }

func replyErr(s string) error { return replyError(s) }
