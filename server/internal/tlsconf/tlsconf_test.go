package tlsconf_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/tlstest"
	"github.com/cuckoohash/cuckoo/server/internal/tlsconf"
)

// files are a test's certificates: a CA, a server certificate it signed
// (valid until notAfter), a client certificate, a file that holds no PEM
// and a path with no file.
type files struct {
	ca               *tlstest.CA
	server, client   tlstest.Leaf
	garbage, missing string
}

func newFiles(t *testing.T, notAfter time.Time) *files {
	dir := t.TempDir()
	f := &files{ca: tlstest.NewCA(t, dir, "ca")}
	f.server = f.ca.Server(t, dir, "server", notAfter)
	f.client = f.ca.Client(t, dir, "client")
	f.garbage = filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(f.garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.missing = filepath.Join(dir, "missing.pem")
	return f
}

func (f *files) settings() tlsconf.Settings {
	return tlsconf.Settings{CertFile: f.server.CertFile, KeyFile: f.server.KeyFile, CACertFile: f.ca.CertFile}
}

// TestServer: each tls-auth-clients mode, and every setting or file Server
// cannot use, with its text and the setting SettingOf blames.
func TestServer(t *testing.T) {
	f := newFiles(t, time.Time{})
	for auth, want := range map[string]tls.ClientAuthType{"": tls.RequireAndVerifyClientCert, "yes": tls.RequireAndVerifyClientCert, "optional": tls.VerifyClientCertIfGiven, "no": tls.NoClientCert} {
		s := f.settings()
		var err error
		if s.AuthClients, err = tlsconf.ParseAuthClients(auth); err != nil || (auth != "" && s.AuthClients.String() != auth) {
			t.Errorf("ParseAuthClients(%q) = %v, %v", auth, s.AuthClients, err)
		}
		c, err := tlsconf.Server(s)
		if err != nil || c.ClientAuth != want || c.MinVersion != tls.VersionTLS12 || len(c.Certificates) != 1 || c.ClientCAs == nil {
			t.Errorf("Server with tls-auth-clients %q: %v; want ClientAuth %v, TLS 1.2, a certificate, the CAs", auth, err, want)
		}
	}
	if _, err := tlsconf.ParseAuthClients("maybe"); err == nil || err.Error() != `tls-auth-clients "maybe": want yes, no or optional` {
		t.Errorf("ParseAuthClients(maybe): %v", err)
	}
	s := f.settings()
	s.AuthClients, s.CACertFile = tlsconf.AuthClientsNo, ""
	if c, err := tlsconf.Server(s); err != nil || c.ClientCAs != nil {
		t.Errorf("Server with tls-auth-clients no and no CAs: %v", err)
	}
	for _, tc := range []struct {
		name    string
		edit    func(*tlsconf.Settings)
		want    string
		setting string
	}{
		{"auth=9", func(s *tlsconf.Settings) { s.AuthClients = 9 }, `tls-auth-clients "AuthClients(9)": want yes, no or optional`, "tls-auth-clients"},
		{"no-cert", func(s *tlsconf.Settings) { s.CertFile = "" }, "tls-cert-file: a TLS listener needs the server's certificate", "tls-cert-file"},
		{"no-key", func(s *tlsconf.Settings) { s.KeyFile = "" }, "tls-key-file: a TLS listener needs the certificate's private key", "tls-key-file"},
		{"no-ca", func(s *tlsconf.Settings) { s.CACertFile = "" }, "tls-ca-cert-file: tls-auth-clients yes verifies clients' certificates against CAs; give their file, or set tls-auth-clients no", "tls-ca-cert-file"},
		{"no-ca/optional", func(s *tlsconf.Settings) { s.CACertFile, s.AuthClients = "", tlsconf.AuthClientsOptional }, "tls-ca-cert-file: tls-auth-clients optional verifies clients' certificates against CAs; give their file, or set tls-auth-clients no", "tls-ca-cert-file"},
		{"missing-cert", func(s *tlsconf.Settings) { s.CertFile = f.missing }, "tls-cert-file: stat " + f.missing + ": no such file or directory", "tls-cert-file"},
		{"missing-key", func(s *tlsconf.Settings) { s.KeyFile = f.missing }, "tls-key-file: stat " + f.missing + ": no such file or directory", "tls-key-file"},
		{"garbage-cert", func(s *tlsconf.Settings) { s.CertFile = f.garbage }, "tls-cert-file " + f.garbage + ", tls-key-file " + f.server.KeyFile + ": tls: failed to find any PEM data in certificate input", "tls-cert-file"},
		{"mismatched-key", func(s *tlsconf.Settings) { s.KeyFile = f.client.KeyFile }, "tls-cert-file " + f.server.CertFile + ", tls-key-file " + f.client.KeyFile + ": tls: private key does not match public key", "tls-cert-file"},
		{"garbage-ca", func(s *tlsconf.Settings) { s.CACertFile = f.garbage }, "tls-ca-cert-file " + f.garbage + ": no PEM certificate in it", "tls-ca-cert-file"},
		{"missing-ca", func(s *tlsconf.Settings) { s.CACertFile = f.missing }, "tls-ca-cert-file: open " + f.missing + ": no such file or directory", "tls-ca-cert-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := f.settings()
			tc.edit(&s)
			c, err := tlsconf.Server(s)
			if err == nil || c != nil || err.Error() != tc.want {
				t.Fatalf("Server: %v, want %q", err, tc.want)
			}
			if got := tlsconf.SettingOf(err.Error()); got != tc.setting {
				t.Errorf("SettingOf(%q) = %q, want %q", err, got, tc.setting)
			}
		})
	}
}

// TestClient: the client certificate (its own, or the server's), the CAs
// (given, or the system's), and every error with the setting it names.
func TestClient(t *testing.T) {
	f := newFiles(t, time.Time{})
	leaf := func(c *tls.Config) string {
		x, err := x509.ParseCertificate(c.Certificates[0].Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return x.Subject.CommonName
	}
	s := f.settings()
	c, err := tlsconf.Client(s)
	if err != nil || len(c.Certificates) != 1 || c.RootCAs == nil || c.MinVersion != tls.VersionTLS12 {
		t.Fatalf("Client with the server's certificate: %v", err)
	}
	serverName := leaf(c)
	s.ClientCertFile, s.ClientKeyFile = f.client.CertFile, f.client.KeyFile
	if c, err = tlsconf.Client(s); err != nil || len(c.Certificates) != 1 || leaf(c) == serverName {
		t.Errorf("Client with a client certificate: %v; want it, not the server's", err)
	}
	if c, err = tlsconf.Client(tlsconf.Settings{}); err != nil || len(c.Certificates) != 0 || c.RootCAs != nil {
		t.Errorf("Client with no files: %v; want no certificate and the system's CAs", err)
	}
	for _, tc := range []struct {
		name string
		s    tlsconf.Settings
		want string
	}{
		{"client-cert-alone", tlsconf.Settings{ClientCertFile: f.client.CertFile}, "tls-client-cert-file and tls-client-key-file: give both, or neither"},
		{"client-key-alone", tlsconf.Settings{CertFile: f.server.CertFile, KeyFile: f.server.KeyFile, ClientKeyFile: f.client.KeyFile}, "tls-client-cert-file and tls-client-key-file: give both, or neither"},
		{"key-alone", tlsconf.Settings{KeyFile: f.server.KeyFile}, "tls-cert-file and tls-key-file: give both, or neither"},
		{"garbage-client-cert", tlsconf.Settings{ClientCertFile: f.garbage, ClientKeyFile: f.client.KeyFile}, "tls-client-cert-file " + f.garbage + ", tls-client-key-file " + f.client.KeyFile + ": tls: failed to find any PEM data in certificate input"},
		{"garbage-ca", tlsconf.Settings{CACertFile: f.garbage}, "tls-ca-cert-file " + f.garbage + ": no PEM certificate in it"},
		{"missing-ca", tlsconf.Settings{CACertFile: f.missing}, "tls-ca-cert-file: open " + f.missing + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tlsconf.Client(tc.s)
			if err == nil || c != nil || err.Error() != tc.want {
				t.Errorf("Client: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCertValidity: a certificate in force, expired, not yet valid, and one
// whose leaf was not parsed (nothing to say).
func TestCertValidity(t *testing.T) {
	notAfter := time.Now().Add(time.Hour).Truncate(time.Second)
	f := newFiles(t, notAfter)
	c, err := tlsconf.Server(f.settings())
	if err != nil {
		t.Fatal(err)
	}
	leaf := c.Certificates[0].Leaf
	if leaf == nil {
		t.Fatal("the loaded certificate has no Leaf")
	}
	for _, tc := range []struct {
		now  time.Time
		want string
	}{
		{leaf.NotBefore.Add(time.Second), ""},
		{notAfter.Add(time.Second), "expired " + leaf.NotAfter.UTC().Format(time.RFC3339)},
		{leaf.NotBefore.Add(-time.Second), "not valid before " + leaf.NotBefore.UTC().Format(time.RFC3339)},
	} {
		if got := tlsconf.CertValidity(c, tc.now); got != tc.want {
			t.Errorf("CertValidity at %v = %q, want %q", tc.now, got, tc.want)
		}
	}
	c.Certificates[0].Leaf = nil
	if got := tlsconf.CertValidity(c, notAfter.Add(time.Hour)); got != "" {
		t.Errorf("CertValidity without a leaf = %q", got)
	}
}

func TestSettingOf(t *testing.T) {
	for msg, want := range map[string]string{
		"tls-key-file: x":        "tls-key-file",
		"tls-cert-file a, b":     "tls-cert-file",
		"tls-auth-clients \"x\"": "tls-auth-clients",
		"no-separator-in-it":     "no-separator-in-it",
		"":                       "",
	} {
		if got := tlsconf.SettingOf(msg); got != want {
			t.Errorf("SettingOf(%q) = %q, want %q", msg, got, want)
		}
	}
}
