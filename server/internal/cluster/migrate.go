package cluster

import (
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
	"github.com/cuckoohash/cuckoo/server/internal/peer"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// MIGRATE's sending, as Redis's: keys go to another server, each
// atomically: the key's filter is sent in a RESTORE-ASKING (the DUMP
// payload) and deleted here once the target has answered OK. Slot migration
// (cuckoo cluster move-slots) is made of it; MIGRATE works without cluster
// mode too. The locks each key's move takes, and why, are doc.go's
// ("Moving a key").

// MaxWhole is the largest filter MIGRATE sends as one DUMP payload; a
// larger one goes in CF.SCANDUMP's chunks (moveChunked), so that neither
// side holds a second copy of it, nor meets proto-max-bulk-len (512 MiB)
// or a log record's bound (1 GiB).
const MaxWhole = 64 << 20

// Migration is one MIGRATE: where its keys go, and how.
type Migration struct {
	Addr          string        // the target's host:port
	TLS           bool          // connect over TLS (tls-cluster, when MIGRATE began)
	DB            int64         // the target's database, SELECTed unless 0
	Timeout       time.Duration // each call's bound
	Copy, Replace bool          // keep the keys here; replace the target's
	Auth          [][]byte      // AUTH and its arguments, sent first; nil for none
	Keys          [][]byte      // the keys to move
}

// Mover moves keys for MIGRATE: the server's pieces it works with.
type Mover struct {
	Store *keyspace.Store
	// Node is the cluster node, whose slot locks a move takes exclusively
	// and whose targets import the slot (chunks go after ASKING); nil
	// without cluster mode.
	Node *Node
	Pool *peer.Pool // connections to targets, kept between MIGRATEs
	// Dial connects to another node, over TLS if useTLS: the server's,
	// which holds the TLS configuration.
	Dial  func(addr string, useTLS bool, timeout time.Duration) (net.Conn, error)
	Log   *slog.Logger
	Whole uint64 // the largest filter sent as one payload: MaxWhole, or less in tests
}

// Move moves m's keys to m's target, through a connection of the pool: it
// authenticates, selects the database, and moves the keys one by one,
// stopping at the first error: the keys moved before it stay moved, as
// Redis's. A key no longer here is skipped. w is the client's side of its
// writes (the drops are logged as its). Its errors are replies (peer's
// IOERR texts, the target's errors, the key space's).
func (mv *Mover) Move(w *keyspace.Writer, m *Migration) error {
	target := peer.Key{Addr: m.Addr, TLS: m.TLS}
	conn, err := mv.Pool.Take(target, func() (net.Conn, error) { return mv.Dial(m.Addr, m.TLS, m.Timeout) })
	if err != nil {
		mv.Log.Warn("MIGRATE: connecting to the target failed", "target", m.Addr, "tls", m.TLS, "err", err)
		return peer.ErrConnect
	}
	err = mv.moveKeys(w, conn, m)
	mv.Pool.Put(target, conn)
	return err
}

func (mv *Mover) moveKeys(w *keyspace.Writer, conn *peer.Conn, m *Migration) error {
	if err := m.prelude(conn); err != nil {
		return err
	}
	for _, k := range m.Keys {
		if err := mv.moveKey(w, conn, m, k); err != nil {
			return err
		}
	}
	return nil
}

// prelude authenticates and selects the database on c, as MIGRATE asks.
func (m *Migration) prelude(c *peer.Conn) error {
	if m.Auth != nil {
		if err := c.Call(m.Timeout, m.Auth...); err != nil {
			return err
		}
	}
	if m.DB != 0 {
		return c.Call(m.Timeout, []byte("SELECT"), []byte(strconv.FormatInt(m.DB, 10)))
	}
	return nil
}

// moveKey moves one key, if it is still here.
func (mv *Mover) moveKey(w *keyspace.Writer, conn *peer.Conn, m *Migration, key []byte) error {
	if mv.Node != nil {
		l := mv.Node.SlotLock(topology.KeySlot(key))
		l.Lock()
		defer l.Unlock()
	}
	// The key space sends the key locked, then drops it unless COPY.
	return mv.Store.Migrate(w, key, m.Copy, func(c *keyspace.Entry, ttl int64) error {
		if c.PayloadBound() > mv.Whole {
			return mv.moveChunked(conn, m, string(key), c, ttl)
		}
		return mv.moveWhole(conn, m, string(key), c, ttl)
	})
}

// moveWhole sends c, key k's filter, to the target as one DUMP payload in
// a RESTORE-ASKING, with its deadline (ttl ms from now, 0 for none).
// Preconditions: c locked by the key space's Migrate.
func (mv *Mover) moveWhole(conn *peer.Conn, m *Migration, k string, c *keyspace.Entry, ttl int64) error {
	n := 2 * c.PayloadBound()
	if err := mv.Store.ChargeChunk(n); err != nil {
		return err
	}
	defer mv.Store.ReleaseChunk(n)
	args := [][]byte{[]byte("RESTORE-ASKING"), []byte(k), []byte(strconv.FormatInt(ttl, 10)), c.DumpPayload()}
	if m.Replace {
		args = append(args, []byte("REPLACE"))
	}
	return conn.Call(m.Timeout, args...)
}

// moveChunked sends c, key k's filter, to the target as CF.SCANDUMP's
// chunks, each in a CF.LOADCHUNK (after ASKING in cluster mode: the target
// is importing the slot), then its deadline (ttl ms from now, 0 for none).
// The key is still here, under its lock, so no client reaches the target
// for it meanwhile.
// If a chunk fails, the partial key is deleted on the target. REPLACE
// deletes the target's key first. Preconditions: as moveWhole's.
func (mv *Mover) moveChunked(conn *peer.Conn, m *Migration, k string, c *keyspace.Entry, ttl int64) error {
	key := []byte(k)
	asking := func(args ...[]byte) error {
		if mv.Node != nil { // a cluster node's target is one too
			if err := conn.Call(m.Timeout, []byte("ASKING")); err != nil {
				return err
			}
		}
		return conn.Call(m.Timeout, args...)
	}
	if m.Replace {
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
		nc, derr := mv.Dial(m.Addr, m.TLS, m.Timeout)
		if derr != nil {
			mv.Log.Warn("MIGRATE: a partial key may remain on the target", "target", m.Addr, "key", k, "err", derr)
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
		if err := mv.Store.ChargeChunk(n); err != nil {
			if iter > 0 {
				return undo(err)
			}
			return err // nothing sent yet
		}
		next, chunk := c.ScanDump(iter)
		if next == 0 {
			mv.Store.ReleaseChunk(n)
			break
		}
		err := asking([]byte("CF.LOADCHUNK"), key, []byte(strconv.FormatInt(next, 10)), chunk)
		mv.Store.ReleaseChunk(n)
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
