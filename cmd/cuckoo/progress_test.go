package main

import (
	"bytes"
	"testing"
	"time"
)

// TestProgressFirstFrame: the bar draws nothing in its first half second,
// whose rate would be a buffer's read from memory (147 GB/s was shown), and
// draws once past it.
func TestProgressFirstFrame(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, true, "reading", 1<<40, true)
	n := int64(0)
	for range 4 * progressStep {
		n += 1 << 20
		p.tick(n)
	}
	if time.Since(p.start) < firstFrame && out.Len() != 0 {
		t.Fatalf("the bar drew before %v: %q", firstFrame, out.String())
	}
	time.Sleep(firstFrame)
	for range progressStep {
		n += 1 << 20
		p.tick(n)
	}
	if !bytes.Contains(out.Bytes(), []byte("reading")) {
		t.Fatalf("no frame after %v: %q", firstFrame, out.String())
	}
	p.finish()
}
