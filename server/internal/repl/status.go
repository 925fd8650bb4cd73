package repl

import (
	"fmt"
	"strconv"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// Status is the replication state ROLE and INFO's Replication section
// report, taken at one moment (Node.Status). The server writes the
// replies from it.
type Status struct {
	Primary  *PrimaryStatus // as a replica, its link to its primary; nil for a primary
	Replicas []ReplicaStatus
	// GoodReplicas is min_slaves_good_slaves, shown if ShowGood (while
	// both min-replicas settings are set, as Redis shows it).
	GoodReplicas int64
	ShowGood     bool

	ID, ID2      string // master_replid, master_replid2
	Offset, Off2 int64  // master_repl_offset, second_repl_offset
	// The backlog: repl_backlog_active, repl_backlog_size,
	// repl_backlog_first_byte_offset, repl_backlog_histlen.
	BacklogActive                          bool
	BacklogSize, BacklogStart, BacklogHist int64
}

// PrimaryStatus is a replica's link to its primary, as ROLE and INFO report
// it.
type PrimaryStatus struct {
	Host  string
	Port  int
	State PrimaryState
	// LastIOAgo is the seconds since the primary last sent anything; -1
	// if it never did.
	LastIOAgo int
	Syncing   bool // a full copy is being loaded
	Priority  int  // slave_priority
	// master_full_syncs, master_position_refused, master_stream_errors
	FullSyncs, PositionRefused, StreamErrors int64
}

// ReplicaStatus is a replica connected to this primary, as ROLE and INFO's
// slaveN lines report it.
type ReplicaStatus struct {
	IP     string
	Port   int
	State  LinkState
	Offset int64 // the last it acknowledged
	Lag    int64 // seconds since its last acknowledgement
}

// Status takes the replication state as one moment.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := Status{ID: n.id, ID2: n.id2, Offset: n.backlog.End(), Off2: n.off2,
		BacklogActive: n.active.Load(), BacklogSize: n.backlog.Size(),
		BacklogStart: n.backlog.Start(), BacklogHist: n.backlog.Len()}
	if m := n.primary; m != nil {
		ps := &PrimaryStatus{Host: m.host, Port: m.port, State: PrimaryState(m.state.Load()), LastIOAgo: -1,
			Syncing: m.syncing.Load(), FullSyncs: n.fullSyncs.Load(),
			PositionRefused: n.positionRefused.Load(), StreamErrors: n.streamErrors.Load()}
		if n.cfg.Priority != nil {
			// The settings' lock, under mu: see minreplicas.go's protocol.
			ps.Priority = n.cfg.Priority()
		}
		if t := m.lastIO.Load(); t > 0 {
			ps.LastIOAgo = int(time.Now().Unix() - t)
		}
		st.Primary = ps
	}
	st.GoodReplicas, st.ShowGood = n.goodReplicasShown()
	now := n.min.now().UnixMilli()
	for _, l := range n.onlineLinks() {
		st.Replicas = append(st.Replicas, ReplicaStatus{IP: l.ip, Port: l.port, State: l.state,
			Offset: l.ack.Load(), Lag: (now - l.lastAck.Load()) / 1000})
	}
	return st
}

// WriteRole writes ROLE's reply: the role, the offset and the peers, in
// Redis's shapes.
func (st Status) WriteRole(w *resp.Writer) {
	if m := st.Primary; m != nil {
		w.WriteArray(5)
		w.WriteBulkString("slave")
		w.WriteBulkString(m.Host)
		w.WriteInt(m.Port)
		w.WriteBulkString(m.State.String())
		w.WriteInt64(st.Offset)
		return
	}
	w.WriteArray(3)
	w.WriteBulkString("master")
	w.WriteInt64(st.Offset)
	w.WriteArray(len(st.Replicas))
	for _, l := range st.Replicas {
		w.WriteArray(3)
		w.WriteBulkString(l.IP)
		w.WriteBulkString(strconv.Itoa(l.Port))
		w.WriteBulkString(strconv.FormatInt(l.Offset, 10))
	}
}

// Info is INFO's Replication section as name, value pairs (a bool is a 1
// or 0 field: info.Writer), with Redis's field names and meanings, as
// Sentinel parses them.
func (st Status) Info() []any {
	var kv []any
	if m := st.Primary; m != nil {
		up := m.State == PrimaryConnected
		kv = append(kv, "role", "slave", "master_host", m.Host, "master_port", m.Port,
			"master_link_status", upDown(up), "master_last_io_seconds_ago", m.LastIOAgo,
			"master_sync_in_progress", m.Syncing, "slave_read_repl_offset", st.Offset,
			"slave_repl_offset", st.Offset, "slave_priority", m.Priority, "slave_read_only", 1,
			"replica_announced", 1, "master_full_syncs", m.FullSyncs,
			"master_position_refused", m.PositionRefused, "master_stream_errors", m.StreamErrors)
		if !up {
			kv = append(kv, "master_link_down_since_seconds", max(m.LastIOAgo, 0))
		}
	} else {
		kv = append(kv, "role", "master")
	}
	kv = append(kv, "connected_slaves", len(st.Replicas))
	if st.ShowGood {
		kv = append(kv, "min_slaves_good_slaves", st.GoodReplicas)
	}
	for i, l := range st.Replicas {
		kv = append(kv, fmt.Sprintf("slave%d", i), fmt.Sprintf("ip=%s,port=%d,state=%s,offset=%d,lag=%d",
			l.IP, l.Port, l.State, l.Offset, l.Lag))
	}
	return append(kv, "master_failover_state", "no-failover", "master_replid", st.ID, "master_replid2", st.ID2,
		"master_repl_offset", st.Offset, "second_repl_offset", st.Off2,
		"repl_backlog_active", st.BacklogActive, "repl_backlog_size", st.BacklogSize,
		"repl_backlog_first_byte_offset", st.BacklogStart, "repl_backlog_histlen", st.BacklogHist)
}

// upDown is INFO's master_link_status.
func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}
