package server

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// TIME, SHUTDOWN and MONITOR.

// adminCommands binds this file's commands to their rows of Redis's table, by name.
func adminCommands() (b []binding) {
	b = append(b, binding{name: "time", run: cmdTime})
	b = append(b, binding{name: "shutdown", run: cmdShutdown})
	b = append(b, binding{name: "monitor", run: cmdMonitor})
	return b
}

// TIME: Unix seconds and microseconds, as bulk strings.
func cmdTime(s *Server, cl *client, a [][]byte) {
	now := time.Now()
	cl.wr.WriteArray(2)
	cl.wr.WriteBulkString(strconv.FormatInt(now.Unix(), 10))
	cl.wr.WriteBulkString(strconv.Itoa(now.Nanosecond() / 1000))
}

// shutdownSave is whether Shutdown takes a final snapshot, as SHUTDOWN
// chose.
type shutdownSave int32

const (
	saveIfChanged shutdownSave = iota // if anything changed since the last (no option, or a signal)
	saveAlways                        // even if nothing changed (SAVE)
	saveNever                         // none (NOSAVE): the log holds every write
)

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: stops the server as SIGTERM
// does (see Shutdown); the connection closes with no reply. NOSAVE skips the
// final snapshot, and loses nothing: the log holds every acknowledged write.
// SAVE takes it even if nothing changed. NOW and FORCE are accepted: this
// server never waits for replicas, and a failed snapshot never stops it.
func cmdShutdown(s *Server, cl *client, a [][]byte) {
	save := saveIfChanged
	for _, o := range a[1:] {
		switch strings.ToUpper(string(o)) {
		case "NOSAVE":
			save = saveNever
		case "SAVE":
			save = saveAlways
		case "NOW", "FORCE":
		case "ABORT":
			if len(a) != 2 {
				s.writeErr(cl, replyErr("ERR syntax error"))
				return
			}
			s.writeErr(cl, replyErr("ERR No shutdown in progress."))
			return
		default:
			s.writeErr(cl, replyErr("ERR syntax error"))
			return
		}
	}
	s.log.Info("SHUTDOWN requested", "client", cl.id, "addr", cl.nc.RemoteAddr().String())
	s.finalSave.Store(save)
	cl.quit = true
	cl.wr.Truncate(0) // no reply: the connection closes, as Redis's does
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil && !errors.Is(err, ErrServerClosed) {
			s.log.Error("shutdown", "err", err)
		}
	}()
}

// monitorQueue bounds the lines waiting for one MONITOR client; a client
// that falls this far behind is disconnected rather than slowing the server.
const monitorQueue = 4096

// monitors are the clients in MONITOR mode.
type monitors struct {
	mu  sync.Mutex
	chs map[*client]chan []byte
	n   atomic.Int64 // len(chs), read on every command
}

// MONITOR: from its reply on, the connection receives a line for every
// command any client runs (but AUTH and HELLO, whose arguments may hold
// passwords, and admin commands, as Redis).
func cmdMonitor(s *Server, cl *client, a [][]byte) {
	if cl.tx.inMulti.Load() {
		s.writeErr(cl, replyErr("ERR MONITOR isn't allowed inside a transaction"))
		return
	}
	cl.wr.WriteString("OK")
	cl.monitor = make(chan []byte, monitorQueue)
	s.mon.mu.Lock()
	if s.mon.chs == nil {
		s.mon.chs = map[*client]chan []byte{}
	}
	s.mon.chs[cl] = cl.monitor
	s.mon.n.Store(int64(len(s.mon.chs)))
	s.mon.mu.Unlock()
}

// feedMonitors sends one command's line to every monitor.
func (s *Server) feedMonitors(cl *client, spec *command.Spec, args [][]byte) {
	if spec.Flags&(command.Admin|command.SkipMonitor|command.NoAuth) != 0 {
		return
	}
	now := time.Now()
	line := make([]byte, 0, 64)
	line = append(line, '+')
	line = strconv.AppendInt(line, now.Unix(), 10)
	line = append(line, '.')
	us := strconv.Itoa(now.Nanosecond() / 1000)
	line = append(line, "000000"[len(us):]...)
	line = append(line, us...)
	line = append(line, " [0 "...)
	line = append(line, cl.nc.RemoteAddr().String()...)
	line = append(line, ']')
	for _, a := range args {
		line = append(line, ' ')
		line = append(line, quoted.Quote(string(a))...) // as Redis's sdscatrepr
	}
	line = append(line, '\r', '\n')
	s.mon.mu.Lock()
	for m, ch := range s.mon.chs {
		select {
		case ch <- line:
		default:
			s.log.Warn("closing a MONITOR client that fell behind", "client", m.id)
			s.dropMonitorLocked(m)
			m.nc.Close()
		}
	}
	s.mon.mu.Unlock()
}

func (s *Server) dropMonitorLocked(m *client) {
	if ch, ok := s.mon.chs[m]; ok {
		delete(s.mon.chs, m)
		close(ch)
		s.mon.n.Store(int64(len(s.mon.chs)))
	}
}

// serveMonitor runs a connection in MONITOR mode until it or the server
// closes: its input is read and dropped (only to see the connection end), its
// lines are written as they come.
func (s *Server) serveMonitor(cl *client) {
	gone := make(chan struct{})
	go func() {
		buf := make([]byte, 512)
		for {
			if _, err := cl.nc.Read(buf); err != nil {
				close(gone)
				return
			}
		}
	}()
	defer func() {
		s.mon.mu.Lock()
		s.dropMonitorLocked(cl)
		s.mon.mu.Unlock()
		cl.nc.Close()
		<-gone
	}()
	for {
		select {
		case line, ok := <-cl.monitor:
			if !ok {
				return
			}
			cl.wr.WriteRaw(line)
			for len(cl.monitor) > 0 {
				cl.wr.WriteRaw(<-cl.monitor)
			}
			if cl.wr.Flush() != nil {
				return
			}
		case <-gone: // closed by the client, CLIENT KILL or Shutdown's deadline
			return
		}
	}
}
