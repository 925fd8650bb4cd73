package resptest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
)

// Error is an error reply, simple (-) or blob (!): its text without the
// prefix and line end, such as "ERR unknown command". It is a distinct type
// so that a test cannot take an error for a string reply.
type Error string

func (e Error) Error() string { return string(e) }

// Map is a RESP3 map (%), its pairs in the order they came.
type Map [][2]any

// Set is a RESP3 set (~), its members in the order they came.
type Set []any

// Push is a RESP3 push (>): out-of-band data such as a pub/sub message.
type Push []any

// Verbatim is a RESP3 verbatim string (=): a three-letter format ("txt",
// "mkd") and the text.
type Verbatim struct {
	Format string
	Text   string
}

// Attribute is a reply that came after a RESP3 attribute (|): the
// attribute's pairs and the reply itself.
type Attribute struct {
	Attrs Map
	Reply any
}

// ErrMalformed is wrapped by every error that ReadReply returns for bytes
// that are not RESP.
var ErrMalformed = errors.New("resptest: malformed reply")

// Limits on what ReadReply accepts, so that a malformed length or a deep
// nesting fails instead of allocating without bound.
const (
	maxBulk  = 512 << 20 // Redis's default proto-max-bulk-len
	maxDepth = 64
)

// Reader reads replies from a stream.
type Reader struct {
	br *bufio.Reader
}

// NewReader returns a Reader of r's replies. It buffers: once given to a
// Reader, r should not be read otherwise.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReader(r)}
}

// Peek returns the type byte of the next reply ('+', '$', '>', ...)
// without reading it.
func (r *Reader) Peek() (byte, error) {
	b, err := r.br.Peek(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// ReadKind reads one reply, as ReadReply, and returns its type byte too:
// '+' and '$' both give a string, '-' and '!' an Error.
func (r *Reader) ReadKind() (byte, any, error) {
	kind, err := r.Peek()
	if err != nil {
		return 0, nil, err
	}
	v, err := r.ReadReply()
	return kind, v, err
}

// Read reads bytes as they come, past the replies read: for a stream that
// is not RESP after a reply (a replica's copy after +FULLRESYNC).
func (r *Reader) Read(p []byte) (int, error) { return r.br.Read(p) }

// Buffered returns how many bytes have been received and not yet read.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// ReadReply reads one reply and returns it as:
//
//   - simple string   string
//   - ! error         Error
//     : integer         int64
//     $ bulk string     string, or nil for the null bulk string ($-1)
//   - array           []any, or nil for the null array (*-1)
//     _ null            nil
//     # boolean         bool
//     , double          float64
//     ( big number      *big.Int
//     = verbatim        Verbatim
//     % map             Map
//     ~ set             Set
//     > push            Push
//     | attribute       Attribute (the attribute, then the reply it precedes)
//
// Bytes that are not a reply give an error wrapping ErrMalformed; a stream
// that ends inside a reply gives io.ErrUnexpectedEOF, and one that ends
// before it io.EOF.
func (r *Reader) ReadReply() (any, error) {
	return r.read(0)
}

func (r *Reader) read(depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrMalformed, maxDepth)
	}
	line, err := r.line(depth == 0)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, fmt.Errorf("%w: an empty line", ErrMalformed)
	}
	kind, body := line[0], string(line[1:])
	switch kind {
	case '+':
		return body, nil
	case '-':
		return Error(body), nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil || body[0] == '+' {
			return nil, fmt.Errorf("%w: integer %q", ErrMalformed, body)
		}
		return n, nil
	case '_':
		if body != "" {
			return nil, fmt.Errorf("%w: null with %q", ErrMalformed, body)
		}
		return nil, nil
	case '#':
		switch body {
		case "t":
			return true, nil
		case "f":
			return false, nil
		}
		return nil, fmt.Errorf("%w: boolean %q", ErrMalformed, body)
	case ',':
		f, err := strconv.ParseFloat(body, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: double %q", ErrMalformed, body)
		}
		return f, nil
	case '(':
		n, ok := new(big.Int).SetString(body, 10)
		if !ok {
			return nil, fmt.Errorf("%w: big number %q", ErrMalformed, body)
		}
		return n, nil
	case '$', '!', '=':
		n, err := length(kind, body, kind == '$')
		if err != nil || n < 0 {
			return nil, err
		}
		if n > maxBulk {
			return nil, fmt.Errorf("%w: a string of %d bytes", ErrMalformed, n)
		}
		b, err := r.blob(n)
		if err != nil {
			return nil, err
		}
		switch kind {
		case '!':
			return Error(b), nil
		case '=':
			if len(b) < 4 || b[3] != ':' {
				return nil, fmt.Errorf("%w: verbatim string %q has no format", ErrMalformed, b)
			}
			return Verbatim{Format: string(b[:3]), Text: string(b[4:])}, nil
		}
		return string(b), nil
	case '*', '~', '>':
		n, err := length(kind, body, kind == '*')
		if err != nil || n < 0 {
			return nil, err
		}
		items, err := r.items(n, depth)
		switch {
		case err != nil:
			return nil, err
		case kind == '~':
			return Set(items), nil
		case kind == '>':
			return Push(items), nil
		}
		return items, nil
	case '%', '|':
		n, err := length(kind, body, false)
		if err != nil {
			return nil, err
		}
		m, err := r.pairs(n, depth)
		if err != nil {
			return nil, err
		}
		if kind == '%' {
			return m, nil
		}
		v, err := r.read(depth + 1)
		if err != nil {
			return nil, unexpected(err)
		}
		return Attribute{Attrs: m, Reply: v}, nil
	}
	return nil, fmt.Errorf("%w: unknown type %q in line %q", ErrMalformed, kind, line)
}

// line reads a line and returns it without its "\r\n". An end of stream
// before it is io.EOF if first, else io.ErrUnexpectedEOF. A line holds no
// other '\r' (a simple string or error cannot).
func (r *Reader) line(first bool) ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) { // longer than the buffer: gather it
		long := append([]byte(nil), b...)
		for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxBulk {
			b, err = r.br.ReadSlice('\n')
			long = append(long, b...)
		}
		if err == nil && len(long) > maxBulk+2 || errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: a line longer than %d bytes", ErrMalformed, maxBulk)
		}
		b = long
	}
	switch {
	case err == io.EOF && len(b) == 0 && first:
		return nil, io.EOF
	case err != nil:
		return nil, unexpected(err)
	case len(b) < 2 || b[len(b)-2] != '\r':
		return nil, fmt.Errorf("%w: line %.40q does not end in \\r\\n", ErrMalformed, b)
	case bytes.IndexByte(b[:len(b)-2], '\r') >= 0:
		return nil, fmt.Errorf("%w: line %.40q holds a \\r", ErrMalformed, b)
	}
	return b[:len(b)-2], nil
}

// blob reads n bytes and the "\r\n" after them.
func (r *Reader) blob(n int) ([]byte, error) {
	b := make([]byte, n+2)
	if _, err := io.ReadFull(r.br, b); err != nil {
		return nil, unexpected(err)
	}
	if b[n] != '\r' || b[n+1] != '\n' {
		return nil, fmt.Errorf("%w: a string of %d bytes is followed by %q, not \\r\\n", ErrMalformed, n, b[n:])
	}
	return b[:n], nil
}

func (r *Reader) items(n, depth int) ([]any, error) {
	items := make([]any, 0, min(n, 1024))
	for range n {
		v, err := r.read(depth + 1)
		if err != nil {
			return nil, unexpected(err)
		}
		items = append(items, v)
	}
	return items, nil
}

func (r *Reader) pairs(n, depth int) (Map, error) {
	m := make(Map, 0, min(n, 1024))
	for range n {
		var kv [2]any
		for i := range kv {
			v, err := r.read(depth + 1)
			if err != nil {
				return nil, unexpected(err)
			}
			kv[i] = v
		}
		m = append(m, kv)
	}
	return m, nil
}

// length parses the count or length of a reply of type kind: a decimal of
// at least 0, or -1 if null is true (a RESP2 null).
func length(kind byte, body string, null bool) (int, error) {
	n, err := strconv.Atoi(body)
	if err != nil || body[0] == '+' || n < 0 && !(null && n == -1) {
		return 0, fmt.Errorf("%w: length %q after %q", ErrMalformed, body, kind)
	}
	return n, nil
}

// unexpected turns an end of stream inside a reply into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Sprint prints a reply as fmt's %v does, with marks where %v would lose
// the type: an error reply, at any depth, as "-" and its text, a verbatim
// string as its format, ':' and its text, an attribute as '|', the
// attribute's pairs, a space and the reply. So Sprint of
// []any{int64(1), Error("ERR x"), nil} is "[1 -ERR x <nil>]", and a test
// can compare a reply, or a transaction's replies, with one string.
func Sprint(v any) string {
	var b strings.Builder
	sprint(&b, v)
	return b.String()
}

func sprint(b *strings.Builder, v any) {
	list := func(items []any) {
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteByte(' ')
			}
			sprint(b, it)
		}
		b.WriteByte(']')
	}
	switch v := v.(type) {
	case Error:
		b.WriteString("-" + string(v))
	case []any:
		list(v)
	case Set:
		list(v)
	case Push:
		list(v)
	case Map:
		items := make([]any, len(v))
		for i, kv := range v {
			items[i] = []any{kv[0], kv[1]}
		}
		list(items)
	case Verbatim:
		b.WriteString(v.Format + ":" + v.Text)
	case Attribute:
		b.WriteByte('|')
		sprint(b, v.Attrs)
		b.WriteByte(' ')
		sprint(b, v.Reply)
	default:
		fmt.Fprint(b, v)
	}
}
