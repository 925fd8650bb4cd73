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
//     one, or a row with no handler. cmd_config.go holds the CONFIG handlers,
//     settings_flags.go the public names of internal/conf's flags and
//     docs/settings.md;
//   - cmd_repl.go: the replication commands (internal/repl replicates);
//   - cluster*.go: cluster mode's commands and the dispatcher's cluster
//     check (cluster.go), MIGRATE's (cluster_migrate.go);
//   - tls.go, limits.go, clientmem.go, metrics.go, release.go: TLS, client
//     limits, what clients hold and its bounds (the checks' call sites, the
//     closes and the logs; internal/clientmem does the accounting and
//     decides), Prometheus (the gauges read from the server;
//     internal/metrics holds the metrics), the memory clients left,
//     returned to the OS once the server is quiet.
//
// The packages under internal/ stand apart, below this one, and import
// nothing of it; each one's doc.go says what it owns and may import:
//
//   - the data: keyspace (the key space, one typed call per write, the one
//     table of the log's record kinds with one apply each for commands,
//     replay and replicas, memory, expiry, the log, snapshots, recovery),
//     cf (a key's filter in either layout, RedisBloom's arguments, dumps
//     and payloads), fields (the varint fields of every binary record);
//   - the protocol: resp (requests read with sizes checked before
//     allocating, a run read ahead, replies in RESP2 and RESP3), command
//     (the command table and the COMMAND replies), quoted (Redis's quoted
//     arguments), info (INFO's text), monitor (MONITOR's fan-out);
//   - the clients: acl (users, rules, checks, the ACL replies), clientinfo
//     (CLIENT LIST's line and filters), clientmem (what clients hold and
//     its bounds), limits (the client limits' values), pubsub (who listens
//     to what, and delivery), tlsconf (TLS configurations in force);
//   - the configuration: conf (Config and the one table of settings),
//     settings (the table's engine), config (redis.conf's syntax), metrics
//     (Prometheus);
//   - beyond one node: repl (replication, as primary and as replica; the
//     key space's stream is its Node), backlog (the replication backlog),
//     cluster (cluster mode: topology file, routing, slot locks, CLUSTER
//     replies, MIGRATE's sending), topology (the cluster's topology as
//     data), peer (connections to other nodes).
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
//   - CLIENT LIST prints the fields this server keeps (no argv-mem, rbs,
//     rbp, obl, oll or events); a client is a pubsub one while it has a
//     subscription, else a normal one.
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
// Package pubsub's doc says the pub/sub commands as clients see them.
//
// # Limits at the door
//
// Package resp's doc says the limits at the door.
//
// # Client memory
//
// Package clientmem's doc says client memory and its bounds.
//
// # TLS
//
// Package tlsconf's doc says TLS: the listeners, the handshake, reloading, and TLS between nodes.
//
// # Configuration
//
// The settings are package internal/conf's (its doc says how each applies
// at runtime, and the configuration file's syntax): Config, the one table
// of settings, CONFIG GET's and SET's rules, REWRITE's lines, cuckoo
// serve's flags and docs/settings.md. cmd_config.go holds the CONFIG
// handlers and publishes the settings in force where the requests read
// them.
//
// # Terminology
//
// A key holds one filter (type MBbloomCF, as RedisBloom names it), of this
// server's layout or RedisBloom's: package internal/cf's doc says their
// shapes and what CF.INFO's figures count. The key space is a hashmap.Map
// from key to filter. An op is the logged effect of a write command.
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
// The README's "The server (cuckoo serve) against RedisBloom" section has the
// throughput, CPU time and memory measured with redis-benchmark against
// Redis 8 and RedisBloom (bench/scripts/serve-vs-redisbloom.sh), and the
// commands that reproduce them; docs/performance.md says where the time
// goes.
//
// Inserting one item more often than its two buckets hold (2b copies)
// answers "Filter is full" rather than growing (package internal/cf), so
// CF.ADD from redis-benchmark with a small -r range stops at that error.
package server
