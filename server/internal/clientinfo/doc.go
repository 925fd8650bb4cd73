// Package clientinfo is what CLIENT LIST, CLIENT INFO and CLIENT KILL say
// and decide about a connection, over a plain Client of its fields that the
// server fills from its own client: the line Redis prints for it (Line,
// with Redis's field names and flags), its TYPE, and the filters of CLIENT
// LIST and CLIENT KILL (ParseList, ParseKill: parsed, then matched against
// each Client). It also validates the arguments of the CLIENT subcommands
// that set a connection's state (SETNAME, SETINFO, NO-EVICT, NO-TOUCH,
// REPLY) and writes CLIENT HELP's reply. Its errors are replies, in Redis's
// words.
//
// The server keeps the connections, reads their fields (atomic or set once
// at accept, so one connection may read another's) and kills; this package
// holds no state and never blocks.
//
// It imports nothing of the server's but packages integer and resp (its
// one reply); package server imports it.
package clientinfo
