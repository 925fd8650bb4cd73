package server_test

import (
	"bytes"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/server"
)

// TestIdleReleaseAfterBurst: once a burst of clients has left and the
// server is quiet, it returns their memory to the OS, and serves on.
func TestIdleReleaseAfterBurst(t *testing.T) {
	s, addr := start(t, server.Config{})
	// A release must be worth a collection of this whole test binary's
	// heap: enough clients, each of which grew its buffer to 64 KiB with
	// a pipeline of 48 KiB, to leave twice a quarter of what it scans now.
	scan := []metrics.Sample{{Name: "/gc/scan/total:bytes"}}
	metrics.Read(scan)
	clients := 50 + int(scan[0].Value.Uint64()/2/(64<<10))
	ping := []byte("*1\r\n$4\r\nPING\r\n")
	pipeline := bytes.Repeat(ping, 48<<10/len(ping))
	var conns []*resptest.Conn
	for range clients {
		c := resptest.Dial(t, addr)
		c.SendRaw(pipeline)
		for range len(pipeline) / len(ping) {
			c.Reader().ReadKind()
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.TCP().Close()
	}
	deadline := time.Now().Add(20 * time.Second)
	for s.IdleReleases() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if s.IdleReleases() == 0 {
		t.Fatalf("no release 20 s after %d clients left", clients)
	}
	c := resptest.Dial(t, addr)
	c.SendRaw(ping)
	if _, v, _ := c.Reader().ReadKind(); resptest.Sprint(v) != "PONG" {
		t.Errorf("PING after the release: %q", resptest.Sprint(v))
	}
}
