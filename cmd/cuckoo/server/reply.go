package server

import (
	"io"

	"github.com/tidwall/redcon"
)

// replyWriter buffers a connection's replies in RESP2 until Flush: one
// write(2) a pipeline. It is redcon's Writer with two more methods, Len and
// Truncate, with which a pipeline's replies can be rewritten after the fact
// (when the log fails to take its writes).
type replyWriter struct {
	w   io.Writer
	b   []byte
	err error
}

func newReplyWriter(w io.Writer) *replyWriter { return &replyWriter{w: w} }

// maxIdleReplyBuf is the largest reply buffer kept between pipelines.
const maxIdleReplyBuf = 64 << 10

func (w *replyWriter) WriteError(msg string)    { w.b = redcon.AppendError(w.b, msg) }
func (w *replyWriter) WriteString(msg string)   { w.b = redcon.AppendString(w.b, msg) }
func (w *replyWriter) WriteInt(n int)           { w.b = redcon.AppendInt(w.b, int64(n)) }
func (w *replyWriter) WriteInt64(n int64)       { w.b = redcon.AppendInt(w.b, n) }
func (w *replyWriter) WriteBulk(b []byte)       { w.b = redcon.AppendBulk(w.b, b) }
func (w *replyWriter) WriteBulkString(s string) { w.b = redcon.AppendBulkString(w.b, s) }
func (w *replyWriter) WriteArray(n int)         { w.b = redcon.AppendArray(w.b, n) }
func (w *replyWriter) WriteNull()               { w.b = redcon.AppendNull(w.b) }
func (w *replyWriter) Len() int                 { return len(w.b) }
func (w *replyWriter) Bytes() []byte            { return w.b }
func (w *replyWriter) Truncate(n int)           { w.b = w.b[:n] }

// Flush writes the buffered replies; after an error every Flush fails.
func (w *replyWriter) Flush() error {
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
