package pubsub

import (
	"fmt"
	"sync/atomic"

	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// Subscriptions is a connection's pub/sub state: its number of
// subscriptions of each kind, as the registry reported them at each change
// (read by other connections without the registry's lock: CLIENT LIST,
// INFO), and its Delivery. The zero value is a connection with no
// subscription.
type Subscriptions struct {
	n [kinds]atomic.Int32
	// Delivery is made at the connection's first subscription and kept
	// until it ends; nil before. Set by the connection's goroutine before
	// its first Subscribe, so a publisher, which finds the connection
	// through the registry, sees it.
	Delivery *Delivery
}

// Any reports whether the connection has a subscription (CLIENT LIST's P
// flag and type pubsub, RESP2's subscribed mode, the pubsub class of
// client-output-buffer-limit).
func (s *Subscriptions) Any() bool {
	return s.n[Channel].Load()+s.n[Pattern].Load()+s.n[ShardChannel].Load() > 0
}

// Count is the connection's number of subscriptions of kind k.
func (s *Subscriptions) Count(k Kind) int32 { return s.n[k].Load() }

// Reply is the number a (un)subscription reply of kind k carries: the
// connection's channels and patterns, or its shard channels.
func (s *Subscriptions) Reply(k Kind) int64 {
	if k == ShardChannel {
		return int64(s.n[ShardChannel].Load())
	}
	return int64(s.n[Channel].Load() + s.n[Pattern].Load())
}

// Confirm records n, the connection's number of subscriptions of kind k
// after a (un)subscription of name, and writes its confirmation to w: verb
// (subscribe, punsubscribe, ...), the name and the reply's count, a push in
// RESP3 and an array in RESP2.
func (s *Subscriptions) Confirm(w *resp.Writer, verb string, k Kind, name string, n int) {
	s.n[k].Store(int32(n))
	w.WritePush(3)
	w.WriteBulkString(verb)
	w.WriteBulkString(name)
	w.WriteInt64(s.Reply(k))
}

// ConfirmNone writes the one confirmation of an UNSUBSCRIBE of kind k with
// no argument from a connection with nothing of that kind: a null name.
func (s *Subscriptions) ConfirmNone(w *resp.Writer, verb string, k Kind) {
	w.WritePush(3)
	w.WriteBulkString(verb)
	w.WriteNull()
	w.WriteInt64(s.Reply(k))
}

// Leave clears the counts once the registry forgot the connection
// (Registry.Leave), and ends its Delivery, if any.
func (s *Subscriptions) Leave() {
	for k := range Kind(kinds) {
		s.n[k].Store(0)
	}
	if s.Delivery != nil {
		s.Delivery.Close()
	}
}

// Refusal is RESP2's subscribed mode: while a connection speaking RESP2
// (protocol 2) has a subscription, only (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE,
// PING, QUIT and RESET may run; Refusal returns the error text for another
// command, named as the command table names it, and "" if it may run.
// RESP3 allows anything.
func (s *Subscriptions) Refusal(protocol int, command string) string {
	if protocol != 2 || !s.Any() {
		return ""
	}
	switch command {
	case "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe",
		"ping", "quit", "reset":
		return ""
	}
	return fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", command)
}

// Pong reports whether a PING with args (the command's name first) is
// subscribed mode's, and if so writes its reply to w: in RESP2, with a
// subscription, ["pong", message or ""], as Redis's. Otherwise the PING is
// an ordinary one, for the caller to run.
func (s *Subscriptions) Pong(w *resp.Writer, args [][]byte) bool {
	if w.Protocol() != 2 || !s.Any() || len(args) > 2 {
		return false
	}
	w.WriteArray(2)
	w.WriteBulkString("pong")
	if len(args) == 2 {
		w.WriteBulk(args[1])
	} else {
		w.WriteBulkString("")
	}
	return true
}
