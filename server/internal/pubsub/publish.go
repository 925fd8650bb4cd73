package pubsub

import (
	"strconv"

	"github.com/tidwall/match"
)

// maxMatchWork bounds the work of matching a channel against one pattern:
// tidwall/match stops after this many steps per byte of the channel.
const maxMatchWork = 1000

// Publish delivers msg, published on channel of kind k (Channel or
// ShardChannel), to the subscribers of channel and, for a Channel, of every
// pattern matching it, calling deliver once per delivery with the message
// encoded in the subscriber's protocol (RESP3 if resp3 says so, else
// RESP2). It returns the number of deliveries: a subscriber of the channel
// and of a matching pattern counts twice. deliver must not keep the bytes,
// which other subscribers share, past its return without copying them.
func (r *Registry[S]) Publish(k Kind, channel, msg []byte, resp3 func(S) bool, deliver func(S, []byte)) int {
	if k == Pattern {
		panic("pubsub: Publish to a pattern")
	}
	kind := "message"
	if k == ShardChannel {
		kind = "smessage"
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := fanOut(r.subscribers[k][string(channel)], resp3, deliver, func(resp3 bool) []byte {
		return appendPush(nil, resp3, kind, channel, msg)
	})
	if k != Channel || len(r.subscribers[Pattern]) == 0 {
		return n
	}
	ch := string(channel)
	for pat, subs := range r.subscribers[Pattern] {
		if globMatch(ch, pat) {
			n += fanOut(subs, resp3, deliver, func(resp3 bool) []byte {
				return appendPush(nil, resp3, "pmessage", []byte(pat), channel, msg)
			})
		}
	}
	return n
}

// fanOut delivers one message to each of subs, encoding it with encode at
// most once per protocol, and returns the number of deliveries.
func fanOut[S comparable](subs map[S]struct{}, resp3 func(S) bool, deliver func(S, []byte), encode func(resp3 bool) []byte) int {
	var encoded [2][]byte // RESP2, RESP3
	for sub := range subs {
		p, i := resp3(sub), 0
		if p {
			i = 1
		}
		if encoded[i] == nil {
			encoded[i] = encode(p)
		}
		deliver(sub, encoded[i])
	}
	return len(subs)
}

// globMatch is Redis's glob (* ? and \ escapes; the server's KEYS syntax)
// with a bound on the work one pattern may cost a publisher: a pattern that
// needs more matches nothing.
func globMatch(s, pattern string) bool {
	ok, stopped := match.MatchLimit(s, pattern, maxMatchWork)
	return ok && !stopped
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
	return append(append(append(b, '\r', '\n'), p...), '\r', '\n')
}
