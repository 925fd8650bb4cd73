// Package clientmem is the accounting of what the server's clients hold, and
// the decisions taken on it: the totals INFO reports and --maxmemory sees,
// and Redis's two bounds, client-output-buffer-limit (per client, by class)
// and maxmemory-clients (all clients together).
//
// # Terminology
//
// A client's Usage is what one connection holds, published for others to
// read: its request buffer (package resp: the requests not yet run, a
// half-sent one included, and the arguments of the one running, which alias
// it), its replies built and not yet written, the commands a transaction
// queued, and for a subscriber the pushes pending or being written. Totals
// are the server's side: the sum of every normal client's Usage, the
// replica links' sum apart, maxmemory-clients in bytes, the statistics of
// the clients closed, and the wake-up channel of the server's clients cron.
// A client's output, as its limits see it, is its replies not yet written
// plus its pushes.
//
// # Protocol
//
// The connection's goroutine publishes the first three figures in its
// Usage's atomics: the request buffer each time the reader allocates one
// (Totals.SetQbuf, from resp.Reader.OnResize), the replies when a
// pipeline's flush begins and ends (Totals.SetOutput), if they reach
// TrackOutput bytes (a smaller reply is Redis's static reply buffer: not
// counted), the transaction at each pipeline's end (Totals.SetMulti).
// Publishers and the push goroutine publish the pushes (Totals.SetPush),
// under the subscriber's lock (package pubsub), to the total in steps of
// TrackOutput. Each change is added to the normal total as it is
// published, and to the key space's count of client memory (the counter
// New is given, less the reply bytes already charged as dump chunks), so
// nothing walks the clients to add them up; a replica link's figures move
// to the replicas' total once PSYNC makes it one (BecomeReplica). A client
// that ends takes its figures off the totals (Drop). Each figure is
// visible to other goroutines from its atomic store; a total may lag a
// client's figure by the add that follows the store, never more.
//
// # client-output-buffer-limit
//
// Check is the decision, for a client of a class whose output is out bytes
// at a given moment (the caller's clock, so that tests inject it): at the
// hard limit it says Hard, and the caller closes the client at once; at the
// soft limit it marks the moment the client first reached it (the Usage's
// softSince, compared and swapped from zero: the first marker wins), and
// says SoftExpired once the mark is more than soft-seconds old, Soft
// before. The server checks the replies each command adds (one comparison
// a command against Usage.OutCheck, armed from the class's limits before
// each read), each PUBLISH's push, and every CronPeriod what every client
// published (CheckPublished, which also clears the mark of a client below
// its soft limit: the time at it is no longer continuous). ReplyWritten
// clears the mark once a pipeline's replies are written unless pushes
// waiting keep the client at its soft limit. A reply counts until all of
// it has been written (Redis counts the part unsent). The replica class is
// enforced by the replica links themselves, whose output is the stream not
// yet sent, held in the backlog; the cron leaves them alone.
//
// # maxmemory-clients
//
// When a published increase takes the normal total to the limit, the wake
// channel is signalled; the cron then (and at each of its rounds, for a
// limit lowered by CONFIG SET) calls Evict, which chooses the clients
// holding the most, largest first (the older first among equals), until
// the total is under the limit, as Redis's evictClients. A client with
// CLIENT NO-EVICT on counts in the total but is never a candidate; replicas
// are neither counted nor candidates; a client already on its way out has
// its memory taken off the total before the choice. Eviction runs on the
// cron's goroutine, never a connection's, one round at a time
// (Totals.EvictMu).
//
// # Imports
//
// It imports the standard library and internal/limits (the limits' values),
// nothing else of the server's, and knows nothing of connections: package
// server (and package pubsub, for the pushes) call it, and the server
// closes the clients and writes the logs.
//
// # Client memory
//
// What clients hold (package internal/clientmem, whose doc states the
// accounting's protocol and the decisions; the server's clientmem.go) is counted as it
// changes: each one's
// request buffer (a half-sent request included), its replies while they are
// being written, its queued transaction, its pushes waiting. INFO reports
// the total as mem_clients_normal (replicas' links: mem_clients_slaves),
// CLIENT LIST each client's qbuf, qbuf-free, multi-mem, omem and tot-mem,
// and the server's MaxMemory counts it with the filters, as Redis's used_memory does: a
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
package clientmem
