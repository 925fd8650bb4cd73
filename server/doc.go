// Package server is a Redis-protocol (RESP2 and RESP3) cuckoo filter server
// with RedisBloom's CF.* commands and a persistence layer that loses nothing
// it acknowledged. `cuckoo serve` runs it.
//
// # Layout
//
// The package's files are grouped by concern; each group's first file says
// what it owns:
//
//   - server.go (Server, New, Serve, Shutdown), conn.go (a connection: read,
//     run, the durability barrier, flush), prefetch.go (reading a run of
//     single-item CF commands ahead), exec.go (dispatch: lookup in the
//     command table, arity, authentication, limits, MULTI's queue);
//   - cmd_*.go: the commands, one file per group (cmd_cf.go, cmd_keys.go,
//     cmd_conn.go, cmd_client.go, cmd_server.go, cmd_multi.go,
//     cmd_admin.go, cmd_config.go, ...). Each returns its bindings (a
//     function a file, listed by families in exec.go): cmd_cf.go the CF
//     family's rows of the command table beside their handlers, as a
//     Redis module registers its commands, the others their handlers of
//     Redis's rows (internal/command), by name. New builds the table and
//     binds them once, and refuses a binding to no row, two handlers for
//     one, or a row with no handler. cmd_config.go holds the one table of settings, from
//     which settings_flags.go makes cuckoo serve's flags and
//     docs/settings.md;
//   - cmd_repl.go: the replication commands (internal/repl replicates);
//   - cluster*.go: cluster mode's commands and the dispatcher's cluster
//     check (cluster.go), MIGRATE's (cluster_migrate.go);
//   - tls.go, limits.go, clientmem.go, metrics.go: TLS, client limits, what
//     clients hold and its bounds (the checks' call sites, the closes and
//     the logs; internal/clientmem does the accounting and decides),
//     Prometheus.
//
// Eighteen packages stand apart, below this one, and import nothing of it.
// internal/keyspace is the data: the key space, its write protocol, the one
// table of the log's record kinds with one apply each (which commands, log
// replay and replicas all call), memory accounting, expiry, the log,
// snapshots and recovery; each key's entry embeds its filter from
// internal/cf (a key's filter: its parameters from RedisBloom's arguments
// and cf-* settings, add, delete, lookups, CF.INFO's figures, compaction,
// CF.SCANDUMP's chunks, DUMP's payload and the filter's part of a
// snapshot, in either layout: this server's tables or RedisBloom's, from
// package redisbloom; it imports only the library's filters), internal/fields (the
// varint fields of every binary record), internal/resp (the protocol: a
// request reader that checks sizes before allocating, a reply writer for
// RESP2 and RESP3), internal/command (the one command table: arity, flags,
// ACL categories, key specs and docs of every command, and the COMMAND
// replies built from it), internal/config (redis.conf's syntax, read and
// rewritten), internal/quoted (Redis's quoted arguments, split and written,
// for inline requests and config files alike), internal/acl (users, their
// rules, the checks, and the ACL commands' replies and errors),
// internal/clientinfo (a client's line in CLIENT LIST and CLIENT INFO, the
// filters of CLIENT LIST and KILL, the CLIENT subcommands' arguments, over
// a plain struct of a client's fields), internal/topology (the cluster's topology as
// data: the slot hash, the topology's JSON, its checks, each slot's owner
// and the other lookups), internal/backlog (the replication backlog: the
// stream's last bytes in whole records, trimmed, pinned by full copies, and
// where a replica's position falls in it), internal/peer (MIGRATE's
// connections to targets: a pool with Redis's idle expiry, one command and
// one reply under a deadline, Redis's IOERR texts), internal/pubsub (who
// listens to what: channels, patterns, shard channels; a PUBLISH's fan-out
// and its encoding; each connection's subscriptions and their delivery to
// it, with RESP2's subscribed mode), internal/clientmem (what each client
// holds, the totals, and the decisions of client-output-buffer-limit and
// maxmemory-clients: which limit a client passed, the soft limit's timer,
// which clients to evict), internal/settings (the engine of the settings
// table, whose rows stay in cmd_config.go: value kinds, parsing, a file's
// lines, CONFIG SET's all or none, flags, docs/settings.md),
// internal/limits (the client limits' values and syntax), internal/tlsconf
// (the crypto/tls configurations of the tls-* settings), internal/cluster
// (cluster mode: the node's topology and its file, where a command goes,
// the slot locks, the CLUSTER replies, MIGRATE's sending), internal/repl
// (replication, as primary and as replica: the replication id and
// offsets, the backlog's use, the replica links and the stream, PSYNC's
// decision, the full copy, WAIT's and min-replicas-to-write's counts, the
// links' output limits, the replica's sync loop, and the typed status ROLE
// and INFO report; the key space's stream is its Node).
//
// # Shape
//
// Server is shaped like net/http's: New(Config) builds it (recovering its data
// directory), Serve(ln) serves a listener until Shutdown(ctx) or Close, and
// Shutdown is graceful: listeners close, every connection finishes the
// pipeline it is running and gets its replies, the log is written and
// fsynced, a snapshot is taken. Each connection runs in its own goroutine:
// it reads requests with the server's own RESP reader (package resp), runs each
// as soon as it is complete, and when no complete request is left in its
// buffer it passes the durability barrier (below) and flushes every reply
// with one write. A malformed request is answered "ERR Protocol error: ..."
// and the connection closed. A run of single-item CF commands already in
// the buffer is parsed ahead and its items' buckets touched before the
// first runs, so that their cache misses overlap (prefetch.go); nothing
// else changes.
//
// # Protocols
//
// A connection speaks RESP2 until HELLO 3, then RESP3 until HELLO 2.
// Requests are the same; replies use RESP3's types where Redis and
// RedisBloom do: maps (CF.INFO, HELLO, CONFIG GET), booleans (CF.ADD,
// CF.ADDNX, CF.EXISTS, CF.MEXISTS, CF.DEL, CF.INSERT), sets (COMMAND's
// flags), verbatim strings (INFO, CLIENT LIST), and nulls; RESP2 gets their
// RESP2 forms (package resp).
//
// # Differences from RedisBloom and Redis
//
// Each is deliberate; the README's "Compatibility with RedisBloom" table
// lists them too.
//
//   - With cf-layout cuckoo (the default), filters are built with 5-slot
//     buckets when their client sizes them, 4-slot ones when they start at
//     cf-initial-size, and 2-slot ones for BUCKETSIZE 1 or 2 (package
//     internal/cf, "Mapping RedisBloom's parameters"), so CF.INFO's Size,
//     Number of buckets and Bucket size
//     differ from RedisBloom's for the same CF.RESERVE; capacity ranges are
//     checked as RedisBloom checks them, with its default bucket size of 2
//     when none is given. With cf-layout redisbloom, new filters are
//     RedisBloom's, bit for bit (package redisbloom): the same bytes,
//     answers, false positives and figures after the same commands.
//   - Arguments are read as RedisBloom reads them: CF.RESERVE's options
//     are looked up by name (an unknown word is ignored, the first of a
//     repeated option counts), CF.INSERT's by their first letter. The
//     argument errors use RedisBloom 8's texts with cf-layout cuckoo, where
//     a capacity may be up to 2^32 (RedisBloom 8: 2^30), and RedisBloom
//     2.6's with cf-layout redisbloom, where a capacity is bounded by what
//     can be allocated ("Insufficient memory to create filter").
//   - The dump format of CF.SCANDUMP/CF.LOADCHUNK, and DUMP's payload, are
//     this server's own (checksummed) for filters of its own layout, and
//     RedisBloom's for filters of RedisBloom's layout. CF.LOADCHUNK of
//     RedisBloom's header and RESTORE of its MBbloomCF payload make a
//     filter of RedisBloom's layout, whatever cf-layout says, and those go
//     back to RedisBloom the same way; a filter of this server's layout
//     cannot load in RedisBloom. RESTORE takes payloads of RDB versions up
//     to 13 (Redis 8's) and DUMP writes 10, which Redis 7.0 and Redis 8
//     both take (redisbloom/internal/rdb).
//   - CF.COMPACT is flagged write (RedisBloom: readonly): it changes a
//     filter and is logged.
//   - Only the CF.* commands of RedisBloom are served: BF.*, CMS.*, TOPK.*
//     and TDIGEST.* are unknown commands. HELLO lists no modules.
//   - MULTI/EXEC is atomic for writers and logged as one record, but
//     lookups take no lock, so a CF.EXISTS of another client may see a
//     transaction's inserts before its EXEC returns (cmd_multi.go).
//   - CLIENT LIST prints only the fields this server keeps (no buffer
//     sizes); a client is a pubsub one while it has a subscription, else a
//     normal one.
//   - SHUTDOWN NOSAVE skips the final snapshot and loses nothing: the log
//     holds every acknowledged write.
//
// # Users and permissions
//
// Users are Redis's ACL: see package internal/acl's doc for the commands,
// the check before each command and what this server does not support.
//
// # Pub/sub
//
// SUBSCRIBE, PSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH and PUBSUB are Redis
// 7.2's, with the shard variants (SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH,
// PUBSUB SHARDCHANNELS and SHARDNUMSUB) as a second namespace of plain
// channels. Confirmations and messages are arrays in RESP2 and pushes in
// RESP3. In RESP2 a connection with a subscription may run only
// (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING (answered ["pong", message]) and
// QUIT; in RESP3 anything. Patterns are KEYS's globs (* ? and \ escapes, no
// [classes]). A subscriber is exempt from timeout.
//
// Delivery (package internal/pubsub, whose doc states the protocol):
// PUBLISH never writes to a subscriber's connection; it appends the message
// to the subscriber's pending pushes, which the subscriber's own goroutine
// writes between the connection's flushes, so a push never lands inside a
// reply and PUBLISH never blocks on a slow subscriber. The bound is
// client-output-buffer-limit's pubsub class (see "Client memory"): the
// PUBLISH that would pass it closes the subscriber. PUBLISH's reply counts
// the deliveries (a client matched by a channel and a pattern twice).
//
// # Limits at the door
//
// Every size a client announces is checked when its header arrives, before
// anything is allocated for it, as Redis does (Limits): a client that must
// still authenticate may send at most 10 arguments of 16 KiB; any other at
// most MaxArgs arguments of MaxBulk bytes (proto-max-bulk-len), and at most
// QueryBuffer bytes pending (client-query-buffer-limit). Buffers grow by
// doubling as bytes arrive, never by what a header announces, and parsing
// resumes where it stopped, so a request trickled one byte at a time costs
// linear time, constant stack and memory in proportion to what arrived.
// Items and keys are held to MaxItem; dump chunks (CF.LOADCHUNK's data) only
// to MaxBulk. Timeout closes a connection silent for that long. Shutdown
// wakes every blocked read, so it completes whatever requests are half-read.
//
// # Client memory
//
// What clients hold (package internal/clientmem, whose doc states the
// accounting's protocol and the decisions; clientmem.go) is counted as it
// changes: each one's
// request buffer (a half-sent request included), its replies while they are
// being written, its queued transaction, its pushes waiting. INFO reports
// the total as mem_clients_normal (replicas' links: mem_clients_slaves),
// CLIENT LIST each client's qbuf, qbuf-free, multi-mem, omem and tot-mem,
// and MaxMemory counts it with the filters, as Redis's used_memory does: a
// write that would take the two past it answers "Insufficient memory". Two
// bounds, with Redis's names and defaults:
//
//   - client-output-buffer-limit <class> <hard> <soft> <soft-seconds>, for
//     the classes normal, replica (slave) and pubsub; by default "normal 0
//     0 0" (no limit), "replica 256mb 64mb 60", "pubsub 32mb 8mb 60". A
//     client whose replies not yet written reach hard bytes is closed at
//     once, those replies unsent; one whose replies stay at soft bytes or
//     more for longer than soft-seconds is closed by a check every 100 ms
//     (a client that never reads its replies blocks its flush, and stays
//     there). A reply counts until all of it is written. For the replica
//     class the output is the stream not yet written to the replica's
//     link, which the backlog holds for it however far behind it is; a
//     link past the limits is cut, and its replica takes a full copy
//     (internal/repl's output.go).
//     INFO's client_output_buffer_limit_disconnections counts the clients
//     closed (and client_query_buffer_limit_disconnections those past
//     client-query-buffer-limit; both Redis 7.4's fields).
//   - maxmemory-clients: bytes, or a percentage of maxmemory ("5%"); 0, the
//     default, is no limit, and a limit under 128 KiB is raised to it. When
//     the clients' total reaches it, the clients holding the most are
//     closed, largest first, until it is under; CLIENT NO-EVICT on exempts a
//     client (it still counts), and replicas are never evicted. INFO's
//     evicted_clients counts them.
//
// With the defaults, neither bound closes a normal client: one that never
// reads its CF.SCANDUMP replies keeps their chunks charged until it
// disconnects (as Redis keeps its output buffer), and MaxMemory, which
// counts them, then refuses writes. Setting maxmemory-clients, or a normal
// class limit, closes such a client and frees what it held.
//
// # TLS
//
// ServeTLS serves a listener over TLS (crypto/tls, TLS 1.2 and newer) with
// redis.conf's settings (Config.TLS, tls.go): tls-cert-file and
// tls-key-file, the server's certificate and key; tls-ca-cert-file, the CAs
// of the clients' certificates; tls-auth-clients yes (the default: a
// client must present a certificate those CAs signed), optional (verified
// if presented) or no (none asked for). TLSConfig builds the same
// tls.Config for anyone else, and names the setting and file it could not
// use. cuckoo serve's --tls-port serves TLS beside the plain port, and
// --port 0 (port 0 in a --config file) turns the plain port off; CONFIG GET
// tls-port and INFO's tls_port report the TLS listener's port, port and
// tcp_port 0 when there is no plain one.
//
// The handshake runs in the connection's goroutine, never in the accept
// loop, within 10 seconds (or timeout, if shorter): a client that connects
// and sends nothing is closed then. CONFIG SET of a tls-* setting builds a
// new configuration from the files, and new connections get it (setting a
// file to its own name reloads it: a renewed certificate is put in force
// with no restart, as in Redis); a file that does not load fails the SET and
// leaves the old configuration in force. An expired certificate is loaded
// with a warning in the log: clients refuse it.
//
// Between nodes, as in Redis: with tls-replication yes a replica connects
// to its primary over TLS, and with tls-cluster yes MIGRATE connects to its
// target over TLS; both verify the other node's certificate against
// tls-ca-cert-file for the host they dial, and present
// tls-client-cert-file and tls-client-key-file (by default the server's own
// certificate, which must then be made for client authentication too).
//
// # Configuration
//
// One table (cmd_config.go) holds every setting: its Redis name, type,
// range, default, whether CONFIG SET may change it at runtime, and its doc.
// CONFIG GET, SET and REWRITE, `cuckoo serve --config FILE`, cuckoo serve's
// flags (AddSettingFlags) and docs/settings.md (WriteSettingsDoc, kept
// current by TestSettingsDoc) are all made from it: docs/settings.md lists
// them. Changes at runtime apply as follows: requirepass to new connections
// (a connection made while there was no password stays in, as in Redis);
// maxclients, timeout, proto-max-bulk-len and client-query-buffer-limit to
// the connections made after the change; client-output-buffer-limit (only
// the classes given change) to each client's next request, and at once to
// the clients the 100 ms check sees; maxmemory-clients at once, evicting if
// the clients are past it; the cf-* settings, the parameters
// of filters created without them, as a whole; the tls-* files for new
// connections. A snapshot is taken when the log passes snapshot-log-size,
// not on a schedule: save "" (or snapshot-log-size -1) turns that off, any
// schedule turns it on.
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
// # Terminology
//
// A key holds one filter (type MBbloomCF, as RedisBloom names it), of one
// of two layouts: RedisBloom's (package redisbloom, OBJECT ENCODING
// "redisbloom": a list of sub-filters of one-byte fingerprints, as
// RedisBloom keeps them), or this server's, below. A filter of this
// server's layout with EXPANSION >= 1 (the default, and keys CF.ADD or CF.INSERT create) is
// one growing table (package growing): it splits a bucket whenever its load
// passes the split load, so it grows in small steps and a lookup reads two
// buckets however far it grew. A filter with EXPANSION 0 is one fixed
// lockfree.Filter, a stage. Snapshots and dumps of format 2 hold filters as
// lists of stages, RedisBloom's sub-filters; those still load and grow as
// before. CF.INFO's "Number of filters" counts a growing table's doublings
// since it was created, plus one (the generations of entries it holds,
// each with one bit of tail less than the next), or a list's stages. The
// key space is a hashmap.Map from key to filter. An op is the logged effect
// of a write command.
//
// # Concurrency
//
// Lookups (CF.EXISTS, CF.MEXISTS) take no lock anywhere: a map Load, and
// lock-free reads of the growing table (package growing's protocol) or of
// the stage list and its lock-free filters, so any number of connections
// query one filter at once, while it grows. CF.COUNT of a growing table takes
// its writer lock briefly. Writers of one key are serialised
// by the key's mutex, held across the change and its log append, so the log
// holds each key's ops in the order they were applied; writers of different
// keys run in parallel. A read-write gate, read-locked by every write, is
// taken exclusively only by FLUSHALL and by a snapshot's copy (store.go).
//
// # Mapping RedisBloom's parameters
//
// RedisBloom's BUCKETSIZE, MAXITERATIONS, EXPANSION and capacity map onto
// this server's two tables as package internal/cf's doc says: b=4 unless
// BUCKETSIZE is 1 or 2, a growing table unless EXPANSION is 0, "Filter is
// full" for a fixed stage past its capacity, and no item lost to deletes.
//
// # Persistence, memory and expiry
//
// The key space (package internal/keyspace) owns them: its doc says how
// every write is logged and group-committed, how snapshots are taken,
// verified and installed, how startup recovers and repairs, how memory is
// charged before it is allocated, how deadlines expire keys, and the
// invariants all of that keeps. A server holds an exclusive flock on its
// data directory's LOCK file from New until Shutdown.
//
// # Replication
//
// Replication is internal/repl's: its doc.go states the protocol (the
// stream, PSYNC's continue or full copy, acknowledgements, WAIT,
// min-replicas-to-write, the replica links' output limits) and its
// linearization points. REPLICAOF host port (--replicaof) makes a server
// a replica; REPLICAOF NO ONE a primary again. The commands are
// cmd_repl.go's: PSYNC, REPLCONF, WAIT, ROLE, REPLICAOF parse, call the
// repl.Node and reply; ROLE and INFO replication carry Redis's fields,
// which Redis Sentinel reads: an unchanged redis-sentinel monitors and
// fails over cuckoo servers (cmd/cuckoo's TestSentinelFailover). A write
// refused for min-replicas-to-write answers NOREPLICAS at the door, and
// EXEC with a write queued EXECABORT (cmd_repl.go; cmd/cuckoo's
// TestPartitionMinReplicas). Not supported: chained replicas.
//
// # Cluster
//
// Cluster mode (cluster-enabled, cluster-emulated) is internal/cluster's:
// its doc.go explains it. INFO has a Cluster section (cluster_enabled), and
// INFO filters (not in the default sections: it scans the key space) gives
// the filters, their items and bytes, which cuckoo cluster info reports per
// node.
//
// # Measurements
//
// The README's "The server (cuckoo serve) against RedisBloom" section has
// the throughput, CPU time and memory measured with redis-benchmark against
// a real RedisBloom (bench/scripts/serve-vs-redisbloom.sh) and against
// Debian's redis-server, and the commands that reproduce them. In short:
// pipelined, the CF commands take less CPU a request than RedisBloom's and
// run 1.0-1.8x as fast; unpipelined, on two cores shared with the
// benchmark, they are 0.65-0.8x, which a server that does nothing but
// parse and answer (bench/cmd/respfloor) does not beat; a filter of the
// default layout takes less memory than RedisBloom's at most sizes.
//
// Inserting one item more often than its two buckets hold (2b copies)
// answers "Filter is full" rather than growing (see above), so CF.ADD from
// redis-benchmark with a small -r range stops at that error.
package server
