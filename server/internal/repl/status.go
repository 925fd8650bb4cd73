package repl

import "time"

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
