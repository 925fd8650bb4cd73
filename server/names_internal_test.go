package server

import (
	"fmt"
	"testing"
)

// TestStateNames: the named types' String is the text INFO, ROLE, CONFIG
// GET and CONFIG REWRITE printed when these were strings, and a value out
// of range names its type rather than passing for one of them.
func TestStateNames(t *testing.T) {
	for _, tc := range []struct {
		v    fmt.Stringer
		want string
	}{
		{FsyncEverysec, "everysec"}, {FsyncAlways, "always"}, {FsyncNo, "no"}, {FsyncMode(3), "FsyncMode(3)"},
		{AuthClientsYes, "yes"}, {AuthClientsOptional, "optional"}, {AuthClientsNo, "no"}, {AuthClients(3), "AuthClients(3)"},
		{DebugCommandNo, "no"}, {DebugCommandYes, "yes"}, {DebugCommandLocal, "local"}, {DebugCommand(3), "DebugCommand(3)"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("%T(%d).String() = %q, want %q", tc.v, tc.v, got, tc.want)
		}
	}
	var zero Config
	if zero.AppendFsync != FsyncEverysec || zero.TLS.AuthClients != AuthClientsYes || zero.EnableDebugCommand != DebugCommandNo {
		t.Errorf("a zero Config's appendfsync, tls-auth-clients, enable-debug-command: %v %v %v; want the defaults everysec, yes, no",
			zero.AppendFsync, zero.TLS.AuthClients, zero.EnableDebugCommand)
	}
	if _, err := New(Config{AppendFsync: 7}); err == nil || err.Error() != `server: appendfsync "FsyncMode(7)": want always, everysec or no` {
		t.Errorf("New with appendfsync 7: %v", err)
	}
}
