package server

import (
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
)

// MIGRATE, as Redis's: the handler parses Redis's syntax and answers;
// internal/cluster's Mover moves the keys (its doc.go, "Moving a key", has
// the locks each move takes).

// clusterMigrateCommands binds this file's commands to their rows of Redis's table, by name.
func clusterMigrateCommands() (b []binding) {
	b = append(b, binding{name: "migrate", run: cmdMigrate})
	b = append(b, binding{name: "restore-asking", run: cmdRestore}) // RESTORE, allowed on an importing slot (Asking flag)
	return b
}

// parseMigrate parses MIGRATE host port key|"" destination-db timeout
// [COPY] [REPLACE] [AUTH password | AUTH2 username password] [KEYS key...]
// with Redis's errors.
func parseMigrate(a [][]byte) (*cluster.Migration, error) {
	m := &cluster.Migration{}
	port, ok := integer.Parse(a[2])
	if !ok || port < 1 || port > 65535 {
		return nil, errNotInteger
	}
	m.Addr = net.JoinHostPort(string(a[1]), strconv.FormatInt(port, 10))
	var timeout int64
	if m.DB, ok = integer.Parse(a[4]); !ok {
		return nil, errNotInteger
	}
	if timeout, ok = integer.Parse(a[5]); !ok {
		return nil, errNotInteger
	}
	if timeout <= 0 {
		timeout = 1000 // Redis's
	}
	m.Timeout = time.Duration(timeout) * time.Millisecond
	keysAt := 0
	for j := 6; j < len(a) && keysAt == 0; j++ {
		more := len(a) - j - 1
		switch opt := strings.ToLower(string(a[j])); {
		case opt == "copy":
			m.Copy = true
		case opt == "replace":
			m.Replace = true
		case opt == "auth" && more >= 1:
			m.Auth = [][]byte{[]byte("AUTH"), a[j+1]}
			j++
		case opt == "auth2" && more >= 2:
			m.Auth = [][]byte{[]byte("AUTH"), a[j+1], a[j+2]}
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
		m.Keys = a[keysAt:]
	} else {
		m.Keys = a[3:4]
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
	present := m.Keys[:0:0]
	for _, k := range m.Keys {
		if s.store.Present(k) {
			present = append(present, k)
		}
	}
	if len(present) == 0 {
		cl.wr.WriteString("NOKEY")
		return
	}
	m.Keys = present
	_, m.TLS = s.nodeTLS()
	mv := cluster.Mover{Store: s.store, Node: s.cluster, Pool: &s.migrate, Dial: s.tls.Dial, Log: s.log, Whole: migrateWhole}
	if err := mv.Move(&cl.ks, m); err != nil {
		s.writeErr(cl, err)
		return
	}
	cl.wr.WriteString("OK")
}

// migrateWhole is the largest filter MIGRATE sends as one DUMP payload
// (cluster.MaxWhole). A variable for tests.
var migrateWhole uint64 = cluster.MaxWhole
