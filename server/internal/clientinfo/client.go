package clientinfo

import (
	"fmt"
	"time"
)

// Client is a connection's fields, as CLIENT LIST reads them at one moment.
type Client struct {
	ID          int64
	Addr, LAddr string // the peer's address and the server's, as ip:port
	FD          int    // -1 if the connection has none
	Name        string // CLIENT SETNAME's, "" if none
	Created     time.Time
	LastActive  time.Time // when its last request was read
	Replica     bool      // a replica's link (after PSYNC): flag S, type slave
	NoEvict     bool      // CLIENT NO-EVICT ON: flag e
	NoTouch     bool      // CLIENT NO-TOUCH ON: flag T
	InMulti     bool      // inside MULTI: flag x
	Queued      int       // commands MULTI queued
	Watch       int       // keys WATCHed
	// Sub, PSub and SSub are its subscriptions: channels, patterns and
	// shard channels; any makes it a subscriber (flag P, type pubsub).
	Sub, PSub, SSub int
	// Memory, in bytes: QbufCap its request buffer and Qbuf the requests in
	// it not yet run, MultiMem the commands MULTI queued, Omem its replies
	// being written and pushes waiting.
	QbufCap, Qbuf, MultiMem, Omem int64
	Cmd                           string // the command last run, "NULL" if none
	User                          string // its user, "" before AUTH
	Resp                          int    // 2 or 3
	LibName, LibVer               string // CLIENT SETINFO's
}

// Flags are CLIENT LIST's flags of c: S for a replica's link, P for a
// subscriber, x inside MULTI, e for NO-EVICT, T for NO-TOUCH, in that
// order; N for none.
func (c *Client) Flags() string {
	flags := ""
	for _, f := range []struct {
		on   bool
		flag string
	}{{c.Replica, "S"}, {c.subscribed(), "P"}, {c.InMulti, "x"}, {c.NoEvict, "e"}, {c.NoTouch, "T"}} {
		if f.on {
			flags += f.flag
		}
	}
	if flags == "" {
		return "N"
	}
	return flags
}

func (c *Client) subscribed() bool { return c.Sub+c.PSub+c.SSub > 0 }

// Type is CLIENT LIST's and KILL's TYPE of c, as Redis's getClientType:
// slave for a replica's link, pubsub while it has a subscription, else
// normal. (The link a replica opens to its primary is not a client of the
// replica's.)
func (c *Client) Type() string {
	switch {
	case c.Replica:
		return "slave"
	case c.subscribed():
		return "pubsub"
	}
	return "normal"
}

// Line is c's line in CLIENT LIST and CLIENT INFO, as of now, with Redis's
// field names in Redis's order; only fields this server keeps are printed
// (db is 0, redir -1). multi is the commands queued, -1 outside MULTI;
// qbuf-free what the request buffer has left; tot-mem the request buffer,
// the output and the queued commands, what maxmemory-clients counts.
func (c *Client) Line(now time.Time) string {
	multi := -1
	if c.InMulti {
		multi = c.Queued
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=0 sub=%d psub=%d ssub=%d multi=%d watch=%d qbuf=%d qbuf-free=%d multi-mem=%d omem=%d tot-mem=%d cmd=%s user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s",
		c.ID, c.Addr, c.LAddr, c.FD, c.Name,
		int(now.Sub(c.Created).Seconds()), int(now.Sub(c.LastActive).Seconds()),
		c.Flags(), c.Sub, c.PSub, c.SSub, multi, c.Watch,
		c.Qbuf, max(c.QbufCap-c.Qbuf, 0), c.MultiMem, c.Omem, c.QbufCap+c.Omem+c.MultiMem,
		c.Cmd, c.User, c.Resp, c.LibName, c.LibVer)
}
