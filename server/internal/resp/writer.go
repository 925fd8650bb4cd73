package resp

import (
	"io"

	"github.com/tidwall/redcon"
)

// Writer buffers a connection's replies in RESP2 until Flush: one
// write(2) a pipeline. It is redcon's Writer (its Append functions do the
// encoding) plus Len, Bytes, Truncate and WriteRaw, with which a server
// rewrites a pipeline's replies after the fact (when its log cannot take the
// pipeline's writes).
type Writer struct {
	w   io.Writer
	b   []byte
	err error
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
func (w *Writer) WriteNull()               { w.b = redcon.AppendNull(w.b) }
func (w *Writer) Len() int                 { return len(w.b) }
func (w *Writer) Bytes() []byte            { return w.b }
func (w *Writer) Truncate(n int)           { w.b = w.b[:n] }
func (w *Writer) WriteRaw(b []byte)        { w.b = append(w.b, b...) }

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
