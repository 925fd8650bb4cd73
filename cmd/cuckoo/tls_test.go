package main

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/prereq"
	"github.com/cuckoohash/cuckoo/internal/tlstest"
	"github.com/redis/go-redis/v9"
)

// testPKI makes a CA and the server's and a client's certificates in a
// temporary directory.
func testPKI(t *testing.T) (ca *tlstest.CA, srv, cl tlstest.Leaf) {
	dir := t.TempDir()
	ca = tlstest.NewCA(t, dir, "ca")
	return ca, ca.Server(t, dir, "server", time.Time{}), ca.Client(t, dir, "client")
}

// redisCLITLS is redis-cli's path if it was built with TLS.
func redisCLITLS(t *testing.T) string {
	cli := prereq.Program(t, "redis-cli")
	if out, _ := exec.Command(cli, "--help").CombinedOutput(); !strings.Contains(string(out), "--tls") {
		t.Skip("redis-cli was built without TLS")
	}
	return cli
}

// TestServeTLSRedisCLI: a `cuckoo serve` process with a TLS listener beside
// the plain one, driven by redis-cli --tls with a client certificate; one
// without a certificate is refused (tls-auth-clients yes, the default).
func TestServeTLSRedisCLI(t *testing.T) {
	cli := redisCLITLS(t)
	ca, srv, cl := testPKI(t)
	cmd, addr, tlsAddr, log := serveProcTLS(t, cuckooBin(t), "--dir", "", "--tls-addr", "127.0.0.1:0",
		"--tls-cert-file", srv.CertFile, "--tls-key-file", srv.KeyFile, "--tls-ca-cert-file", ca.CertFile)
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	if addr == "" || tlsAddr == "" {
		t.Fatalf("the ready line names addr %q and tls_addr %q:\n%s", addr, tlsAddr, log)
	}
	host, port, _ := net.SplitHostPort(tlsAddr)
	rc := func(cert bool, args ...string) string {
		a := []string{"--tls", "--cacert", ca.CertFile, "-h", host, "-p", port}
		if cert {
			a = append(a, "--cert", cl.CertFile, "--key", cl.KeyFile)
		}
		out, _ := exec.Command(cli, append(a, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	if got := rc(true, "CF.ADD", "k", "over-tls"); got != "1" {
		t.Fatalf("redis-cli --tls CF.ADD: %q\n%s", got, log)
	}
	if got := rc(true, "CONFIG", "GET", "tls-port"); got != "tls-port\n"+port {
		t.Errorf("redis-cli --tls CONFIG GET tls-port: %q", got)
	}
	if got := rc(true, "INFO", "server"); !strings.Contains(got, "tls_port:"+port+"\r\n") {
		t.Errorf("INFO server has no tls_port:%s:\n%s", port, got)
	}
	if got := rc(false, "CF.ADD", "k", "no-certificate"); got == "1" {
		t.Errorf("redis-cli --tls with no client certificate was served")
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	got, err := c.CFMExists(context.Background(), "k", "over-tls", "no-certificate").Result()
	if err != nil || len(got) != 2 || !got[0] || got[1] {
		t.Errorf("CF.MEXISTS on the plain port: %v %v", got, err)
	}
}

// TestServeTLSOnly: --port 0 (and port 0 in a --config file) leaves only the
// TLS listener, which go-redis reaches with a tls.Config; the file's tls-*
// settings apply.
func TestServeTLSOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it; skipped with -short")
	}
	ca, srv, cl := testPKI(t)
	conf := filepath.Join(t.TempDir(), "cuckoo.conf")
	src := "port 0\ntls-cert-file " + srv.CertFile + "\ntls-key-file " + srv.KeyFile + "\ntls-ca-cert-file " + ca.CertFile + "\ntls-auth-clients optional\n"
	if err := os.WriteFile(conf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// No --addr: it would override the file's port.
	for _, args := range [][]string{
		{"--port", "0", "--tls-cert-file", srv.CertFile, "--tls-key-file", srv.KeyFile, "--tls-ca-cert-file", ca.CertFile},
		{"--config", conf},
	} {
		cmd, addr, tlsAddr, log := serveArgs(t, cuckooBin(t), append([]string{"--dir", "", "--tls-addr", "127.0.0.1:0"}, args...)...)
		if addr != "" || tlsAddr == "" {
			t.Errorf("%q: the ready line names addr %q and tls_addr %q:\n%s", args, addr, tlsAddr, log)
		}
		c := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: &tls.Config{
			RootCAs: ca.Pool(), Certificates: []tls.Certificate{cl.Cert}, ServerName: "localhost", MinVersion: tls.VersionTLS12}})
		got, err := c.ConfigGet(context.Background(), "*port").Result()
		_, tlsPort, _ := net.SplitHostPort(tlsAddr)
		if err != nil || got["port"] != "0" || got["tls-port"] != tlsPort {
			t.Errorf("%q: CONFIG GET *port over TLS: %v %v\n%s", args, got, err, log)
		}
		c.Close()
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("%q: SIGINT: %v\n%s", args, err, log)
		}
	}
}

// TestServeTLSRefusesBadFlags: TLS flags that cannot work stop startup with
// a message naming the flag or file, before the data directory is created.
func TestServeTLSRefusesBadFlags(t *testing.T) {
	ca, srv, _ := testPKI(t)
	missing := filepath.Join(t.TempDir(), "missing.key")
	files := []string{"--tls-cert-file", srv.CertFile, "--tls-key-file", srv.KeyFile, "--tls-ca-cert-file", ca.CertFile}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-auth-clients", "maybe"}, `serve: invalid value "maybe" for flag -tls-auth-clients: argument(s) must be one of the following: yes, no, optional`},
		{[]string{"--port", "0"}, "serve: --port 0 turns the plain listener off, and no TLS listener is given (--tls-port): nothing to serve"},
		{[]string{"--tls-port", "6380"}, "serve: tls-cert-file: a TLS listener needs the server's certificate"},
		{[]string{"--tls-addr", "127.0.0.1:0", "--tls-auth-clients", "no", "--tls-cert-file", srv.CertFile, "--tls-key-file", missing}, "serve: tls-key-file: stat " + missing + ": no such file or directory"},
		{[]string{"--tls-addr", "127.0.0.1:0", "--tls-cert-file", srv.CertFile, "--tls-key-file", srv.KeyFile},
			"serve: tls-ca-cert-file: tls-auth-clients yes verifies clients' certificates against CAs; give their file, or set tls-auth-clients no"},
		{append([]string{"--tls-addr", "nonsense"}, files...), "serve: TLS address nonsense: listen tcp: address nonsense: missing port in address"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--dir", dir}, tc.args...)
		code, _, stderr := cuckoo(t, "", args...)
		if code != exitError || !strings.HasPrefix(stderr, "cuckoo: "+tc.want) {
			t.Errorf("cuckoo %q: exit %d, stderr %q; want 2 and %q", args, code, stderr, tc.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cuckoo %q created the data directory (%v)", args, err)
		}
	}
}
