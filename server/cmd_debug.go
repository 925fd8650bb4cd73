package server

import (
	"fmt"
	"net"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/conf"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// DEBUG RELOAD and DEBUG HELP, behind enable-debug-command as in Redis
// (default no). Redis's DEBUG RELOAD saves its RDB file, empties the data
// set and loads the file back; test suites (RedisBloom's among them) use it
// to check that every value survives being written out and read in. Here
// each key is written out as its DUMP payload, the form a replica's full
// copy carries, and read back in its place with its TTL, under the gate
// exclusively, so that no write sees it half done. Nothing is logged: the
// data set is the same after, which is what the command checks. A key
// whose CF.LOADCHUNK is under way is left as it is, since its pending load
// is not part of a payload. RELOAD's options (MERGE, NOFLUSH, NOSAVE: in
// Redis, merge into the keys present, do not empty them, do not save
// first) change nothing here, where every key is reloaded in place from
// what it holds. The other subcommands of Redis's DEBUG are refused.

// debugCommands binds this file's commands to their rows of Redis's table, by name.
func debugCommands() (b []binding) {
	b = append(b, binding{name: "debug", run: cmdDebug})
	return b
}

var debugHelp = []string{
	"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"RELOAD [MERGE] [NOFLUSH] [NOSAVE]",
	"    Write every filter out as its DUMP payload and read it back in its place (the options change nothing).",
	"HELP",
	"    Print this help.",
}

// errDebugNotAllowed is Redis's reply while enable-debug-command forbids
// DEBUG.
var errDebugNotAllowed = replyErr(`ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", ` +
	`you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`)

func cmdDebug(s *Server, cl *client, args [][]byte) {
	if !s.debugAllowed(cl) {
		s.writeErr(cl, errDebugNotAllowed)
		return
	}
	switch sub := strings.ToLower(string(args[1])); {
	case sub == "help" && len(args) == 2:
		cl.wr.WriteHelp(debugHelp)
	case sub == "reload":
		for _, o := range args[2:] {
			switch strings.ToUpper(string(o)) {
			case "MERGE", "NOFLUSH", "NOSAVE":
			default:
				s.writeErr(cl, replyErr("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."))
				return
			}
		}
		keys, err := s.store.Reload(&cl.ks)
		if re, ok := err.(*keyspace.ReloadError); ok {
			err = replyErr(fmt.Sprintf("ERR DEBUG RELOAD of key %s: %v", quoted.Printable([]byte(re.Key), 64), re.Err))
		}
		if err != nil {
			s.writeErr(cl, err)
			return
		}
		s.log.Info("DEBUG RELOAD", "client", cl.id, "keys", keys)
		cl.wr.WriteString("OK")
	default:
		s.writeErr(cl, replyErr(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP.", quoted.Printable(args[1], 128))))
	}
}

// DebugCommand is enable-debug-command: whether DEBUG is allowed. Its
// String is the setting's value.
type DebugCommand = conf.DebugCommand

// The values of enable-debug-command.
const (
	DebugCommandNo    = conf.DebugCommandNo    // refused (the default)
	DebugCommandYes   = conf.DebugCommandYes   // allowed
	DebugCommandLocal = conf.DebugCommandLocal // allowed from a loopback address only
)

// debugAllowed applies enable-debug-command to cl: local allows loopback
// clients only.
func (s *Server) debugAllowed(cl *client) bool {
	switch s.cfg.EnableDebugCommand {
	case DebugCommandYes:
		return true
	case DebugCommandLocal:
		a, ok := cl.nc.RemoteAddr().(*net.TCPAddr)
		return ok && a.IP.IsLoopback()
	}
	return false
}
