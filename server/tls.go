package server

import (
	"crypto/tls"
	"net"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/tlsconf"
)

// TLS: redis.conf's tls-* settings, the crypto/tls configurations built
// from them and in force (package internal/tlsconf: Live, whose doc states
// the reload protocol), and the listeners that serve them (ServeTLS).
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

// nodeTLS is tls-replication and tls-cluster in force.
func (s *Server) nodeTLS() (replication, cluster bool) {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	t := s.conf.st.Config.TLS
	return t.Replication, t.Cluster
}

// ServeTLS is Serve for a listener of TLS connections: it serves ln's
// connections over TLS with the configuration of Config.TLS (or the one
// CONFIG SET last put in force), and reports ln as the tls-port. It fails at
// once if Config.TLS names no certificate.
func (s *Server) ServeTLS(ln net.Listener) error {
	tl, err := s.tls.Listener(ln)
	if err != nil {
		ln.Close()
		return err
	}
	return s.serve(tl, true)
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
