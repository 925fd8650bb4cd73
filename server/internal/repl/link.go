package repl

import (
	"net"
	"strconv"
	"sync/atomic"
	"time"
)

// Link is a replica connected to this primary: a client connection that
// sent REPLCONF or PSYNC. The server makes it (NewLink), sets what
// REPLCONF announces, hands it to Accept at PSYNC and runs it with Serve
// once the pipeline ends.
type Link struct {
	nc      net.Conn
	id      int64  // the client's id: the links' order in INFO and ROLE
	ip      string // set before Accept, by its connection's goroutine
	port    int
	state   LinkState // under Node.mu
	ack     atomic.Int64
	lastAck atomic.Int64 // unix milliseconds
	from    int64        // the offset the stream to it starts at
	full    bool         // a full copy first
	// copyNames are the keys a full copy sends (beginCopy).
	copyNames []string
	// Under Node.mu (output.go): softSince is when the link's output
	// first reached the soft limit, zero if it is below; cut is set once
	// the link passed a limit and lost its pin.
	softSince time.Time
	cut       bool
}

// NewLink makes a link of client id's connection nc, with the address it
// connected from.
func NewLink(nc net.Conn, id int64) *Link {
	l := &Link{nc: nc, id: id}
	if nc != nil {
		l.ip, _, _ = net.SplitHostPort(nc.RemoteAddr().String())
	}
	return l
}

// SetPort records REPLCONF listening-port.
func (l *Link) SetPort(port int) { l.port = port }

// SetIP records REPLCONF ip-address.
func (l *Link) SetIP(ip string) { l.ip = ip }

// LinkState is where a replica link stands, as INFO's slaveN lines name it
// (state=...): waiting for its full copy to start, receiving it, or
// receiving the stream.
type LinkState int

const (
	LinkWaitBgsave LinkState = iota // PSYNC answered, the copy not begun (or a continue not yet sent)
	LinkSendBulk                    // the full copy is being sent
	LinkOnline                      // the stream is being sent
)

var linkStateNames = [...]string{LinkWaitBgsave: "wait_bgsave", LinkSendBulk: "send_bulk", LinkOnline: "online"}

func (st LinkState) String() string {
	if st >= 0 && int(st) < len(linkStateNames) {
		return linkStateNames[st]
	}
	return "LinkState(" + strconv.Itoa(int(st)) + ")"
}

// PrimaryState is where a replica's link to its primary stands, as ROLE
// names it: waiting to connect (or retry), connecting and shaking hands,
// waiting for the PSYNC's answer and loading a full copy, or following the
// stream.
type PrimaryState int32

const (
	PrimaryConnect    PrimaryState = iota // not connected: about to, or waiting to retry
	PrimaryConnecting                     // dialling, then the handshake
	PrimarySync                           // PSYNC sent: its answer, then a full copy if one
	PrimaryConnected                      // following the stream
)

var primaryStateNames = [...]string{PrimaryConnect: "connect", PrimaryConnecting: "connecting", PrimarySync: "sync", PrimaryConnected: "connected"}

func (st PrimaryState) String() string {
	if st >= 0 && int(st) < len(primaryStateNames) {
		return primaryStateNames[st]
	}
	return "PrimaryState(" + strconv.Itoa(int(st)) + ")"
}
