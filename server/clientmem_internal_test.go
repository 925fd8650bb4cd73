package server

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/clientmem"
	"github.com/cuckoohash/cuckoo/server/internal/pubsub"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
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
	lim := l.WithDefaults()
	s.conf.limits.Store(&lim)
	cl := &client{}
	normal, pubsubLim := lim.OutputBuffer.Get(classNormal), lim.OutputBuffer.Get(classPubSub)
	old := time.Now().Add(-time.Hour)

	cl.mem.Check(normal, 1<<20, old) // marked at the soft limit an hour ago
	s.replyWritten(cl)
	if got := cl.mem.SoftSince(); !got.IsZero() {
		t.Errorf("after the replies were written, the mark is %v", got)
	}
	// Pushes at the limit: the time at it goes on.
	cl.sub.Confirm(resp.NewWriter(io.Discard), "subscribe", pubsub.Channel, "c", 1)
	s.cmem.SetPush(&cl.mem, 2<<20)
	cl.mem.Check(pubsubLim, 2<<20, old)
	s.replyWritten(cl)
	if got := cl.mem.SoftSince(); !got.Equal(old) {
		t.Errorf("with pushes past the soft limit, the mark is %v, want %v", got, old)
	}
	// And a mark older than soft-seconds closes the client at the limit.
	if cl.mem.Check(pubsubLim, cl.mem.Output(), time.Now()) != clientmem.SoftExpired {
		t.Error("an hour at the soft limit of 1 s has not expired")
	}
	s.cmem.SetPush(&cl.mem, 0)
}
