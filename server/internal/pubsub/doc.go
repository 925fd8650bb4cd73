// Package pubsub is the server's pub/sub registry, who listens to what, and
// the encoding of the messages it delivers: Redis 7.2's channels, patterns
// and shard channels.
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
// It imports the standard library and github.com/tidwall/match, nothing of
// the server's; package server imports it, and keeps the pub/sub commands,
// the subscribers' connections (the pushes pending for each, their limits)
// and the ACL checks.
package pubsub
