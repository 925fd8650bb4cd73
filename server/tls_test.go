package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/tlstest"
	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// pki is a test's certificates: a CA with a server and a client certificate
// it signed, and a client certificate of another CA.
type pki struct {
	dir            string
	ca, other      *tlstest.CA
	server, client tlstest.Leaf
	stranger       tlstest.Leaf // signed by other
}

func newPKI(t *testing.T) *pki {
	dir := t.TempDir()
	p := &pki{dir: dir, ca: tlstest.NewCA(t, dir, "ca"), other: tlstest.NewCA(t, dir, "other-ca")}
	p.server = p.ca.Server(t, dir, "server", time.Time{})
	p.client = p.ca.Client(t, dir, "client")
	p.stranger = p.other.Client(t, dir, "stranger")
	return p
}

// settings are the tls-* settings of a server with p's certificates.
func (p *pki) settings(auth server.AuthClients) server.TLS {
	return server.TLS{CertFile: p.server.CertFile, KeyFile: p.server.KeyFile, CACertFile: p.ca.CertFile, AuthClients: auth}
}

// clientConfig is a go-redis client's tls.Config trusting p's CA and
// presenting cert, if given, whatever CAs the server names (Go's client
// would send none the server's CAs did not sign, as if it had none).
func (p *pki) clientConfig(cert ...tls.Certificate) *tls.Config {
	c := &tls.Config{RootCAs: p.ca.Pool(), ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if len(cert) > 0 {
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert[0], nil }
	}
	return c
}

// startTLS serves cfg on a plain and a TLS listener on 127.0.0.1:0 and
// returns both addresses; Cleanup shuts the server down.
func startTLS(t *testing.T, cfg server.Config) (srv *server.Server, plain, secure string) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- srv.Serve(ln) }()
	go func() { done <- srv.ServeTLS(tln) }()
	t.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		for range 2 {
			if err := <-done; !errors.Is(err, server.ErrServerClosed) {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		}
	})
	return srv, ln.Addr().String(), tln.Addr().String()
}

func tlsClient(t *testing.T, addr string, c *tls.Config) *redis.Client {
	return client(t, addr, func(o *redis.Options) {
		o.TLSConfig = c
		o.DialTimeout = 5 * time.Second
		o.ReadTimeout = 5 * time.Second
	})
}

// TestTLSAuthClients: go-redis over TLS with each tls-auth-clients mode and
// each kind of client: yes refuses a client with no certificate and one
// signed by another CA; optional accepts one with none but refuses another
// CA's; no asks for none and accepts all. The plain port serves alongside.
func TestTLSAuthClients(t *testing.T) {
	p := newPKI(t)
	clients := []struct {
		name  string
		certs []tls.Certificate
	}{{"none", nil}, {"signed", []tls.Certificate{p.client.Cert}}, {"other-ca", []tls.Certificate{p.stranger.Cert}}}
	for _, tc := range []struct {
		auth server.AuthClients
		ok   map[string]bool
	}{
		{server.AuthClientsYes, map[string]bool{"signed": true}},
		{server.AuthClientsOptional, map[string]bool{"none": true, "signed": true}},
		{server.AuthClientsNo, map[string]bool{"none": true, "signed": true, "other-ca": true}},
	} {
		t.Run("tls-auth-clients="+tc.auth.String(), func(t *testing.T) {
			_, plain, secure := startTLS(t, server.Config{TLS: p.settings(tc.auth)})
			ctx := context.Background()
			for _, cc := range clients {
				c := tlsClient(t, secure, p.clientConfig(cc.certs...))
				err := c.CFAdd(ctx, "k", cc.name).Err()
				if tc.ok[cc.name] && err != nil {
					t.Errorf("client=%s: %v", cc.name, err)
				}
				if !tc.ok[cc.name] && err == nil {
					t.Errorf("client=%s: accepted", cc.name)
				}
			}
			got, err := client(t, plain).CFMExists(ctx, "k", "none", "signed", "other-ca").Result()
			if err != nil || len(got) != 3 || got[0] != tc.ok["none"] || got[1] != tc.ok["signed"] || got[2] != tc.ok["other-ca"] {
				t.Errorf("CF.MEXISTS on the plain port: %v %v, want the accepted clients' items", got, err)
			}
		})
	}
}

// TestTLSClientRefusesServer: a client refuses a server whose certificate
// has expired, and one its CAs did not sign; the server warns of the expired
// certificate when it starts.
func TestTLSClientRefusesServer(t *testing.T) {
	p := newPKI(t)
	expired := p.ca.Server(t, p.dir, "expired", time.Now().Add(-time.Minute))
	var log strings.Builder
	cfg := server.Config{TLS: p.settings(server.AuthClientsNo), Logger: slog.New(slog.NewTextHandler(&log, nil))}
	cfg.TLS.CertFile, cfg.TLS.KeyFile = expired.CertFile, expired.KeyFile
	_, _, secure := startTLS(t, cfg)
	err := tlsClient(t, secure, p.clientConfig()).Ping(context.Background()).Err()
	var invalid x509.CertificateInvalidError
	if !errors.As(err, &invalid) || invalid.Reason != x509.Expired {
		t.Errorf("PING to a server with an expired certificate: %v, want x509's Expired", err)
	}
	if !strings.Contains(log.String(), `msg="the TLS certificate is not valid now; clients will refuse it"`) {
		t.Errorf("no warning of the expired certificate in the log:\n%s", log.String())
	}

	_, _, secure = startTLS(t, server.Config{TLS: p.settings(server.AuthClientsNo)})
	c := p.clientConfig()
	c.RootCAs = p.other.Pool()
	err = tlsClient(t, secure, c).Ping(context.Background()).Err()
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("PING to a server another CA signed: %v, want x509's UnknownAuthorityError", err)
	}
}

// TestTLSHandshakeBound: a client that opens a TCP connection to the TLS
// port and sends nothing is closed once the handshake bound passes (or
// --timeout, when shorter), and meanwhile other clients connect and are
// served: the handshake does not run in the accept loop.
func TestTLSHandshakeBound(t *testing.T) {
	p := newPKI(t)
	for _, tc := range []struct {
		name    string
		bound   time.Duration
		timeout time.Duration
	}{{"bound=300ms", 300 * time.Millisecond, 0}, {"bound=1m/timeout=1s", time.Minute, time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			restore := server.SetHandshakeTimeout(tc.bound)
			t.Cleanup(restore)
			_, _, secure := startTLS(t, server.Config{TLS: p.settings(server.AuthClientsNo), Limits: server.Limits{Timeout: tc.timeout}})
			silent, err := net.Dial("tcp", secure)
			if err != nil {
				t.Fatal(err)
			}
			defer silent.Close()
			start := time.Now()
			c := tlsClient(t, secure, p.clientConfig())
			if err := c.Ping(context.Background()).Err(); err != nil {
				t.Fatalf("PING while a silent client holds a connection: %v", err)
			}
			want := min(tc.bound, tc.timeout)
			if tc.timeout == 0 {
				want = tc.bound
			}
			silent.SetReadDeadline(time.Now().Add(want + 10*time.Second))
			n, err := silent.Read(make([]byte, 1))
			took := time.Since(start)
			if n != 0 || !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
				t.Fatalf("the silent client read %d bytes, %v; want the connection closed", n, err)
			}
			if took < want/2 || took > want+5*time.Second {
				t.Errorf("the silent client was closed after %v; want about %v", took, want)
			}
		})
	}
}

func isReset(err error) bool { return err != nil && strings.Contains(err.Error(), "connection reset") }

// TestTLSConfigErrors: every file TLSConfig cannot use, and every setting it
// cannot take, is an error naming it; New refuses to start with one.
func TestTLSConfigErrors(t *testing.T) {
	p := newPKI(t)
	garbage := filepath.Join(p.dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(p.dir, "missing.key")
	for _, tc := range []struct {
		name string
		edit func(*server.TLS)
		want string
	}{
		{"auth=9", func(c *server.TLS) { c.AuthClients = 9 }, `tls-auth-clients "AuthClients(9)": want yes, no or optional`},
		{"no-cert", func(c *server.TLS) { c.CertFile = "" }, "tls-cert-file: a TLS listener needs the server's certificate"},
		{"no-key", func(c *server.TLS) { c.KeyFile = "" }, "tls-key-file: a TLS listener needs the certificate's private key"},
		{"missing-key", func(c *server.TLS) { c.KeyFile = missing }, "tls-key-file: stat " + missing + ": no such file or directory"},
		{"garbage-cert", func(c *server.TLS) { c.CertFile = garbage }, "tls-cert-file " + garbage + ", tls-key-file " + p.server.KeyFile + ": tls: failed to find any PEM data in certificate input"},
		{"mismatched-key", func(c *server.TLS) { c.KeyFile = p.client.KeyFile }, "tls-cert-file " + p.server.CertFile + ", tls-key-file " + p.client.KeyFile + ": tls: private key does not match public key"},
		{"garbage-ca", func(c *server.TLS) { c.CACertFile = garbage }, "tls-ca-cert-file " + garbage + ": no PEM certificate in it"},
		{"missing-ca", func(c *server.TLS) { c.CACertFile = missing }, "tls-ca-cert-file: open " + missing + ": no such file or directory"},
		{"no-ca", func(c *server.TLS) { c.CACertFile = "" }, "tls-ca-cert-file: tls-auth-clients yes verifies clients' certificates against CAs; give their file, or set tls-auth-clients no"},
		{"no-ca/optional", func(c *server.TLS) { c.CACertFile, c.AuthClients = "", server.AuthClientsOptional }, "tls-ca-cert-file: tls-auth-clients optional verifies clients' certificates against CAs; give their file, or set tls-auth-clients no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := p.settings(server.AuthClientsYes)
			tc.edit(&c)
			if _, err := server.TLSConfig(c); err == nil || err.Error() != tc.want {
				t.Errorf("TLSConfig: %v, want %q", err, tc.want)
			}
			if _, err := server.New(server.Config{TLS: c}); err == nil || err.Error() != "server: "+tc.want {
				t.Errorf("New: %v, want %q", err, "server: "+tc.want)
			}
		})
	}
	c, err := server.TLSConfig(p.settings(server.AuthClientsYes))
	if err != nil || c.ClientAuth != tls.RequireAndVerifyClientCert || c.MinVersion != tls.VersionTLS12 {
		t.Errorf("TLSConfig with the defaults: %v; want client certificates required, TLS 1.2 and newer", err)
	}
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.ServeTLS(ln); err == nil || err.Error() != "server: ServeTLS: Config.TLS names no certificate" {
		t.Errorf("ServeTLS with no certificate: %v", err)
	}
}

// TestTLSConfigGetSet: CONFIG GET shows the tls-* settings and both ports,
// INFO the tls_port; CONFIG SET of tls-cert-file puts a new certificate in
// force for new connections (also when set to the name it had, after the
// file was replaced), and refuses one that does not load, keeping the old.
func TestTLSConfigGetSet(t *testing.T) {
	p := newPKI(t)
	_, plain, secure := startTLS(t, server.Config{TLS: p.settings(server.AuthClientsOptional)})
	ctx := context.Background()
	c := client(t, plain)
	_, tlsPort, _ := net.SplitHostPort(secure)
	_, port, _ := net.SplitHostPort(plain)
	got, err := c.ConfigGet(ctx, "*port*").Result()
	if err != nil || got["port"] != port || got["tls-port"] != tlsPort {
		t.Errorf("CONFIG GET *port*: %v %v; want port %s and tls-port %s", got, err, port, tlsPort)
	}
	got, err = c.ConfigGet(ctx, "tls-*").Result()
	if err != nil || got["tls-cert-file"] != p.server.CertFile || got["tls-key-file"] != p.server.KeyFile ||
		got["tls-ca-cert-file"] != p.ca.CertFile || got["tls-auth-clients"] != "optional" {
		t.Errorf("CONFIG GET tls-*: %v %v", got, err)
	}
	info, err := c.Info(ctx, "server").Result()
	if err != nil || !strings.Contains(info, "\r\ntcp_port:"+port+"\r\n") || !strings.Contains(info, "\r\ntls_port:"+tlsPort+"\r\n") {
		t.Errorf("INFO server: %v\n%s", err, info)
	}
	wantErr(t, c.ConfigSet(ctx, "tls-port", "1").Err(), "ERR CONFIG SET failed (possibly related to argument 'tls-port') - can't set immutable config")
	wantErr(t, c.ConfigSet(ctx, "tls-auth-clients", "maybe").Err(), "ERR CONFIG SET failed (possibly related to argument 'tls-auth-clients') - argument(s) must be one of the following: yes, no, optional")

	serverName := func() string {
		t.Helper()
		cfg := p.clientConfig()
		var name string
		cfg.VerifyConnection = func(cs tls.ConnectionState) error { name = cs.PeerCertificates[0].Subject.CommonName; return nil }
		if err := tlsClient(t, secure, cfg).Ping(ctx).Err(); err != nil {
			t.Fatalf("PING over TLS: %v", err)
		}
		return name
	}
	if name := serverName(); name != "server" {
		t.Fatalf("the server's certificate is %q", name)
	}
	renewed := p.ca.Server(t, p.dir, "renewed", time.Time{})
	if err := c.Do(ctx, "CONFIG", "SET", "tls-cert-file", renewed.CertFile, "tls-key-file", renewed.KeyFile).Err(); err != nil {
		t.Fatal(err)
	}
	if name := serverName(); name != "renewed" {
		t.Errorf("after CONFIG SET tls-cert-file, the server's certificate is %q", name)
	}
	// A renewal in place: the same file names, new contents.
	again := p.ca.Server(t, t.TempDir(), "again", time.Time{})
	for _, f := range [][2]string{{again.CertFile, renewed.CertFile}, {again.KeyFile, renewed.KeyFile}} {
		if err := os.Rename(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ConfigSet(ctx, "tls-cert-file", renewed.CertFile).Err(); err != nil {
		t.Fatal(err)
	}
	if name := serverName(); name != "again" {
		t.Errorf("after CONFIG SET tls-cert-file of the same name, the server's certificate is %q", name)
	}
	missing := filepath.Join(p.dir, "missing.crt")
	wantErr(t, c.ConfigSet(ctx, "tls-cert-file", missing).Err(),
		"ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - tls-cert-file: stat "+missing+": no such file or directory")
	if got, _ := c.ConfigGet(ctx, "tls-cert-file").Result(); got["tls-cert-file"] != renewed.CertFile {
		t.Errorf("a refused CONFIG SET changed tls-cert-file to %q", got["tls-cert-file"])
	}
	if name := serverName(); name != "again" {
		t.Errorf("after a refused CONFIG SET, the server's certificate is %q", name)
	}
	// tls-auth-clients yes now refuses a client with no certificate.
	if err := c.ConfigSet(ctx, "tls-auth-clients", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if err := tlsClient(t, secure, p.clientConfig()).Ping(ctx).Err(); err == nil {
		t.Errorf("after CONFIG SET tls-auth-clients yes, a client with no certificate was served")
	}
}

// TestTLSOnly: a server with only a TLS listener reports port 0, and CLIENT
// LIST shows its TLS clients' file descriptors.
func TestTLSOnly(t *testing.T) {
	p := newPKI(t)
	srv, err := server.New(server.Config{TLS: p.settings(server.AuthClientsYes), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln) }()
	defer func() {
		srv.Close()
		if err := <-done; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("ServeTLS returned %v", err)
		}
	}()
	ctx := context.Background()
	c := tlsClient(t, ln.Addr().String(), p.clientConfig(p.client.Cert))
	_, tlsPort, _ := net.SplitHostPort(ln.Addr().String())
	got, err := c.ConfigGet(ctx, "*port").Result()
	if err != nil || got["port"] != "0" || got["tls-port"] != tlsPort {
		t.Errorf("CONFIG GET *port with only a TLS listener: %v %v", got, err)
	}
	list, err := c.ClientList(ctx).Result()
	if err != nil || !strings.Contains(list, " fd=") || strings.Contains(list, " fd=-1 ") {
		t.Errorf("CLIENT LIST over TLS: %v %q; want the socket's fd", err, list)
	}
}

// TestTLSBetweenNodes: with tls-replication a replica follows its primary
// over TLS, and with tls-cluster MIGRATE reaches its target over TLS, each
// verifying the other node's certificate and presenting its client
// certificate (tls-auth-clients yes on both); a node without them cannot.
func TestTLSBetweenNodes(t *testing.T) {
	p := newPKI(t)
	nodeTLS := p.settings(server.AuthClientsYes)
	nodeTLS.ClientCertFile, nodeTLS.ClientKeyFile = p.client.CertFile, p.client.KeyFile
	nodeTLS.Replication, nodeTLS.Cluster = true, true
	_, _, primaryTLS := startTLS(t, server.Config{TLS: nodeTLS})
	_, replicaPlain, _ := startTLS(t, server.Config{TLS: nodeTLS})
	_, _, targetTLS := startTLS(t, server.Config{TLS: nodeTLS})
	ctx := context.Background()
	pc := tlsClient(t, primaryTLS, p.clientConfig(p.client.Cert))
	if err := pc.CFAdd(ctx, "k", "x").Err(); err != nil {
		t.Fatal(err)
	}
	replicaOf(t, client(t, replicaPlain), primaryTLS)
	if n, err := pc.Do(ctx, "WAIT", 1, 5000).Int(); n != 1 || err != nil {
		t.Fatalf("WAIT over a TLS replication link = %d, %v", n, err)
	}
	if ok, _ := client(t, replicaPlain).CFExists(ctx, "k", "x").Result(); !ok {
		t.Error("the replica over TLS lacks the primary's item")
	}
	host, port, _ := net.SplitHostPort(targetTLS)
	if r := pc.Do(ctx, "MIGRATE", host, port, "k", 0, 5000).Val(); r != "OK" {
		t.Fatalf("MIGRATE over TLS = %v", r)
	}
	if ok, _ := tlsClient(t, targetTLS, p.clientConfig(p.client.Cert)).CFExists(ctx, "k", "x").Result(); !ok {
		t.Error("the target lacks the key MIGRATE moved over TLS")
	}
	// tls-cluster no: a plain connection to a TLS port fails, and nothing
	// moves.
	pc.CFAdd(ctx, "k2", "y")
	if err := pc.ConfigSet(ctx, "tls-cluster", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := pc.Do(ctx, "MIGRATE", host, port, "k2", 0, 1000).Err(); err == nil || !strings.HasPrefix(err.Error(), "IOERR") {
		t.Errorf("MIGRATE in plain TCP to a TLS port: %v", err)
	}
	if ok, _ := pc.CFExists(ctx, "k2", "y").Result(); !ok {
		t.Error("a failed MIGRATE lost the key")
	}
	// A client certificate of another CA: the primary refuses the link.
	stranger := p.settings(server.AuthClientsYes)
	stranger.ClientCertFile, stranger.ClientKeyFile = p.stranger.CertFile, p.stranger.KeyFile
	stranger.Replication = true
	_, strangerPlain, _ := startTLS(t, server.Config{TLS: stranger})
	sc := client(t, strangerPlain)
	h, pt, _ := net.SplitHostPort(primaryTLS)
	if err := sc.Do(ctx, "REPLICAOF", h, pt).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if st := infoFields(t, sc, "replication")["master_link_status"]; st == "up" {
		t.Error("a replica presenting another CA's certificate got a link")
	}
}

// TestTLSBetweenNodesConfig: the settings' names, defaults and errors.
func TestTLSBetweenNodesConfig(t *testing.T) {
	p := newPKI(t)
	if _, err := server.New(server.Config{TLS: server.TLS{Replication: true}}); err == nil || !strings.Contains(err.Error(), "tls-replication and tls-cluster need tls-cert-file") {
		t.Errorf("tls-replication without a certificate: %v", err)
	}
	half := p.settings(server.AuthClientsYes)
	half.ClientCertFile = p.client.CertFile
	if _, err := server.TLSClientConfig(half); err == nil || !strings.Contains(err.Error(), "tls-client-cert-file and tls-client-key-file: give both") {
		t.Errorf("a client certificate without its key: %v", err)
	}
	_, plain, _ := startTLS(t, server.Config{TLS: p.settings(server.AuthClientsYes)})
	c := client(t, plain)
	got, err := c.ConfigGet(context.Background(), "tls-*").Result()
	if err != nil || got["tls-replication"] != "no" || got["tls-cluster"] != "no" || got["tls-client-cert-file"] != "" {
		t.Errorf("CONFIG GET tls-*: %v, %v", got, err)
	}
	if err := c.ConfigSet(context.Background(), "tls-client-key-file", p.client.KeyFile).Err(); err == nil || !strings.Contains(err.Error(), "give both") {
		t.Errorf("CONFIG SET of a client key alone: %v", err)
	}
}
