// Package command is the server's one table of commands. Each Spec carries
// every fact about a command that more than one part of the server needs:
//
//   - its arity, as Redis counts it (the name included; negative: at least);
//   - its flags (write, readonly, denyoom, admin, fast, noauth, ...), which
//     the dispatcher reads to refuse writes when the log has failed, to
//     let AUTH through before authentication, and to queue or refuse a
//     command inside MULTI;
//   - its ACL categories (@read, @write, @keyspace, @cuckoo, ...), those
//     Redis derives from the flags included, for ACL rules;
//   - its key specs (where the keys are, and whether the command reads,
//     writes or deletes them), for COMMAND GETKEYS, ACL key patterns and
//     cluster routing;
//   - its documentation (summary, since, group, complexity, arguments),
//     which COMMAND DOCS serves and redis-cli turns into hints;
//   - its subcommands (CLIENT LIST, CONFIG GET, ...), each a Spec of its own
//     named "container|sub" as Redis names them.
//
// Redis's own commands' rows are here, one file a group (generic.go,
// keyspace.go, server.go, ...), and Redis returns them. A family of the
// server's own, the CF commands, keeps its rows beside its handlers
// (package server's cmd_cf.go), as a Redis module registers its commands.
// The table is a value (NewTable), built once by the server from both, and
// only read after: no package state. The replies of COMMAND, COMMAND INFO,
// COMMAND DOCS, COMMAND LIST and COMMAND GETKEYS are the table's methods,
// in Redis 7's shapes, in RESP2 or RESP3.
//
// Invariants: names are lower case and unique; a subcommand's Container is
// its parent's name; a key spec's Begin index and an argument's KeySpec index
// point inside the command.
//
// It may import internal/resp (the replies it builds) and nothing else of the
// server's; package server imports it.
package command
