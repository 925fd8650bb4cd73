package resp

import (
	"io"
	"math"
	"strconv"

	"github.com/tidwall/redcon"
)

// Writer buffers a connection's replies until Flush: one write(2) a
// pipeline. It is redcon's Writer (its Append functions do the RESP2
// encoding) plus the RESP3 types, and Len, Bytes, Truncate and WriteRaw, with
// which a server rewrites a pipeline's replies after the fact (when its log
// cannot take the pipeline's writes).
//
// The RESP3 types (maps, sets, booleans, doubles, nulls, verbatim strings,
// pushes) are written as RESP3 once SetProtocol(3) has been called (HELLO 3),
// and as their RESP2 forms before, the way Redis downgrades them: a map as a
// flat array of keys and values, a set as an array, a boolean as the integer
// 1 or 0, a double as a bulk string, a null as the null bulk string, a
// verbatim string as a bulk string.
type Writer struct {
	w     io.Writer
	b     []byte
	err   error
	resp3 bool
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// maxIdleReplyBuf is the largest reply buffer kept between pipelines.
const maxIdleReplyBuf = 64 << 10

func (w *Writer) WriteError(msg string)    { w.b = redcon.AppendError(w.b, msg) }
func (w *Writer) WriteString(msg string)   { w.b = redcon.AppendString(w.b, msg) }
func (w *Writer) WriteInt(n int)           { w.b = redcon.AppendInt(w.b, int64(n)) }
func (w *Writer) WriteInt64(n int64)       { w.b = redcon.AppendInt(w.b, n) }
func (w *Writer) WriteBulk(b []byte)       { w.b = redcon.AppendBulk(w.b, b) }
func (w *Writer) WriteBulkString(s string) { w.b = redcon.AppendBulkString(w.b, s) }
func (w *Writer) WriteArray(n int)         { w.b = redcon.AppendArray(w.b, n) }
func (w *Writer) Len() int                 { return len(w.b) }
func (w *Writer) Bytes() []byte            { return w.b }
func (w *Writer) Truncate(n int)           { w.b = w.b[:n] }
func (w *Writer) WriteRaw(b []byte)        { w.b = append(w.b, b...) }

// SetProtocol selects RESP2 (2) or RESP3 (3) for the replies written after
// it.
func (w *Writer) SetProtocol(v int) { w.resp3 = v == 3 }

// Protocol is the protocol version replies are written in: 2 or 3.
func (w *Writer) Protocol() int {
	if w.resp3 {
		return 3
	}
	return 2
}

// WriteNull writes a null: RESP3 "_", RESP2 the null bulk string.
func (w *Writer) WriteNull() {
	if w.resp3 {
		w.b = append(w.b, "_\r\n"...)
	} else {
		w.b = redcon.AppendNull(w.b)
	}
}

// WriteNullArray writes a null where RESP2 has the null array (an EXEC
// aborted by WATCH, for one).
func (w *Writer) WriteNullArray() {
	if w.resp3 {
		w.b = append(w.b, "_\r\n"...)
	} else {
		w.b = append(w.b, "*-1\r\n"...)
	}
}

// WriteMap starts a map of n key-value pairs; 2n replies follow.
func (w *Writer) WriteMap(n int) {
	if w.resp3 {
		w.b = appendHeader(w.b, '%', n)
	} else {
		w.b = redcon.AppendArray(w.b, 2*n)
	}
}

// WriteSet starts a set of n members.
func (w *Writer) WriteSet(n int) { w.aggregate('~', n) }

// WritePush starts an out-of-band push of n elements (pub/sub messages).
func (w *Writer) WritePush(n int) { w.aggregate('>', n) }

func (w *Writer) aggregate(kind byte, n int) {
	if w.resp3 {
		w.b = appendHeader(w.b, kind, n)
	} else {
		w.b = redcon.AppendArray(w.b, n)
	}
}

// WriteBool writes a boolean: RESP3 "#t"/"#f", RESP2 the integer 1 or 0.
func (w *Writer) WriteBool(v bool) {
	switch {
	case w.resp3 && v:
		w.b = append(w.b, "#t\r\n"...)
	case w.resp3:
		w.b = append(w.b, "#f\r\n"...)
	case v:
		w.b = redcon.AppendInt(w.b, 1)
	default:
		w.b = redcon.AppendInt(w.b, 0)
	}
}

// WriteDouble writes a double: RESP3 ",", RESP2 a bulk string, in the
// shortest form that reads back exactly ("inf", "-inf" and "nan" as Redis
// spells them).
func (w *Writer) WriteDouble(f float64) {
	var num []byte
	switch {
	case math.IsInf(f, 1):
		num = []byte("inf")
	case math.IsInf(f, -1):
		num = []byte("-inf")
	case math.IsNaN(f):
		num = []byte("nan")
	default:
		num = strconv.AppendFloat(nil, f, 'g', -1, 64)
	}
	if w.resp3 {
		w.b = append(append(append(w.b, ','), num...), "\r\n"...)
	} else {
		w.b = redcon.AppendBulk(w.b, num)
	}
}

// WriteVerbatim writes text meant for people (INFO, CLIENT LIST): RESP3's
// verbatim string of format "txt", RESP2 a bulk string.
func (w *Writer) WriteVerbatim(s string) {
	if !w.resp3 {
		w.b = redcon.AppendBulkString(w.b, s)
		return
	}
	w.b = appendHeader(w.b, '=', len(s)+4)
	w.b = append(append(append(w.b, "txt:"...), s...), "\r\n"...)
}

func appendHeader(b []byte, kind byte, n int) []byte {
	b = strconv.AppendInt(append(b, kind), int64(n), 10)
	return append(b, '\r', '\n')
}

// Flush writes the buffered replies; after an error every Flush fails.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.b) > 0 {
		_, w.err = w.w.Write(w.b)
	}
	if cap(w.b) > maxIdleReplyBuf {
		w.b = nil
	} else {
		w.b = w.b[:0]
	}
	return w.err
}

// WriteHelp writes the lines of a HELP subcommand as Redis does: an array
// of simple strings.
func (w *Writer) WriteHelp(lines []string) {
	w.WriteArray(len(lines))
	for _, l := range lines {
		w.WriteString(l)
	}
}
