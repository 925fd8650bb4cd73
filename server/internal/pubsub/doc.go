// Package pubsub is the server's pub/sub registry, who listens to what, the
// encoding of the messages it delivers, and each subscriber's delivery to
// its connection: Redis 7.2's channels, patterns and shard channels.
//
// Terminology. A subscriber (S, any comparable handle: the server uses its
// connection) has subscriptions of three kinds: channels (SUBSCRIBE),
// patterns (PSUBSCRIBE, Redis's glob) and shard channels (SSUBSCRIBE; a
// standalone server is one shard, so they are a second namespace of plain
// channels, with no patterns). A PUBLISH reaches the subscribers of its
// channel and of every pattern matching it; an SPUBLISH, those of its shard
// channel.
//
// The registry keeps two indexes per kind, each the mirror of the other:
// name to subscribers (what a publisher reads) and subscriber to names
// (what UNSUBSCRIBE with no argument and a leaving subscriber read). Sets
// are never empty: the last member's leaving deletes its entry, so the
// number of entries is the number of channels (or patterns) with
// subscribers, which PUBSUB CHANNELS, NUMPAT and INFO report, and a
// subscriber's entry holds exactly its subscriptions, whose number the
// (un)subscription replies carry.
//
// Delivery. Publish encodes a message at most once per protocol (a RESP2
// array or a RESP3 push), at the first subscriber that speaks it, and hands
// the same bytes to each subscriber's deliver call: fanning out allocates
// nothing per subscriber. A subscriber subscribed to a channel and to a
// pattern matching it receives the message twice, and Publish counts both,
// as Redis does. Patterns are the server's glob, as KEYS has it: * ? and \
// escapes (Redis's [...] classes are not: brackets are literal), with a
// bound on the work of one match, 1000 steps a byte of the channel: a
// pattern that would cost a publisher more matches nothing.
//
// Protocol. One RWMutex guards both indexes. Publishers (Publish) and the
// queries (Channels, NumSub, Counts, All) read-lock it; Subscribe,
// Unsubscribe and Leave write-lock it, once per call however many names the
// call carries, so a command's subscriptions appear to publishers together.
// A subscription is visible to publishers from the release of the write
// lock that added it; a Publish's count is of the subscriptions registered
// when it took its read lock, and every one of them is delivered before it
// returns. The callbacks (confirm, deliver, resp3, All's loop body) run with
// the lock held: they must not call the registry, and should be short
// (deliver appends to a buffer and never blocks on a connection).
//
// # Subscribers
//
// A connection's side is its Subscriptions: its number of subscriptions of
// each kind, stored at each change as the registry reports it (Confirm), so
// that other connections read them without the registry's lock, and, from
// its first subscription until it ends, its Delivery. Subscriptions also
// writes the confirmations (a push in RESP3, an array in RESP2) and decides
// RESP2's subscribed mode: while a RESP2 connection has a subscription,
// only (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING (answered ["pong", message])
// QUIT and RESET run (Refusal, Pong); RESP3 allows anything.
//
// Delivery. A publisher never writes to a subscriber's connection: Deliver
// appends the message to the subscriber's pending buffer and wakes its push
// goroutine, which writes whole buffers holding the connection's write
// lock; the connection's flush of its replies holds it too (Flush), so a
// push never lands inside a reply, and one publisher's messages reach a
// subscriber in PUBLISH order. A (P|S)SUBSCRIBE holds pushes back (Hold)
// until its pipeline's replies, its confirmation among them, are flushed.
// delivery.go opens with the protocol and its linearization points.
//
// Bound. The bytes a subscriber has pending or being written, with its
// replies being flushed, are its output, bounded by
// client-output-buffer-limit's pubsub class (Redis's default: hard 32mb,
// soft 8mb for 60 s; package clientmem decides): the Deliver that would
// take it to the hard limit, or find it at the soft limit for longer than
// allowed, drops the subscriber's messages, marks the Delivery dead and
// reports it, and the caller closes the connection instead of waiting, as
// Redis closes a client over its limit. A PUBLISH waits for nothing but
// the registry's read lock and each subscriber's short append. The pending
// bytes count as the client's memory (maxmemory-clients), published under
// the subscriber's lock (clientmem's SetPush).
//
// # Imports
//
// It imports the standard library, github.com/tidwall/match, and of the
// server's packages internal/clientmem (the accounting of the pushes and
// the limit's decision), internal/limits (the limit's values) and
// internal/resp (the confirmations' writer), nothing else; package server
// imports it, and keeps the pub/sub commands, the closing of the
// connections the limits name and the ACL checks.
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
package pubsub
