package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestClusterTLS: a cluster whose nodes listen on TLS alone (--port 0),
// replicate over TLS (--tls-replication) and move slots over TLS
// (--tls-cluster): cuckoo cluster create, move-slots and info with --tls,
// and a go-redis ClusterClient over TLS, find every item where it belongs.
func TestClusterTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four server processes; skipped with -short")
	}
	ca, srv, cl := testPKI(t)
	bin := cuckooBin(t)
	var addrs []string
	for range 4 {
		cmd, _, tlsAddr, log := serveArgs(t, bin, "--port", "0", "--tls-addr", "127.0.0.1:0", "--dir", t.TempDir(),
			"--cluster-enabled", "--tls-cert-file", srv.CertFile, "--tls-key-file", srv.KeyFile, "--tls-ca-cert-file", ca.CertFile,
			"--tls-client-cert-file", cl.CertFile, "--tls-client-key-file", cl.KeyFile, "--tls-replication", "--tls-cluster")
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			if t.Failed() {
				t.Logf("cuckoo serve %s:\n%s", tlsAddr, log)
			}
		})
		addrs = append(addrs, tlsAddr)
	}
	tlsFlags := []string{"--tls", "--cacert", ca.CertFile, "--cert", cl.CertFile, "--key", cl.KeyFile}
	run := func(args ...string) string {
		t.Helper()
		args = append(append(args[:2:2], tlsFlags...), args[2:]...)
		code, out, errOut := cuckoo(t, "", args...)
		if code != 0 {
			t.Fatalf("cuckoo %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	run(append([]string{"cluster", "create", "--replicas", "1"}, addrs...)...)
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs[:1:1], TLSConfig: &tls.Config{
		RootCAs: ca.Pool(), Certificates: []tls.Certificate{cl.Cert}, MinVersion: tls.VersionTLS12}})
	defer cc.Close()
	items := map[string][]any{}
	for k := range 100 {
		key := fmt.Sprintf("urls:%d", k)
		for j := range 10 {
			items[key] = append(items[key], fmt.Sprintf("https://example.com/%d/%d", k, j))
		}
		if err := cc.CFInsert(ctx, key, nil, items[key]...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	run("cluster", "move-slots", "--from", addrs[0], "--to", addrs[1], "--slots", "0-4095")
	for key, its := range items {
		got, err := cc.CFMExists(ctx, key, its...).Result()
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range got {
			if !ok {
				t.Errorf("%s %s is missing after move-slots over TLS", key, its[i])
			}
		}
	}
	if out := run("cluster", "info", addrs[0]); !strings.Contains(out, "all is well") || strings.Count(out, " up") != 2 {
		t.Errorf("cluster info over TLS:\n%s", out)
	}
	// Without --tls, the tool cannot speak to a TLS port; --cacert alone is
	// a mistake it names.
	if code, _, errOut := cuckoo(t, "", "cluster", "info", "--cacert", ca.CertFile, addrs[0]); code != exitError || !strings.Contains(errOut, "need --tls") {
		t.Errorf("cluster info --cacert without --tls: exit %d, %s", code, errOut)
	}
}
