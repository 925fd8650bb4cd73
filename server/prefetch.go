package server

import (
	"bytes"

	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// Reading ahead. When a filter is much larger than the caches, a pipeline
// of single-item commands (CF.EXISTS, CF.ADD, ...) spends most of its
// filter time waiting for memory: each item's two buckets miss the cache,
// one item after another. So serveConn takes its requests from
// nextRequest, which reads a run of them ahead (resp.Ahead, whose doc says
// why nothing observable changes) and touches every item's buckets before
// the first runs: the misses then overlap, as in CF.MEXISTS. A touch reads
// bucket words and changes nothing (no key is created, expired, counted as
// a hit or marked as used).

// prefetchable reports whether args is a command whose one item's buckets
// are worth touching ahead, name, key, item: its row says so (ReadAhead).
func (s *Server) prefetchable(args [][]byte) bool {
	return len(args) == 3 && s.cmds.readsAhead(args[0])
}

// nextRequest returns cl's next request, or nil when none is complete in
// the buffer, or the reader's error, reading ahead as the top of this file
// says.
func (s *Server) nextRequest(cl *client, rd *resp.Reader, lim resp.Limits) ([][]byte, error) {
	if s.noReadAhead {
		return rd.Next(s.mayProceed(cl), lim)
	}
	return cl.ahead.Next(rd, lim, func() bool { return s.mayProceed(cl) }, s.prefetchable, s.prefetch)
}

// prefetch touches the buckets of the items reqs name, one Touch for each
// run of requests on the same key.
func (s *Server) prefetch(reqs [][][]byte) {
	var items [resp.AheadMax][]byte
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
