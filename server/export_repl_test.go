package server

// ShiftReplicationOffset moves a replica's offset n bytes on and logs the
// position, as a replica that applied a write of its own once did: a
// position its primary's stream never had. n below a record header's 8
// bytes can never land on a record boundary. The replica's backlog starts
// again, empty, at the new offset.
func ShiftReplicationOffset(s *Server, n int64) error {
	st, r := s.store, s.repl
	st.LockAll()
	defer st.UnlockAll()
	r.mu.Lock()
	r.backlog.Reset(r.backlog.End() + n)
	id, off := r.id, r.backlog.End()
	r.mu.Unlock()
	if lsn := s.logPosition(id, off); lsn > 0 {
		return st.AOF.Commit(lsn)
	}
	return nil
}
