package server

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/monitor"
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

// MONITOR: from its reply on, the connection receives a line for every
// command any client runs (but AUTH and HELLO, whose arguments may hold
// passwords, and admin commands, as Redis).
func cmdMonitor(s *Server, cl *client, a [][]byte) {
	if cl.tx.inMulti.Load() {
		s.writeErr(cl, replyErr("ERR MONITOR isn't allowed inside a transaction"))
		return
	}
	cl.wr.WriteString("OK")
	cl.monitor = s.mon.Add(cl)
}

// feedMonitors sends one command's line to every monitor (internal/monitor).
func (s *Server) feedMonitors(cl *client, spec *command.Spec, args [][]byte) {
	if spec.Flags&(command.Admin|command.SkipMonitor|command.NoAuth) != 0 {
		return
	}
	s.mon.Feed(monitor.Line(time.Now(), cl.nc.RemoteAddr().String(), args), func(m *client) {
		s.log.Warn("closing a MONITOR client that fell behind", "client", m.id)
		m.nc.Close()
	})
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
		s.mon.Remove(cl)
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
