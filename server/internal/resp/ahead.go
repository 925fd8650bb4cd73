package resp

// Ahead reads a run of requests ahead of the one that runs: when the next
// request is worth it (a single-item CF command whose buckets are worth
// touching before it runs), Next also parses the requests behind it while
// they are worth it too and already buffered, up to AheadMax, and hands
// them to touch before returning the first, so that their cache misses
// overlap. The server's prefetch.go says why and what it touches.
//
// Nothing observable changes. Requests are still returned one by one, in
// order; parsing has no effect. The first request that is not worth it ends
// the run and is returned after it, unparsed past: so a command that
// changes how later requests are read (AUTH, HELLO, RESET) always runs
// before they are parsed. A protocol error met while reading ahead is
// returned after the requests before it, as it would have been.
type Ahead struct {
	reqs [][][]byte // parsed ahead, their argument headers copied to args
	args [][]byte
	next int // the next of reqs to return
	// tail is the request that ended the run: the reader's own slice,
	// valid until the reader is called again, which happens only once
	// tail is returned. err is the reader's error that ended it instead.
	tail [][]byte
	err  error
}

// AheadMax bounds the requests read ahead, as touchBatch in the filters
// bounds the misses in flight.
const AheadMax = 32

// Next returns the next request, or nil when none is complete in the
// buffer, or the reader's error: rd.Next(authed(), lim), reading ahead when
// worth says the request is worth it and authed still holds.
func (a *Ahead) Next(rd *Reader, lim Limits, authed func() bool, worth func([][]byte) bool, touch func([][][]byte)) ([][]byte, error) {
	if a.next < len(a.reqs) {
		a.next++
		return a.reqs[a.next-1], nil
	}
	if a.tail != nil || a.err != nil {
		args, err := a.tail, a.err
		a.tail, a.err = nil, nil
		return args, err
	}
	args, err := rd.Next(authed(), lim)
	if err != nil || !worth(args) || !authed() {
		return args, err
	}
	a.reqs, a.args, a.next = a.reqs[:0], a.args[:0], 0
	a.keep(args)
	for len(a.reqs) < AheadMax {
		more, err := rd.Next(true, lim)
		if err != nil || more == nil || !worth(more) {
			a.tail, a.err = more, err
			break
		}
		a.keep(more)
	}
	if len(a.reqs) > 1 {
		touch(a.reqs)
	}
	a.next = 1
	return a.reqs[0], nil
}

// keep copies the argument headers of args, which the reader reuses.
func (a *Ahead) keep(args [][]byte) {
	start := len(a.args)
	a.args = append(a.args, args...)
	a.reqs = append(a.reqs, a.args[start:len(a.args):len(a.args)])
}
