package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cuckoohash/cuckoo/filter"
)

// Offsets in the binary format (see filter/format.go and filter/scalable.go).
const (
	offKind      = 6 // the kind byte of either header
	offFlags     = 9 // a Filter header's flags; bit 0: the victim slot is used
	kindFilter   = 1
	kindScalable = 2
)

// set is what query needs of a Filter or a Scalable.
type set interface {
	Contains(key []byte) bool
	ContainsBatch(keys [][]byte, out []bool)
}

// loaded is a filter file, decoded.
type loaded struct {
	kind     byte
	size     int64            // bytes in the file
	filter   *filter.Filter   // kind 1
	scalable *filter.Scalable // kind 2
	victim   bool             // a Filter's victim slot is used
}

func (l *loaded) set() set {
	if l.filter != nil {
		return l.filter
	}
	return l.scalable
}

// load reads and checks the filter file at path. Errors name the file; those
// caused by its contents wrap filter.ErrCorrupt.
func load(path string) (*loaded, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError: "open PATH: no such file or directory"
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a filter file", path)
	}
	var head [offKind + 1]byte
	n, err := io.ReadFull(fh, head[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n < 4 || string(head[:4]) != "CKOO" {
		return nil, fmt.Errorf("%s is not a cuckoo filter file (it does not start with \"CKOO\")", path)
	}
	if n < len(head) {
		return nil, fmt.Errorf("%s: %w: the file ends inside the header", path, filter.ErrCorrupt)
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	l := &loaded{kind: head[offKind], size: st.Size()}
	br := bufio.NewReaderSize(fh, 1<<20)
	switch l.kind {
	case kindFilter:
		l.filter, err = filter.Read(br)
	case kindScalable:
		l.scalable, err = filter.ReadScalable(br)
	default:
		return nil, fmt.Errorf("%s: %w: unknown kind %d (1 is a Filter, 2 a Scalable)", path, filter.ErrCorrupt, l.kind)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, fmt.Errorf("%s: %w: bytes follow the end of the filter", path, filter.ErrCorrupt)
	}
	if l.filter != nil {
		if l.victim, err = readVictim(fh); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return l, nil
}

// readVictim reads whether a Filter's victim slot is used from the flags of
// its header, which the filter package does not report. The file has passed
// its checksum.
func readVictim(r io.ReaderAt) (bool, error) {
	var b [1]byte
	if _, err := r.ReadAt(b[:], offFlags); err != nil {
		return false, err
	}
	return b[0]&1 != 0, nil
}
