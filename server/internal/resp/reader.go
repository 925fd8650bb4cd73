package resp

import (
	"bytes"
	"errors"
	"io"

	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// Redis's limits for a client that has not authenticated (since 6.2.6): a
// request of a few small arguments is all AUTH or HELLO need.
const (
	unauthMaxArgs = 10
	unauthMaxBulk = 16 << 10
	// maxInline bounds an inline request line and a header line
	// (Redis's PROTO_INLINE_MAX_SIZE).
	maxInline = 64 << 10
	// readChunk is the least free space a fill reads into once the buffer
	// has grown to it; idleBufCap is the largest buffer kept by a
	// connection with nothing pending.
	readChunk  = 16 << 10
	idleBufCap = 64 << 10
	// firstBuf is a connection's first buffer. A client that sends one
	// request at a time, or short pipelines, never needs more; one whose
	// reads fill the buffer has it doubled, up to readChunk, in a few
	// reads. 16 KiB at once (readChunk) made each of 50 short-lived
	// clients cost 16 KiB of zeroed heap where redis-server, which reads
	// into one shared query buffer, held none.
	firstBuf = 4 << 10
)

// Protocol errors, with Redis's texts; each closes the connection.
// They are declared as error values so that passing one allocates nothing.
var (
	errUnauthMultibulk   error = ProtocolError("unauthenticated multibulk length")
	errUnauthBulk        error = ProtocolError("unauthenticated bulk length")
	errInvalidMultibulk  error = ProtocolError("invalid multibulk length")
	errInvalidBulk       error = ProtocolError("invalid bulk length")
	errTooBigInline      error = ProtocolError("too big inline request")
	errTooBigMbulkHeader error = ProtocolError("too big mbulk count string")
	errTooBigBulkHeader  error = ProtocolError("too big bulk count string")
	errUnbalancedQuotes  error = ProtocolError("unbalanced quotes in request")
	// ErrQueryBufferLimit: a server closes the connection with no reply, as
	// Redis does when client-query-buffer-limit is passed.
	ErrQueryBufferLimit = errors.New("query buffer limit reached")
)

// ProtocolError is a malformed request: a server answers "ERR " and its
// text, and closes the connection.
type ProtocolError string

func (e ProtocolError) Error() string { return "Protocol error: " + string(e) }

// Limits are the bounds Next and Fill enforce.
type Limits struct {
	MaxArgs     int // arguments of one request
	MaxBulk     int // bytes of one argument (proto-max-bulk-len)
	QueryBuffer int // bytes buffered and not yet consumed (client-query-buffer-limit)
}

// Reader reads requests from one connection; see the package documentation.
type Reader struct {
	src  io.Reader
	buf  []byte
	r, w int
	// filled: the last read filled all the room it was given.
	filled bool

	// The request being parsed; all offsets relative to r.
	nargs   int   // arguments announced; 0 before the "*n" header is read
	offs    []int // start and end of each complete argument
	pos     int   // where parsing resumes
	bulk    int   // length of the argument being read; -1 while its "$n" header is awaited
	scanned int   // bytes from pos already searched for '\n'
	args    [][]byte

	// OnResize, if set, is called with the buffer's new capacity each time
	// Fill allocates one (to grow it, or to shrink it after a large request
	// was consumed), before it reads into it: a server counts what its
	// clients hold (maxmemory-clients) without a call per read.
	OnResize func(size int)
}

// NewReader returns a Reader of src.
func NewReader(src io.Reader) *Reader {
	rd := &Reader{src: src}
	rd.reset()
	return rd
}

func (rd *Reader) reset() {
	rd.nargs, rd.pos, rd.bulk, rd.scanned = 0, 0, -1, 0
	rd.offs = rd.offs[:0]
}

// Buffered returns the bytes received and not yet consumed.
func (rd *Reader) Buffered() int { return rd.w - rd.r }

// line returns the end of the line that starts at pos (the index of its
// '\n', relative to r), or -1 if it has not fully arrived. It never searches
// a byte twice, and fails for a line of more than max bytes (its '\n'
// excluded), whether or not its end has arrived.
func (rd *Reader) line(max int, tooLong error) (int, error) {
	b := rd.buf[rd.r+rd.pos+rd.scanned : rd.w]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		if rd.scanned+i > max {
			return -1, tooLong
		}
		end := rd.pos + rd.scanned + i
		rd.scanned = 0
		return end, nil
	}
	rd.scanned += len(b)
	if rd.scanned > max {
		return -1, tooLong
	}
	return -1, nil
}

// parseCount parses the decimal integer of a "*n" or "$n" header line
// (without its prefix and CR LF). ok is false for anything but an optional
// '-' and 1 to 19 digits that fit an int64.
func parseCount(b []byte) (n int64, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		n = -n
	}
	return n, true
}

// Next returns the next complete request in the buffer, or nil when none
// has fully arrived (then fill must read more). authed selects the limits:
// a client that must still authenticate may send only small requests. The
// arguments alias the buffer until the next fill.
func (rd *Reader) Next(authed bool, lim Limits) ([][]byte, error) {
	for {
		if rd.Buffered() == 0 {
			return nil, nil
		}
		if rd.nargs == 0 {
			if rd.buf[rd.r] != '*' {
				args, consumed, err := rd.inline()
				if consumed && args == nil && err == nil {
					continue // an empty line
				}
				return args, err
			}
			end, err := rd.line(maxInline, errTooBigMbulkHeader)
			if end < 0 {
				return nil, err
			}
			n, ok := parseCount(trimCR(rd.buf[rd.r+1 : rd.r+end]))
			switch {
			case !ok:
				return nil, errInvalidMultibulk
			case !authed && n > unauthMaxArgs:
				return nil, errUnauthMultibulk
			case n > int64(lim.MaxArgs):
				return nil, errInvalidMultibulk
			case n <= 0:
				// "*0" and "*-1" are empty requests: skipped, as Redis does.
				rd.r += end + 1
				rd.reset()
				continue
			}
			rd.nargs, rd.pos = int(n), end+1
		}
		for len(rd.offs) < 2*rd.nargs {
			if rd.bulk < 0 {
				if rd.pos >= rd.Buffered() {
					return nil, nil
				}
				if c := rd.buf[rd.r+rd.pos]; c != '$' {
					return nil, ProtocolError("expected '$', got '" + printable(c) + "'")
				}
				end, err := rd.line(maxInline, errTooBigBulkHeader)
				if end < 0 {
					return nil, err
				}
				n, ok := parseCount(trimCR(rd.buf[rd.r+rd.pos+1 : rd.r+end]))
				switch {
				case !ok || n < 0:
					return nil, errInvalidBulk
				case !authed && n > unauthMaxBulk:
					return nil, errUnauthBulk
				case n > int64(lim.MaxBulk):
					return nil, errInvalidBulk
				}
				rd.bulk, rd.pos = int(n), end+1
			}
			if rd.Buffered()-rd.pos < rd.bulk+2 {
				return nil, nil
			}
			start := rd.pos
			if rd.buf[rd.r+start+rd.bulk] != '\r' || rd.buf[rd.r+start+rd.bulk+1] != '\n' {
				return nil, ProtocolError("bulk argument not followed by CRLF")
			}
			rd.offs = append(rd.offs, start, start+rd.bulk)
			rd.pos, rd.bulk = start+rd.bulk+2, -1
		}
		args := rd.args[:0]
		for i := 0; i < len(rd.offs); i += 2 {
			args = append(args, rd.buf[rd.r+rd.offs[i]:rd.r+rd.offs[i+1]:rd.r+rd.offs[i+1]])
		}
		rd.args = args
		rd.r += rd.pos
		rd.reset()
		return args, nil
	}
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// inline parses a request written as one line of words (a telnet session),
// with Redis's quoting rules. consumed reports whether a whole line was taken
// from the buffer; an empty line is consumed and yields no arguments.
func (rd *Reader) inline() (args [][]byte, consumed bool, err error) {
	end, err := rd.line(maxInline, errTooBigInline)
	if end < 0 {
		return nil, false, err
	}
	ln := trimCR(rd.buf[rd.r : rd.r+end])
	rd.r += end + 1
	rd.reset()
	args, err = quoted.Split(ln)
	if err != nil {
		return nil, true, errUnbalancedQuotes
	}
	if len(args) == 0 {
		args = nil
	}
	return args, true, nil
}

// Fill reads once from the source into the buffer. It drops the consumed
// bytes first (trading a large buffer for one in proportion to what is
// still pending), and grows the
// buffer, doubling it, only when too little room is left after them. It
// never lets more than lim.QueryBuffer bytes be pending: a client that
// reaches the limit gets ErrQueryBufferLimit.
func (rd *Reader) Fill(lim Limits) error {
	pending := rd.w - rd.r
	if pending >= lim.QueryBuffer {
		return ErrQueryBufferLimit
	}
	if cap(rd.buf) > idleBufCap && pending < cap(rd.buf)/4 {
		// A large request was consumed: keep a buffer in proportion to
		// what is pending now.
		nb := make([]byte, max(2*pending, readChunk))
		copy(nb, rd.buf[rd.r:rd.w])
		rd.buf, rd.r, rd.w = nb, 0, pending
		rd.resized()
	}
	// chunk is the least free space to read into: the buffer's size, up
	// to readChunk. A buffer below readChunk that the last read filled
	// is doubled rather than compacted: the client sends more than it
	// holds.
	chunk := min(max(len(rd.buf), firstBuf), readChunk)
	if len(rd.buf)-rd.w < chunk/2 {
		if rd.r > 0 && len(rd.buf)-pending >= chunk && !(rd.filled && len(rd.buf) < readChunk) {
			copy(rd.buf, rd.buf[rd.r:rd.w])
		} else {
			nb := make([]byte, max(min(2*len(rd.buf), lim.QueryBuffer), firstBuf))
			copy(nb, rd.buf[rd.r:rd.w])
			rd.buf = nb
			rd.resized()
		}
		rd.r, rd.w = 0, pending
	}
	room := rd.buf[rd.w:min(len(rd.buf), rd.w+lim.QueryBuffer-pending)]
	n, err := rd.src.Read(room)
	rd.w += n
	rd.filled = n == len(room)
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

func (rd *Reader) resized() {
	if rd.OnResize != nil {
		rd.OnResize(cap(rd.buf))
	}
}

// printable returns c, or '?' for a control character.
func printable(c byte) string {
	if c < ' ' || c == 0x7f {
		return "?"
	}
	return string(rune(c))
}
