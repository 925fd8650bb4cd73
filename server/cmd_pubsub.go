package server

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/tidwall/match"
)

// Pub/sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH,
// SPUBLISH and PUBSUB, as Redis 7.2 has them. Shard channels are a second
// namespace of plain channels (a standalone server has one shard), with no
// patterns.
//
// Protocol. The registry (Server.ps) maps each channel and pattern to its
// subscribers under an RWMutex: a connection's goroutine write-locks it to
// change its own subscriptions, PUBLISH read-locks it. A publisher never
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

func init() {
	handle("subscribe", cmdSubscribe(nsPlain, false))
	handle("psubscribe", cmdSubscribe(nsPlain, true))
	handle("ssubscribe", cmdSubscribe(nsShard, false))
	handle("unsubscribe", cmdUnsubscribe(nsPlain, false))
	handle("punsubscribe", cmdUnsubscribe(nsPlain, true))
	handle("sunsubscribe", cmdUnsubscribe(nsShard, false))
	handle("publish", func(s *Server, cl *client, a [][]byte) { cl.wr.WriteInt(s.publishMessage(nsPlain, a[1], a[2])) })
	handle("spublish", func(s *Server, cl *client, a [][]byte) { cl.wr.WriteInt(s.publishMessage(nsShard, a[1], a[2])) })
	handle("pubsub|channels", pubsubChannels(nsPlain))
	handle("pubsub|shardchannels", pubsubChannels(nsShard))
	handle("pubsub|numsub", pubsubNumsub(nsPlain))
	handle("pubsub|shardnumsub", pubsubNumsub(nsShard))
	handle("pubsub|numpat", func(s *Server, cl *client, a [][]byte) {
		s.ps.mu.RLock()
		n := len(s.ps.patterns)
		s.ps.mu.RUnlock()
		cl.wr.WriteInt(n)
	})
	handle("pubsub|help", func(s *Server, cl *client, a [][]byte) { command.WriteHelp(cl.wr, pubsubHelp) })
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

// The channel namespaces: plain channels (with patterns) and shard channels.
const (
	nsPlain = 0
	nsShard = 1
)

// maxIdlePushBuf is the largest write buffer a subscriber keeps between
// writes; a larger one (a burst) is left to the collector.
const maxIdlePushBuf = 64 << 10

// pubsub is the registry: who listens to what. Sets are never empty: the
// last subscriber's leaving deletes its channel's (or pattern's) entry, so
// len(channels[ns]) counts the channels with subscribers.
type pubsub struct {
	mu       sync.RWMutex
	channels [2]map[string]map[*subscriber]struct{}
	patterns map[string]map[*subscriber]struct{}
}

// subscriber is a connection's pub/sub state, made at its first subscription
// and kept until the connection ends.
type subscriber struct {
	s  *Server
	cl *client
	// The connection's subscriptions: changed by its goroutine only, with
	// the registry write-locked; its counts are in client (nsub...).
	channels [2]map[string]struct{}
	patterns map[string]struct{}

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
	sub := &subscriber{s: s, cl: cl, patterns: map[string]struct{}{},
		wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	for i := range sub.channels {
		sub.channels[i] = map[string]struct{}{}
	}
	cl.sub = sub
	if cl.nc != nil {
		go sub.pushLoop()
	} else {
		close(sub.exited) // an in-process client (tests): nothing to write to
	}
	return sub
}

// pubsubKind names a namespace's subscription replies and messages.
func pubsubKind(ns int, pattern bool, verb string) string {
	switch {
	case pattern:
		return "p" + verb
	case ns == nsShard:
		return "s" + verb
	}
	return verb
}

// count is the number a (un)subscription reply carries: the client's
// channels and patterns, or its shard channels.
func (c *client) count(ns int) int64 {
	if ns == nsShard {
		return int64(c.nssub.Load())
	}
	return int64(c.nsub.Load() + c.npsub.Load())
}

func (c *client) counter(ns int, pattern bool) *atomic.Int32 {
	switch {
	case pattern:
		return &c.npsub
	case ns == nsShard:
		return &c.nssub
	}
	return &c.nsub
}

// cmdSubscribe is (P|S)SUBSCRIBE: one confirmation per argument, a push in
// RESP3, with the client's count after it.
func cmdSubscribe(ns int, pattern bool) handler {
	verb := pubsubKind(ns, pattern, "subscribe")
	return func(s *Server, cl *client, a [][]byte) {
		sub := s.subscriberOf(cl)
		sub.mu.Lock()
		sub.hold = true // until this pipeline's replies are out
		sub.mu.Unlock()
		own, n := sub.channels[ns], cl.counter(ns, pattern)
		if pattern {
			own = sub.patterns
		}
		s.ps.mu.Lock()
		reg := &s.ps.channels[ns]
		if pattern {
			reg = &s.ps.patterns
		}
		for _, arg := range a[1:] {
			name := string(arg)
			if _, ok := own[name]; !ok {
				own[name] = struct{}{}
				n.Add(1)
				if *reg == nil {
					*reg = map[string]map[*subscriber]struct{}{}
				}
				set := (*reg)[name]
				if set == nil {
					set = map[*subscriber]struct{}{}
					(*reg)[name] = set
				}
				set[sub] = struct{}{}
			}
			cl.wr.WritePush(3)
			cl.wr.WriteBulkString(verb)
			cl.wr.WriteBulk(arg)
			cl.wr.WriteInt64(cl.count(ns))
		}
		s.ps.mu.Unlock()
	}
}

// cmdUnsubscribe is (P|S)UNSUBSCRIBE: the channels given, or all the
// client's (in order); with none to name, one reply with a null channel.
func cmdUnsubscribe(ns int, pattern bool) handler {
	verb := pubsubKind(ns, pattern, "unsubscribe")
	return func(s *Server, cl *client, a [][]byte) {
		var names []string
		for _, arg := range a[1:] {
			names = append(names, string(arg))
		}
		sub := cl.sub
		if len(a) == 1 && sub != nil {
			own := sub.channels[ns]
			if pattern {
				own = sub.patterns
			}
			for name := range own {
				names = append(names, name)
			}
			slices.Sort(names)
		}
		if len(names) == 0 {
			cl.wr.WritePush(3)
			cl.wr.WriteBulkString(verb)
			cl.wr.WriteNull()
			cl.wr.WriteInt64(cl.count(ns))
			return
		}
		s.ps.mu.Lock()
		for _, name := range names {
			if sub != nil {
				s.ps.unregister(sub, ns, pattern, name)
			}
			cl.wr.WritePush(3)
			cl.wr.WriteBulkString(verb)
			cl.wr.WriteBulkString(name)
			cl.wr.WriteInt64(cl.count(ns))
		}
		s.ps.mu.Unlock()
	}
}

// unregister removes one subscription of sub; ps.mu write-locked.
func (ps *pubsub) unregister(sub *subscriber, ns int, pattern bool, name string) {
	own, reg, n := sub.channels[ns], ps.channels[ns], sub.cl.counter(ns, pattern)
	if pattern {
		own, reg = sub.patterns, ps.patterns
	}
	if _, ok := own[name]; !ok {
		return
	}
	delete(own, name)
	n.Add(-1)
	delete(reg[name], sub)
	if len(reg[name]) == 0 {
		delete(reg, name)
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
	s.ps.mu.Lock()
	for ns := range sub.channels {
		for name := range sub.channels[ns] {
			s.ps.unregister(sub, ns, false, name)
		}
	}
	for name := range sub.patterns {
		s.ps.unregister(sub, nsPlain, true, name)
	}
	s.ps.mu.Unlock()
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
	denied := func(sub *subscriber, name string, pattern bool) {
		if ref := sub.cl.user.Load(); ref != nil && !ref.Load().CanChannel(name, pattern) && !slices.Contains(out, sub.cl) {
			out = append(out, sub.cl)
		}
	}
	s.ps.mu.RLock()
	for _, reg := range s.ps.channels {
		for name, subs := range reg {
			for sub := range subs {
				denied(sub, name, false)
			}
		}
	}
	for name, subs := range s.ps.patterns {
		for sub := range subs {
			denied(sub, name, true)
		}
	}
	s.ps.mu.RUnlock()
	for _, c := range out {
		s.kill(self, c)
	}
}

// publishMessage delivers msg to the subscribers of channel in namespace ns and,
// for plain channels, of every pattern matching it, and returns the number
// of deliveries (a client subscribed twice counts twice, as in Redis).
// Each message is encoded once per protocol.
func (s *Server) publishMessage(ns int, channel, msg []byte) int {
	s.ps.mu.RLock()
	defer s.ps.mu.RUnlock()
	n := 0
	var enc [2][]byte // RESP2, RESP3
	for sub := range s.ps.channels[ns][string(channel)] {
		p := sub.resp3()
		if enc[p] == nil {
			enc[p] = appendPush(nil, p == 1, pubsubKind(ns, false, "message"), channel, msg)
		}
		s.push(sub, enc[p])
		n++
	}
	if ns != nsPlain || len(s.ps.patterns) == 0 {
		return n
	}
	ch := string(channel)
	for pat, subs := range s.ps.patterns {
		if !globMatch(ch, pat) {
			continue
		}
		var penc [2][]byte
		for sub := range subs {
			p := sub.resp3()
			if penc[p] == nil {
				penc[p] = appendPush(nil, p == 1, "pmessage", []byte(pat), channel, msg)
			}
			s.push(sub, penc[p])
			n++
		}
	}
	return n
}

// globMatch is Redis's glob (* ? and \ escapes; this server's KEYS syntax)
// with a bound on the work one pattern may cost a publisher: a pattern that
// needs more matches nothing.
func globMatch(s, pattern string) bool {
	ok, stopped := match.MatchLimit(s, pattern, 1000)
	return ok && !stopped
}

func (sub *subscriber) resp3() int {
	if sub.cl.proto.Load() == 3 {
		return 1
	}
	return 0
}

// appendPush appends a push of kind and parts: RESP3's '>' or RESP2's array.
func appendPush(b []byte, resp3 bool, kind string, parts ...[]byte) []byte {
	head := byte('*')
	if resp3 {
		head = '>'
	}
	b = strconv.AppendInt(append(b, head), int64(len(parts)+1), 10)
	b = append(b, '\r', '\n')
	b = appendBulk(b, []byte(kind))
	for _, p := range parts {
		b = appendBulk(b, p)
	}
	return b
}

func appendBulk(b, p []byte) []byte {
	b = strconv.AppendInt(append(b, '$'), int64(len(p)), 10)
	b = append(append(append(b, '\r', '\n'), p...), '\r', '\n')
	return b
}

// push queues one encoded message for sub, or, if that would take sub past
// its client-output-buffer-limit, drops sub: its pending messages go and
// its connection is closed (in another goroutine: a TLS close may write).
// Never blocks on the connection.
func (s *Server) push(sub *subscriber, msg []byte) {
	sub.mu.Lock()
	if sub.dead {
		sub.mu.Unlock()
		return
	}
	out := int64(len(sub.pending)+sub.inflight+len(msg)) + sub.cl.mem.obuf.Load()
	lim := s.clientLimits().OutputBuffer.get(classPubSub)
	if lim.Hard > 0 && out >= lim.Hard || lim.Soft > 0 && out >= lim.Soft && s.softExpired(sub.cl, lim, time.Now()) {
		sub.dead, sub.pending = true, nil
		s.setPush(sub, int64(sub.inflight))
		sub.mu.Unlock()
		s.closeForOutput(sub.cl, classPubSub, out, true)
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
func subscribedRefusal(cl *client, cmd *bound) string {
	if cl.wr.Protocol() != 2 || !cl.subscribed() {
		return ""
	}
	switch cmd.spec.Name {
	case "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe",
		"ping", "quit", "reset":
		return ""
	}
	return fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", cmd.spec.Name)
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
func pubsubChannels(ns int) handler {
	return func(s *Server, cl *client, a [][]byte) {
		if len(a) > 3 {
			s.writeErr(cl, replyErr(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try PUBSUB HELP.", printable(a[1], 128))))
			return
		}
		var names []string
		s.ps.mu.RLock()
		for name := range s.ps.channels[ns] {
			if len(a) < 3 || globMatch(name, string(a[2])) {
				names = append(names, name)
			}
		}
		s.ps.mu.RUnlock()
		slices.Sort(names)
		cl.wr.WriteArray(len(names))
		for _, name := range names {
			cl.wr.WriteBulkString(name)
		}
	}
}

// PUBSUB NUMSUB|SHARDNUMSUB [channel...]: each channel and its number of
// subscribers, a flat array (RESP3 too, as Redis).
func pubsubNumsub(ns int) handler {
	return func(s *Server, cl *client, a [][]byte) {
		cl.wr.WriteArray(2 * (len(a) - 2))
		s.ps.mu.RLock()
		defer s.ps.mu.RUnlock()
		for _, ch := range a[2:] {
			cl.wr.WriteBulk(ch)
			cl.wr.WriteInt(len(s.ps.channels[ns][string(ch)]))
		}
	}
}

// pubsubCounts are INFO's pubsub_channels, pubsub_patterns and
// pubsubshard_channels.
func (s *Server) pubsubCounts() (channels, patterns, shard int) {
	s.ps.mu.RLock()
	defer s.ps.mu.RUnlock()
	return len(s.ps.channels[nsPlain]), len(s.ps.patterns), len(s.ps.channels[nsShard])
}
