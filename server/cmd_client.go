package server

import (
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/clientinfo"
	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
)

// CLIENT and its subcommands: the handlers, the kill, and the reading of a
// client's fields (package internal/clientinfo formats them, parses and
// matches the filters, checks the arguments). Fields another connection
// reads (CLIENT LIST, CLIENT KILL) are atomic in client or set once at
// accept.

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
	b = append(b, binding{name: "client|help", run: func(s *Server, cl *client, a [][]byte) { clientinfo.WriteHelp(cl.wr) }})
	return b
}

func clientSetName(s *Server, cl *client, a [][]byte) {
	if err := clientinfo.ValidName(a[2]); err != nil {
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
	field, err := clientinfo.ParseSetInfo(a[2], a[3])
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	v := string(a[3])
	if field == clientinfo.LibName {
		cl.libName.Store(&v)
	} else {
		cl.libVer.Store(&v)
	}
	cl.wr.WriteString("OK")
}

// clientLine is a client's line in CLIENT LIST and CLIENT INFO
// (clientinfo.Client.Line).
func (s *Server) clientLine(c *client) string {
	info := s.clientInfo(c)
	return info.Line(time.Now())
}

// clientInfo reads c's fields for CLIENT LIST and KILL: from another
// connection, each is atomic or set once at accept.
func (s *Server) clientInfo(c *client) clientinfo.Client {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	cmd := "NULL"
	if id := c.lastCmd.Load(); id >= 0 {
		cmd = s.cmds.names[id]
	}
	// The memory fields (clientmem.go): qbuf the requests received and not
	// yet run when the client last waited, omem its replies being written
	// and pushes waiting.
	qcap, qbuf := c.mem.QueryBuffer()
	return clientinfo.Client{
		ID: c.id, Addr: c.nc.RemoteAddr().String(), LAddr: c.nc.LocalAddr().String(), FD: c.fd,
		Name: str(c.name.Load()), Created: c.created, LastActive: time.Unix(0, c.lastActive.Load()),
		Replica: c.repl.isLink.Load(), NoEvict: c.noEvict.Load(), NoTouch: c.noTouch.Load(),
		InMulti: c.tx.inMulti.Load(), Queued: int(c.tx.nqueued.Load()), Watch: int(c.tx.watching.Load()),
		Sub: int(c.sub.Count(pubsub.Channel)), PSub: int(c.sub.Count(pubsub.Pattern)), SSub: int(c.sub.Count(pubsub.ShardChannel)),
		QbufCap: qcap, Qbuf: qbuf, MultiMem: c.mem.Multi(), Omem: c.mem.Output(),
		Cmd: cmd, User: c.userName(), Resp: int(c.proto.Load()),
		LibName: str(c.libName.Load()), LibVer: str(c.libVer.Load()),
	}
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
	f, err := clientinfo.ParseList(a[2:])
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	now := time.Now()
	var sb strings.Builder
	for _, c := range s.clientList() {
		if info := s.clientInfo(c); f.Match(&info, now) {
			sb.WriteString(info.Line(now))
			sb.WriteByte('\n')
		}
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
		s.writeErr(cl, clientinfo.ErrNoSuchClient)
		return
	}
	f, err := clientinfo.ParseKill(a[2:])
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	n := 0
	now := time.Now()
	for _, c := range s.clientList() {
		if c == cl && f.SkipMe {
			continue
		}
		if info := s.clientInfo(c); f.Match(&info, now) {
			s.kill(cl, c)
			n++
		}
	}
	cl.wr.WriteInt(n)
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
		on, err := clientinfo.ParseOnOff(a[2])
		if err != nil {
			s.writeErr(cl, err)
			return
		}
		set(cl, on)
		cl.wr.WriteString("OK")
	}
}

// CLIENT REPLY ON|OFF|SKIP: OFF mutes every reply until ON, SKIP the next
// command's; neither is answered (serveConn drops muted replies).
func clientReply(s *Server, cl *client, a [][]byte) {
	mode, err := clientinfo.ParseReply(a[2])
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	switch mode {
	case clientinfo.ReplyOn:
		cl.replyOff = false
		cl.wr.WriteString("OK")
	case clientinfo.ReplyOff:
		cl.replyOff = true
	case clientinfo.ReplySkip:
		cl.skipNext = true
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
