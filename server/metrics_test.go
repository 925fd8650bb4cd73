package server_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
)

func TestMetrics(t *testing.T) {
	m := server.NewMetrics()
	_, addr := start(t, server.Config{Metrics: m, Dir: t.TempDir(), AppendFsync: server.FsyncAlways})
	c := client(t, addr)
	ctx := context.Background()
	c.CFAdd(ctx, "k", "a")
	c.CFExists(ctx, "k", "a")
	hs := httptest.NewServer(m.Handler())
	defer hs.Close()
	resp, err := hs.Client().Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`cuckoo_commands_total{command="cf.add"} 1`, "cuckoo_keys 1", "cuckoo_items 1",
		"cuckoo_fsync_duration_seconds_count", "cuckoo_command_duration_seconds_bucket", "cuckoo_filter_memory_bytes"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
