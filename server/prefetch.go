package server

import (
	"bytes"

	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// Reading ahead. When a filter is much larger than the caches, a pipeline
// of single-item commands (CF.EXISTS, CF.ADD, ...) spends most of its
// filter time waiting for memory: each item's two buckets miss the cache,
// one item after another. So serveConn takes its requests from
// nextRequest, which, when it finds such a command, parses the ones
// behind it while they are of the same kind and already buffered (up to
// aheadMax), and touches every item's buckets before the first runs: the
// misses then overlap, as in CF.MEXISTS.
//
// Nothing observable changes. Requests still run one by one, in order,
// each checked and answered as before; parsing has no effect; a touch
// reads bucket words and changes nothing (no key is created, expired,
// counted as a hit or marked as used). The first request of another kind
// ends the run and is returned after it, unparsed past: so a command that
// changes how later requests are read (AUTH, HELLO, RESET) is always run
// before they are parsed. A protocol error met while reading ahead is
// returned after the requests before it, as it would have been.

// aheadMax bounds the requests read ahead, as touchBatch in the filters
// bounds the misses in flight.
const aheadMax = 32

// ahead holds the requests read ahead for one connection.
type ahead struct {
	reqs [][][]byte // parsed ahead, their argument headers copied to args
	args [][]byte
	next int // the next of reqs to return
	// tail is the request that ended the run: the reader's own slice,
	// valid until the reader is called again, which happens only once
	// tail is returned. err is the reader's error that ended it instead.
	tail [][]byte
	err  error
}

// prefetchable reports whether args is a command whose one item's buckets
// are worth touching ahead, name, key, item: its row says so (ReadAhead).
func (s *Server) prefetchable(args [][]byte) bool {
	if len(args) != 3 {
		return false
	}
	spec := s.cmds.table.Lookup(args[0])
	return spec != nil && spec.ReadAhead
}

// nextRequest returns cl's next request, or nil when none is complete in
// the buffer, or the reader's error: rd.Next, reading ahead as the top of
// this file says.
func (s *Server) nextRequest(cl *client, rd *resp.Reader, lim resp.Limits) ([][]byte, error) {
	a := &cl.ahead
	if a.next < len(a.reqs) {
		a.next++
		return a.reqs[a.next-1], nil
	}
	if a.tail != nil || a.err != nil {
		args, err := a.tail, a.err
		a.tail, a.err = nil, nil
		return args, err
	}
	args, err := rd.Next(s.mayProceed(cl), lim)
	if err != nil || !s.prefetchable(args) || !s.mayProceed(cl) || s.noReadAhead {
		return args, err
	}
	a.reqs, a.args, a.next = a.reqs[:0], a.args[:0], 0
	a.keep(args)
	for len(a.reqs) < aheadMax {
		more, err := rd.Next(true, lim)
		if err != nil || more == nil || !s.prefetchable(more) {
			a.tail, a.err = more, err
			break
		}
		a.keep(more)
	}
	if len(a.reqs) > 1 {
		s.prefetch(a.reqs)
	}
	a.next = 1
	return a.reqs[0], nil
}

// keep copies the argument headers of args, which the reader reuses.
func (a *ahead) keep(args [][]byte) {
	start := len(a.args)
	a.args = append(a.args, args...)
	a.reqs = append(a.reqs, a.args[start:len(a.args):len(a.args)])
}

// prefetch touches the buckets of the items reqs name, one Touch for each
// run of requests on the same key.
func (s *Server) prefetch(reqs [][][]byte) {
	var items [aheadMax][]byte
	for i := 0; i < len(reqs); {
		key, n := reqs[i][1], 0
		for ; i < len(reqs) && bytes.Equal(reqs[i][1], key); i++ {
			items[n] = reqs[i][2]
			n++
		}
		if c := s.store.Peek(string(key)); c != nil {
			c.Touch(items[:n])
		}
	}
}
