package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
)

const queryHelp = `
Query looks keys up in the filter FILE and prints each as "KEY<tab>yes" (it
may be present) or "KEY<tab>no" (it certainly is not). The keys are the
arguments after FILE, taken literally even when they start with "-", or,
with none or with "-" alone, the lines of stdin, read as build reads its
input and looked up in batches. ("-" with other keys is an error; to look up
the key "-", give it on stdin.) The exit status is 0 if at least one key may be present, 1 if none,
2 on error, as with grep.
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
	answer := func(key []byte, yes bool) {
		w.Write(key)
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
