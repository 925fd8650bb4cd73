package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxLine is the longest key a line may hold, in bytes.
const maxLine = 1 << 20

// bom is the UTF-8 byte order mark, which Windows editors write at the start
// of a file: it is no part of the first key.
const bom = "\xef\xbb\xbf"

// lineReader reads keys, one a line: a UTF-8 byte order mark at the start of
// the input, a trailing "\n" or "\r\n" are removed, and blank lines are
// skipped. Every other byte is part of the key, spaces and tabs included.
type lineReader struct {
	r    *bufio.Reader
	line int // number of the last line read, from 1
}

func newLineReader(r io.Reader) *lineReader {
	// Room for the longest line, a byte order mark and its "\r\n".
	return &lineReader{r: bufio.NewReaderSize(r, len(bom)+maxLine+2)}
}

// next returns the next key, valid until the following call, or io.EOF at
// the end of the input. A line longer than maxLine is an error that names
// it.
func (l *lineReader) next() ([]byte, error) {
	for {
		b, err := l.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("line %d is longer than %d bytes", l.line+1, maxLine)
		}
		if len(b) == 0 && err != nil {
			return nil, err // io.EOF at the end
		}
		l.line++
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("line %d: %w", l.line, err)
		}
		if l.line == 1 {
			b = bytes.TrimPrefix(b, []byte(bom))
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		if len(b) > maxLine {
			return nil, fmt.Errorf("line %d is longer than %d bytes", l.line, maxLine)
		}
		if len(b) > 0 {
			return b, nil // after a last line without "\n", the next call sees io.EOF
		}
	}
}

// buffered reports whether a line is already buffered, so that next need
// not wait for input. (It may be a blank one.)
func (l *lineReader) buffered() bool { return l.r.Buffered() > 0 }

// keyArena holds many keys in one allocation.
type keyArena struct {
	data []byte
	ends []int // key i is data[ends[i-1]:ends[i]]
}

func (a *keyArena) add(key []byte) {
	a.data = append(a.data, key...)
	a.ends = append(a.ends, len(a.data))
}

func (a *keyArena) len() int { return len(a.ends) }

func (a *keyArena) reset() { a.data, a.ends = a.data[:0], a.ends[:0] }

// keys appends slices of the stored keys to dst; they are valid until the
// next add or reset.
func (a *keyArena) keys(dst [][]byte) [][]byte {
	start := 0
	for _, end := range a.ends {
		dst = append(dst, a.data[start:end:end])
		start = end
	}
	return dst
}
