package repl

import (
	"fmt"
	"time"
)

// A replica link's output, bounded as Redis bounds a replica's output
// buffer.
//
// Protocol. A link's output is the stream from the offset it has sent up
// to, its pin in the backlog, to the stream's end. The link pins the
// backlog from the moment its stream is decided (a continue: at its PSYNC
// offset, in Accept; a full copy: at the copy's offset, in beginCopy),
// and moves the pin forward each time a write to its connection returns
// (sendStream). So the backlog holds every byte a link has still to send,
// however far behind it is: repl-backlog-size only bounds what is kept for
// replicas that reconnect, as in Redis.
//
// client-output-buffer-limit replica bounds how far behind a link may be.
// limitLinks runs at every feed, with Node.mu held, after the append:
// a link whose output reaches the hard limit, or has stayed at or above
// the soft limit for more than soft-seconds, is cut: its pin goes (the
// backlog may trim what only it held), it is marked cut so that its writer
// never pins again, its connection is closed, which ends its writer's
// write and its reader, and a warning names the limit. The replica
// reconnects, finds its position gone from the backlog, and takes a full
// copy. The heartbeat feeds a ping each second, so the soft limit is
// checked while writes pause too. A limit of 0 is no limit, as in Redis.
//
// The linearization point of a cut is the unpin, under Node.mu: from then
// on the link's writer finds its offset gone (Since is not ok) or its
// connection closed, and sends nothing more.

// limitLinks cuts the links whose output passed client-output-buffer-limit
// replica. Preconditions: n.mu held.
func (n *Node) limitLinks() {
	if n.cfg.OutputLimit == nil || len(n.replicas) == 0 {
		return
	}
	lim := n.cfg.OutputLimit()
	if lim.Hard <= 0 && lim.Soft <= 0 {
		return
	}
	end := n.backlog.End()
	for l := range n.replicas {
		sent, ok := n.backlog.Pinned(l)
		if !ok || l.cut {
			continue
		}
		out := end - sent
		switch {
		case lim.Hard > 0 && out >= lim.Hard:
			n.cutLink(l, fmt.Sprintf("its output reached the hard limit, %d bytes", lim.Hard), out)
		case lim.Soft > 0 && out >= lim.Soft:
			now := n.min.now()
			if l.softSince.IsZero() {
				l.softSince = now
			} else if now.Sub(l.softSince) > time.Duration(lim.SoftSeconds)*time.Second {
				n.cutLink(l, fmt.Sprintf("its output stayed at or above the soft limit, %d bytes, for more than %d s", lim.Soft, lim.SoftSeconds), out)
			}
		default:
			l.softSince = time.Time{}
		}
	}
}

// cutLink cuts l for its output (see the protocol). Preconditions: n.mu held.
func (n *Node) cutLink(l *Link, why string, out int64) {
	l.cut = true
	n.backlog.Unpin(l)
	n.log.Warn("a replica's link passed client-output-buffer-limit replica and is closed; it will take a full copy",
		"replica", l.nc.RemoteAddr().String(), "why", why, "output_bytes", out)
	go l.nc.Close() // a TLS close may write: never under n.mu
}
