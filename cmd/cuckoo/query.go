package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

const queryHelp = `
Query looks keys up in the filter FILE and prints each as "KEY<tab>yes" (it
may be present) or "KEY<tab>no" (it certainly is not). The keys are the
arguments after FILE, taken literally even when they start with "-", or,
with none or with "-" alone, the lines of stdin, read as build reads its
input and looked up in batches. ("-" with other keys is an error; to look up
the key "-", give it on stdin.)

A key that is not printable text (it holds a tab, a control byte, or bytes
that are not UTF-8), that starts with a double quote, or that is empty is
printed quoted, as Go writes a string: "a\tb", "\xff\x00" (strconv.Unquote
reads it back, and json.loads too when it is UTF-8), so that each line is
one key, a tab and the answer.

The exit status is 0 if at least one key may be present, 1 if none, 2 on
error, as with grep.
`

// queryBatch is the number of stdin keys looked up with one ContainsBatch.
const queryBatch = 1024

func runQuery(e *env, args []string) error {
	fs := e.flags(queryHelp)
	if err := e.parse(fs, args, []string{"FILE"}, -1); err != nil {
		return err
	}
	keys := fs.Args()[1:]
	if len(keys) == 1 && keys[0] == "-" {
		keys = nil // stdin, as build reads it
	}
	if slices.Contains(keys, "-") {
		return e.usageErrorf("\"-\" (stdin) among keys: give keys as arguments or \"-\" alone")
	}
	l, err := load(fs.Arg(0))
	if err != nil {
		return err
	}
	s := l.set()
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	found := false
	var quoted []byte
	answer := func(key []byte, yes bool) {
		if needsQuote(key) {
			quoted = strconv.AppendQuote(quoted[:0], string(key))
			w.Write(quoted)
		} else {
			w.Write(key)
		}
		if yes {
			w.WriteString("\tyes\n")
		} else {
			w.WriteString("\tno\n")
		}
		found = found || yes
	}

	if len(keys) > 0 {
		for _, k := range keys {
			key := []byte(k)
			answer(key, s.Contains(key))
		}
	} else if err := queryLines(e.stdin, s, w, answer); err != nil {
		w.Flush()
		return fmt.Errorf("query: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("query: writing the answers: %w", err)
	}
	if !found {
		return exitStatus(exitNoMatch)
	}
	return nil
}

// needsQuote reports whether query must quote key: it is not printable
// UTF-8 (strconv.IsPrint: a tab, a newline, a control byte, a space other
// than ASCII's, invalid bytes), or it starts with '"' and would read as
// quoted. An empty key (an argument "") is quoted too, to be seen.
func needsQuote(key []byte) bool {
	if len(key) == 0 || key[0] == '"' {
		return true
	}
	for len(key) > 0 {
		r, n := utf8.DecodeRune(key)
		if (r == utf8.RuneError && n == 1) || !strconv.IsPrint(r) {
			return true
		}
		key = key[n:]
	}
	return false
}

// queryLines answers the keys on r in batches. A batch is looked up when it
// is full or when no more input is buffered, so that a caller who writes a
// key and waits gets its answer without the batch filling up.
func queryLines(r io.Reader, s set, w *bufio.Writer, answer func([]byte, bool)) error {
	lines := newLineReader(r)
	var (
		batch keyArena
		keys  [][]byte
		out   = make([]bool, queryBatch)
	)
	flush := func() error {
		keys = batch.keys(keys[:0])
		s.ContainsBatch(keys, out)
		for i, k := range keys {
			answer(k, out[i])
		}
		batch.reset()
		if err := w.Flush(); err != nil {
			return fmt.Errorf("writing the answers: %w", err)
		}
		return nil
	}
	for {
		if batch.len() > 0 && (batch.len() == queryBatch || !lines.buffered()) {
			if err := flush(); err != nil {
				return err
			}
		}
		key, err := lines.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if batch.len() > 0 {
				flush()
			}
			return fmt.Errorf("stdin: %w", err)
		}
		batch.add(key)
	}
	if batch.len() > 0 {
		return flush()
	}
	return nil
}
