package server

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
)

// CLIENT and its subcommands. Fields another connection reads (CLIENT LIST,
// CLIENT KILL) are atomic in client or set once at accept.

// clientCommands binds this file's commands to their rows of Redis's table, by name.
func clientCommands() (b []binding) {
	b = append(b, binding{name: "client|setname", run: clientSetName})
	b = append(b, binding{name: "client|getname", run: clientGetName})
	b = append(b, binding{name: "client|setinfo", run: clientSetInfo})
	b = append(b, binding{name: "client|id", run: func(s *Server, cl *client, a [][]byte) { cl.wr.WriteInt64(cl.id) }})
	b = append(b, binding{name: "client|info", run: func(s *Server, cl *client, a [][]byte) { cl.wr.WriteVerbatim(s.clientLine(cl)) }})
	b = append(b, binding{name: "client|list", run: clientList})
	b = append(b, binding{name: "client|kill", run: clientKill})
	b = append(b, binding{name: "client|no-evict", run: clientOnOff(func(cl *client, on bool) { cl.noEvict.Store(on) })})
	b = append(b, binding{name: "client|no-touch", run: clientOnOff(func(cl *client, on bool) { cl.noTouch.Store(on) })})
	b = append(b, binding{name: "client|reply", run: clientReply})
	b = append(b, binding{name: "client|help", run: func(s *Server, cl *client, a [][]byte) { command.WriteHelp(cl.wr, clientHelp) }})
	return b
}

var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"    * ID <client-id>",
	"      Kill connections by client id.",
	"    * MAXAGE <maxage>",
	"      Kill connections older than the specified age.",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"    * ID <client-id> [<client-id> ...]",
	"      Return clients of specified IDs only.",
	"NO-EVICT (ON|OFF)",
	"    Protect the current client connection from eviction.",
	"NO-TOUCH (ON|OFF)",
	"    Will not touch LRU/LFU stats when this mode is on.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"SETINFO <option> <value>",
	"    Set client meta attr. Options are:",
	"    * LIB-NAME: the client lib name.",
	"    * LIB-VER: the client lib version.",
	"HELP",
	"    Print this help.",
}

// validClientName refuses names Redis refuses: spaces, newlines and other
// characters outside '!'..'~'.
func validClientName(name []byte) error {
	for _, ch := range name {
		if ch < '!' || ch > '~' {
			return replyErr("ERR Client names cannot contain spaces, newlines or special characters.")
		}
	}
	return nil
}

func clientSetName(s *Server, cl *client, a [][]byte) {
	if err := validClientName(a[2]); err != nil {
		s.writeErr(cl, err)
		return
	}
	name := string(a[2])
	cl.name.Store(&name)
	cl.wr.WriteString("OK")
}

func clientGetName(s *Server, cl *client, a [][]byte) {
	if p := cl.name.Load(); p != nil && *p != "" {
		cl.wr.WriteBulkString(*p)
	} else {
		cl.wr.WriteNull()
	}
}

// CLIENT SETINFO LIB-NAME name | LIB-VER version
func clientSetInfo(s *Server, cl *client, a [][]byte) {
	v := string(a[3])
	for _, ch := range a[3] {
		if ch < '!' || ch > '~' {
			s.writeErr(cl, replyErr("ERR "+strings.ToUpper(string(a[2]))+" cannot contain spaces, newlines or special characters."))
			return
		}
	}
	switch strings.ToLower(string(a[2])) {
	case "lib-name":
		cl.libName.Store(&v)
	case "lib-ver":
		cl.libVer.Store(&v)
	default:
		s.writeErr(cl, replyErr(fmt.Sprintf("ERR Unrecognized option '%s'", printable(a[2], 32))))
		return
	}
	cl.wr.WriteString("OK")
}

// clientLine is a client's line in CLIENT LIST and CLIENT INFO, with Redis's
// field names; only fields this server keeps are printed.
func (s *Server) clientLine(c *client) string {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	now := time.Now()
	flags := ""
	if c.repl.isLink.Load() {
		flags += "S"
	}
	if c.sub.Any() {
		flags += "P"
	}
	if c.tx.inMulti.Load() {
		flags += "x"
	}
	if c.noEvict.Load() {
		flags += "e"
	}
	if c.noTouch.Load() {
		flags += "T"
	}
	if flags == "" {
		flags = "N"
	}
	cmd := "NULL"
	if c.lastCmd.Load() >= 0 {
		cmd = s.cmds.names[c.lastCmd.Load()]
	}
	multi := -1
	if c.tx.inMulti.Load() {
		multi = int(c.tx.nqueued.Load())
	}
	// The memory fields (clientmem.go): qbuf the requests received and not
	// yet run when the client last waited, omem its replies being written
	// and pushes waiting, tot-mem what maxmemory-clients counts.
	qcap, qbuf := c.mem.QueryBuffer()
	omem := c.mem.Output()
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=0 sub=%d psub=%d ssub=%d multi=%d watch=%d qbuf=%d qbuf-free=%d multi-mem=%d omem=%d tot-mem=%d cmd=%s user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s",
		c.id, c.nc.RemoteAddr(), c.nc.LocalAddr(), c.fd, str(c.name.Load()),
		int(now.Sub(c.created).Seconds()), int(now.Sub(time.Unix(0, c.lastActive.Load())).Seconds()),
		flags, c.sub.Count(pubsub.Channel), c.sub.Count(pubsub.Pattern), c.sub.Count(pubsub.ShardChannel), multi, c.tx.watching.Load(),
		qbuf, max(qcap-qbuf, 0), c.mem.Multi(), omem, qcap+omem+c.mem.Multi(),
		cmd, c.userName(), c.proto.Load(), str(c.libName.Load()), str(c.libVer.Load()))
}

// clientList returns the connected clients, by id, but those killed.
func (s *Server) clientList() []*client {
	s.mu.Lock()
	out := make([]*client, 0, len(s.clients))
	for c := range s.clients {
		if !c.killed.Load() {
			out = append(out, c)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b *client) int { return int(a.id - b.id) })
	return out
}

// CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id...]
func clientList(s *Server, cl *client, a [][]byte) {
	var ids []int64
	typ := ""
	for i := 2; i < len(a); i++ {
		switch strings.ToUpper(string(a[i])) {
		case "TYPE":
			if i+1 >= len(a) {
				s.writeErr(cl, replyErr("ERR syntax error"))
				return
			}
			typ = strings.ToLower(string(a[i+1]))
			if !slices.Contains([]string{"normal", "master", "replica", "slave", "pubsub"}, typ) {
				s.writeErr(cl, replyErr(fmt.Sprintf("ERR Unknown client type '%s'", printable(a[i+1], 32))))
				return
			}
			i++
		case "ID":
			if i+1 >= len(a) {
				s.writeErr(cl, replyErr("ERR syntax error"))
				return
			}
			for i++; i < len(a); i++ {
				id, ok := integer.Parse(a[i])
				if !ok || id <= 0 {
					s.writeErr(cl, replyErr("ERR Invalid client ID"))
					return
				}
				ids = append(ids, id)
			}
		default:
			s.writeErr(cl, replyErr("ERR syntax error"))
			return
		}
	}
	var sb strings.Builder
	for _, c := range s.clientList() {
		if typ != "" && clientTypeArg(typ) != c.clientType() || ids != nil && !slices.Contains(ids, c.id) {
			continue
		}
		sb.WriteString(s.clientLine(c))
		sb.WriteByte('\n')
	}
	cl.wr.WriteVerbatim(sb.String())
}

// CLIENT KILL ip:port | CLIENT KILL [ID id] [TYPE t] [USER u] [ADDR a]
// [LADDR a] [SKIPME yes|no] [MAXAGE s]...
func clientKill(s *Server, cl *client, a [][]byte) {
	if len(a) == 3 {
		addr := string(a[2])
		for _, c := range s.clientList() {
			if c.nc.RemoteAddr().String() == addr {
				s.kill(cl, c)
				cl.wr.WriteString("OK")
				return
			}
		}
		s.writeErr(cl, replyErr("ERR No such client"))
		return
	}
	if len(a)%2 != 0 {
		s.writeErr(cl, replyErr("ERR syntax error"))
		return
	}
	match, skipMe, err := killFilters(a[2:])
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	n := 0
	for _, c := range s.clientList() {
		if c == cl && skipMe {
			continue
		}
		ok := true
		for _, m := range match {
			ok = ok && m(c)
		}
		if ok {
			s.kill(cl, c)
			n++
		}
	}
	cl.wr.WriteInt(n)
}

// killFilters reads CLIENT KILL's filters, a (pairs of a filter's name
// and its value): the tests a client must pass to be killed, and whether
// the caller is spared (SKIPME).
func killFilters(a [][]byte) (match []func(*client) bool, skipMe bool, err error) {
	skipMe = true
	for i := 0; i < len(a); i += 2 {
		v := string(a[i+1])
		switch strings.ToUpper(string(a[i])) {
		case "ID":
			id, ok := integer.Parse(a[i+1])
			if !ok || id <= 0 {
				return nil, false, replyErr("ERR client-id should be greater than 0")
			}
			match = append(match, func(c *client) bool { return c.id == id })
		case "TYPE":
			t := strings.ToLower(v)
			if !slices.Contains([]string{"normal", "master", "replica", "slave", "pubsub"}, t) {
				return nil, false, replyErr(fmt.Sprintf("ERR Unknown client type '%s'", printable(a[i+1], 32)))
			}
			match = append(match, func(c *client) bool { return clientTypeArg(t) == c.clientType() })
		case "USER":
			match = append(match, func(c *client) bool { return c.userName() == v })
		case "ADDR":
			match = append(match, func(c *client) bool { return c.nc.RemoteAddr().String() == v })
		case "LADDR":
			match = append(match, func(c *client) bool { return c.nc.LocalAddr().String() == v })
		case "SKIPME":
			switch strings.ToLower(v) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				return nil, false, replyErr("ERR syntax error")
			}
		case "MAXAGE":
			age, ok := integer.Parse(a[i+1])
			if !ok || age < 0 { // as Redis 7.0 answers both
				return nil, false, replyErr("ERR syntax error")
			}
			match = append(match, func(c *client) bool { return time.Since(c.created) >= time.Duration(age)*time.Second })
		default:
			return nil, false, replyErr("ERR syntax error")
		}
	}
	return match, skipMe, nil
}

// clientType is CLIENT LIST's and KILL's TYPE of c, as Redis's
// getClientType: slave for a replica's link (PSYNC), pubsub while it has a
// subscription, else normal. (The link a replica opens to its primary is
// not a client of the replica's.)
func (c *client) clientType() string {
	switch {
	case c.repl.isLink.Load():
		return "slave"
	case c.sub.Any():
		return "pubsub"
	}
	return "normal"
}

// clientTypeArg is a TYPE argument as clientType names it: replica is slave.
func clientTypeArg(t string) string {
	if t == "replica" {
		return "slave"
	}
	return t
}

// kill closes c's connection: at once for another client (its reads fail
// and its goroutine exits), after this reply for the caller itself.
func (s *Server) kill(self, c *client) {
	if c == self {
		self.quit = true
		return
	}
	c.killed.Store(true) // gone from CLIENT LIST at once, before its goroutine ends
	c.nc.Close()
}

// clientOnOff is a subcommand taking ON or OFF.
func clientOnOff(set func(cl *client, on bool)) handler {
	return func(s *Server, cl *client, a [][]byte) {
		switch strings.ToLower(string(a[2])) {
		case "on":
			set(cl, true)
		case "off":
			set(cl, false)
		default:
			s.writeErr(cl, replyErr("ERR syntax error"))
			return
		}
		cl.wr.WriteString("OK")
	}
}

// CLIENT REPLY ON|OFF|SKIP: OFF mutes every reply until ON, SKIP the next
// command's; neither is answered (serveConn drops muted replies).
func clientReply(s *Server, cl *client, a [][]byte) {
	switch strings.ToLower(string(a[2])) {
	case "on":
		cl.replyOff = false
		cl.wr.WriteString("OK")
	case "off":
		cl.replyOff = true
	case "skip":
		cl.skipNext = true
	default:
		s.writeErr(cl, replyErr("ERR syntax error"))
	}
}

// connFD is the connection's file descriptor, for CLIENT LIST's fd field;
// -1 when the connection has none (a pipe in tests).
func connFD(nc net.Conn) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}
