package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressStep is the number of keys between updates of the bar, which
// takes a lock: updating it per key would slow a build down.
const progressStep = 1 << 14

// progress is a progress bar counting keys, or nothing when not shown.
type progress struct {
	bar     *progressbar.ProgressBar // nil when not shown
	w       io.Writer
	pending int
}

// newProgress returns a bar on w for total keys (-1: unknown, a spinner).
func newProgress(w io.Writer, show bool, total int64) *progress {
	p := &progress{w: w}
	if !show {
		return p
	}
	p.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("inserting"),
		progressbar.OptionSetItsString("keys"),
		progressbar.OptionShowIts(),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	return p
}

func (p *progress) add() {
	if p.bar == nil {
		return
	}
	if p.pending++; p.pending == progressStep {
		p.bar.Add(p.pending)
		p.pending = 0
	}
}

// finish completes and clears the bar.
func (p *progress) finish() {
	if p.bar == nil {
		return
	}
	p.bar.Add(p.pending)
	p.bar.Finish()
	fmt.Fprint(p.w, "\r\033[K") // a spinner has no end to clear itself at
}

// abort ends the bar's line, so that an error message starts on its own.
func (p *progress) abort() {
	if p.bar != nil {
		p.bar.Exit()
		fmt.Fprintln(p.w)
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
