// Package tlstest makes the certificates TLS tests need: a CA, and server
// and client certificates it signs, written as PEM files, so that tests need
// no openssl and no files of their own. ECDSA P-256 keys; nothing here is for
// use outside tests.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority whose certificate is in CertFile.
type CA struct {
	CertFile string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
}

// Leaf is a certificate a CA signed, in PEM files and loaded.
type Leaf struct {
	CertFile, KeyFile string
	Cert              tls.Certificate
}

// NewCA makes a CA named name, valid for a day, and writes its certificate
// to dir/name.crt.
func NewCA(t testing.TB, dir, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{CertFile: filepath.Join(dir, name+".crt"), cert: cert, key: key}
	write(t, ca.CertFile, "CERTIFICATE", der)
	return ca
}

// Pool is a pool holding only ca's certificate.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Server signs a server certificate for localhost and 127.0.0.1, valid
// until notAfter (a day from now if zero), and writes it and its key to
// dir/name.crt and dir/name.key.
func (ca *CA) Server(t testing.TB, dir, name string, notAfter time.Time) Leaf {
	t.Helper()
	return ca.issue(t, dir, name, notAfter, x509.ExtKeyUsageServerAuth)
}

// Client signs a client certificate valid for a day, as Server does.
func (ca *CA) Client(t testing.TB, dir, name string) Leaf {
	t.Helper()
	return ca.issue(t, dir, name, time.Time{}, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(t testing.TB, dir, name string, notAfter time.Time, usage x509.ExtKeyUsage) Leaf {
	t.Helper()
	if notAfter.IsZero() {
		notAfter = time.Now().Add(24 * time.Hour)
	}
	notBefore := time.Now().Add(-time.Hour)
	if notAfter.Before(notBefore) {
		notBefore = notAfter.Add(-time.Hour)
	}
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	l := Leaf{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	write(t, l.CertFile, "CERTIFICATE", der)
	write(t, l.KeyFile, "EC PRIVATE KEY", kder)
	if l.Cert, err = tls.LoadX509KeyPair(l.CertFile, l.KeyFile); err != nil {
		t.Fatal(err)
	}
	return l
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func write(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
