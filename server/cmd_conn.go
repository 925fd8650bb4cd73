package server

import (
	"fmt"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/clientinfo"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// The connection commands: PING, ECHO, QUIT, SELECT, AUTH, HELLO (CLIENT is
// in cmd_client.go).

// connCommands binds this file's commands to their rows of Redis's table, by name.
func connCommands() (b []binding) {
	b = append(b, binding{name: "ping", run: cmdPing})
	b = append(b, binding{name: "echo", run: cmdEcho})
	b = append(b, binding{name: "quit", run: cmdQuit})
	b = append(b, binding{name: "select", run: cmdSelect})
	b = append(b, binding{name: "auth", run: cmdAuth})
	b = append(b, binding{name: "hello", run: cmdHello})
	return b
}

func cmdPing(s *Server, cl *client, a [][]byte) {
	if len(a) > 2 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'ping' command"))
		return
	}
	if len(a) == 2 {
		cl.wr.WriteBulk(a[1])
		return
	}
	cl.wr.WriteString("PONG")
}

func cmdSelect(s *Server, cl *client, a [][]byte) {
	n, ok := integer.Parse(a[1])
	switch {
	case !ok:
		s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
	case n != 0:
		s.writeErr(cl, replyErr("ERR DB index is out of range"))
	default:
		cl.wr.WriteString("OK")
	}
}

// AUTH [username] password: the default user when no name is given.
func cmdAuth(s *Server, cl *client, a [][]byte) {
	if len(a) > 3 {
		s.writeErr(cl, replyErr("ERR syntax error"))
		return
	}
	name := []byte("default")
	if len(a) == 3 {
		name = a[1]
	} else if u := s.users.Get("default").Load(); u.NoPass {
		s.writeErr(cl, replyErr("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"))
		return
	}
	if err := s.authenticate(cl, name, a[len(a)-1]); err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

// HELLO [protover [AUTH user pass] [SETNAME name]]: protover 2 or 3 selects
// RESP2 or RESP3 for the replies that follow, this one included. The reply
// is a map of the server's facts.
func cmdHello(s *Server, cl *client, a [][]byte) {
	proto := cl.wr.Protocol()
	if len(a) >= 2 {
		v, ok := integer.Parse(a[1])
		if !ok {
			s.writeErr(cl, replyErr("ERR Protocol version is not an integer or out of range"))
			return
		}
		if v != 2 && v != 3 {
			s.writeErr(cl, replyErr("NOPROTO unsupported protocol version"))
			return
		}
		proto = int(v)
	}
	var name *string
	var auth [][]byte // user, password
	for i := 2; i < len(a); i++ {
		switch strings.ToUpper(string(a[i])) {
		case "AUTH":
			if i+2 >= len(a) {
				s.writeErr(cl, replyErr(fmt.Sprintf("ERR Syntax error in HELLO option '%s'", quoted.Printable(a[i], 32))))
				return
			}
			auth = a[i+1 : i+3]
			i += 2
		case "SETNAME":
			if i+1 >= len(a) {
				s.writeErr(cl, replyErr(fmt.Sprintf("ERR Syntax error in HELLO option '%s'", quoted.Printable(a[i], 32))))
				return
			}
			if err := clientinfo.ValidName(a[i+1]); err != nil {
				s.writeErr(cl, err)
				return
			}
			n := string(a[i+1])
			name = &n
			i++
		default:
			s.writeErr(cl, replyErr(fmt.Sprintf("ERR Syntax error in HELLO option '%s'", quoted.Printable(a[i], 32))))
			return
		}
	}
	// Nothing changes unless the whole command is valid.
	if auth != nil {
		if err := s.authenticate(cl, auth[0], auth[1]); err != nil {
			s.writeErr(cl, err)
			return
		}
	} else if cl.user.Load() == nil {
		s.writeErr(cl, replyErr("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"))
		return
	}
	if name != nil {
		cl.name.Store(name)
	}
	cl.wr.SetProtocol(proto)
	cl.proto.Store(int32(proto))
	cl.wr.WriteMap(7)
	cl.wr.WriteBulkString("server")
	cl.wr.WriteBulkString("cuckoo")
	cl.wr.WriteBulkString("version")
	cl.wr.WriteBulkString(Version)
	cl.wr.WriteBulkString("proto")
	cl.wr.WriteInt(proto)
	cl.wr.WriteBulkString("id")
	cl.wr.WriteInt64(cl.id)
	cl.wr.WriteBulkString("mode")
	cl.wr.WriteBulkString("standalone")
	cl.wr.WriteBulkString("role")
	cl.wr.WriteBulkString("master")
	cl.wr.WriteBulkString("modules")
	cl.wr.WriteArray(0)
}

// Version is the server version INFO and HELLO report.
const Version = "0.1.0"

func cmdEcho(s *Server, cl *client, a [][]byte) { cl.wr.WriteBulk(a[1]) }

func cmdQuit(s *Server, cl *client, a [][]byte) {
	cl.wr.WriteString("OK")
	cl.quit = true
}
