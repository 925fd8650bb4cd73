package server_test

import (
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
)

// TestRedisCLI drives the server with redis-cli, the tool a person would use.
func TestRedisCLI(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed (Debian package redis-tools; .ci/run installs it)")
	}
	_, addr := start(t, server.Config{})
	host, port, _ := net.SplitHostPort(addr)
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
