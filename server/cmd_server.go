package server

import (
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/command"
)

// The server commands: COMMAND, SAVE, BGSAVE, LASTSAVE, INFO, TIME.

// serverCommands binds this file's commands to their rows of Redis's table, by name.
func serverCommands() (b []binding) {
	b = append(b, binding{name: "command", run: cmdCommand})
	for _, sub := range []string{"count", "info", "docs", "list", "getkeys", "getkeysandflags", "help"} {
		b = append(b, binding{name: "command|" + sub, run: cmdCommandSub})
	}
	b = append(b, binding{name: "save", run: cmdSave})
	b = append(b, binding{name: "bgsave", run: cmdBgsave})
	b = append(b, binding{name: "lastsave", run: cmdLastsave})
	return b
}

// COMMAND and its subcommands answer from package command's table.
func cmdCommand(s *Server, cl *client, a [][]byte) {
	s.cmds.table.ReplyCommand(cl.wr, moduleACL(s.filterDefaults().Compat))
}

func cmdCommandSub(s *Server, cl *client, a [][]byte) {
	var msg string
	switch strings.ToLower(string(a[1])) {
	case "count":
		s.cmds.table.ReplyCount(cl.wr)
	case "info":
		s.cmds.table.ReplyInfo(cl.wr, a, moduleACL(s.filterDefaults().Compat))
	case "docs":
		s.cmds.table.ReplyDocs(cl.wr, a, moduleDocs(s.filterDefaults()))
	case "list":
		msg = s.cmds.table.ReplyList(cl.wr, a, moduleACL(s.filterDefaults().Compat))
	case "getkeys":
		msg = s.cmds.table.ReplyGetKeys(cl.wr, a, false)
	case "getkeysandflags":
		msg = s.cmds.table.ReplyGetKeys(cl.wr, a, true)
	case "help":
		command.ReplyHelp(cl.wr)
	}
	if msg != "" {
		s.writeErr(cl, replyErr(msg))
	}
}

func cmdSave(s *Server, cl *client, a [][]byte) {
	if err := s.snapshot(); err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

func cmdBgsave(s *Server, cl *client, a [][]byte) {
	if s.store.AOF == nil {
		s.writeErr(cl, replyErr("ERR persistence is off (no --dir)"))
		return
	}
	if err := s.store.AOF.Err(); err != nil {
		// The snapshot would fail at its first step, the log's rotation:
		// say so now rather than "started".
		s.writeErr(cl, err)
		return
	}
	if !s.snapshotAsync() {
		s.writeErr(cl, replyErr("ERR Background save already in progress"))
		return
	}
	cl.wr.WriteString("Background saving started")
}

func status(err error) string {
	if err != nil {
		return "err"
	}
	return "ok"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmdLastsave(s *Server, cl *client, a [][]byte) { cl.wr.WriteInt64(s.lastSave.Load()) }
