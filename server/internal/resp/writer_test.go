package resp

import (
	"bytes"
	"math"
	"testing"
)

// TestWriterProtocols checks every reply type's bytes in RESP2 and RESP3
// against the protocol specification's examples.
func TestWriterProtocols(t *testing.T) {
	for _, tc := range []struct {
		name         string
		write        func(w *Writer)
		resp2, resp3 string
	}{
		{"null", func(w *Writer) { w.WriteNull() }, "$-1\r\n", "_\r\n"},
		{"null array", func(w *Writer) { w.WriteNullArray() }, "*-1\r\n", "_\r\n"},
		{"map", func(w *Writer) { w.WriteMap(1); w.WriteBulkString("a"); w.WriteInt(1) }, "*2\r\n$1\r\na\r\n:1\r\n", "%1\r\n$1\r\na\r\n:1\r\n"},
		{"set", func(w *Writer) { w.WriteSet(1); w.WriteBulkString("x") }, "*1\r\n$1\r\nx\r\n", "~1\r\n$1\r\nx\r\n"},
		{"push", func(w *Writer) { w.WritePush(0) }, "*0\r\n", ">0\r\n"},
		{"true", func(w *Writer) { w.WriteBool(true) }, ":1\r\n", "#t\r\n"},
		{"false", func(w *Writer) { w.WriteBool(false) }, ":0\r\n", "#f\r\n"},
		{"double", func(w *Writer) { w.WriteDouble(1.5) }, "$3\r\n1.5\r\n", ",1.5\r\n"},
		{"inf", func(w *Writer) { w.WriteDouble(math.Inf(1)) }, "$3\r\ninf\r\n", ",inf\r\n"},
		{"-inf", func(w *Writer) { w.WriteDouble(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
		{"nan", func(w *Writer) { w.WriteDouble(math.NaN()) }, "$3\r\nnan\r\n", ",nan\r\n"},
		{"verbatim", func(w *Writer) { w.WriteVerbatim("a:1") }, "$3\r\na:1\r\n", "=7\r\ntxt:a:1\r\n"},
		{"array", func(w *Writer) { w.WriteArray(2); w.WriteString("OK"); w.WriteError("ERR x") }, "*2\r\n+OK\r\n-ERR x\r\n", "*2\r\n+OK\r\n-ERR x\r\n"},
	} {
		for _, proto := range []int{2, 3} {
			var out bytes.Buffer
			w := NewWriter(&out)
			w.SetProtocol(proto)
			if w.Protocol() != proto {
				t.Fatalf("Protocol() = %d after SetProtocol(%d)", w.Protocol(), proto)
			}
			tc.write(w)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			want := tc.resp2
			if proto == 3 {
				want = tc.resp3
			}
			if out.String() != want {
				t.Errorf("%s in RESP%d: %q, want %q", tc.name, proto, out.String(), want)
			}
		}
	}
}
