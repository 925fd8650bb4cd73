package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/internal/redistest"
	"github.com/cuckoohash/cuckoo/server"
)

// integerArgCases are commands whose integer arguments Redis reads with
// string2ll ("+1", "01", "-0" and spaces are not integers), each with the
// reply Debian's Redis 7.0.15 gives.
var integerArgCases = []struct {
	cmd  string
	want string
}{
	{"WAIT +0 0", "ERR value is not an integer or out of range"},
	{"WAIT 00 0", "ERR value is not an integer or out of range"},
	{"WAIT 0 +0", "ERR timeout is not an integer or out of range"},
	{"WAIT 0 -1", "ERR timeout is negative"},
	{"WAIT -1 0", "0"},
	{"CLIENT KILL ID +5", "ERR client-id should be greater than 0"},
	{"CLIENT KILL ID 05", "ERR client-id should be greater than 0"},
	{"CLIENT KILL ID -0", "ERR client-id should be greater than 0"},
	{"CLIENT KILL ID x", "ERR client-id should be greater than 0"},
	{"CLIENT KILL MAXAGE +5", "ERR syntax error"},
	{"CLIENT KILL MAXAGE x", "ERR syntax error"},
	{"CLIENT KILL MAXAGE -1", "ERR syntax error"},
	{"ACL LOG +1", "ERR value is not an integer or out of range"},
	{"ACL LOG 01", "ERR value is not an integer or out of range"},
	{"ACL GENPASS +32", "ERR value is not an integer or out of range"},
	{"ACL GENPASS 032", "ERR value is not an integer or out of range"},
	{"ACL GENPASS 99999999999999999999", "ERR value is not an integer or out of range"},
	{"ACL GENPASS -1", "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"},
	{"REPLCONF listening-port +80", "ERR value is not an integer or out of range"},
	{"REPLICAOF 127.0.0.1 +6379", "ERR Invalid master port"},
	{"REPLICAOF 127.0.0.1 06379", "ERR Invalid master port"},
}

func replyText(v any, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(v)
}

// TestIntegerArgumentsAsRedis: the commands above answer as Redis does,
// here and, where redis-server is installed, on a real Redis too, so that
// the expected replies are checked against the server they copy.
func TestIntegerArgumentsAsRedis(t *testing.T) {
	_, addr := start(t, server.Config{Dir: t.TempDir()})
	targets := map[string]string{"cuckoo serve": addr}
	if redistest.Installed() {
		targets["redis-server"] = redistest.Start(t)
	}
	ctx := context.Background()
	for name, a := range targets {
		c := client(t, a)
		for _, tc := range integerArgCases {
			args := []any{}
			for _, f := range strings.Fields(tc.cmd) {
				args = append(args, f)
			}
			if got := replyText(c.Do(ctx, args...).Result()); got != tc.want {
				t.Errorf("%s: %s answered %q, want %q", name, tc.cmd, got, tc.want)
			}
		}
	}
}
