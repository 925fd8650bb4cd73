// Package cluster is a server's cluster mode: the Redis Cluster protocol
// that cluster clients (go-redis's ClusterClient, redis-cli -c) speak
// (slots, -MOVED, -ASK, CLUSTER SLOTS/SHARDS/NODES), with no gossip: an
// operator's tool pushes one topology to every node (CUCKOO.CLUSTER
// SETCONFIG), as Dragonfly's cluster mode does.
//
// # What it owns
//
//   - Node (node.go): this server as a cluster node: its id, the topology
//     in force, its file cluster.json in the data directory, the pushes
//     that change it (SetConfig, AdoptPrimary), and the slot locks.
//   - Route (route.go): where a command goes: here, or the error that is
//     its reply (-MOVED, -ASK, -TRYAGAIN, -CROSSSLOT, -CLUSTERDOWN).
//   - The CLUSTER subcommands' replies (reply.go), written to a
//     resp.Writer, and the key counts by slot.
//   - Mover (migrate.go): MIGRATE's sending of keys to another server, in
//     one DUMP payload or in CF.SCANDUMP's chunks.
//
// Package server keeps the commands: its handlers parse the arguments,
// call this package and write the reply, and its dispatcher calls Route on
// every keyed command in cluster mode, holding the slot's lock as below.
// The topology as data (the slot hash, its JSON, its checks, each slot's
// owner) is internal/topology's.
//
// # Routing
//
// A key's hash slot is Redis's: the CRC16 (XMODEM) of the key, or of its
// hash tag (the bytes between the first '{' and the first '}' after it, if
// not empty), mod 16384. A command's keys are found by the command table's
// key specs, and
//
//   - keys in different slots answer -CROSSSLOT (SlotOf);
//   - a slot no node owns answers -CLUSTERDOWN Hash slot not served;
//   - a slot another node owns answers -MOVED <slot> <host>:<port>, unless
//     this node is importing the slot and the command follows ASKING (which
//     lasts one command), or this node is a replica of the owner, the
//     command reads, and the connection sent READONLY (until READWRITE);
//   - a slot this node owns and is migrating answers -ASK <slot>
//     <host>:<port> of the target for a key no longer here (-TRYAGAIN if a
//     multi-key command finds some of its keys and not others);
//   - a transaction's commands are checked as they are queued, and its keys
//     together at EXEC (-CROSSSLOT discards it); ASKING before MULTI lasts
//     the whole transaction (the dispatcher's part).
//
// A connection's ASKING and READONLY are its Conn, which the server keeps
// with the connection and copies into each Command it routes.
//
// The slots a node owns are served even while others have no owner (as
// Redis with cluster-require-full-coverage no); CLUSTER INFO's
// cluster_state is ok only when every slot has one. Without cluster mode
// none of this runs: one predictable branch in the server's dispatcher.
// Where the topology leaves out this node's host or port (a new or
// emulated node), the address the client reached it at stands in (Local).
//
// # The topology
//
// The topology is JSON, set by CUCKOO.CLUSTER SETCONFIG and read by
// CUCKOO.CLUSTER GETCONFIG:
//
//	{"epoch": 3, "myself": "<this node's id>", "nodes": [
//	  {"id": "<40 hex>", "host": "10.0.0.1", "port": 6379, "role": "primary",
//	   "slots": [[0, 5460]], "migrating": {"17": "<target id>"}},
//	  {"id": "<40 hex>", "host": "10.0.0.2", "port": 6379, "role": "primary",
//	   "slots": [[5461, 16383]], "importing": {"17": "<source id>"}},
//	  {"id": "<40 hex>", "host": "10.0.0.3", "port": 6379, "role": "replica",
//	   "primary": "<first node's id>"}]}
//
// A node refuses a topology whose epoch is older than its own (the same
// epoch is taken again), one meant for another node (myself is not its
// CLUSTER MYID), and one that does not hold together (a slot owned twice,
// a replica of no primary, a migrating slot the node does not own). It
// writes the topology to cluster.json in the data directory, atomically
// (a temporary file, fsynced, renamed), before applying it, and loads it at
// start (New); the node id, 40 hex digits, is made at the first start and
// kept in the same file, as Redis keeps it in nodes.conf. A file that does
// not decode, or names no node id, is refused: the server does not start.
// Without a data directory the id and topology last as long as the
// process. A node starts owning no slots; --cluster-emulated makes one
// node own all 16384 alone (its topology is fixed), so a cluster client
// works against a single server. The roles in the topology are what
// clients are told; the replication itself is set with REPLICAOF.
//
// CLUSTER SLOTS, SHARDS, NODES (cport is port+10000), INFO, MYID, KEYSLOT,
// COUNTKEYSINSLOT, GETKEYSINSLOT and HELP answer as Redis's do.
// COUNTKEYSINSLOT and GETKEYSINSLOT scan the key space, O(n) for n keys: a
// per-slot index would cost every key's creation and drop a second update,
// for commands an operator runs while moving slots.
//
// # Moving a slot
//
// A slot moves as in Redis: the target is marked importing it and the owner
// migrating it (one topology pushed), the owner's keys of the slot go over
// with MIGRATE, and a last topology names the new owner. MIGRATE has Redis's
// syntax and replies (KEYS, COPY, REPLACE, AUTH, AUTH2, NOKEY, IOERR); it
// sends each key's DUMP payload in a RESTORE-ASKING, which the target takes
// on a slot it imports (a filter over MaxWhole, 64 MiB, goes in
// CF.SCANDUMP's chunks, each in a CF.LOADCHUNK, so that neither side holds
// a second copy of it and no request meets proto-max-bulk-len), and
// deletes the key here once the target has said OK, each key atomically.
// So during a move a key is answered here until it has moved, and by the
// target (-ASK) after: no acknowledged write is lost, and no lookup finds
// a present item absent. A replica's READONLY reads on a slot its primary
// migrates ask the target for keys no longer on the replica. MIGRATE
// dials the target over TLS with tls-cluster yes (in plain TCP otherwise)
// and keeps the connection ten seconds for the next one, as Redis does
// (internal/peer). The cuckoo tool drives all of this: cuckoo cluster
// create, info, add-node, move-slots, rebalance and failover.
//
// # Failover
//
// A failover inside a shard is replication's (a replica promoted, by
// Redis Sentinel or by hand) plus a topology pushed that names the new
// primary (cuckoo cluster failover, which Sentinel's client-reconfig-script
// can run). A node the topology names a slot's primary while it still
// replicates answers -TRYAGAIN (but to READONLY reads), which cluster
// clients retry: the moment of a coordinated failover, until it has every
// write of its old primary. A cluster node that connects to a primary takes
// the primary's topology if it is newer and lists the node (AdoptPrimary),
// so a failed primary that comes back and is made a replica (as Sentinel
// does) learns the topology it missed from its new primary. Until then it
// serves its old topology, as a returning Redis primary does until
// Sentinel demotes it: a client that still routes to it may write there,
// and lose the write.
//
// # Protocol
//
// The topology in force is an immutable topology.Map replaced as a whole
// (an atomic pointer): a command's route decision loads it once and sees
// one topology. A change (SetConfig, AdoptPrimary), serialised by the
// node's mutex, checks the new one, writes it to cluster.json and only then
// publishes it, so a node never serves a topology it would not find again
// after a restart.
//
// Slot locks (Node.SlotLock), one sync.RWMutex a slot:
//
//   - a command on keys holds its slot's lock shared from its route
//     decision to its reply (the server's dispatcher takes it before
//     calling Route and releases it after the command has run, or at once
//     if Route refuses); EXEC holds its slot's lock for its whole queue,
//     which is not routed again;
//   - moving a key (Mover) holds its slot's lock exclusively.
//
// So no command sees a key here and then finds it gone, or creates it
// again here after it moved: a lookup that found the key here answers from
// it; one that did not was sent to the target (-ASK) only after the key
// was there. A topology change takes no slot lock: a command already
// routed finishes under the topology it was routed by, and
// the next is routed by the new one.
//
// # Moving a key
//
// Mover moves each key holding, in this order (every writer's order):
//
//  1. in cluster mode, its slot's lock exclusively (above);
//  2. the key space's gate, shared, as every write;
//  3. the key's writer lock, so no write slips in between the payload and
//     the drop (2 and 3 are keyspace.Store.Migrate's).
//
// The linearization point of a key's move is its drop here (logged, and
// replicated as a DEL), which follows the target's OK: an acknowledged
// write is in the payload or was made on the target. Holding the locks
// across a round trip to the target is Redis's own trade (MIGRATE blocks
// its whole server): the timeout argument bounds it. A MIGRATE inside a
// transaction would wait for itself (EXEC holds the slot's lock shared),
// so the server refuses it in cluster mode. If a chunk fails, the partial
// key is deleted on the target (through a new connection if the old one
// broke). The payload and each chunk are charged to the key space's memory
// while they are built and sent (keyspace.Store.ChargeChunk).
//
// # Imports
//
// It imports internal/topology (the topology as data), internal/keyspace
// (the key space: presence, counts, a key's move), internal/peer (the
// connections to targets), internal/resp (the replies' writer),
// internal/config (its atomic file write) and the standard library; never
// package server, which imports it and passes in what needs the server
// (the dial function, so TLS stays the server's; the client's address).
package cluster
