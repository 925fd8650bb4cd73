package server

import (
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/peer"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// MIGRATE, as Redis's: it moves keys to another server, each atomically:
// the key's filter is sent in a RESTORE-ASKING (the DUMP payload) and
// deleted here once the target has answered OK. Slot migration (cuckoo
// cluster move-slots) is made of it.
//
// Protocol. Each key is moved holding, in this order (every writer's order):
//
//  1. in cluster mode, its slot's lock exclusively (cluster.slotLocks):
//     every command on a key of that slot holds the same lock shared from its
//     redirect check to its reply, so none sees the key here and then finds
//     it gone, or creates it again here after it moved: a lookup that found
//     the key here answers from it, one that did not was sent to the target
//     (-ASK) only after the key was there;
//  2. the gate, shared, as every write;
//  3. the key's writer lock, so no write slips in between the payload and
//     the drop.
//
// A filter larger than migrateWhole goes in CF.SCANDUMP's chunks instead of
// one payload (moveChunked). The linearization point of a key's move is its
// drop here (logged, and replicated as a DEL), which follows the target's
// OK: an acknowledged write is in the payload or was made on the target. Holding the locks across a
// round trip to the target is Redis's own trade (MIGRATE blocks its whole
// server): the timeout argument bounds it. Connections to targets are kept
// between MIGRATEs (internal/peer); with tls-cluster yes they are TLS
// (tls.go's dialNode).

// clusterMigrateCommands binds this file's commands to their rows of Redis's table, by name.
func clusterMigrateCommands() (b []binding) {
	b = append(b, binding{name: "migrate", run: cmdMigrate})
	b = append(b, binding{name: "restore-asking", run: cmdRestore}) // RESTORE, allowed on an importing slot (Asking flag)
	return b
}

// migrateArgs is a parsed MIGRATE.
type migrateArgs struct {
	addr          string
	db            int64
	timeout       time.Duration
	copy, replace bool
	auth          [][]byte // AUTH's arguments, if any
	keys          [][]byte
	tls           bool // tls-cluster, when MIGRATE began
}

// parseMigrate parses MIGRATE host port key|"" destination-db timeout
// [COPY] [REPLACE] [AUTH password | AUTH2 username password] [KEYS key...]
// with Redis's errors.
func parseMigrate(a [][]byte) (*migrateArgs, error) {
	m := &migrateArgs{}
	port, ok := integer.Parse(a[2])
	if !ok || port < 1 || port > 65535 {
		return nil, errNotInteger
	}
	m.addr = net.JoinHostPort(string(a[1]), strconv.FormatInt(port, 10))
	var timeout int64
	if m.db, ok = integer.Parse(a[4]); !ok {
		return nil, errNotInteger
	}
	if timeout, ok = integer.Parse(a[5]); !ok {
		return nil, errNotInteger
	}
	if timeout <= 0 {
		timeout = 1000 // Redis's
	}
	m.timeout = time.Duration(timeout) * time.Millisecond
	keysAt := 0
	for j := 6; j < len(a) && keysAt == 0; j++ {
		more := len(a) - j - 1
		switch opt := strings.ToLower(string(a[j])); {
		case opt == "copy":
			m.copy = true
		case opt == "replace":
			m.replace = true
		case opt == "auth" && more >= 1:
			m.auth = [][]byte{[]byte("AUTH"), a[j+1]}
			j++
		case opt == "auth2" && more >= 2:
			m.auth = [][]byte{[]byte("AUTH"), a[j+1], a[j+2]}
			j += 2
		case opt == "keys":
			if len(a[3]) != 0 {
				return nil, replyErr("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
			}
			keysAt = j + 1
		default:
			return nil, replyErr("ERR syntax error")
		}
	}
	if keysAt > 0 {
		m.keys = a[keysAt:]
	} else {
		m.keys = a[3:4]
	}
	return m, nil
}

func cmdMigrate(s *Server, cl *client, a [][]byte) {
	if s.cluster != nil && cl.ks.InExec() {
		// EXEC holds its slot's lock shared, which a move takes
		// exclusively: in a transaction it would wait for itself.
		s.writeErr(cl, replyErr("ERR MIGRATE inside a transaction is not supported in cluster mode"))
		return
	}
	m, err := parseMigrate(a)
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	// Only keys that are here are moved: none is NOKEY, and no connection.
	present := m.keys[:0:0]
	for _, k := range m.keys {
		if s.store.Present(k) {
			present = append(present, k)
		}
	}
	if len(present) == 0 {
		cl.wr.WriteString("NOKEY")
		return
	}
	_, m.tls = s.nodeTLS()
	target := peer.Key{Addr: m.addr, TLS: m.tls}
	conn, err := s.migrate.Take(target, func() (net.Conn, error) { return s.dialNode(m.addr, m.tls, m.timeout) })
	if err != nil {
		s.log.Warn("MIGRATE: connecting to the target failed", "target", m.addr, "tls", m.tls, "err", err)
		s.writeErr(cl, peer.ErrConnect)
		return
	}
	err = s.migrateKeys(cl, conn, m, present)
	s.migrate.Put(target, conn)
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

// migrateKeys authenticates, selects the database, and moves keys one by
// one (see the protocol above), stopping at the first error: the keys moved
// before it stay moved, as Redis's.
func (s *Server) migrateKeys(cl *client, conn *peer.Conn, m *migrateArgs, keys [][]byte) error {
	if err := m.prelude(conn); err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.migrateKey(cl, conn, m, k); err != nil {
			return err
		}
	}
	return nil
}

// prelude authenticates and selects the database on c, as MIGRATE asks.
func (m *migrateArgs) prelude(c *peer.Conn) error {
	if m.auth != nil {
		if err := c.Call(m.timeout, m.auth...); err != nil {
			return err
		}
	}
	if m.db != 0 {
		return c.Call(m.timeout, []byte("SELECT"), []byte(strconv.FormatInt(m.db, 10)))
	}
	return nil
}

// migrateKey moves one key, if it is still here.
func (s *Server) migrateKey(cl *client, conn *peer.Conn, m *migrateArgs, key []byte) error {
	if s.cluster != nil {
		l := &s.cluster.slotLocks[topology.KeySlot(key)]
		l.Lock()
		defer l.Unlock()
	}
	// The key space sends the key locked, then drops it unless COPY.
	return s.store.Migrate(&cl.ks, key, m.copy, func(c *keyspace.Entry, ttl int64) error {
		if c.PayloadBound() > migrateWhole {
			return s.moveChunked(conn, m, string(key), c, ttl)
		}
		return s.moveWhole(conn, m, string(key), c, ttl)
	})
}

// moveWhole sends c, key k's filter, to the target as one DUMP payload in
// a RESTORE-ASKING, with its deadline (ttl ms from now, 0 for none).
// Preconditions: c locked by the key space's Migrate.
func (s *Server) moveWhole(conn *peer.Conn, m *migrateArgs, k string, c *keyspace.Entry, ttl int64) error {
	n := 2 * c.PayloadBound()
	if err := s.store.ChargeChunk(n); err != nil {
		return err
	}
	defer s.store.ReleaseChunk(n)
	args := [][]byte{[]byte("RESTORE-ASKING"), []byte(k), []byte(strconv.FormatInt(ttl, 10)), c.DumpPayload()}
	if m.replace {
		args = append(args, []byte("REPLACE"))
	}
	return conn.Call(m.timeout, args...)
}

// migrateWhole is the largest filter MIGRATE sends as one DUMP payload; a
// larger one goes in CF.SCANDUMP's chunks (moveChunked), so that neither
// side holds a second copy of it, nor meets proto-max-bulk-len (512 MiB)
// or a log record's bound (1 GiB). A variable for tests.
var migrateWhole uint64 = 64 << 20

// moveChunked sends c, key k's filter, to the target as CF.SCANDUMP's
// chunks, each in a CF.LOADCHUNK (after ASKING in cluster mode: the target
// is importing the slot), then its deadline (ttl ms from now, 0 for none).
// The key is still here, under its lock, so no client reaches the target
// for it meanwhile.
// If a chunk fails, the partial key is deleted on the target. REPLACE
// deletes the target's key first. Preconditions: as moveLocked's.
func (s *Server) moveChunked(conn *peer.Conn, m *migrateArgs, k string, c *keyspace.Entry, ttl int64) error {
	key := []byte(k)
	asking := func(args ...[]byte) error {
		if s.cluster != nil { // a cluster node's target is one too
			if err := conn.Call(m.timeout, []byte("ASKING")); err != nil {
				return err
			}
		}
		return conn.Call(m.timeout, args...)
	}
	if m.replace {
		if err := asking([]byte("DEL"), key); err != nil {
			return err
		}
	}
	// undo deletes the partial key a failure after the header leaves.
	undo := func(err error) error {
		if !conn.Broken() && asking([]byte("DEL"), key) == nil {
			return err
		}
		// The connection failed (or the target closed it after its
		// error): the partial key, refused to writes until its last
		// chunk, is deleted through a new one (best effort).
		nc, derr := s.dialNode(m.addr, m.tls, m.timeout)
		if derr != nil {
			s.log.Warn("MIGRATE: a partial key may remain on the target", "target", m.addr, "key", k, "err", derr)
			return err
		}
		defer nc.Close()
		conn = peer.NewConn(nc)
		if m.prelude(conn) == nil {
			asking([]byte("DEL"), key)
		}
		return err
	}
	for iter := int64(0); ; {
		n := 2 * c.ChunkBound(iter)
		if iter == 0 {
			n = 4 << 10 // the header: its stash holds at most 64 hashes
		}
		if err := s.store.ChargeChunk(n); err != nil {
			if iter > 0 {
				return undo(err)
			}
			return err // nothing sent yet
		}
		next, chunk := c.ScanDump(iter)
		if next == 0 {
			s.store.ReleaseChunk(n)
			break
		}
		err := asking([]byte("CF.LOADCHUNK"), key, []byte(strconv.FormatInt(next, 10)), chunk)
		s.store.ReleaseChunk(n)
		if err != nil {
			if iter > 0 {
				return undo(err)
			}
			if strings.Contains(err.Error(), "item exists") {
				return peer.TargetError("BUSYKEY Target key name already exists.") // as RESTORE says it
			}
			return err // the header was refused: nothing to undo
		}
		iter = next
	}
	if ttl > 0 {
		if err := asking([]byte("PEXPIRE"), key, []byte(strconv.FormatInt(ttl, 10))); err != nil {
			return undo(err)
		}
	}
	return nil
}
