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

// firstFrame is how long the bar waits before it first draws: its rate is
// the count over the time since it began, and over the first milliseconds
// (a buffer read at once from the page cache) that is no rate at all (147
// GB/s was seen). A variable, for tests.
var firstFrame = 500 * time.Millisecond

// progress is a progress bar, or nothing when not shown.
type progress struct {
	bar     *progressbar.ProgressBar // nil when not shown
	w       io.Writer
	pending int
	last    int64 // the value last given to tick
	start   time.Time
	drawn   bool // past firstFrame: the bar is drawn at each step
}

// newProgress returns a bar on w, described as what ("reading"), for total
// keys, or bytes if bytes is set (-1: unknown, a spinner).
func newProgress(w io.Writer, show bool, what string, total int64, bytes bool) *progress {
	p := &progress{w: w, start: time.Now()}
	if !show {
		return p
	}
	unit := []progressbar.Option{progressbar.OptionSetItsString("keys"), progressbar.OptionShowIts()}
	if bytes {
		unit = []progressbar.Option{progressbar.OptionShowBytes(true)}
	}
	p.bar = progressbar.NewOptions64(total, append(unit,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)...)
	return p
}

// tick is called once a key with the count so far (of keys, or of bytes);
// every progressStep calls it moves the bar there.
func (p *progress) tick(n int64) {
	if p.bar == nil {
		return
	}
	p.last = n
	if p.pending++; p.pending == progressStep {
		p.pending = 0
		if !p.drawn && time.Since(p.start) < firstFrame {
			return
		}
		p.drawn = true
		p.bar.Set64(n)
	}
}

// finish completes and clears the bar.
func (p *progress) finish() {
	if p.bar == nil {
		return
	}
	p.bar.Set64(p.last)
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
