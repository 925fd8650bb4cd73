package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/conf"
	"github.com/cuckoohash/cuckoo/server/internal/tlsconf"
)

// TLS: redis.conf's tls-* settings, the crypto/tls configuration built from
// them (package internal/tlsconf), and the listeners that serve it
// (ServeTLS).
//
// Protocol. The configuration in force is Server.tlsConf, an atomic pointer
// that New stores and CONFIG SET of a tls-* setting replaces after building
// the new one (all or none: a file that does not load leaves the old one). A
// TLS listener's own tls.Config only holds GetConfigForClient, which loads
// that pointer once per handshake: a connection keeps the configuration its
// handshake read, the next handshake reads the new one, as Redis applies a
// reload to new connections.
//
// The handshake never runs in the accept loop: tls.Conn handshakes on its
// first Read or Write, and serveConn calls Handshake first thing, in the
// connection's own goroutine, bounded by handshakeTimeout (or --timeout if
// shorter), so a client that connects and sends nothing is closed.

// TLS holds the tls-* settings: the files a TLS listener's configuration is
// built from (TLSConfig). The zero TLS serves no TLS.
type TLS = tlsconf.Settings

// AuthClients is tls-auth-clients: whether a TLS listener asks clients for
// a certificate. Its String is the setting's value.
type AuthClients = tlsconf.AuthClients

// The values of tls-auth-clients.
const (
	AuthClientsYes      = tlsconf.AuthClientsYes      // a client must present a certificate the CAs signed (the default)
	AuthClientsOptional = tlsconf.AuthClientsOptional // a certificate is verified if the client presents one
	AuthClientsNo       = tlsconf.AuthClientsNo       // none is asked for
)

// handshakeTimeout bounds a TLS handshake: a client that connects and does
// not complete one in time is closed. Redis's bound is its timeout setting,
// which is 0 (none) by default; a fixed one keeps idle sockets from piling
// up. --timeout, if shorter, applies instead. A variable for tests.
var handshakeTimeout = 10 * time.Second

// TLSConfig builds the configuration of a TLS listener from t: it loads the
// key pair and the CA pool, maps AuthClients to a ClientAuth and accepts TLS
// 1.2 and newer. An error names the setting and the file it could not use.
// A certificate that has expired, or is not yet valid, is not refused here:
// clients refuse it (the server's log warns, see New).
func TLSConfig(t TLS) (*tls.Config, error) { return tlsconf.Server(t) }

// TLSClientConfig builds the configuration this server connects to other
// nodes with (tls-replication, tls-cluster): it presents the client
// certificate (ClientCertFile, or CertFile) and verifies the other node's
// against CACertFile's CAs (the system's if none), TLS 1.2 and newer.
func TLSClientConfig(t TLS) (*tls.Config, error) { return tlsconf.Client(t) }

// dialNode connects to another node at addr, over TLS if useTLS (with the
// client configuration in force, verifying the node's certificate for the
// host of addr), within timeout, handshake included.
func (s *Server) dialNode(addr string, useTLS bool, timeout time.Duration) (net.Conn, error) {
	if !useTLS {
		return net.DialTimeout("tcp", addr, timeout)
	}
	c := s.tlsClient.Load()
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

// nodeTLS is tls-replication and tls-cluster in force.
func (s *Server) nodeTLS() (replication, cluster bool) {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	t := s.conf.st.Config.TLS
	return t.Replication, t.Cluster
}

// initTLS builds the configuration of cfg.TLS, if it names a certificate or
// a key; New calls it.
func (s *Server) initTLS(t TLS) error {
	if t.CertFile == "" && t.KeyFile == "" {
		if t.Replication || t.Cluster {
			return errors.New("server: tls-replication and tls-cluster need tls-cert-file and tls-key-file")
		}
		return nil
	}
	c, err := TLSConfig(t)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	cc, err := TLSClientConfig(t)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.setTLS(c, cc, t.CertFile)
	return nil
}

// setTLS puts c, built from certFile, in force for the next handshakes,
// and client for the next connections to other nodes.
func (s *Server) setTLS(c, client *tls.Config, certFile string) {
	if why := tlsconf.CertValidity(c, time.Now()); why != "" {
		s.log.Warn("the TLS certificate is not valid now; clients will refuse it", "file", certFile, "why", why)
	}
	s.tlsConf.Store(c)
	s.tlsClient.Store(client)
}

// reloadTLS builds the configuration of next's tls-* settings for a CONFIG
// SET of the settings names, if one of them is a tls-* setting: nil if none is,
// or if the server has no TLS configuration in force (no listener needs one:
// the settings are only stored, as Redis does); or the setting to blame and
// why the files cannot be used. Setting a file to the name it had reloads
// it, which is how a renewed certificate is put in force, as in Redis.
func (s *Server) reloadTLS(names []string, next *conf.State) (c, client *tls.Config, name, why string) {
	touched := false
	for _, n := range names {
		touched = touched || strings.HasPrefix(n, "tls-")
	}
	if !touched || s.tlsConf.Load() == nil {
		return nil, nil, "", ""
	}
	c, err := TLSConfig(next.Config.TLS)
	if err == nil {
		client, err = TLSClientConfig(next.Config.TLS)
	}
	if err != nil {
		return nil, nil, tlsconf.SettingOf(err.Error()), err.Error()
	}
	return c, client, "", ""
}

// ServeTLS is Serve for a listener of TLS connections: it serves ln's
// connections over TLS with the configuration of Config.TLS (or the one
// CONFIG SET last put in force), and reports ln as the tls-port. It fails at
// once if Config.TLS names no certificate.
func (s *Server) ServeTLS(ln net.Listener) error {
	if s.tlsConf.Load() == nil {
		ln.Close()
		return errors.New("server: ServeTLS: Config.TLS names no certificate")
	}
	get := func(*tls.ClientHelloInfo) (*tls.Config, error) { return s.tlsConf.Load(), nil }
	return s.serve(tls.NewListener(ln, &tls.Config{GetConfigForClient: get}), true)
}

// handshake runs tc's TLS handshake within handshakeTimeout (or the
// timeout setting, if shorter), and reports whether it succeeded. Shutdown
// sets every read deadline to now after raising closing, so checking closing
// after each deadline we set never leaves a handshake or read blocked past it.
func (s *Server) handshake(cl *client, tc *tls.Conn) bool {
	bound := handshakeTimeout
	if t := s.clientLimits().Timeout; t > 0 && t < bound {
		bound = t
	}
	tc.SetDeadline(time.Now().Add(bound))
	if s.closing.Load() {
		return false
	}
	if err := tc.Handshake(); err != nil {
		s.log.Debug("TLS handshake failed; closing the connection", "client", cl.id, "addr", tc.RemoteAddr().String(), "err", err)
		return false
	}
	tc.SetDeadline(time.Time{})
	return !s.closing.Load()
}
