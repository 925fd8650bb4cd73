package server

// ShiftReplicationOffset moves a replica's offset n bytes on and logs the
// position, as a replica that applied a write of its own once did: a
// position its primary's stream never had. n below a record header's 8
// bytes can never land on a record boundary. The replica's backlog starts
// again, empty, at the new offset.
func ShiftReplicationOffset(s *Server, n int64) error { return s.repl.ShiftOffset(n) }
