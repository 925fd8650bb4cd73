package server_test

import (
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/prereq"
	"github.com/cuckoohash/cuckoo/server"
)

// redisCLI returns redis-cli's path and the host and port of a server
// started for the test; it skips the test without redis-cli.
func redisCLI(t *testing.T) (cli, host, port string) {
	t.Helper()
	cli = prereq.Program(t, "redis-cli")
	_, addr := start(t, server.Config{})
	host, port, _ = net.SplitHostPort(addr)
	return cli, host, port
}

// TestRedisCLI drives the server with redis-cli, the tool a person would use.
func TestRedisCLI(t *testing.T) {
	cli, host, port := redisCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "PONG"},
		{[]string{"CF.RESERVE", "urls", "1000"}, "OK"},
		{[]string{"CF.ADD", "urls", "https://example.com"}, "1"},
		{[]string{"CF.EXISTS", "urls", "https://example.com"}, "1"},
		{[]string{"CF.EXISTS", "urls", "https://example.org"}, "0"},
		{[]string{"CF.MEXISTS", "urls", "https://example.com", "nope"}, "1\n0"},
		{[]string{"CF.RESERVE", "urls", "1000"}, "ERR item exists"},
		{[]string{"CF.DEL", "missing", "x"}, "Not found"},
		{[]string{"TYPE", "urls"}, "MBbloomCF"},
		{[]string{"DBSIZE"}, "1"},
		{[]string{"CF.INFO", "urls"}, "Size"},
	} {
		out, err := exec.Command(cli, append([]string{"-h", host, "-p", port}, tc.args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", tc.args, err, out)
		}
		if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, tc.want) {
			t.Errorf("redis-cli %v = %q, want %q", tc.args, got, tc.want)
		}
	}
	// The interactive path: commands on stdin.
	cmd := exec.Command(cli, "-h", host, "-p", port)
	cmd.Stdin = strings.NewReader("CF.ADD k a\nCF.COUNT k a\nINFO keyspace\n")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "db0:keys=2") {
		t.Errorf("redis-cli with stdin: %v\n%s", err, out)
	}
}

// TestRedisCLICompat drives issue 15's gaps with redis-cli: RESP3 (-3),
// CF.RESERVE without BUCKETSIZE, CF.DEBUG, COMMAND DOCS (redis-cli's hints
// come from it), CONFIG GET, transactions, expiry, CLIENT, TIME.
func TestRedisCLICompat(t *testing.T) {
	cli, host, port := redisCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"CF.RESERVE", "k", "4"}, "OK"},
		{[]string{"-3", "CF.ADD", "k", "a"}, "(true)"},
		{[]string{"-3", "--no-raw", "CF.INFO", "k"}, `1# Size => (integer)`},
		{[]string{"-3", "--no-raw", "HELLO", "3"}, `1# "server" => "cuckoo"`},
		{[]string{"CF.DEBUG", "k"}, "bktsize:5 buckets:"},
		{[]string{"--no-raw", "COMMAND", "DOCS", "cf.reserve"}, `"BUCKETSIZE"`},
		{[]string{"COMMAND", "GETKEYS", "CF.INSERT", "k", "ITEMS", "x"}, "k"},
		{[]string{"CONFIG", "GET", "cf-initial-size"}, "cf-initial-size\n1024"},
		{[]string{"EXPIRE", "k", "100"}, "1"},
		{[]string{"TTL", "k"}, "100"},
		{[]string{"CLIENT", "INFO"}, "id="},
		{[]string{"--no-raw", "TIME"}, "1) \""},
		{[]string{"CF.SCANDUMP", "k2", "0"}, "ERR not found"},
	} {
		out, err := exec.Command(cli, append([]string{"-h", host, "-p", port}, tc.args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", tc.args, err, out)
		}
		if got := strings.TrimSpace(string(out)); !strings.Contains(got, tc.want) {
			t.Errorf("redis-cli %v = %q, want %q in it", tc.args, got, tc.want)
		}
	}
	cmd := exec.Command(cli, "-h", host, "-p", port)
	cmd.Stdin = strings.NewReader("MULTI\nCF.ADD t x\nCF.EXISTS t x\nEXEC\n")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Fields(string(out))[len(strings.Fields(string(out)))-2] != "1" {
		t.Errorf("redis-cli MULTI/EXEC: %v\n%s", err, out)
	}
}

// TestRedisCLIReadOnlyUser: the README's read-only user, through redis-cli:
// it may look items up, not add them, and its denial is in ACL LOG.
func TestRedisCLIReadOnlyUser(t *testing.T) {
	cli, host, port := redisCLI(t)
	cmd := exec.Command(cli, "-h", host, "-p", port)
	cmd.Stdin = strings.NewReader("CF.ADD urls https://example.com/\n" +
		"ACL SETUSER reader on >s3cret ~* +@read +@connection\n" +
		"AUTH reader s3cret\n" +
		"CF.EXISTS urls https://example.com/\n" +
		"CF.ADD urls https://example.org/\n")
	out, err := cmd.CombinedOutput()
	want := "1\nOK\nOK\n1\nNOPERM User reader has no permissions to run the 'cf.add' command\n"
	if err != nil || strings.TrimSpace(string(out)) != strings.TrimSpace(want) {
		t.Errorf("redis-cli session: %v\n%q\nwant\n%q", err, out, want)
	}
	log, err := exec.Command(cli, "-h", host, "-p", port, "ACL", "LOG").CombinedOutput()
	if err != nil || !strings.Contains(string(log), "cf.add") || !strings.Contains(string(log), "reader") {
		t.Errorf("ACL LOG: %v\n%s", err, log)
	}
}
