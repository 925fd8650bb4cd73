package repl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/info"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// TestStatusReplies: ROLE's reply and INFO's Replication fields from a
// status, for a primary with a replica and for a replica whose link is down,
// in Redis's words and order (Sentinel parses both).
func TestStatusReplies(t *testing.T) {
	primary := Status{Replicas: []ReplicaStatus{{IP: "10.0.0.2", Port: 6380, State: LinkOnline, Offset: 42, Lag: 1}},
		ID: "aa", ID2: "bb", Offset: 42, Off2: -1, BacklogActive: true, BacklogSize: 1 << 20, BacklogStart: 1, BacklogHist: 42}
	replica := Status{Primary: &PrimaryStatus{Host: "10.0.0.1", Port: 6379, State: PrimaryConnect, LastIOAgo: 7, Priority: 100},
		ID: "cc", ID2: "dd", Offset: 9, Off2: -1}
	for _, tc := range []struct {
		name      string
		st        Status
		role      string
		infoHas   []string
		infoLacks string
	}{
		{"primary", primary, "*3\r\n$6\r\nmaster\r\n:42\r\n*1\r\n*3\r\n$8\r\n10.0.0.2\r\n$4\r\n6380\r\n$2\r\n42\r\n",
			[]string{"role=master", "connected_slaves=1", "slave0=ip=10.0.0.2,port=6380,state=online,offset=42,lag=1",
				"master_replid=aa", "master_replid2=bb", "repl_backlog_active=1", "repl_backlog_histlen=42"}, "master_host"},
		{"replica", replica, "*5\r\n$5\r\nslave\r\n$8\r\n10.0.0.1\r\n:6379\r\n$7\r\nconnect\r\n:9\r\n",
			[]string{"role=slave", "master_host=10.0.0.1", "master_port=6379", "master_link_status=down",
				"master_link_down_since_seconds=7", "slave_priority=100", "connected_slaves=0", "repl_backlog_active=0"}, "slave0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := resp.NewWriter(&b)
			tc.st.WriteRole(w)
			w.Flush()
			if b.String() != tc.role {
				t.Errorf("ROLE: %q, want %q", b.String(), tc.role)
			}
			iw := info.NewWriter(nil)
			iw.Section("Replication", tc.st.Info()...)
			all := strings.ReplaceAll(iw.String(), "\r\n", "\n")
			for _, f := range tc.infoHas {
				if f = strings.Replace(f, "=", ":", 1); !strings.Contains(all, "\n"+f+"\n") {
					t.Errorf("INFO lacks %s:\n%s", f, all)
				}
			}
			if strings.Contains(all, tc.infoLacks+":") {
				t.Errorf("INFO has %s:\n%s", tc.infoLacks, all)
			}
		})
	}
}
