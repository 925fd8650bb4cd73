package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
)

// chunkReader returns data in the chunks given by sizes (cycled), at most
// len(p) bytes a Read, then io.EOF.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
	reads int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.sizes) > 0 {
		n = min(n, c.sizes[c.i%len(c.sizes)])
		c.i++
	}
	n = copy(p, c.data[:n])
	c.data = c.data[n:]
	c.reads++
	return n, nil
}

// readAll drives the reader as serveConn does and returns every request it
// completed, with the protocol error that stopped it (nil at a clean EOF).
func readAll(src io.Reader, authed bool, lim Limits) (reqs [][][]byte, rd *Reader, err error) {
	rd = NewReader(src)
	for {
		args, err := rd.Next(authed, lim)
		if err != nil {
			return reqs, rd, err
		}
		if args == nil {
			if err := rd.Fill(lim); err != nil {
				if errors.Is(err, io.EOF) {
					return reqs, rd, nil
				}
				return reqs, rd, err
			}
			continue
		}
		cp := make([][]byte, len(args))
		for i, a := range args {
			cp[i] = bytes.Clone(a)
		}
		reqs = append(reqs, cp)
	}
}

// modelParse is the reference: the whole stream parsed at once by the
// simplest code that follows the same rules. An incomplete request at the
// end is no error.
func modelParse(data []byte, authed bool, lim Limits) (reqs [][][]byte, err error) {
	line := func(b []byte, tooLong error) ([]byte, int, error) {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(b) > maxInline {
				return nil, 0, tooLong
			}
			return nil, -1, nil
		}
		if i > maxInline {
			return nil, 0, tooLong
		}
		return bytes.TrimSuffix(b[:i], []byte("\r")), i + 1, nil
	}
	for len(data) > 0 {
		if data[0] != '*' {
			ln, n, err := line(data, errTooBigInline)
			if err != nil || n < 0 {
				return reqs, err
			}
			data = data[n:]
			args, err := quoted.Split(ln)
			if err != nil {
				return reqs, errUnbalancedQuotes
			}
			if len(args) > 0 {
				reqs = append(reqs, args)
			}
			continue
		}
		ln, n, err := line(data, errTooBigMbulkHeader)
		if err != nil || n < 0 {
			return reqs, err
		}
		count, ok := parseCount(ln[1:])
		switch {
		case !ok:
			return reqs, errInvalidMultibulk
		case !authed && count > unauthMaxArgs:
			return reqs, errUnauthMultibulk
		case count > int64(lim.MaxArgs):
			return reqs, errInvalidMultibulk
		}
		rest := data[n:]
		var args [][]byte
		for range max(count, 0) {
			if len(rest) == 0 {
				return reqs, nil
			}
			if rest[0] != '$' {
				return reqs, ProtocolError("expected '$', got '" + printable(rest[0]) + "'")
			}
			ln, n, err := line(rest, errTooBigBulkHeader)
			if err != nil || n < 0 {
				return reqs, err
			}
			size, ok := parseCount(ln[1:])
			switch {
			case !ok || size < 0:
				return reqs, errInvalidBulk
			case !authed && size > unauthMaxBulk:
				return reqs, errUnauthBulk
			case size > int64(lim.MaxBulk):
				return reqs, errInvalidBulk
			}
			rest = rest[n:]
			if int64(len(rest)) < size+2 {
				return reqs, nil
			}
			if rest[size] != '\r' || rest[size+1] != '\n' {
				return reqs, ProtocolError("bulk argument not followed by CRLF")
			}
			args = append(args, rest[:size])
			rest = rest[size+2:]
		}
		data = rest
		if len(args) > 0 {
			reqs = append(reqs, args)
		}
	}
	return reqs, nil
}

// defaultLimits are the server's defaults.
var defaultLimits = Limits{MaxArgs: 1 << 20, MaxBulk: 512 << 20, QueryBuffer: 1 << 30}

var fuzzLimits = Limits{MaxArgs: 16, MaxBulk: 20000, QueryBuffer: 1 << 20}

// FuzzReader splits random streams at random points and checks the reader
// against modelParse: the same requests, the same error, whatever the split.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n",
		"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n",
		"PING\r\nECHO \"a\\x41\\n\" 'b\\'c'\r\n\r\n",
		"*2\r\n$4\r\nECHO\r\n$9223372036854775807\r\n",
		"*2\r\n$4\r\nECHO\r\n$9223372036854775808\r\n",
		"*9223372036854775807\r\n",
		"*1000000000\r\nabcdefghij",
		"*0\r\n*-1\r\n*1\r\n$0\r\n\r\n",
		"*1\r\n$x\r\n",
		"*1\r\n$3\r\nabcde",
		"*20\r\n",
		"*1\r\n$17000\r\n",
		"\"unbalanced\r\n",
	} {
		f.Add([]byte(s), uint64(1), true)
		f.Add([]byte(s), uint64(7), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, authed bool) {
		want, wantErr := modelParse(data, authed, fuzzLimits)
		rng := rand.New(rand.NewPCG(seed, 0))
		sizes := make([]int, 1+rng.IntN(8))
		for i := range sizes {
			sizes[i] = 1 + rng.IntN(1+rng.IntN(64))
		}
		got, _, err := readAll(&chunkReader{data: data, sizes: sizes}, authed, fuzzLimits)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("error %v, model %v (sizes %v)", err, wantErr, sizes)
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("requests\n%q\nmodel\n%q\n(sizes %v)", got, want, sizes)
		}
	})
}

// TestReaderHostile feeds the inputs of issue 12 and checks the error, and
// that nothing near the announced sizes was allocated.
func TestReaderHostile(t *testing.T) {
	lim := defaultLimits
	for _, tc := range []struct {
		name   string
		in     string
		authed bool
		want   error
	}{
		{"bulk max int64, unauthenticated", "*2\r\n$4\r\nECHO\r\n$9223372036854775807\r\n", false, errUnauthBulk},
		{"bulk max int64", "*2\r\n$4\r\nECHO\r\n$9223372036854775807\r\n", true, errInvalidBulk},
		{"bulk past int64", "*2\r\n$4\r\nECHO\r\n$9223372036854775808\r\n", true, errInvalidBulk},
		{"bulk negative", "*2\r\n$4\r\nECHO\r\n$-1\r\n", true, errInvalidBulk},
		{"bulk past proto-max-bulk-len", "*2\r\n$4\r\nECHO\r\n$536870913\r\n", true, errInvalidBulk},
		{"count max int64, unauthenticated", "*9223372036854775807\r\n", false, errUnauthMultibulk},
		{"count max int64", "*9223372036854775807\r\n", true, errInvalidMultibulk},
		{"count 10^9", "*1000000000\r\nabcdefghij", true, errInvalidMultibulk},
		{"count not a number", "*1x\r\n", true, errInvalidMultibulk},
		{"count 11, unauthenticated", "*11\r\n", false, errUnauthMultibulk},
		{"bulk 16385, unauthenticated", "*1\r\n$16385\r\n", false, errUnauthBulk},
		{"not a bulk", "*1\r\n:1\r\n", true, ProtocolError("expected '$', got ':'")},
		{"inline line too long", strings.Repeat("x", maxInline+1), true, errTooBigInline},
		{"header line too long", "*" + strings.Repeat("1", maxInline+1), true, errTooBigMbulkHeader},
		{"bulk header too long", "*1\r\n$" + strings.Repeat("1", maxInline+1), true, errTooBigBulkHeader},
		{"unbalanced quotes", "ECHO \"abc\r\n", true, errUnbalancedQuotes},
		{"closing quote glued to a word", "ECHO \"abc\"d\r\n", true, errUnbalancedQuotes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, split := range []int{0, 1} {
				src := &chunkReader{data: []byte(tc.in)}
				if split == 1 {
					src.sizes = []int{1}
				}
				_, rd, err := readAll(src, tc.authed, lim)
				if err != tc.want {
					t.Fatalf("split %d: error %v, want %v", split, err, tc.want)
				}
				if c := cap(rd.buf); c > 4*readChunk+2*len(tc.in) {
					t.Errorf("split %d: buffer of %d bytes for %d sent", split, c, len(tc.in))
				}
			}
		})
	}
}

// TestReaderTrickle sends the head of a 50 MB bulk, then bytes one at a
// time: the buffer stays within twice what arrived (not what was
// announced), each byte is one read, and the request completes.
func TestReaderTrickle(t *testing.T) {
	lim := defaultLimits
	const size = 50 << 20
	head := fmt.Sprintf("*2\r\n$4\r\nECHO\r\n$%d\r\n", size)
	sent := 200_000
	if testing.Short() {
		sent = 20_000
	}
	data := append([]byte(head), bytes.Repeat([]byte{'x'}, sent)...)
	src := &chunkReader{data: data, sizes: []int{1}}
	reqs, rd, err := readAll(src, true, lim)
	if err != nil || len(reqs) != 0 {
		t.Fatalf("incomplete request: %d requests, error %v", len(reqs), err)
	}
	if src.reads != len(data) {
		t.Errorf("%d reads for %d bytes", src.reads, len(data))
	}
	if c := cap(rd.buf); c > 2*len(data)+readChunk {
		t.Errorf("buffer of %d bytes after %d arrived (%d announced)", c, len(data), size)
	}
	// The rest arrives in large reads and completes the request.
	rest := append(bytes.Repeat([]byte{'x'}, size-sent), "\r\n*1\r\n$4\r\nPING\r\n"...)
	src.data, src.sizes = rest, []int{1 << 20}
	for {
		args, err := rd.Next(true, lim)
		if err != nil {
			t.Fatal(err)
		}
		if args != nil {
			if string(args[0]) != "ECHO" || len(args[1]) != size {
				t.Fatalf("got %q and %d bytes", args[0], len(args[1]))
			}
			break
		}
		if err := rd.Fill(lim); err != nil {
			t.Fatal(err)
		}
	}
	if args, _ := rd.Next(true, lim); len(args) != 1 || string(args[0]) != "PING" {
		t.Errorf("the pipelined PING after the bulk: %q", args)
	}
}

// TestReaderQueryBufferLimit: pending bytes beyond the limit close the
// client, whether they are one huge bulk or many incomplete lines.
func TestReaderQueryBufferLimit(t *testing.T) {
	lim := Limits{MaxArgs: 1 << 20, MaxBulk: 1 << 30, QueryBuffer: 100_000}
	data := append([]byte("*1\r\n$1000000\r\n"), bytes.Repeat([]byte{'x'}, 200_000)...)
	_, rd, err := readAll(&chunkReader{data: data, sizes: []int{4096}}, true, lim)
	if !errors.Is(err, ErrQueryBufferLimit) {
		t.Fatalf("error %v, want the query buffer limit", err)
	}
	if rd.Buffered() > lim.QueryBuffer {
		t.Errorf("%d bytes buffered, limit %d", rd.Buffered(), lim.QueryBuffer)
	}
}

// TestReaderReleasesBuffer: after a large request is consumed, an idle
// connection does not keep its large buffer.
func TestReaderReleasesBuffer(t *testing.T) {
	lim := defaultLimits
	big := string(resptest.Request(strings.Repeat("y", 1<<20)))
	src := &chunkReader{data: []byte(big + "*1\r\n$4\r\nPING\r\n"), sizes: []int{len(big)}}
	rd := NewReader(src)
	var got []string
	for len(got) < 2 {
		args, err := rd.Next(true, lim)
		if err != nil {
			t.Fatal(err)
		}
		if args == nil {
			if err := rd.Fill(lim); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got = append(got, string(args[0][:min(4, len(args[0]))]))
	}
	// The next read, which waits for the client, runs with a small buffer.
	if err := rd.Fill(lim); err != io.EOF {
		t.Fatalf("fill at the end: %v", err)
	}
	if cap(rd.buf) > idleBufCap {
		t.Errorf("a %d-byte buffer kept while waiting for the next request", cap(rd.buf))
	}
}

// TestReaderOnResize: OnResize is told every buffer Fill allocates, growing
// and shrinking, so that what it last reported is what the Reader holds.
func TestReaderOnResize(t *testing.T) {
	lim := defaultLimits
	big := string(resptest.Request(strings.Repeat("y", 1<<20)))
	src := &chunkReader{data: []byte(big + "*1\r\n$4\r\nPING\r\n"), sizes: []int{4096}}
	rd := NewReader(src)
	var sizes []int
	rd.OnResize = func(n int) { sizes = append(sizes, n) }
	peak := 0
	for {
		args, err := rd.Next(true, lim)
		if err != nil {
			t.Fatal(err)
		}
		if args != nil {
			continue
		}
		if err := rd.Fill(lim); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if len(sizes) == 0 || sizes[len(sizes)-1] != cap(rd.buf) {
			t.Fatalf("buffer of %d bytes, OnResize last told %v", cap(rd.buf), sizes)
		}
		peak = max(peak, cap(rd.buf))
	}
	if peak < 1<<20 || sizes[len(sizes)-1] > idleBufCap {
		t.Errorf("sizes reported %v: want growth past 1 MiB, then a small buffer", sizes)
	}
}

// TestReaderFirstBuffer: a client of short requests is read into a
// firstBuf buffer, never more; one whose reads fill the buffer has it
// doubled up to readChunk, and it reads no more often than with readChunk
// from the start, but for those few doublings.
func TestReaderFirstBuffer(t *testing.T) {
	lim := defaultLimits
	ping := string(resptest.Request("PING"))
	// One request a read, as a client that waits for each reply sends.
	src := &chunkReader{data: []byte(strings.Repeat(ping, 1000)), sizes: []int{len(ping)}}
	reqs, rd, err := readAll(src, true, lim)
	if err != nil || len(reqs) != 1000 {
		t.Fatalf("%d requests, %v", len(reqs), err)
	}
	if cap(rd.buf) != firstBuf {
		t.Errorf("a buffer of %d bytes for requests of %d, want %d", cap(rd.buf), len(ping), firstBuf)
	}
	// A long pipeline, as fast as the reads take it.
	const count = 20000
	src = &chunkReader{data: []byte(strings.Repeat(ping, count))}
	reqs, rd, err = readAll(src, true, lim)
	if err != nil || len(reqs) != count {
		t.Fatalf("%d requests, %v", len(reqs), err)
	}
	if cap(rd.buf) < readChunk {
		t.Errorf("a buffer of %d bytes after a pipeline of %d bytes, want at least %d", cap(rd.buf), count*len(ping), readChunk)
	}
	doublings := 2 // firstBuf to readChunk
	if most := count*len(ping)/(readChunk/2) + doublings + 2; src.reads > most {
		t.Errorf("%d reads for %d bytes, want at most %d", src.reads, count*len(ping), most)
	}
}
