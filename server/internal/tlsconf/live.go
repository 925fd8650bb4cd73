package tlsconf

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"
)

// Live is the configurations in force: the listener's and the one for
// connections to other nodes.
//
// Protocol. Each is an atomic pointer that Init stores and Put replaces
// after the new one is built (all or none: a file that does not load leaves
// the old one). A TLS listener's own tls.Config only holds
// GetConfigForClient, which loads the pointer once per handshake: a
// connection keeps the configuration its handshake read, the next handshake
// reads the new one, as Redis applies a reload to new connections. The
// linearization point of a reload is Put's store of the listener's
// configuration.
type Live struct {
	server atomic.Pointer[tls.Config] // nil while no TLS is configured
	client atomic.Pointer[tls.Config]
	Log    *slog.Logger
}

// Init builds the configurations of t, if it names a certificate or a key.
func (l *Live) Init(t Settings) error {
	if t.CertFile == "" && t.KeyFile == "" {
		if t.Replication || t.Cluster {
			return errors.New("server: tls-replication and tls-cluster need tls-cert-file and tls-key-file")
		}
		return nil
	}
	c, err := Server(t)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	cc, err := Client(t)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	l.Put(c, cc, t.CertFile)
	return nil
}

// Put puts c, built from certFile, in force for the next handshakes, and
// client for the next connections to other nodes; a certificate not valid
// now is put in force with a warning (clients refuse it).
func (l *Live) Put(c, client *tls.Config, certFile string) {
	if why := CertValidity(c, time.Now()); why != "" && l.Log != nil {
		l.Log.Warn("the TLS certificate is not valid now; clients will refuse it", "file", certFile, "why", why)
	}
	l.server.Store(c)
	l.client.Store(client)
}

// Reload builds the configurations of t for a CONFIG SET of the settings
// names, if one of them is a tls-* setting: nil if none is, or if no TLS
// configuration is in force (no listener needs one: the settings are only
// stored, as Redis does); or the setting to blame and why its file cannot
// be used. Setting a file to the name it had reloads it, which is how a
// renewed certificate is put in force, as in Redis.
func (l *Live) Reload(names []string, t Settings) (c, client *tls.Config, name, why string) {
	touched := false
	for _, n := range names {
		touched = touched || strings.HasPrefix(n, "tls-")
	}
	if !touched || l.server.Load() == nil {
		return nil, nil, "", ""
	}
	c, err := Server(t)
	if err == nil {
		client, err = Client(t)
	}
	if err != nil {
		return nil, nil, SettingOf(err.Error()), err.Error()
	}
	return c, client, "", ""
}

// Listener serves ln's connections over TLS with the configuration in
// force at each handshake; it fails if none is.
func (l *Live) Listener(ln net.Listener) (net.Listener, error) {
	if l.server.Load() == nil {
		return nil, errors.New("server: ServeTLS: Config.TLS names no certificate")
	}
	get := func(*tls.ClientHelloInfo) (*tls.Config, error) { return l.server.Load(), nil }
	return tls.NewListener(ln, &tls.Config{GetConfigForClient: get}), nil
}

// Dial connects to another node at addr, over TLS if useTLS (with the
// client configuration in force, verifying the node's certificate for the
// host of addr), within timeout, handshake included.
func (l *Live) Dial(addr string, useTLS bool, timeout time.Duration) (net.Conn, error) {
	if !useTLS {
		return net.DialTimeout("tcp", addr, timeout)
	}
	c := l.client.Load()
	if c == nil {
		return nil, errors.New("TLS to other nodes needs tls-cert-file and tls-key-file (or tls-client-cert-file and tls-client-key-file)")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	c = c.Clone()
	c.ServerName = host
	return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", addr, c)
}
