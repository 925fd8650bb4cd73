// Package repl is replication, as Redis's: a primary streams every op it
// logs to its replicas, which apply it, log it and acknowledge it; a
// replica that falls behind the primary's backlog, or stands where the
// primary never was, takes a full copy first.
//
// It owns the replication state of one server (Node): the replication id
// and offsets, the backlog (internal/backlog), the replica links and
// feeding them the stream, PSYNC's decision (continue or full copy), the
// full copy's writer and reader, WAIT's count of acknowledgements,
// min-replicas-to-write's count of good replicas, the replica links'
// output limits, the replica's link to its primary with its sync loop, and
// the typed snapshot ROLE and INFO report (Status). The commands (PSYNC,
// REPLCONF, WAIT, ROLE, REPLICAOF) stay in package server, which parses
// them, calls a Node and writes the replies.
//
// # Terminology
//
// The stream is the ops the log takes, each framed as a log record (u32
// length, u32 CRC-32C, payload: keyspace.AppendRecord), in the order the
// key space feeds them (Node.Feed, the key space's stream); an offset
// counts the stream's bytes. The backlog is the last repl-backlog-size
// bytes of it. A replica's position is (replication id, offset): the
// history it follows and how far. A link is a replica connected to this
// primary; the primary link is a replica's connection to its primary.
//
// # Protocol
//
// Every op is fed while its writer holds the gate read-locked and the
// key's lock, so per key the stream has the log's order, and a holder of
// the gate exclusively sees a stream that ends exactly at the state it
// sees. A replica sends PSYNC <id> <offset>: if id is the primary's
// replication id (or its previous one, up to the offset where it changed)
// and offset is in the backlog at a record's start, the primary answers
// +CONTINUE and streams from there; otherwise +FULLRESYNC <id> <offset>,
// the copy (every key, with the offset the stream had reached when the key
// was read: copy.go), then the stream from offset. A replica acknowledges
// its offset (REPLCONF ACK) after each batch it applied and each second;
// WAIT counts the acknowledgements, and min-replicas-to-write counts the
// replicas whose last one is recent enough (minreplicas.go). The primary
// feeds a ping each second (Heartbeat) while replicas are connected, so
// idle offsets still move and a replica sees the link alive.
//
// Linearization points: of a write for replication, its feed (under
// Node.mu, with the gate read-locked); of a full copy, the gate's exclusive
// lock, under which the copy's offset is taken and the backlog pinned; of
// a replica link's cut for its output, its unpin (output.go); of a role
// change (ReplicaOf, Promote), the store's Replica flag, set with the gate
// held exclusively and Node.mu.
//
// Locks, in order: the key space's gate, then Node.mu, then minReplicas.mu
// (nothing is locked under it); Status calls Config.Priority, the server's
// settings lock, under Node.mu, so the server may not take Node.mu under
// its settings lock. Node.cond (on Node.mu) is broadcast on every feed,
// acknowledgement, link change and Stop: a link's writer, WAIT and the
// links that end wait on it.
//
// # The replica
//
// ReplicaOf (REPLICAOF host port, --replicaof) makes a server a replica;
// Promote (REPLICAOF NO ONE) a primary again. A replica installs a full
// copy key by key over its own keys, so its lookups never miss an item it
// held, and skips the ops a key's copy already holds. It applies the
// stream in batches with the gate held, each key's ops on one of several
// workers (keyspace.ReplayStream), as the primary applied them on several
// cores (its lookups, lock-free, go on; clients' writes answer READONLY),
// logs each batch and its position as one record (so a restarted replica
// continues where it was: the key space's position.go; AdoptPosition),
// feeds its own backlog, and acknowledges its offset. A promotion keeps
// the old replication id valid up to the offset reached, so the old
// primary's other replicas continue from the promoted one. In cluster
// mode a replica takes its primary's topology in the handshake
// (internal/cluster). Not supported: chained replicas (a replica of a
// replica: Accept answers ErrChained).
//
// A replica never parts from its primary silently. Only the stream changes
// a replica's data or moves its offset: a client's write is refused by the
// server's dispatcher (a command flagged write) and again by the key space
// (any command). A primary continues only from an offset it had, at a
// record's start; any other position gets a full copy and a warning in the
// primary's log. A replica refused a continue from a position it had
// followed, or sent a record that fails its checksum or cannot be
// applied, says so in its log and in Status (PositionRefused,
// StreamErrors; FullSyncs counts the copies it loaded), and takes a full
// copy.
//
// The backlog only serves replicas that reconnect: a connected replica's
// link holds the backlog from what it has sent, bounded by
// client-output-buffer-limit replica (output.go).
//
// # Files
//
// node.go (the primary's side: Node, Feed, Accept, Serve, Wait,
// Heartbeat), link.go (Link and the states), copy.go (the full copy: its
// record format, writer and reader), replica.go (the replica's side: the
// primary link, the handshake, PSYNC, following the stream),
// minreplicas.go (min-replicas-to-write), output.go (output limits),
// status.go (the snapshot ROLE and INFO report).
//
// # Imports
//
// It imports internal/keyspace (the key space: the gate, the log's
// records, replaying the stream, a full copy's keys), internal/backlog,
// internal/cluster (a replica takes its primary's topology), internal/resp
// (reading acknowledgements, writing requests to the primary),
// internal/fields (the copy's records), internal/limits, internal/integer
// and the standard library; never package server, which imports it and
// passes in what needs the server as values and funcs (Config): the key
// space, the logger, the settings in force, the dial function (so TLS
// stays the server's), the snapshot. The key space's stream
// (keyspace.Store.Repl) is a Node, so a write goes down from the server
// to the key space and, from there, into this package, never back up.
package repl
