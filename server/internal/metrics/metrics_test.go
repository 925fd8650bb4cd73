package metrics

import (
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	m.Gauge("cuckoo_keys", func() float64 { return 42 })
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

// scrape returns the text Handler serves.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	return rec.Body.String()
}

// TestTextFormat: every family has its TYPE line before its samples and
// comes once, this server's families sorted by name; a histogram's buckets
// are cumulative, with the bounds asked for, up to le="+Inf", which equals
// its _count; label values are escaped; the runtime's and the process's
// usual families are there.
func TestTextFormat(t *testing.T) {
	m := New()
	for _, d := range []time.Duration{50, 500, 5000, time.Second, time.Hour} {
		m.ObserveCommand("get", d)
	}
	m.ObserveCommand(`odd"name\`, 1)
	m.Gauge("cuckoo_odd", func() float64 { return 1.5 })
	body := scrape(t, m)
	for _, want := range []string{
		`cuckoo_commands_total{command="get"} 5`,
		`cuckoo_commands_total{command="odd\"name\\"} 1`,
		`cuckoo_command_duration_seconds_bucket{le="1e-07"} 2`, // 50 ns and 1 ns
		`cuckoo_command_duration_seconds_bucket{le="4e-07"} 2`,
		`cuckoo_command_duration_seconds_bucket{le="1.6e-06"} 3`,
		`cuckoo_command_duration_seconds_bucket{le="0.4194304"} 4`,
		`cuckoo_command_duration_seconds_bucket{le="+Inf"} 6`,
		"cuckoo_command_duration_seconds_count 6",
		`cuckoo_fsync_duration_seconds_bucket{le="1e-05"} 0`,
		`cuckoo_fsync_duration_seconds_bucket{le="2.62144"} 0`,
		"# TYPE cuckoo_odd gauge\ncuckoo_odd 1.5\n",
		"# TYPE cuckoo_commands_total counter",
		"# TYPE cuckoo_command_duration_seconds histogram",
		`go_info{version="` + runtime.Version() + `"} 1`,
		"go_goroutines ",
		"go_memstats_alloc_bytes ",
		"go_memstats_heap_inuse_bytes ",
		"go_memstats_sys_bytes ",
		"process_resident_memory_bytes ",
		"process_cpu_seconds_total ",
		"process_open_fds ",
		"process_start_time_seconds ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %q", want)
		}
	}
	for _, h := range []struct {
		name    string
		buckets int
	}{{"cuckoo_command_duration_seconds", 12}, {"cuckoo_fsync_duration_seconds", 10}} {
		if n := strings.Count(body, "\n"+h.name+"_bucket{le="); n != h.buckets+1 {
			t.Errorf("%s has %d buckets, want %d and +Inf", h.name, n, h.buckets)
		}
	}
	var families []string
	seen := map[string]bool{}
	samples := map[string]string{} // name{labels} -> value
	var last float64
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name = strings.Fields(name)[0]
			if seen[name] {
				t.Errorf("family %s comes twice", name)
			}
			families = append(families, name)
			seen[name] = true
			last = -1
			continue
		}
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		i := strings.LastIndexByte(line, ' ') // labels may hold spaces (go_info_ext's do)
		if i < 0 || len(families) == 0 {
			t.Fatalf("line %q", line)
		}
		name, rest := line[:i], line[i+1:]
		samples[name] = rest
		base, _, _ := strings.Cut(name, "{")
		fam := families[len(families)-1]
		if base != fam && base != fam+"_bucket" && base != fam+"_sum" && base != fam+"_count" {
			t.Errorf("sample %q under family %s", line, fam)
		}
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil {
			t.Errorf("sample %q: %v", line, err)
		}
		if base == fam+"_bucket" {
			if v < last {
				t.Errorf("bucket %q below the one before (%g): not cumulative", line, last)
			}
			last = v
		}
	}
	var ours []string
	for _, f := range families {
		if strings.HasPrefix(f, "cuckoo_") {
			ours = append(ours, f)
		}
	}
	if !slices.IsSorted(ours) || len(ours) != 4 {
		t.Errorf("this server's families out of order or missing: %v", ours)
	}
	for _, h := range []string{"cuckoo_command_duration_seconds", "cuckoo_fsync_duration_seconds"} {
		if inf, n := samples[h+`_bucket{le="+Inf"}`], samples[h+"_count"]; inf != n {
			t.Errorf("%s: le=\"+Inf\" %s, _count %s", h, inf, n)
		}
	}
}

// TestGaugeTwice: a name registered twice, or one the library writes, is a
// programming error.
func TestGaugeTwice(t *testing.T) {
	for _, name := range []string{"cuckoo_keys", "cuckoo_fsync_duration_seconds", "cuckoo_commands_total", "go_goroutines", "process_open_fds"} {
		m := New()
		if name == "cuckoo_keys" {
			m.Gauge(name, func() float64 { return 0 })
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Gauge(%s) twice did not panic", name)
				}
			}()
			m.Gauge(name, func() float64 { return 0 })
		}()
	}
}

// TestServersApart: each Metrics has its own registry, so two servers in one
// process count apart and may register the same gauges.
func TestServersApart(t *testing.T) {
	a, b := New(), New()
	a.Gauge("cuckoo_keys", func() float64 { return 1 })
	b.Gauge("cuckoo_keys", func() float64 { return 2 })
	a.ObserveCommand("get", 1)
	a.ObserveFsync(1)
	if body := scrape(t, b); strings.Contains(body, `command="get"`) || !strings.Contains(body, "cuckoo_keys 2\n") ||
		!strings.Contains(body, "cuckoo_fsync_duration_seconds_count 0\n") {
		t.Errorf("b serves a's observations or lacks its own gauge:\n%s", body)
	}
	if body := scrape(t, a); !strings.Contains(body, "cuckoo_keys 1\n") || !strings.Contains(body, `cuckoo_commands_total{command="get"} 1`) {
		t.Errorf("a lacks its own metrics:\n%s", body)
	}
}

// TestObserveAllocs: counting a command already seen allocates nothing (it
// runs on every command when metrics are on).
func TestObserveAllocs(t *testing.T) {
	m := New()
	m.ObserveCommand("cf.add", 1)
	if n := testing.AllocsPerRun(100, func() { m.ObserveCommand("cf.add", 1) }); n != 0 {
		t.Errorf("ObserveCommand allocates %v times a call", n)
	}
}

// TestConcurrent: observations racing scrapes lose nothing (run with -race).
func TestConcurrent(t *testing.T) {
	m := New()
	const goroutines, each = 4, 1000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				m.ObserveCommand([]string{"a", "b"}[(g+i)%2], time.Microsecond)
				m.ObserveFsync(time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			scrape(t, m)
		}
	})
	wg.Wait()
	body := scrape(t, m)
	for _, want := range []string{
		`cuckoo_commands_total{command="a"} 2000`, `cuckoo_commands_total{command="b"} 2000`,
		"cuckoo_command_duration_seconds_count 4000", "cuckoo_command_duration_seconds_sum 0.00",
		"cuckoo_fsync_duration_seconds_count 4000",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %q", want)
		}
	}
}

// BenchmarkObserveCommand is the cost metrics add to every command when they
// are on: counting a command already seen and timing it, from every core.
func BenchmarkObserveCommand(b *testing.B) {
	m := New()
	m.ObserveCommand("cf.add", time.Microsecond)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveCommand("cf.add", time.Microsecond)
		}
	})
}
