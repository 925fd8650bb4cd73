package cluster

// Conn is a connection's cluster mode state, which the server keeps with
// the connection and hands to the route decision in each Command: Asking
// is set by ASKING for the next command only (or the whole transaction a
// MULTI after it opens); Readonly by READONLY until READWRITE, for reads on
// a replica node. Only the connection's goroutine touches it.
type Conn struct {
	Asking, Readonly bool
}
