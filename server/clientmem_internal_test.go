package server

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

// TestSoftMarkCleared: a client's soft-limit mark goes once its replies are
// written, unless pushes still keep it at the limit, so that a mark left
// from long ago (its class's limit removed meanwhile, and so no longer
// checked by the cron) cannot close it the next time it reaches the limit.
func TestSoftMarkCleared(t *testing.T) {
	s, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var l Limits
	if err := l.OutputBuffer.Set("normal 0 1mb 1 pubsub 0 1mb 1"); err != nil {
		t.Fatal(err)
	}
	lim := l.withDefaults()
	s.conf.limits.Store(&lim)
	cl := &client{}
	old := time.Now().Add(-time.Hour).UnixNano()

	cl.mem.softSince.Store(old)
	s.replyWritten(cl)
	if got := cl.mem.softSince.Load(); got != 0 {
		t.Errorf("after the replies were written, the mark is %d", got)
	}
	// Pushes at the limit: the time at it goes on.
	cl.nsub.Store(1)
	cl.mem.push.Store(2 << 20)
	cl.mem.softSince.Store(old)
	s.replyWritten(cl)
	if got := cl.mem.softSince.Load(); got != old {
		t.Errorf("with pushes past the soft limit, the mark is %d, want %d", got, old)
	}
	// And a mark older than soft-seconds closes the client at the limit.
	if !s.softExpired(cl, lim.OutputBuffer.get(classPubSub), time.Now()) {
		t.Error("an hour at the soft limit of 1 s has not expired")
	}
}
