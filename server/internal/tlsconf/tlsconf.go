package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Settings are the tls-* settings: the files a TLS listener's configuration
// is built from (Server). The zero Settings serve no TLS.
type Settings struct {
	// CertFile (tls-cert-file) is the server's certificate chain, PEM,
	// and KeyFile (tls-key-file) its private key, PEM.
	CertFile, KeyFile string
	// CACertFile (tls-ca-cert-file) holds the certificates, PEM, of the
	// CAs that sign the clients' certificates.
	CACertFile string
	// AuthClients (tls-auth-clients) is whether clients must present a
	// certificate: AuthClientsYes (the zero value and default, as in Redis),
	// AuthClientsOptional or AuthClientsNo.
	AuthClients AuthClients
	// ClientCertFile and ClientKeyFile (tls-client-cert-file,
	// tls-client-key-file) are the certificate, PEM, and its key that this
	// server presents when it connects to another node over TLS; by
	// default CertFile and KeyFile, as in Redis (a certificate made for
	// both server and client authentication).
	ClientCertFile, ClientKeyFile string
	// Replication (tls-replication): a replica connects to its primary
	// over TLS. Cluster (tls-cluster): MIGRATE connects to its target over
	// TLS. Both verify the other node's certificate against CACertFile
	// and present the client certificate.
	Replication, Cluster bool
}

// AuthClients is tls-auth-clients: whether a TLS listener asks clients for
// a certificate. Its String is the setting's value.
type AuthClients int

const (
	AuthClientsYes      AuthClients = iota // a client must present a certificate the CAs signed
	AuthClientsOptional                    // a certificate is verified if the client presents one
	AuthClientsNo                          // none is asked for
)

var authClientsNames = [...]string{AuthClientsYes: "yes", AuthClientsOptional: "optional", AuthClientsNo: "no"}

// authModes maps tls-auth-clients to crypto/tls's ClientAuth.
var authModes = [...]tls.ClientAuthType{
	AuthClientsYes:      tls.RequireAndVerifyClientCert,
	AuthClientsOptional: tls.VerifyClientCertIfGiven,
	AuthClientsNo:       tls.NoClientCert,
}

// String is tls-auth-clients' value: yes, optional or no.
func (a AuthClients) String() string {
	if !a.valid() {
		return "AuthClients(" + strconv.Itoa(int(a)) + ")"
	}
	return authClientsNames[a]
}

func (a AuthClients) valid() bool { return a >= 0 && int(a) < len(authClientsNames) }

// ParseAuthClients reads tls-auth-clients' value; "" is yes.
func ParseAuthClients(s string) (AuthClients, error) {
	if s == "" {
		return AuthClientsYes, nil
	}
	for a, name := range authClientsNames {
		if s == name {
			return AuthClients(a), nil
		}
	}
	return 0, authClientsError(s)
}

func authClientsError(s string) error {
	return fmt.Errorf("tls-auth-clients %q: want yes, no or optional", s)
}

// Server builds the configuration of a TLS listener from t: it loads the
// key pair and the CA pool, maps AuthClients to a ClientAuth and accepts TLS
// 1.2 and newer. An error names the setting and the file it could not use.
// A certificate that has expired, or is not yet valid, is not refused here:
// clients refuse it (the server's log warns: CertValidity).
func Server(t Settings) (*tls.Config, error) {
	auth := t.AuthClients
	switch {
	case !auth.valid():
		return nil, authClientsError(auth.String())
	case t.CertFile == "":
		return nil, errors.New("tls-cert-file: a TLS listener needs the server's certificate")
	case t.KeyFile == "":
		return nil, errors.New("tls-key-file: a TLS listener needs the certificate's private key")
	case auth != AuthClientsNo && t.CACertFile == "":
		return nil, fmt.Errorf("tls-ca-cert-file: tls-auth-clients %s verifies clients' certificates against CAs; give their file, or set tls-auth-clients no", auth)
	}
	for _, f := range []struct{ name, path string }{{"tls-cert-file", t.CertFile}, {"tls-key-file", t.KeyFile}} {
		if _, err := os.Stat(f.path); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls-cert-file %s, tls-key-file %s: %w", t.CertFile, t.KeyFile, err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: authModes[auth], MinVersion: tls.VersionTLS12}
	if t.CACertFile != "" {
		var err error
		if c.ClientCAs, err = loadCAs(t.CACertFile); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// loadCAs reads the CA certificates of tls-ca-cert-file, path.
func loadCAs(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tls-ca-cert-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls-ca-cert-file %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// Client builds the configuration the server connects to other
// nodes with (tls-replication, tls-cluster): it presents the client
// certificate (ClientCertFile, or CertFile) and verifies the other node's
// against CACertFile's CAs (the system's if none), TLS 1.2 and newer.
func Client(t Settings) (*tls.Config, error) {
	certFile, keyFile, certName, keyName := t.ClientCertFile, t.ClientKeyFile, "tls-client-cert-file", "tls-client-key-file"
	if certFile == "" && keyFile == "" {
		certFile, keyFile, certName, keyName = t.CertFile, t.KeyFile, "tls-cert-file", "tls-key-file"
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case certFile == "" && keyFile == "":
	case certFile == "" || keyFile == "":
		return nil, fmt.Errorf("%s and %s: give both, or neither", certName, keyName)
	default:
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%s %s, %s %s: %w", certName, certFile, keyName, keyFile, err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	if t.CACertFile != "" {
		var err error
		if c.RootCAs, err = loadCAs(t.CACertFile); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// CertValidity is why the server's certificate in c, a configuration Server
// built, is unusable at now ("" if it is usable), for the server's warning.
func CertValidity(c *tls.Config, now time.Time) string {
	leaf := c.Certificates[0].Leaf
	switch {
	case leaf == nil:
		return ""
	case now.After(leaf.NotAfter):
		return "expired " + leaf.NotAfter.UTC().Format(time.RFC3339)
	case now.Before(leaf.NotBefore):
		return "not valid before " + leaf.NotBefore.UTC().Format(time.RFC3339)
	}
	return ""
}

// SettingOf returns the setting that msg, the text of an error of Server or
// Client, names first: the one to blame in CONFIG SET's reply.
func SettingOf(msg string) string {
	for i, r := range msg {
		if r == ' ' || r == ':' {
			return msg[:i]
		}
	}
	return msg
}
