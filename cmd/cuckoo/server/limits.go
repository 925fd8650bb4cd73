package server

// Limits bound what one client can make the server do. A request beyond a
// limit is answered with an error; none of them crashes or stalls the server.
type Limits struct {
	// MaxClients is the most connections served at once; more are answered
	// "ERR max number of clients reached" and closed. 0 means 10000.
	MaxClients int
	// MaxRequest is the most bytes of one command (or of a pipeline that
	// holds no complete command yet) the server buffers; a larger one is a
	// protocol error and the connection is closed. 0 means 512 MiB, Redis's
	// proto-max-bulk-len.
	MaxRequest int
	// MaxArgs is the most arguments of one command. 0 means 1<<20.
	MaxArgs int
	// MaxItem is the longest item (and key). 0 means 64 KiB.
	MaxItem int
}

func (l Limits) withDefaults() Limits {
	if l.MaxClients <= 0 {
		l.MaxClients = 10000
	}
	if l.MaxRequest <= 0 {
		l.MaxRequest = 512 << 20
	}
	if l.MaxArgs <= 0 {
		l.MaxArgs = 1 << 20
	}
	if l.MaxItem <= 0 {
		l.MaxItem = 64 << 10
	}
	return l
}
