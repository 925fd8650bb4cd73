// Package conf is the server's configuration: Config, what a server is
// started with, and the one table of settings (table.go) that reads and
// writes it, built on the engine of package internal/settings.
//
// # Configuration
//
// One table holds every setting: its Redis name, type, range, default,
// whether CONFIG SET may change it at runtime, and its doc. CONFIG GET, SET
// and REWRITE (Get, Set, Rewrite), `cuckoo serve --config FILE` (ReadFile),
// cuckoo serve's flags (AddFlags) and docs/settings.md (WriteDoc, kept
// current by package server's TestSettingsDoc) are all made from it:
// docs/settings.md lists them. Changes at runtime apply as follows:
// requirepass to new connections (a connection made while there was no
// password stays in, as in Redis); maxclients, timeout, proto-max-bulk-len
// and client-query-buffer-limit to the connections made after the change;
// client-output-buffer-limit (only the classes given change) to each
// client's next request, and at once to the clients the 100 ms check sees;
// maxmemory-clients at once, evicting if the clients are past it; the cf-*
// settings, the parameters of filters created without them, as a whole;
// the tls-* files for new connections. A snapshot is taken when the log
// passes snapshot-log-size, not on a schedule: save "" (or
// snapshot-log-size -1) turns that off, any schedule turns it on.
//
// CONFIG SET of several settings applies all or none, as Redis 7's does,
// with Redis's error texts. CONFIG GET takes glob patterns and answers a map
// (RESP2: a flat array). CONFIG REWRITE rewrites the --config file in place:
// comments and the order of lines stay, each setting's line gets the value
// in force, settings the file lacks are appended when they differ from the
// defaults or were SET; the file is replaced atomically (temporary file,
// fsync, rename, fsync of the directory). The file's syntax is redis.conf's
// (package internal/config); include is refused, and an unknown setting or
// bad value stops startup with the file, line and setting. Flags given on
// cuckoo serve's command line override the file.
//
// # State and Live
//
// A row reads and writes a State: a Config with its defaults filled in
// (NewState), and what a Config does not hold (save as given, a file's bind
// and ports). The few values that are the running server's, not a
// Config's (the listener's address, replicaof, the backlog in force), a
// row reads from a Live, an interface the server gives; so this package
// never imports the server. A State is a value: CONFIG SET changes a copy
// and hands it back only when every setting passed (Set), and the server
// keeps the State in force under its own lock.
//
// Invariants: a Config's zero field means the default (NewState fills it
// in, and a row that stores 0 for a setting whose default is not 0 stores
// -1 instead: replica-priority, min-replicas-max-lag); the settings are
// checked together after they are checked one by one (cf-initial-size at
// least twice cf-bucket-size), in CONFIG SET, a file and the flags alike;
// a row that CONFIG SET may change, set to the value its Get reads, reads
// the same value again.
//
// What the settings do to a running server (the atomics the requests read,
// the TLS configuration put in force) is package server's, as are the
// CONFIG handlers (parse, call, reply).
//
// It imports the standard library, internal/settings and internal/config
// (the table's engine and redis.conf's syntax), and the packages whose
// values a Config holds: internal/cf (filters' defaults), internal/keyspace
// (appendfsync), internal/limits (the client limits), internal/tlsconf (the
// tls-* settings), internal/metrics, internal/repl (the replication's
// defaults) and internal/integer (how Redis reads an integer). Nothing
// imports it but package server.
package conf
