package server

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
)

// Pub/sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH,
// SPUBLISH and PUBSUB, as Redis 7.2 has them. Shard channels are a second
// namespace of plain channels (a standalone server has one shard), with no
// patterns.
//
// Protocol. The registry (Server.ps, package pubsub) maps each channel and
// pattern to its subscribers, the connections, under an RWMutex: a
// connection's goroutine write-locks it to change its own subscriptions,
// PUBLISH read-locks it. A publisher never
// writes to a subscriber's connection. It appends the encoded message to the
// subscriber's pending buffer (subscriber.mu, held for the append only) and
// wakes the subscriber's push goroutine, which takes the whole buffer and
// writes it to the connection while holding subscriber.wmu. The connection's
// own goroutine holds wmu too while it flushes a pipeline's replies
// (flushSubscribed), so a push never lands inside a reply. Buffers are
// written whole, in the order they were taken, and a publisher appends under
// the lock, so a subscriber receives one publisher's messages in its PUBLISH
// order.
//
// A (P|S)SUBSCRIBE sets hold before it registers anything: pushes stay
// pending until the pipeline's replies, the confirmation among them, are
// flushed, and endPipeline then clears hold and writes them. So no message
// of a channel reaches a client before its subscription's confirmation.
//
// Bound. The bytes a subscriber has pending or being written, with its
// replies being flushed, are its output, bounded by client-output-buffer-limit
// for the pubsub class (Redis's default: hard 32mb, soft 8mb for 60 s;
// clientmem.go): a PUBLISH that would take it to the hard limit, or find it
// at the soft limit for longer than allowed, drops the subscriber's
// messages, marks it dead and closes its connection instead of waiting, as
// Redis closes a client over its limit; clientsCron closes one that stays at
// the soft limit with nothing more published. A PUBLISH waits for nothing
// but the registry's read lock and each subscriber's short append. The
// pending bytes count as the client's memory (maxmemory-clients), published
// under the subscriber's lock in steps of trackOutput.

// pubsubCommands binds this file's commands to their rows of Redis's table, by name.
func pubsubCommands() (b []binding) {
	b = append(b, binding{name: "subscribe", run: cmdSubscribe(pubsub.Channel)})
	b = append(b, binding{name: "psubscribe", run: cmdSubscribe(pubsub.Pattern)})
	b = append(b, binding{name: "ssubscribe", run: cmdSubscribe(pubsub.ShardChannel)})
	b = append(b, binding{name: "unsubscribe", run: cmdUnsubscribe(pubsub.Channel)})
	b = append(b, binding{name: "punsubscribe", run: cmdUnsubscribe(pubsub.Pattern)})
	b = append(b, binding{name: "sunsubscribe", run: cmdUnsubscribe(pubsub.ShardChannel)})
	b = append(b, binding{name: "publish", run: cmdPublish(pubsub.Channel)})
	b = append(b, binding{name: "spublish", run: cmdPublish(pubsub.ShardChannel)})
	b = append(b, binding{name: "pubsub|channels", run: pubsubChannels(pubsub.Channel)})
	b = append(b, binding{name: "pubsub|shardchannels", run: pubsubChannels(pubsub.ShardChannel)})
	b = append(b, binding{name: "pubsub|numsub", run: pubsubNumsub(pubsub.Channel)})
	b = append(b, binding{name: "pubsub|shardnumsub", run: pubsubNumsub(pubsub.ShardChannel)})
	b = append(b, binding{name: "pubsub|numpat", run: func(s *Server, cl *client, a [][]byte) {
		_, patterns, _ := s.ps.Counts()
		cl.wr.WriteInt(patterns)
	}})
	b = append(b, binding{name: "pubsub|help", run: func(s *Server, cl *client, a [][]byte) { command.WriteHelp(cl.wr, pubsubHelp) }})
	return b
}

var pubsubHelp = []string{
	"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANNELS [<pattern>]",
	"    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT",
	"    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]",
	"    Return the number of subscribers for the specified channels, excluding",
	"    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]",
	"    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]",
	"    Return the number of subscribers for the specified shard level channel(s)",
	"HELP",
	"    Print this help.",
}

// maxIdlePushBuf is the largest write buffer a subscriber keeps between
// writes; a larger one (a burst) is left to the collector.
const maxIdlePushBuf = 64 << 10

// subscriber is a connection's pub/sub state, made at its first subscription
// and kept until the connection ends.
type subscriber struct {
	s  *Server
	cl *client

	// wmu is held across every write to the connection once it has a
	// subscriber: by the push goroutine and by the connection's flush.
	wmu   sync.Mutex
	spare []byte // a written buffer, to reuse; with wmu held

	// mu guards the fields below; publishers hold it only to append.
	mu       sync.Mutex
	pending  []byte // encoded pushes not yet taken
	inflight int    // bytes taken and being written
	hold     bool   // pushes wait for the pipeline's flush
	dead     bool   // over the limit or the connection failed: drop pushes

	wake   chan struct{} // capacity 1: pending is not empty
	done   chan struct{} // closed when the connection ends
	exited chan struct{} // closed by the push goroutine
}

// subscribed reports whether c has a subscription (CLIENT LIST's P flag,
// type pubsub, RESP2's subscribed mode).
func (c *client) subscribed() bool {
	return c.nsub.Load()+c.npsub.Load()+c.nssub.Load() > 0
}

// subscriberOf returns cl's subscriber, making it (and starting its push
// goroutine) at the first subscription.
func (s *Server) subscriberOf(cl *client) *subscriber {
	if cl.sub != nil {
		return cl.sub
	}
	sub := &subscriber{s: s, cl: cl,
		wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	cl.sub = sub
	if cl.nc != nil {
		go sub.pushLoop()
	} else {
		close(sub.exited) // an in-process client (tests): nothing to write to
	}
	return sub
}

// count is the number a (un)subscription reply of kind k carries: the
// client's channels and patterns, or its shard channels.
func (c *client) count(k pubsub.Kind) int64 {
	if k == pubsub.ShardChannel {
		return int64(c.nssub.Load())
	}
	return int64(c.nsub.Load() + c.npsub.Load())
}

// counter is c's count of its subscriptions of kind k, which the registry
// reports at each change and CLIENT LIST reads without its lock.
func (c *client) counter(k pubsub.Kind) *atomic.Int32 {
	switch k {
	case pubsub.Pattern:
		return &c.npsub
	case pubsub.ShardChannel:
		return &c.nssub
	}
	return &c.nsub
}

// confirm is the confirmation of a (un)subscription of kind k to name,
// with n, the client's number of subscriptions of kind k after it: a push
// in RESP3, with the reply's count.
func (c *client) confirm(verb string, k pubsub.Kind, name string, n int) {
	c.counter(k).Store(int32(n))
	c.wr.WritePush(3)
	c.wr.WriteBulkString(verb)
	c.wr.WriteBulkString(name)
	c.wr.WriteInt64(c.count(k))
}

// cmdSubscribe is (P|S)SUBSCRIBE: one confirmation per argument.
func cmdSubscribe(k pubsub.Kind) handler {
	verb := k.Prefix() + "subscribe"
	return func(s *Server, cl *client, a [][]byte) {
		sub := s.subscriberOf(cl)
		sub.mu.Lock()
		sub.hold = true // until this pipeline's replies are out
		sub.mu.Unlock()
		s.ps.Subscribe(cl, k, a[1:], func(name string, n int) { cl.confirm(verb, k, name, n) })
	}
}

// cmdUnsubscribe is (P|S)UNSUBSCRIBE: the channels given, or all the
// client's (in order); with none to name, one reply with a null channel.
func cmdUnsubscribe(k pubsub.Kind) handler {
	verb := k.Prefix() + "unsubscribe"
	return func(s *Server, cl *client, a [][]byte) {
		if s.ps.Unsubscribe(cl, k, a[1:], func(name string, n int) { cl.confirm(verb, k, name, n) }) == 0 {
			cl.wr.WritePush(3)
			cl.wr.WriteBulkString(verb)
			cl.wr.WriteNull()
			cl.wr.WriteInt64(cl.count(k))
		}
	}
}

// dropSubscriber ends cl's pub/sub when its connection ends (the connection
// is closed already, so a write in progress fails): every subscription goes,
// and the push goroutine exits.
func (s *Server) dropSubscriber(cl *client) {
	sub := cl.sub
	if sub == nil {
		return
	}
	s.ps.Leave(cl)
	cl.nsub.Store(0)
	cl.npsub.Store(0)
	cl.nssub.Store(0)
	sub.mu.Lock()
	sub.dead, sub.pending = true, nil
	sub.mu.Unlock()
	close(sub.done)
	<-sub.exited
	sub.mu.Lock()
	s.setPush(sub, 0)
	sub.mu.Unlock()
}

// closeUnpermittedSubscribers closes the connections subscribed to a
// channel or pattern their user may no longer use, after ACL SETUSER or ACL
// LOAD, as Redis does; self (the caller, if any) is closed after its reply.
func (s *Server) closeUnpermittedSubscribers(self *client) {
	var out []*client
	for c, sub := range s.ps.All() {
		if ref := c.user.Load(); ref != nil && !ref.Load().CanChannel(sub.Name, sub.Kind == pubsub.Pattern) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	for _, c := range out {
		s.kill(self, c)
	}
}

// cmdPublish is (S)PUBLISH: the number of deliveries (a client subscribed
// to the channel and to a pattern matching it counts twice, as in Redis).
func cmdPublish(k pubsub.Kind) handler {
	return func(s *Server, cl *client, a [][]byte) {
		cl.wr.WriteInt(s.ps.Publish(k, a[1], a[2], (*client).resp3, s.push))
	}
}

func (c *client) resp3() bool { return c.proto.Load() == 3 }

// push is Publish's delivery: it queues one encoded message for cl's
// subscriber, or, if that would take cl past its
// client-output-buffer-limit, drops the subscriber: its pending messages go
// and its connection is closed (in another goroutine: a TLS close may
// write). Never blocks on the connection.
func (s *Server) push(cl *client, msg []byte) {
	sub := cl.sub
	sub.mu.Lock()
	if sub.dead {
		sub.mu.Unlock()
		return
	}
	out := int64(len(sub.pending)+sub.inflight+len(msg)) + cl.mem.obuf.Load()
	lim := s.clientLimits().OutputBuffer.get(classPubSub)
	if lim.Hard > 0 && out >= lim.Hard || lim.Soft > 0 && out >= lim.Soft && s.softExpired(cl, lim, time.Now()) {
		sub.dead, sub.pending = true, nil
		s.setPush(sub, int64(sub.inflight))
		sub.mu.Unlock()
		s.closeForOutput(cl, classPubSub, out, true)
		return
	}
	sub.pending = append(sub.pending, msg...)
	s.setPush(sub, int64(len(sub.pending)+sub.inflight))
	hold := sub.hold
	sub.mu.Unlock()
	if !hold {
		select {
		case sub.wake <- struct{}{}:
		default: // already woken
		}
	}
}

// pushLoop writes sub's pending pushes whenever woken, until the connection
// ends.
func (sub *subscriber) pushLoop() {
	defer close(sub.exited)
	for {
		select {
		case <-sub.wake:
		case <-sub.done:
			return
		}
		sub.wmu.Lock()
		err := sub.drain()
		sub.wmu.Unlock()
		if err != nil {
			sub.cl.nc.Close() // the connection's goroutine sees it and ends
		}
	}
}

// drain writes the pending pushes, buffer by buffer, until none are left or
// hold is set. wmu must be held.
func (sub *subscriber) drain() error {
	for {
		sub.mu.Lock()
		if sub.hold || sub.dead || len(sub.pending) == 0 {
			sub.mu.Unlock()
			return nil
		}
		buf := sub.pending
		sub.pending, sub.spare = sub.spare, nil
		sub.inflight = len(buf)
		sub.mu.Unlock()
		_, err := sub.cl.nc.Write(buf)
		sub.mu.Lock()
		sub.inflight = 0
		if err != nil {
			sub.dead, sub.pending = true, nil
		}
		sub.s.setPush(sub, int64(len(sub.pending)))
		sub.mu.Unlock()
		if err != nil {
			return err
		}
		if cap(buf) <= maxIdlePushBuf {
			sub.spare = buf[:0]
		}
	}
}

// flushSubscribed is endPipeline's flush for a connection with a
// subscriber: the replies, then the pushes held back or queued meanwhile,
// with wmu held so the push goroutine writes nothing in between.
func (s *Server) flushSubscribed(cl *client) error {
	sub := cl.sub
	sub.wmu.Lock()
	defer sub.wmu.Unlock()
	err := cl.wr.Flush()
	sub.mu.Lock()
	sub.hold = false
	sub.mu.Unlock()
	if err != nil {
		return err
	}
	return sub.drain()
}

// subscribedRefusal is exec's check for a connection with a subscriber: in
// RESP2, while it has subscriptions, only (P|S)SUBSCRIBE,
// (P|S)UNSUBSCRIBE, PING, QUIT and RESET may run. RESP3 allows anything.
func subscribedRefusal(cl *client, cmd *bound) error {
	if cl.wr.Protocol() != 2 || !cl.subscribed() {
		return nil
	}
	switch cmd.spec.Name {
	case "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe",
		"ping", "quit", "reset":
		return nil
	}
	return replyErr(fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", cmd.spec.Name))
}

// runSubscribed runs cmd for a connection with a subscriber: PING in RESP2
// subscribed mode answers ["pong", message or ""], as Redis's does.
func (s *Server) runSubscribed(cl *client, cmd *bound, args [][]byte) {
	if cmd.spec.Name != "ping" || cl.wr.Protocol() != 2 || !cl.subscribed() || len(args) > 2 {
		cmd.run(s, cl, args)
		return
	}
	cl.wr.WriteArray(2)
	cl.wr.WriteBulkString("pong")
	if len(args) == 2 {
		cl.wr.WriteBulk(args[1])
	} else {
		cl.wr.WriteBulkString("")
	}
}

// PUBSUB CHANNELS|SHARDCHANNELS [pattern]: the channels with subscribers,
// sorted.
func pubsubChannels(k pubsub.Kind) handler {
	return func(s *Server, cl *client, a [][]byte) {
		if len(a) > 3 {
			s.writeErr(cl, replyErr(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try PUBSUB HELP.", printable(a[1], 128))))
			return
		}
		pattern := "*"
		if len(a) == 3 {
			pattern = string(a[2])
		}
		names := s.ps.Channels(k, pattern)
		cl.wr.WriteArray(len(names))
		for _, name := range names {
			cl.wr.WriteBulkString(name)
		}
	}
}

// PUBSUB NUMSUB|SHARDNUMSUB [channel...]: each channel and its number of
// subscribers, a flat array (RESP3 too, as Redis).
func pubsubNumsub(k pubsub.Kind) handler {
	return func(s *Server, cl *client, a [][]byte) {
		counts := s.ps.NumSub(k, a[2:])
		cl.wr.WriteArray(2 * len(counts))
		for i, ch := range a[2:] {
			cl.wr.WriteBulk(ch)
			cl.wr.WriteInt(counts[i])
		}
	}
}
