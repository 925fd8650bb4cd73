package tlsconf_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/tlsconf"
)

// TestLiveWithoutTLS: with no configuration in force, a reload of tls-*
// settings only stores them, a TLS listener is refused, TLS dials say what
// is missing, and plain dials go through.
func TestLiveWithoutTLS(t *testing.T) {
	var l tlsconf.Live
	if err := l.Init(tlsconf.Settings{}); err != nil {
		t.Fatalf("Init of no TLS: %v", err)
	}
	if err := l.Init(tlsconf.Settings{Replication: true}); err == nil || !strings.Contains(err.Error(), "tls-replication and tls-cluster need") {
		t.Errorf("Init of tls-replication with no certificate: %v", err)
	}
	if c, cc, name, why := l.Reload([]string{"tls-cert-file"}, tlsconf.Settings{CertFile: "/nonexistent"}); c != nil || cc != nil || name != "" || why != "" {
		t.Errorf("Reload with no TLS in force: %v %v %q %q, want nothing", c, cc, name, why)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := l.Listener(ln); err == nil {
		t.Error("a TLS listener with no configuration in force")
	}
	if _, err := l.Dial(ln.Addr().String(), true, time.Second); err == nil || !strings.Contains(err.Error(), "needs tls-cert-file") {
		t.Errorf("a TLS dial with no client configuration: %v", err)
	}
	c, err := l.Dial(ln.Addr().String(), false, time.Second)
	if err != nil {
		t.Fatalf("a plain dial: %v", err)
	}
	c.Close()
}
