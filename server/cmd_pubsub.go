package server

import (
	"fmt"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/acl"
	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// Pub/sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH,
// SPUBLISH and PUBSUB, as Redis 7.2 has them. Shard channels are a second
// namespace of plain channels (a standalone server has one shard), with no
// patterns. Package internal/pubsub owns the registry (Server.ps: who
// listens to what, a PUBLISH's fan-out and encoding), each connection's
// subscriptions and their delivery (client.sub: the pushes pending, the
// goroutine writing them, their bound), with its protocol; this file has
// the commands, the ACL's disconnections and the calls serveConn and exec
// make.
//
// Bound. A PUBLISH that would take a subscriber to its
// client-output-buffer-limit (pubsub class; Redis's default: hard 32mb,
// soft 8mb for 60 s), or find it at the soft limit for longer than
// allowed, drops the subscriber's messages and push closes its connection
// instead of waiting, as Redis closes a client over its limit; clientsCron
// closes one that stays at the soft limit with nothing more published
// (clientmem.go).

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
	b = append(b, binding{name: "pubsub|help", run: func(s *Server, cl *client, a [][]byte) { cl.wr.WriteHelp(pubsubHelp) }})
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

// delivery returns cl's pub/sub delivery, making it (and starting its push
// goroutine) at the first subscription.
func (s *Server) delivery(cl *client) *pubsub.Delivery {
	if cl.sub.Delivery == nil {
		cl.sub.Delivery = pubsub.NewDelivery(cl.nc, &cl.mem, s.cmem)
	}
	return cl.sub.Delivery
}

// cmdSubscribe is (P|S)SUBSCRIBE: one confirmation per argument.
func cmdSubscribe(k pubsub.Kind) handler {
	verb := k.Prefix() + "subscribe"
	return func(s *Server, cl *client, a [][]byte) {
		s.delivery(cl).Hold() // until this pipeline's replies are out
		s.ps.Subscribe(cl, k, a[1:], func(name string, n int) { cl.sub.Confirm(cl.wr, verb, k, name, n) })
	}
}

// cmdUnsubscribe is (P|S)UNSUBSCRIBE: the channels given, or all the
// client's (in order); with none to name, one reply with a null channel.
func cmdUnsubscribe(k pubsub.Kind) handler {
	verb := k.Prefix() + "unsubscribe"
	return func(s *Server, cl *client, a [][]byte) {
		if s.ps.Unsubscribe(cl, k, a[1:], func(name string, n int) { cl.sub.Confirm(cl.wr, verb, k, name, n) }) == 0 {
			cl.sub.ConfirmNone(cl.wr, verb, k)
		}
	}
}

// dropSubscriber ends cl's pub/sub when its connection ends (the connection
// is closed already, so a write in progress fails): every subscription goes,
// and the push goroutine exits.
func (s *Server) dropSubscriber(cl *client) {
	if cl.sub.Delivery == nil {
		return
	}
	s.ps.Leave(cl)
	cl.sub.Leave()
}

// closeUnpermittedSubscribers closes the connections subscribed to a
// channel or pattern their user may no longer use (acl.Unpermitted), after
// ACL SETUSER or ACL LOAD, as Redis does; self (the caller, if any) is
// closed after its reply.
func (s *Server) closeUnpermittedSubscribers(self *client) {
	subs := func(yield func(*client, acl.Subscription) bool) {
		for c, sub := range s.ps.All() {
			if !yield(c, acl.Subscription{Name: sub.Name, Pattern: sub.Kind == pubsub.Pattern}) {
				return
			}
		}
	}
	user := func(c *client) *acl.User {
		if ref := c.user.Load(); ref != nil {
			return ref.Load()
		}
		return nil
	}
	for _, c := range acl.Unpermitted(subs, user) {
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

// push is Publish's delivery: it queues one encoded message for cl, or, if
// that would take cl past its client-output-buffer-limit, closes cl (in
// another goroutine: a TLS close may write). Never blocks on the
// connection.
func (s *Server) push(cl *client, msg []byte) {
	lim := s.clientLimits().OutputBuffer.Get(classPubSub)
	if out, closed := cl.sub.Delivery.Deliver(msg, lim, time.Now()); closed {
		s.closeForOutput(cl, classPubSub, out, true)
	}
}

// flushSubscribed is endPipeline's flush for a connection with a
// subscriber: the replies, then the pushes held back or queued meanwhile.
func (s *Server) flushSubscribed(cl *client) error {
	return cl.sub.Delivery.Flush(cl.wr.Flush)
}

// subscribedRefusal is exec's check for a connection with a subscriber:
// RESP2's subscribed mode (pubsub.Subscriptions.Refusal).
func subscribedRefusal(cl *client, cmd *bound) error {
	if msg := cl.sub.Refusal(cl.wr.Protocol(), cmd.spec.Name); msg != "" {
		return replyErr(msg)
	}
	return nil
}

// runSubscribed runs cmd for a connection with a subscriber: PING in RESP2
// subscribed mode answers ["pong", message or ""], as Redis's does.
func (s *Server) runSubscribed(cl *client, cmd *bound, args [][]byte) {
	if cmd.spec.Name == "ping" && cl.sub.Pong(cl.wr, args) {
		return
	}
	cmd.run(s, cl, args)
}

// PUBSUB CHANNELS|SHARDCHANNELS [pattern]: the channels with subscribers,
// sorted.
func pubsubChannels(k pubsub.Kind) handler {
	return func(s *Server, cl *client, a [][]byte) {
		if len(a) > 3 {
			s.writeErr(cl, replyErr(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try PUBSUB HELP.", quoted.Printable(a[1], 128))))
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
