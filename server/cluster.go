package server

import (
	"fmt"
	"net"

	"github.com/cuckoohash/cuckoo/server/internal/cluster"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// Cluster mode's commands and its check in the dispatcher. Cluster mode
// itself (the node's state and its file, the route decision, the slot
// locks, the CLUSTER replies, MIGRATE's sending) is internal/cluster's; its
// doc.go explains it. The handlers here parse, call it and write the reply.

// Sentinel errors, spelled as Redis spells them.
var (
	errClusterDisabled = replyErr("ERR This instance has cluster support disabled")
	errInvalidSlot     = replyErr("ERR Invalid slot")
)

// clusterCommands binds this file's commands to their rows of Redis's table, by name.
func clusterCommands() (b []binding) {
	b = append(b, binding{name: "cluster|slots", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cluster.WriteSlots(cl.wr, t, cl.localAddr())
	})})
	b = append(b, binding{name: "cluster|shards", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cluster.WriteShards(cl.wr, t, cl.localAddr())
	})})
	b = append(b, binding{name: "cluster|nodes", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cluster.WriteNodes(cl.wr, t, cl.localAddr())
	})})
	b = append(b, binding{name: "cluster|myid", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.wr.WriteBulkString(s.cluster.ID())
	})})
	b = append(b, binding{name: "cluster|info", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cluster.WriteInfo(cl.wr, t)
	})})
	b = append(b, binding{name: "cluster|keyslot", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.wr.WriteInt(topology.KeySlot(a[2]))
	})})
	b = append(b, binding{name: "cluster|countkeysinslot", run: clusterCmd(cmdClusterCountKeys)})
	b = append(b, binding{name: "cluster|getkeysinslot", run: clusterCmd(cmdClusterGetKeys)})
	b = append(b, binding{name: "cluster|help", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cluster.WriteHelp(cl.wr)
	})})
	b = append(b, binding{name: "asking", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.cluster.Asking = true // after clusterRedirect cleared it: for the next command
		cl.wr.WriteString("OK")
	})})
	b = append(b, binding{name: "readonly", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.cluster.Readonly = true
		cl.wr.WriteString("OK")
	})})
	b = append(b, binding{name: "readwrite", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.cluster.Readonly = false
		cl.wr.WriteString("OK")
	})})
	b = append(b, binding{name: "cuckoo.cluster|setconfig", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		if err := s.cluster.SetConfig(a[2]); err != nil {
			s.writeErr(cl, err)
			return
		}
		cl.wr.WriteString("OK")
	})})
	b = append(b, binding{name: "cuckoo.cluster|getconfig", run: clusterCmd(func(s *Server, cl *client, a [][]byte, t *topology.Map) {
		cl.wr.WriteBulk(cluster.ConfigJSON(t))
	})})
	return b
}

// clusterCmd wraps a cluster command: without cluster mode it answers as
// Redis does; with it, fn gets the topology in force.
func clusterCmd(fn func(s *Server, cl *client, a [][]byte, t *topology.Map)) handler {
	return func(s *Server, cl *client, a [][]byte) {
		if s.cluster == nil {
			s.writeErr(cl, errClusterDisabled)
			return
		}
		fn(s, cl, a, s.cluster.Topology())
	}
}

// initCluster sets up cluster mode: the node from cluster.json in the data
// directory (internal/cluster's New).
func (s *Server) initCluster(cfg Config) error {
	c, err := cluster.New(cfg.Dir, cfg.ClusterEmulated, s.log)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.cluster = c
	return nil
}

// localAddr is the address cl reached this server at, nil if unknown: a
// cluster node's own address where its topology leaves it out.
func (cl *client) localAddr() net.Addr {
	if cl.nc == nil {
		return nil
	}
	return cl.nc.LocalAddr()
}

// clusterRedirect is the cluster check of exec: the error that sends cmd
// elsewhere (internal/cluster's Route), or nil if this node runs it; then,
// if slot >= 0, the caller holds that slot's lock shared and releases it
// after the command has run. MIGRATE is not checked: it takes its keys'
// slot locks itself. ASKING lasts one command, or, sent before MULTI, the
// whole transaction. A transaction is checked command by command as they
// are queued (a redirect makes EXEC answer EXECABORT, as any refusal does),
// and as a whole when EXEC comes: its keys must share a slot, or EXEC is
// refused and the transaction discarded; the queue EXEC then runs is not
// checked again.
func (s *Server) clusterRedirect(cl *client, cmd *bound, args [][]byte) (slot int, refusal error) {
	if cl.ks.InExec() || cmd.spec.Name == "migrate" {
		return -1, nil // EXEC is running its queue, under its slot's lock
	}
	c := cluster.Command{Asking: cl.cluster.Asking || cmd.asking, Readonly: cl.cluster.Readonly, Write: cmd.write}
	if cmd.spec.Name != "multi" && (!cl.tx.inMulti.Load() || cmd.inMulti) {
		cl.cluster.Asking = false
	}
	var sole [1][]byte
	switch {
	case cmd.soleKey > 0: // the common case, with no slice to build
		if cmd.soleKey < len(args) {
			sole[0] = args[cmd.soleKey]
			c.Keys = sole[:]
		}
	case cmd.spec.Name == "exec":
		if !cl.tx.inMulti.Load() || cl.tx.multiErr {
			return -1, nil // EXEC answers
		}
		for _, q := range cl.tx.queued {
			if b, _ := s.cmds.lookup(q); b != nil && len(b.spec.Keys) > 0 {
				for _, p := range b.spec.KeyPositions(q) {
					c.Keys = append(c.Keys, q[p])
				}
				c.Write = c.Write || b.write
			}
		}
	case len(cmd.spec.Keys) == 0:
		return -1, nil
	default:
		for _, p := range cmd.spec.KeyPositions(args) {
			c.Keys = append(c.Keys, args[p])
		}
	}
	if len(c.Keys) == 0 {
		return -1, nil
	}
	slot, err := cluster.SlotOf(c.Keys)
	if err == nil {
		l := s.cluster.SlotLock(slot)
		l.RLock()
		c.Local = cl.localAddr()
		if err = cluster.Route(s.cluster.Topology(), s.store, slot, &c); err != nil {
			l.RUnlock()
		}
	}
	if err == nil {
		return slot, nil
	}
	if cmd.spec.Name == "exec" {
		// As Redis does, a refused EXEC discards the transaction.
		cl.endMulti()
		cl.unwatch()
	}
	return -1, err
}

// slotArg parses a slot argument: -1 if it is not one.
func slotArg(b []byte) int {
	n, ok := integer.Parse(b)
	if !ok || n < 0 || n >= topology.Slots {
		return -1
	}
	return int(n)
}

func cmdClusterCountKeys(s *Server, cl *client, a [][]byte, t *topology.Map) {
	slot := slotArg(a[2])
	if slot < 0 {
		s.writeErr(cl, errInvalidSlot)
		return
	}
	cl.wr.WriteInt(cluster.CountKeysInSlot(s.store, slot))
}

func cmdClusterGetKeys(s *Server, cl *client, a [][]byte, t *topology.Map) {
	slot := slotArg(a[2])
	count, ok := integer.Parse(a[3])
	if slot < 0 || !ok || count < 0 {
		s.writeErr(cl, replyErr("ERR Invalid slot or number of keys"))
		return
	}
	keys := cluster.KeysInSlot(s.store, slot, count)
	cl.wr.WriteArray(len(keys))
	for _, k := range keys {
		cl.wr.WriteBulkString(k)
	}
}
