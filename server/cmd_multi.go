package server

import (
	"sync/atomic"

	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//
// Protocol. After MULTI a client's commands are checked (name, arity, size,
// permission) and queued, not run; an error at that point makes EXEC answer
// EXECABORT. EXEC takes the store's gate exclusively, so no write of another
// client runs until it is done: it checks the watched keys, runs the queue
// (each command's reply joins EXEC's array), gathers the ops they logged and
// appends them as one log record (opMulti), then releases the gate. A crash
// leaves the record whole or absent (each record is checksummed), so a
// restart replays all of a transaction or none of it.
//
// Linearization point: the gate's exclusive lock. Lock-free lookups
// (CF.EXISTS, CF.MEXISTS) do not take the gate, so they may see some of a
// transaction's inserts before EXEC returns: for a filter, an item reported
// present a little early; nothing a transaction deletes is reported absent
// before the transaction runs (see doc.go, differences from Redis).
//
// WATCH records each key's filter (nil when missing) and its version, which
// every logged change bumps (the key space's runLocked); EXEC aborts, answering a null
// array, if any watched key's filter or version differs.

// transaction is a client's transaction. inMulti is set after MULTI; queued
// are the commands queued (nqueued their count, for CLIENT LIST); multiErr
// is set if one was refused. watched are the keys WATCH recorded (watching
// their count, for CLIENT LIST and INFO). The atomics are read by other
// connections; the rest is the connection's goroutine's own.
type transaction struct {
	inMulti  atomic.Bool
	queued   [][][]byte
	nqueued  atomic.Int32
	multiErr bool
	watched  []keyspace.Watch
	watching atomic.Int32
}

// multiCommands binds this file's commands to their rows of Redis's table, by name.
func multiCommands() (b []binding) {
	b = append(b, binding{name: "multi", run: cmdMulti})
	b = append(b, binding{name: "exec", run: cmdExec})
	b = append(b, binding{name: "discard", run: cmdDiscard})
	b = append(b, binding{name: "watch", run: cmdWatch})
	b = append(b, binding{name: "unwatch", run: func(s *Server, cl *client, a [][]byte) { cl.unwatch(); cl.wr.WriteString("OK") }})
	return b
}

// runsInMulti reports whether a command runs at once inside MULTI rather than
// being queued.
func runsInMulti(spec *command.Spec) bool {
	switch spec.Name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// queue adds a command to cl's transaction; args are copied, since they
// alias the reader's buffer.
func (cl *client) queue(args [][]byte) {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	q := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		q[i] = buf[len(buf)-len(a):]
	}
	cl.tx.queued = append(cl.tx.queued, q)
	cl.tx.nqueued.Store(int32(len(cl.tx.queued)))
	cl.mem.Queue(n) // published at the pipeline's end (clientmem.go)
}

func (cl *client) endMulti() {
	cl.tx.queued = nil
	cl.mem.ClearQueue()
	cl.tx.nqueued.Store(0)
	cl.tx.multiErr = false
	cl.tx.inMulti.Store(false)
}

func (cl *client) unwatch() {
	cl.tx.watched = nil
	cl.tx.watching.Store(0)
}

func cmdMulti(s *Server, cl *client, a [][]byte) {
	if cl.tx.inMulti.Load() {
		s.writeErr(cl, replyErr("ERR MULTI calls can not be nested"))
		return
	}
	cl.tx.inMulti.Store(true)
	cl.wr.WriteString("OK")
}

func cmdDiscard(s *Server, cl *client, a [][]byte) {
	if !cl.tx.inMulti.Load() {
		s.writeErr(cl, replyErr("ERR DISCARD without MULTI"))
		return
	}
	cl.endMulti()
	cl.unwatch()
	cl.wr.WriteString("OK")
}

func cmdWatch(s *Server, cl *client, a [][]byte) {
	if cl.tx.inMulti.Load() {
		s.writeErr(cl, replyErr("ERR WATCH inside MULTI is not allowed"))
		return
	}
	for _, k := range a[1:] {
		cl.tx.watched = append(cl.tx.watched, s.store.Watch(k))
	}
	cl.tx.watching.Store(int32(len(cl.tx.watched)))
	cl.wr.WriteString("OK")
}

func cmdExec(s *Server, cl *client, a [][]byte) {
	if !cl.tx.inMulti.Load() {
		s.writeErr(cl, replyErr("ERR EXEC without MULTI"))
		return
	}
	queued, failed := cl.tx.queued, cl.tx.multiErr
	cl.endMulti()
	defer cl.unwatch()
	if err := s.execRefusal(queued); err != nil {
		s.writeErr(cl, err)
		return
	}
	if failed {
		s.writeErr(cl, replyErr("EXECABORT Transaction discarded because of previous errors."))
		return
	}
	ran := s.store.Exec(&cl.ks, cl.tx.watched, func() {
		cl.wr.WriteArray(len(queued))
		for _, q := range queued {
			s.exec(cl, q)
		}
	})
	if !ran {
		cl.wr.WriteNullArray()
	}
}
