package server

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/limits"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
	"github.com/cuckoohash/cuckoo/server/internal/repl"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// The replication commands: PSYNC, REPLCONF, WAIT, ROLE, REPLICAOF (and
// SLAVEOF). Replication itself, as primary and as replica, is
// internal/repl's (its doc.go has the protocol); these parse, call it and
// reply.

// replCommands binds this file's commands to their rows of Redis's table, by name.
func replCommands() (b []binding) {
	b = append(b, binding{name: "psync", run: cmdPsync})
	b = append(b, binding{name: "replconf", run: cmdReplconf})
	b = append(b, binding{name: "wait", run: cmdWait})
	b = append(b, binding{name: "role", run: cmdRole})
	b = append(b, binding{name: "replicaof", run: cmdReplicaof})
	b = append(b, binding{name: "slaveof", run: cmdReplicaof})
	return b
}

// newRepl makes the server's replication state, with what it needs from
// the server and the min-replicas settings in force; New calls it once the
// key space, the settings and the cluster node are set.
func (s *Server) newRepl(cfg Config) *repl.Node {
	n := repl.New(repl.Config{
		Store:       s.store,
		Log:         s.log,
		BacklogSize: cfg.ReplBacklogSize,
		OutputLimit: func() limits.OutputLimit { return s.clientLimits().OutputBuffer.Get(limits.ClassReplica) },
		ReadLimits:  func() resp.Limits { return readLimits(s.clientLimits()) },
		Dial: func(addr string, timeout time.Duration) (net.Conn, error) {
			useTLS, _ := s.nodeTLS()
			return s.tls.Dial(addr, useTLS, timeout)
		},
		Auth:       s.replAuth,
		Priority:   s.replicaPriority,
		ListenPort: func() int { return s.tcpPort(false) },
		Cluster:    s.cluster,
		Snapshot:   s.snapshot,
	})
	s.conf.mu.Lock()
	n.SetMinReplicas(int64(s.conf.st.Config.MinReplicasToWrite), int64(s.conf.st.Config.MinReplicasMaxLag))
	s.conf.mu.Unlock()
	return n
}

// replLink is cl's replica link, made at its first REPLCONF or PSYNC.
func replLink(cl *client) *repl.Link {
	if cl.repl.link == nil {
		cl.repl.link = repl.NewLink(cl.nc, cl.id)
	}
	return cl.repl.link
}

// PSYNC replid offset: this connection becomes a replica link; the reply and
// the stream are written by serveReplica once the pipeline ends.
func cmdPsync(s *Server, cl *client, a [][]byte) {
	off, ok := integer.Parse(a[2])
	if !ok {
		off = -1
	}
	link := replLink(cl)
	neverHad, err := s.repl.Accept(link, string(a[1]), off)
	if err != nil {
		s.writeErr(cl, replyErr(err.Error()))
		return
	}
	if neverHad != "" {
		s.log.Warn("a replica's position was never this primary's; it takes a full copy",
			"replica", cl.nc.RemoteAddr().String(), "replid", quoted.Printable(a[1], 64), "offset", off, "why", neverHad)
	}
	cl.repl.start = true
	cl.repl.isLink.Store(true)
}

// REPLCONF listening-port <port> | capa <...> | ack <offset> | getack *
func cmdReplconf(s *Server, cl *client, a [][]byte) {
	if len(a)%2 == 0 {
		s.writeErr(cl, replyErr("ERR syntax error"))
		return
	}
	for i := 1; i < len(a); i += 2 {
		switch strings.ToLower(string(a[i])) {
		case "listening-port":
			p, ok := integer.Parse(a[i+1])
			if !ok || p < 0 || p > 65535 {
				s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
				return
			}
			replLink(cl).SetPort(int(p))
		case "ip-address":
			replLink(cl).SetIP(string(a[i+1]))
		case "capa", "rdb-only", "rdb-filter-only":
		case "ack", "getack":
			return // no reply, as Redis
		default:
			s.writeErr(cl, replyErr(fmt.Sprintf("ERR Unrecognized REPLCONF option: %s", quoted.Printable(a[i], 64))))
			return
		}
	}
	cl.wr.WriteString("OK")
}

// serveReplica runs a connection that sent PSYNC (repl.Node.Serve): the
// full copy if needed, then the stream; the connection is closed when it
// returns.
func (s *Server) serveReplica(cl *client) {
	s.repl.Serve(cl.repl.link)
}

// heartbeat runs replication's each second (repl.Node.Heartbeat) until the
// server closes.
func (s *Server) heartbeat() {
	s.every(time.Second, nil, func(time.Time) { s.repl.Heartbeat() })
}

// WAIT numreplicas timeout: the replicas that acknowledged every write made
// before it, once numreplicas have or timeout ms passed (0: no timeout).
func cmdWait(s *Server, cl *client, a [][]byte) {
	n, ok := integer.Parse(a[1])
	if !ok {
		s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
		return
	}
	ms, ok := integer.Parse(a[2])
	if !ok {
		s.writeErr(cl, replyErr("ERR timeout is not an integer or out of range"))
		return
	}
	if ms < 0 {
		s.writeErr(cl, replyErr("ERR timeout is negative"))
		return
	}
	if s.isReplica() {
		s.writeErr(cl, replyErr("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated."))
		return
	}
	cl.wr.WriteInt(s.repl.Wait(n, time.Duration(ms)*time.Millisecond))
}

// ROLE: the role, the offset and the peers, in Redis's shapes.
func cmdRole(s *Server, cl *client, a [][]byte) { s.repl.Status().WriteRole(cl.wr) }

// REPLICAOF host port | REPLICAOF NO ONE (and SLAVEOF).
func cmdReplicaof(s *Server, cl *client, a [][]byte) {
	if strings.EqualFold(string(a[1]), "no") && strings.EqualFold(string(a[2]), "one") {
		s.repl.Promote()
		cl.wr.WriteString("OK")
		return
	}
	port, ok := integer.Parse(a[2])
	if !ok || port < 0 || port > 65535 {
		s.writeErr(cl, replyErr("ERR Invalid master port"))
		return
	}
	// Inside EXEC the gate is held already (Sentinel promotes and demotes
	// inside MULTI/EXEC).
	if s.repl.ReplicaOf(string(a[1]), int(port), cl.ks.InExec()) {
		cl.wr.WriteString("OK Already connected to specified master")
		return
	}
	cl.wr.WriteString("OK")
}

// isReplica reports whether the server is a replica now.
func (s *Server) isReplica() bool { return s.store.Replica.Load() }

// errNoReplicas is Redis's reply to a write refused for want of good
// replicas (min-replicas-to-write: internal/repl's minreplicas.go).
var errNoReplicas = replyErr("NOREPLICAS Not enough good replicas to write.")

// enoughReplicas reports whether a write may run (repl.Node.EnoughReplicas).
func (s *Server) enoughReplicas() bool { return s.repl.EnoughReplicas() }

// setMinReplicas applies the min-replicas settings of cfg; publish calls
// it, and New once it made s.repl (initConfig's publish runs before).
func (s *Server) setMinReplicas(cfg *Config) {
	if s.repl != nil {
		s.repl.SetMinReplicas(int64(cfg.MinReplicasToWrite), int64(cfg.MinReplicasMaxLag))
	}
}

// execRefusal is EXEC's refusal, or nil: a queue that holds a write, on a
// primary without enough good replicas, is discarded with EXECABORT naming
// NOREPLICAS, before the queue's errors are considered, as in Redis.
func (s *Server) execRefusal(queued [][][]byte) error {
	if s.enoughReplicas() {
		return nil
	}
	for _, q := range queued {
		if cmd, _ := s.cmds.lookup(q); cmd != nil && cmd.write {
			return replyErr("EXECABORT Transaction discarded because of: " + errNoReplicas.Error())
		}
	}
	return nil
}

// replAuth is masteruser and masterauth in force: what a replica
// authenticates to its primary with.
func (s *Server) replAuth() (user, pass string) {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	return s.conf.st.Config.MasterUser, s.conf.st.Config.MasterAuth
}

// replicaOfSetting is replicaof's value now: "host port" of the primary, or
// "" for a primary (CONFIG REWRITE writes it, as Sentinel expects).
func (s *Server) replicaOfSetting() string {
	if host, port, ok := s.repl.Primary(); ok {
		return host + " " + strconv.Itoa(port)
	}
	return ""
}

// replicaPriority is INFO's slave_priority.
func (s *Server) replicaPriority() int {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	return max(s.conf.st.Config.ReplicaPriority, 0)
}
