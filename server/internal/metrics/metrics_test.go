package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHandler: what was observed, and the gauges registered, are served
// in the Prometheus text format.
func TestHandler(t *testing.T) {
	m := New()
	m.ObserveCommand("cf.add", time.Millisecond)
	m.ObserveCommand("cf.add", time.Millisecond)
	m.ObserveFsync(time.Millisecond)
	m.Gauge("cuckoo_keys", "Keys.", func() float64 { return 42 })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`cuckoo_commands_total{command="cf.add"} 2`,
		"cuckoo_command_duration_seconds_count 2",
		"cuckoo_fsync_duration_seconds_count 1",
		"cuckoo_keys 42",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %q", want)
		}
	}
}
